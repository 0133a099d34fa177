package sdkbot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/platform"
)

func TestIsNodeBundle(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{`var a=1;module.exports=hI(f9);`, true},                 // what bp build emits (minified)
		{"module.exports = { handler }\n", true},                 // hand-written CommonJS
		{"x();\nmodule.exports\t=\n{}", true},                    // spacing
		{`bot.on.message(async () => {})`, false},                // the embedded model
		{`const m = { module: 1 }; m.module.exports = 2`, false}, // a property named module
		{`if (module.exports == null) {}`, false},                // a comparison, not an assignment
		{"exports.default = { handler }", true},                  // CommonJS through exports
		{"exports.=1; x.exports.a = 1; myexports.a = 1", false},
		{"module.exports.handler = async () => {}", true}, // a property of module.exports
		{"module.exports . default\n= { handler }", true}, // spaced
		{`module.exports["default"] = { handler }`, true}, // by index
		{"exports.default.handler = h", true},             // a property's property
		{"module.exports.handler == null", false},         // a comparison
		{"if (module.exports.handler) run()", false},      // a read
		{"module.exports.", false},                        // cut short
		{"module.exports[", false},
		{strings.Repeat("var a = 1; // module.exports\n", 50000) + "module.exports = a", true}, // megabytes
	} {
		if got := IsNodeBundle(tc.code); got != tc.want {
			t.Errorf("IsNodeBundle(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestSign(t *testing.T) {
	at := time.Unix(1700000000, 0)
	a := Sign("secret", at, []byte(`{"event":{}}`))
	if a != Sign("secret", at, []byte(`{"event":{}}`)) {
		t.Fatal("Sign is not deterministic")
	}
	if a[:13] != "t=1700000000," {
		t.Fatalf("Sign = %q, want it to start with the time", a)
	}
	for _, other := range []string{Sign("other", at, []byte(`{"event":{}}`)), Sign("secret", at.Add(time.Second), []byte(`{"event":{}}`)), Sign("secret", at, []byte(`{"event":{"x":1}}`))} {
		if other == a {
			t.Fatalf("a different secret, time or body gave the same signature %q", a)
		}
	}
}

// fakeTunnels answers every request as the dev bot would, 200.
type fakeTunnels struct{ n int }

func (f *fakeTunnels) RoundTrip(req *http.Request) (*http.Response, error) {
	f.n++
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func TestTunnelBoundToOneBot(t *testing.T) {
	ft := &fakeTunnels{}
	c := New(Config{Tunnels: ft, OwnHosts: []string{"127.0.0.1:8080"}})
	dev := platform.Bot{ID: "bot_dev", SigningSecret: "s", Spec: platform.BotSpec{URL: "http://127.0.0.1:8080/5f0c4a3e-tunnel"}}
	other := platform.Bot{ID: "bot_other", SigningSecret: "s", Spec: dev.Spec}
	call := func(b platform.Bot) (Result, error) {
		return c.Send(context.Background(), Call{Bot: b, Operation: OpEvent, Type: "message_created", Body: []byte(`{"event":{}}`)})
	}
	for range 2 {
		if res, err := call(dev); err != nil || res.Status != 200 || res.Via != "tunnel 5f0c4a3e…" {
			t.Fatalf("dev bot: %+v, %v", res, err)
		}
	}
	if _, err := call(other); !errors.Is(err, ErrTunnelTaken) || !strings.Contains(err.Error(), "bot_dev") {
		t.Fatalf("another bot naming the same tunnel: %v, want ErrTunnelTaken naming bot_dev", err)
	}
	if ft.n != 2 {
		t.Fatalf("%d requests went down the tunnel, want the dev bot's 2", ft.n)
	}
}

// TestStoredURLsFollowTheRule: a url saved before the rule was (or a name
// that resolves elsewhere since) is refused when sent to: the server's own
// urls but its tunnels', and addresses the Dial rule refuses.
func TestStoredURLsFollowTheRule(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"output":{}}`)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	send := func(c *Caller, url string) (Result, error) {
		b := platform.Bot{ID: "bot_1", SigningSecret: "s", Spec: platform.BotSpec{URL: url}}
		return c.Send(context.Background(), Call{Bot: b, Operation: OpAction, Type: "x", Body: []byte(`{}`)})
	}
	ft := &fakeTunnels{}
	dev := New(Config{Tunnels: ft, OwnHosts: []string{host}, Dial: egress.Rule{Loopback: true}})
	if _, err := send(dev, srv.URL+"/v1/admin/bots"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("the server's own url: %v, want ErrUnreachable", err)
	}
	if res, err := send(dev, srv.URL+"/0f8e3c4e-tunnel"); err != nil || res.Via != "tunnel 0f8e3c4e…" || ft.n != 1 {
		t.Errorf("the server's tunnel: %+v, %v (%d down the tunnel)", res, err, ft.n)
	}
	strict := New(Config{Dial: egress.Rule{Setting: "--bot-url-private"}})
	res, err := send(strict, srv.URL)
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("loopback under the strict rule: %+v, %v, want ErrUnreachable telling no address", res, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
	if res, err := send(New(Config{Dial: egress.Rule{Loopback: true}}), srv.URL); err != nil || res.Status != 200 || hits.Load() != 1 {
		t.Fatalf("loopback on a developer's machine: %+v, %v", res, err)
	}
}
