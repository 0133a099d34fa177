package nodehost

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/botplatform/botplatform/internal/sandbox"
)

// BenchmarkCall is one call of a trivial handler through a warm process:
// the cost the host adds to every event of a Node bundle.
func BenchmarkCall(b *testing.B) {
	if testing.Short() {
		b.Skip("starts node")
	}
	h, err := New(Config{Dir: b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	bd := Bundle{BotID: "bot_bench", Version: "v1", Code: toolbox}
	ctx := context.Background()
	req := Request{Method: "POST", Path: "/echo", Body: []byte(`{"event":{}}`)}
	if _, err := h.Call(ctx, bd, req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.Call(ctx, bd, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdStart is the first call of a bot whose process is not running: starting node (in its
// sandbox, or not), loading the bundle and answering.
func BenchmarkColdStart(b *testing.B) {
	if testing.Short() {
		b.Skip("starts node")
	}
	// The server's sandboxes also carry outbound connections and DNS (serve's default egress ports).
	outbound := &sandbox.Outbound{Ports: []int{80, 443}, Dial: (&net.Dialer{}).DialContext}
	for _, mode := range []struct {
		name        string
		unsandboxed bool
		outbound    *sandbox.Outbound
	}{{"sandboxed", false, nil}, {"sandboxed+egress", false, outbound}, {"unsandboxed", true, nil}} {
		b.Run(mode.name, func(b *testing.B) {
			h, err := New(Config{Dir: b.TempDir(), Unsandboxed: mode.unsandboxed, Outbound: mode.outbound}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			ctx := context.Background()
			req := Request{Method: "POST", Path: "/echo", Body: []byte(`{"event":{}}`)}
			n := 0
			for b.Loop() {
				n++
				bd := Bundle{BotID: "bot_bench", Version: fmt.Sprint("v", n), Code: toolbox}
				if _, err := h.Call(ctx, bd, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
