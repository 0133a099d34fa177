package httpapi

import (
	"net/http/httptest"
	"testing"
)

// The address limit counts an IPv4 client by its address and an IPv6 one by
// its /64, so that a host cannot dodge it by cycling its own addresses.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"203.0.113.7:5000", "203.0.113.7"},
		{"[::ffff:203.0.113.7]:5000", "203.0.113.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:80", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"bot-code", "bot-code"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if got := clientAddress(r); got != tc.want {
			t.Errorf("clientAddress(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}
