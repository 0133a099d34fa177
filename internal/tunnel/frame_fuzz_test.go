package tunnel

import (
	"net/http"
	"testing"
)

// FuzzParseFrame feeds parseFrame what a `bp dev` peer may send: any bytes.
// It never panics, a response it accepts has an HTTP status and a request
// id, and the headers it yields carry no framing header.
func FuzzParseFrame(f *testing.F) {
	for _, seed := range []string{
		`{"type":"hello"}`,
		`{"type":"response","requestId":"1","status":200,"headers":{"content-type":"application/json"},"body":"{}"}`,
		`{"requestId":"2","status":404,"headers":{"set-cookie":["a=1","b=2"],"content-length":12,"x":null}}`,
		`{"type":"response","requestId":"3","status":99}`,
		`{"type":"response","requestId":"4","status":200.5}`,
		`{"type":"response","status":200}`,
		`{"type":"other"}`,
		`{"type":"response","requestId":"5","status":200,"headers":{"a":[1,{"b":2}]}}`,
		`[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := parseFrame(data)
		if err != nil || fr.Type == "hello" {
			return
		}
		if fr.RequestID == nil || fr.Status == nil || *fr.Status < 100 || *fr.Status > 999 {
			t.Fatalf("accepted a response without a request id or an HTTP status: %s", data)
		}
		for k := range fromFrame(fr.Headers) {
			if framing[http.CanonicalHeaderKey(k)] {
				t.Fatalf("framing header %q passed: %s", k, data)
			}
		}
	})
}
