package botruntime

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/botplatform/botplatform/internal/platform"
)

// BenchmarkHandlerOverhead measures one handler invocation on a warm VM:
// the event object parsed in the VM, the hooks and handler lookup, a handler
// that reads the event and writes state, the promise settled and the state
// serialized back. The database work around it is not included.
//
//	go test -run '^$' -bench HandlerOverhead ./internal/botruntime/
func BenchmarkHandlerOverhead(b *testing.B) {
	r := New(nil, nil, platform.SystemClock{}, Config{})
	code := `bot.on.message('text', async ({ event, state }) => {
		state.conversation.seen = (state.conversation.seen || 0) + 1
		if (event.preview.length < 0) throw new Error('unreachable')
	})`
	bi := &botInfo{bot: platform.Bot{ID: "bot_bench", Code: code}, version: "1", ctxJSON: `{"botId":"bot_bench","configuration":{},"secrets":{}}`, timeout: 10 * time.Second}
	c := r.newCall(b.Context(), bi, "msg_bench", time.Now())
	v, p, err := r.vmFor(bi, c)
	if err != nil {
		b.Fatal(err)
	}
	event, _ := json.Marshal(map[string]any{
		"botId": "bot_bench", "conversationId": "conv_1", "createdOn": "2026-01-01T00:00:00.000Z", "direction": "incoming",
		"id": "msg_1", "integration": "chat", "messageId": "msg_1", "payload": map[string]any{"type": "text", "text": "hello"},
		"preview": "hello", "state": map[string]any{"bot": map[string]any{}, "user": map[string]any{}, "conversation": map[string]any{"seen": 1}},
		"tags": emptyTags(), "type": "message", "userId": "user_1",
	})
	message := `{"id":"msg_1","conversationId":"conv_1","userId":"user_1","payload":{"type":"text","text":"hello"},"createdAt":"2026-01-01T00:00:00.000Z"}`
	conv := `{"id":"conv_1","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`
	b.ResetTimer()
	for b.Loop() {
		res, err := v.run(bi.timeout, func() (goja.Value, error) {
			return v.handle(goja.Undefined(), v.rt.ToValue(string(event)), v.rt.ToValue(message), v.rt.ToValue(conv), v.rt.ToValue(bi.ctxJSON))
		})
		if err != nil {
			b.Fatal(err)
		}
		out := res.Export().(map[string]any)
		if out["state"].(map[string]any)["conversation"] != `{"seen":2}` {
			b.Fatalf("state: %v", out["state"])
		}
	}
	b.StopTimer()
	r.release(p, v)
}
