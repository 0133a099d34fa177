package nodehost

import (
	"context"
	"testing"
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
