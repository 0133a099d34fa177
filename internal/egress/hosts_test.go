package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
)

func TestHosts(t *testing.T) {
	h, err := ParseHosts("bot-hosts", "api.example.com=10.0.0.5,api.example.com=fd00::5,Other.example=127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	next := func(_ context.Context, network, host string) ([]netip.Addr, error) {
		asked = append(asked, network+" "+host)
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	lookup := h.Lookup(next)
	for _, c := range []struct{ network, host, want string }{
		{"ip4", "api.example.com.", "[10.0.0.5]"}, // as a DNS question names it
		{"ip6", "API.example.com", "[fd00::5]"},
		{"ip", "api.example.com", "[10.0.0.5 fd00::5]"},
		{"ip6", "other.example.", "[]"}, // an entry of the other family: no address, and DNS is not asked
		{"ip4", "www.example.com", "[93.184.216.34]"},
	} {
		got, err := lookup(context.Background(), c.network, c.host)
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("%s %s: %v %v, want %s", c.network, c.host, got, err, c.want)
		}
	}
	if !slices.Equal(asked, []string{"ip4 www.example.com"}) {
		t.Errorf("names asked of DNS: %q", asked)
	}

	var dialed []string
	dial := h.Dial(func(_ context.Context, _, address string) (net.Conn, error) {
		dialed = append(dialed, address)
		return nil, errors.New("refused")
	})
	_, err = dial(context.Background(), "tcp", "api.example.com:443")
	if err == nil || !slices.Equal(dialed, []string{"10.0.0.5:443", "[fd00::5]:443"}) {
		t.Errorf("dialed %q, %v", dialed, err)
	}
	dialed = nil
	dial(context.Background(), "tcp", "www.example.com:443")
	if !slices.Equal(dialed, []string{"www.example.com:443"}) {
		t.Errorf("dialed %q", dialed)
	}

	// The addresses an operator named are reachable; other private ones are not, nor the server's own ports.
	r := Rule{Allow: h.Prefixes(), OwnPorts: []int{8080}, Setting: "--bot-fetch-private"}
	for addr, ok := range map[string]bool{"10.0.0.5:443": true, "[fd00::5]:80": true, "127.0.0.2:443": true, "10.0.0.6:443": false, "127.0.0.2:8080": false} {
		ap := netip.MustParseAddrPort(addr)
		if err := r.Check(ap.Addr(), int(ap.Port())); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}
