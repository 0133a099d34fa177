package sdkbot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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
		if res, err := call(dev); err != nil || res.Status != 200 || res.Via != "tunnel 5f0c4a3e-tunnel" {
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
