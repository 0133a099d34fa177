package botruntime

import (
	"net"
	"testing"
)

func TestFetchAddresses(t *testing.T) {
	for addr, public := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1::1": true, "8.8.8.8": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"fe80::1": false, "fc00::1": false, "0.0.0.0": false, "::": false, "100.64.1.1": false, "224.0.0.1": false, "0.1.2.3": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
	} {
		if got := publicIP(net.ParseIP(addr)); got != public {
			t.Errorf("publicIP(%s) = %v, want %v", addr, got, public)
		}
	}
}

func TestFetchHostAllowed(t *testing.T) {
	allow := []string{"api.example.com", "*.example.org"}
	for host, ok := range map[string]bool{
		"api.example.com": true, "API.Example.com.": true, "example.com": false, "x.api.example.com": false,
		"a.example.org": true, "a.b.example.org": true, "example.org": false, "badexample.org": false, "example.org.evil.com": false,
	} {
		if got := hostAllowed(allow, host); got != ok {
			t.Errorf("hostAllowed(%s) = %v, want %v", host, got, ok)
		}
	}
}
