package botruntime

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/harness"
	"github.com/botplatform/botplatform/internal/platform"
)

// BenchmarkHandlerOverhead measures one handler invocation on a warm VM in
// the bot's process: the invocation sent over the protocol, the event
// object parsed in the VM, the hooks and handler lookup, a handler that
// reads the event and writes state, the promise settled and the result
// (the state serialized) sent back. The database work around it is not
// included. cpu-µs/op is the CPU time both processes used per invocation,
// which a busy machine inflates less than the time per invocation.
//
//	go test -run '^$' -bench HandlerOverhead ./internal/botruntime/
func BenchmarkHandlerOverhead(b *testing.B) {
	r := New(nil, nil, platform.SystemClock{}, Config{})
	b.Cleanup(r.killProcesses)
	code := `bot.on.message('text', async ({ event, state }) => {
		state.conversation.seen = (state.conversation.seen || 0) + 1
		if (event.preview.length < 0) throw new Error('unreachable')
	})`
	bi := &dispatch.Bot{Bot: platform.Bot{ID: "bot_bench", Code: code}, Version: "1", Timeout: 10 * time.Second}
	botCtx := botContext(bi)
	c := r.newCall(b.Context(), bi, "msg_bench", time.Now())
	event, _ := json.Marshal(map[string]any{
		"botId": "bot_bench", "conversationId": "conv_1", "createdOn": "2026-01-01T00:00:00.000Z", "direction": "incoming",
		"id": "msg_1", "integration": "chat", "messageId": "msg_1", "payload": map[string]any{"type": "text", "text": "hello"},
		"preview": "hello", "state": map[string]any{"bot": map[string]any{}, "user": map[string]any{}, "conversation": map[string]any{"seen": 1}},
		"tags": emptyTags(), "type": "message", "userId": "user_1",
	})
	message := `{"id":"msg_1","conversationId":"conv_1","userId":"user_1","payload":{"type":"text","text":"hello"},"createdAt":"2026-01-01T00:00:00.000Z"}`
	conv := `{"id":"conv_1","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`
	if _, err := r.invoke(c, "handle", string(event), message, conv, botCtx); err != nil { // the process starts
		b.Fatal(err)
	}
	pid := r.hosts["bot_bench"].cmd.Process.Pid
	cpu0 := cpuTime(b, os.Getpid()) + cpuTime(b, pid)
	b.ResetTimer()
	for b.Loop() {
		res, err := r.invoke(c, "handle", string(event), message, conv, botCtx)
		if err != nil {
			b.Fatal(err)
		}
		var out struct{ State map[string]string }
		if err := json.Unmarshal([]byte(res), &out); err != nil || out.State["conversation"] != `{"seen":2}` {
			b.Fatalf("result: %s", res)
		}
	}
	b.StopTimer()
	cpu := cpuTime(b, os.Getpid()) + cpuTime(b, pid) - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the CPU time (user and system) a process has used so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	t, err := harness.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	return t
}
