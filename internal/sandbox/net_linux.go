//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// network brings up the loopback of the sandbox's empty network namespace, makes every IPv4 address local
// when the sandbox has egress ports, and opens the sockets the server will serve, sending each to it.
func network(sp *spec) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if len(sp.Egress) > 0 {
		if err := localRoute(); err != nil {
			return fmt.Errorf("making every IPv4 address local: %w", err)
		}
	}
	// SO_REUSEPORT lets an egress port's 0.0.0.0 listener share its port with the API's 127.0.0.1 one; the
	// kernel gives a connection to the more specific address. Nothing else binds in this namespace.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		if err == nil {
			err = serr
		}
		return err
	}}
	type socket struct{ kind, network, addr string }
	var socks []socket
	for _, addr := range sp.Listen {
		socks = append(socks, socket{sendListen, "tcp", addr})
	}
	for _, port := range sp.Egress {
		socks = append(socks, socket{sendEgress, "tcp4", "0.0.0.0:" + strconv.Itoa(port)})
	}
	if sp.DNS {
		socks = append(socks, socket{sendDNS, "udp4", DNSAddr + ":53"}, socket{sendDNSTCP, "tcp4", DNSAddr + ":53"})
	}
	for _, s := range socks {
		if err := openAndSend(lc, sp.CtlFD, s.kind, s.network, s.addr); err != nil {
			return err
		}
	}
	return nil
}

func openAndSend(lc net.ListenConfig, ctl int, kind, network, addr string) error {
	var f *os.File
	var err error
	if network == "udp4" {
		var pc net.PacketConn
		if pc, err = lc.ListenPacket(context.Background(), network, addr); err == nil {
			f, err = pc.(*net.UDPConn).File()
			pc.Close()
		}
	} else {
		var ln net.Listener
		if ln, err = lc.Listen(context.Background(), network, addr); err == nil {
			f, err = ln.(*net.TCPListener).File()
			ln.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	err = unix.Sendmsg(ctl, []byte(kind), unix.UnixRights(int(f.Fd())), nil, 0)
	f.Close()
	if err != nil {
		return fmt.Errorf("sending the socket of %s: %w", addr, err)
	}
	return nil
}

// localRoute adds `local 0.0.0.0/0 dev lo table local` over netlink: a connection to any IPv4 address
// then reaches this namespace's own listeners (or is refused) instead of failing with ENETUNREACH.
func localRoute() error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// struct nlmsghdr, struct rtmsg, then one attribute: RTA_OIF, the loopback's index.
	const size = unix.NLMSG_HDRLEN + unix.SizeofRtMsg + unix.SizeofRtAttr + 4
	msg := make([]byte, size)
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], size)
	ne.PutUint16(msg[4:], unix.RTM_NEWROUTE)
	ne.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	ne.PutUint32(msg[8:], 1) // sequence number
	rt := msg[unix.NLMSG_HDRLEN:]
	rt[0] = unix.AF_INET // family; destination, source lengths 0 and tos 0 follow
	rt[4] = unix.RT_TABLE_LOCAL
	rt[5] = unix.RTPROT_BOOT
	rt[6] = unix.RT_SCOPE_HOST
	rt[7] = unix.RTN_LOCAL
	attr := rt[unix.SizeofRtMsg:]
	ne.PutUint16(attr[0:], unix.SizeofRtAttr+4)
	ne.PutUint16(attr[2:], unix.RTA_OIF)
	ne.PutUint32(attr[4:], uint32(lo.Index))
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
			if errno := -int32(ne.Uint32(m.Data)); errno != 0 {
				return syscall.Errno(errno)
			}
			return nil
		}
	}
	return fmt.Errorf("no answer from the kernel")
}
