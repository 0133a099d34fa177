// Package egress is the rule of which network addresses the server dials on
// a bot's behalf: bot code's fetch, and the url a bot is served at.
package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// Rule decides whether an address may be dialed. It is applied to the
// address each connection dials, after DNS (Control), so a name that
// resolves to a refused address, or a redirect to one, is refused too.
type Rule struct {
	// Private lets loopback, private and link-local addresses through
	// (--bot-fetch-private).
	Private bool
	// Allow are the ranges an operator lets through although they are not
	// public (--bot-url-private).
	Allow []netip.Prefix
	// Loopback lets loopback addresses through: the server listens only on
	// loopback, on a developer's own machine.
	Loopback bool
	// OwnPorts are the ports this server listens on: never dialed on
	// loopback or on one of the machine's own addresses, whatever else the
	// rule allows.
	OwnPorts []int
	// Setting names what allows more, for the refusal's text.
	Setting string
}

// RefusedError is an address the rule refuses.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// cgnat is the carrier-grade NAT range, private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// IPv6 ranges that carry an IPv4 address, which a translator or a relay on
// the way may deliver to that IPv4 address: NAT64's well-known prefix and
// 6to4. Their address is public only if the IPv4 one is.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
	// Not public in any case: NAT64's local-use prefix, the deprecated
	// site-local and IPv4-compatible ranges, Teredo (its IPv4 addresses are
	// obfuscated) and documentation addresses.
	notPublic6 = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("fec0::/10"), netip.MustParsePrefix("::/96"),
		netip.MustParsePrefix("2001::/32"), netip.MustParsePrefix("2001:db8::/32"),
	}
)

// Public reports whether ip is an address of the internet: not loopback,
// private, link-local, multicast, unspecified, carrier-grade NAT or 0/8,
// nor an IPv6 address standing for one of those.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip) || ip.Is4() && ip.As4()[0] == 0 {
		return false
	}
	if ip.Is4() {
		return true
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return Public(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(ip):
		return Public(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, p := range notPublic6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Check tells whether ip:port may be dialed; the error says why not.
func (r Rule) Check(ip netip.Addr, port int) error {
	ip = ip.Unmap().WithZone("")
	for _, p := range r.OwnPorts {
		if p == port && (ip.IsLoopback() || ip.IsUnspecified() || local(ip)) {
			return &RefusedError{fmt.Sprintf("address %s is this server itself", netip.AddrPortFrom(ip, uint16(port)))}
		}
	}
	if r.Private || Public(ip) || r.Loopback && ip.IsLoopback() {
		return nil
	}
	for _, p := range r.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	return &RefusedError{fmt.Sprintf("address %s is loopback, private or link-local (an operator allows them with %s)", ip, r.Setting)}
}

// Control is a net.Dialer's Control: it refuses, on every connection, the
// addresses Check refuses.
func (r Rule) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{fmt.Sprintf("address %s is not an IP address and port", address)}
	}
	return r.Check(ap.Addr(), int(ap.Port()))
}

// CheckHost is Check for a URL's host and port when the host is an IP
// address; a name passes, to be checked on each address it resolves to
// when dialed.
func (r Rule) CheckHost(host, port string) error {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return &RefusedError{fmt.Sprintf("port %q is not a number", port)}
	}
	return r.Check(ip, n)
}

// local tells whether ip is one of this machine's addresses.
func local(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: not dialed
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(n.IP); ok && own.Unmap() == ip {
				return true
			}
		}
	}
	return false
}
