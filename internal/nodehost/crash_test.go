package nodehost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestHandlerThrows(t *testing.T) {
	h, rec := newHost(t, Config{})
	res := mustCall(t, h, bot("b1"), "/throw")
	var body struct {
		ID, Type, Message string
		Code              int
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	if res.Status != 500 || body.Code != 500 || body.Type != "Runtime" || body.Message != "boom from handler" || !strings.HasPrefix(body.ID, "err_") {
		t.Fatalf("got %d %s", res.Status, res.Body)
	}
	rec.waitFor(t, "with the error", func(l Line) bool {
		return l.Level == "error" && strings.Contains(l.Message, "boom from handler")
	})
}

func TestAsyncHangPastDeadline(t *testing.T) {
	h, _ := newHost(t, Config{})
	pid := string(mustCall(t, h, bot("b1"), "/pid").Body)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := h.Call(ctx, bot("b1"), Request{Path: "/hang"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within its deadline") {
		t.Fatalf("got %v", err)
	}
	// Heartbeats keep flowing, so the watchdog must leave the process alone past its silence limit.
	time.Sleep(stuckAfter + time.Second)
	if got := string(mustCall(t, h, bot("b1"), "/pid").Body); got != pid {
		t.Fatalf("process %s replaced by %s", pid, got)
	}
}

func TestSyncLoopIsKilled(t *testing.T) {
	h, rec := newHost(t, Config{})
	mustCall(t, h, bot("b1"), "/pid")
	hung := make(chan error, 1)
	go func() { _, err := call(h, bot("b1"), "/hang"); hung <- err }()
	rec.waitFor(t, "from the hanging call", func(l Line) bool { return l.Message == "hanging" })

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := h.Call(ctx, bot("b1"), Request{Path: "/spin"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("spin: %v", err)
	}
	// The other call in flight fails with the reason of the kill.
	if err := <-hung; err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "event loop was blocked") {
		t.Fatalf("hanging call: %v", err)
	}
	if res := mustCall(t, h, bot("b1"), "/echo"); res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	if n := h.startCount(); n != 2 {
		t.Fatalf("%d processes started, want 2", n)
	}
}

func TestProcessExit(t *testing.T) {
	h, _ := newHost(t, Config{})
	_, err := call(h, bot("b1"), "/exit")
	if err == nil || !strings.Contains(err.Error(), "exited with status 3") {
		t.Fatalf("got %v", err)
	}
	// A crash after load is not a load failure: the next call gets a new process at once.
	if res := mustCall(t, h, bot("b1"), "/echo"); res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	if n := h.startCount(); n != 2 {
		t.Fatalf("%d processes started, want 2", n)
	}
}

func TestUncaughtException(t *testing.T) {
	h, rec := newHost(t, Config{})
	b := Bundle{BotID: "b1", Version: "v1", Code: `
exports.handler = async (req) => {
  if (req.path === '/later') setTimeout(() => { throw new Error('thrown from a timer') }, 1)
  return new Promise(() => {})
}`}
	_, err := call(h, b, "/later")
	if err == nil || !strings.Contains(err.Error(), "uncaught exception: thrown from a timer") || !strings.Contains(err.Error(), "status 70") {
		t.Fatalf("got %v", err)
	}
	rec.waitFor(t, "with the exception", func(l Line) bool {
		return l.Level == "error" && strings.Contains(l.Message, "thrown from a timer")
	})
}

func TestLoadFailure(t *testing.T) {
	tests := []struct{ name, code, text string }{
		{"throws", `throw new Error('broken at load')`, "broken at load"},
		{"no handler", `module.exports = { default: {} }`, "the bundle exports no handler: it must be built by `bp build`"},
		{"exits", `process.exit(5)`, "failed to load: its process exited with status 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHost(t, Config{})
			b := Bundle{BotID: "b1", Version: "v1", Code: tt.code}
			_, first := call(h, b, "/")
			if first == nil || !strings.Contains(first.Error(), tt.text) {
				t.Fatalf("got %v", first)
			}
			// Within the backoff the same error comes back without a new process.
			if _, err := call(h, b, "/"); err == nil || err.Error() != first.Error() {
				t.Fatalf("second call: %v", err)
			}
			if n := h.startCount(); n != 1 {
				t.Fatalf("%d processes started, want 1", n)
			}
			// Once the backoff ends the version is tried again, and the next backoff is longer.
			h.mu.Lock()
			h.backoff[key{"b1", "", "v1"}].until = time.Now()
			h.mu.Unlock()
			call(h, b, "/")
			h.mu.Lock()
			delay := h.backoff[key{"b1", "", "v1"}].delay
			h.mu.Unlock()
			if n := h.startCount(); n != 2 || delay != 2*firstBackoff {
				t.Fatalf("%d processes started, backoff %s", n, delay)
			}
			// A new version is not held back by the old one's failures.
			fixed := bot("b1")
			fixed.Version = "v2"
			mustCall(t, h, fixed, "/echo")
		})
	}
}
