package botruntime

import (
	"testing"
)

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
