package egress

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestPublic(t *testing.T) {
	for addr, public := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1::1": true, "8.8.8.8": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"fe80::1": false, "fc00::1": false, "0.0.0.0": false, "::": false, "100.64.1.1": false, "224.0.0.1": false, "0.1.2.3": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "fe80::1%eth0": false,
		// IPv6 standing for IPv4: NAT64 and 6to4 follow the IPv4 address.
		"64:ff9b::7f00:1": false, "64:ff9b::a9fe:a9fe": false, "64:ff9b::a00:1": false, "64:ff9b::808:808": true,
		"2002:7f00:1::1": false, "2002:a9fe:a9fe::": false, "2002:808:808::1": true,
		"64:ff9b:1::1": false, "fec0::1": false, "::7f00:1": false, "2001:0:4136:e378::1": false, "2001:db8::1": false,
	} {
		if got := Public(netip.MustParseAddr(addr)); got != public {
			t.Errorf("Public(%s) = %v, want %v", addr, got, public)
		}
	}
}

func TestRule(t *testing.T) {
	const own = 8080
	strict := Rule{OwnPorts: []int{own}, Setting: "--bot-url-private"}
	dev := Rule{OwnPorts: []int{own}, Loopback: true, Setting: "--bot-url-private"}
	ranges := Rule{OwnPorts: []int{own}, Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}, Setting: "--bot-url-private"}
	fetch := Rule{Private: true, Setting: "--bot-fetch-private"}
	for _, tc := range []struct {
		name string
		rule Rule
		addr string
		why  string // "": allowed
	}{
		{"public", strict, "93.184.216.34:443", ""},
		{"loopback", strict, "127.0.0.1:3000", "loopback, private or link-local (an operator allows them with --bot-url-private)"},
		{"loopback v6", strict, "[::1]:3000", "loopback, private"},
		{"mapped loopback", strict, "[::ffff:127.0.0.1]:3000", "loopback, private"},
		{"metadata", strict, "169.254.169.254:80", "loopback, private"},
		{"private", strict, "10.1.2.3:80", "loopback, private"},
		{"unspecified", strict, "0.0.0.0:3000", "loopback, private"},
		{"loopback on a developer's machine", dev, "127.0.0.1:3000", ""},
		{"loopback v6 on a developer's machine", dev, "[::1]:3000", ""},
		{"private on a developer's machine", dev, "10.1.2.3:80", "loopback, private"},
		{"the server's own port", dev, "127.0.0.1:8080", "is this server itself"},
		{"the server's own port, another loopback", dev, "127.0.0.2:8080", "is this server itself"},
		{"the server's own port, unspecified", ranges, "0.0.0.0:8080", "is this server itself"},
		{"an allowed range", ranges, "10.9.8.7:80", ""},
		{"an allowed v6 range", ranges, "[fd00::5]:80", ""},
		{"outside the allowed ranges", ranges, "192.168.1.1:80", "loopback, private"},
		{"fetch with private addresses allowed", fetch, "127.0.0.1:8080", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rule.Control("tcp", tc.addr, nil)
			var refused *RefusedError
			switch {
			case tc.why == "" && err != nil:
				t.Fatalf("Control(%s) = %v, want allowed", tc.addr, err)
			case tc.why != "" && (!errors.As(err, &refused) || !strings.Contains(err.Error(), tc.why)):
				t.Fatalf("Control(%s) = %v, want refused: %s", tc.addr, err, tc.why)
			}
		})
	}
}

// TestRuleOwnAddress: the server's own port is refused on the machine's
// own addresses, not only on loopback (a server listening on every
// interface is reached through any of them).
func TestRuleOwnAddress(t *testing.T) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	r := Rule{OwnPorts: []int{8080}, Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}}
	checked := 0
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		if err := r.Check(ip, 8080); err == nil || !strings.Contains(err.Error(), "this server itself") {
			t.Errorf("Check(%s, own port) = %v, want refused as this server", ip, err)
		}
		if err := r.Check(ip, 8081); err != nil {
			t.Errorf("Check(%s, another port) = %v, want allowed by the ranges", ip, err)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("this machine has no address but loopback")
	}
}

func TestCheckHost(t *testing.T) {
	r := Rule{OwnPorts: []int{8080}}
	if err := r.CheckHost("bots.example.com", "443"); err != nil {
		t.Errorf("a name: %v, want it left to the dial", err)
	}
	if err := r.CheckHost("10.0.0.1", "80"); err == nil {
		t.Error("a private address passed")
	}
	if err := r.CheckHost("fe80::1%eth0", "80"); err == nil {
		t.Error("a link-local address with a zone passed")
	}
}
