package botruntime

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
)

func TestSweepClosesQuietBots(t *testing.T) {
	r := New(nil, nil, platform.SystemClock{}, Config{})
	now := time.Now()
	busy, quiet := newHost(r, "bot_busy", "1"), newHost(r, "bot_quiet", "1")
	busy.lastUsed, quiet.lastUsed = now.Add(-time.Minute), now.Add(-11*time.Minute)
	r.hosts["bot_busy"], r.hosts["bot_quiet"] = busy, quiet
	r.Sweep(now.Add(-10 * time.Minute))
	if _, ok := r.hosts["bot_busy"]; !ok || busy.retired {
		t.Error("the process of a bot with recent events was closed")
	}
	if _, ok := r.hosts["bot_quiet"]; ok || !quiet.retired {
		t.Error("the process of a bot without events since the sweep's idle time was kept")
	}
}

// action runs an action of b in its process and returns its output.
func action(t *testing.T, r *Runtime, b *dispatch.Bot, name string) (string, error) {
	t.Helper()
	c := r.newCall(t.Context(), b, "seed", time.Now())
	out, err := r.invoke(c, "action", name, `{}`, `{"botId":"`+b.ID+`"}`)
	if err != nil {
		return "", err
	}
	var s *string
	if err := json.Unmarshal([]byte(out), &s); err != nil || s == nil {
		t.Fatalf("action %s: result %s (%v)", name, out, err)
	}
	return *s, nil
}

func TestHostKeepsWarmVMsOfCurrentCodeOnly(t *testing.T) {
	t.Parallel()
	r := New(nil, nil, platform.SystemClock{}, Config{})
	t.Cleanup(r.killProcesses)
	code := `globalThis.n = 0; bot.action('count', async () => ({ n: ++globalThis.n }))`
	b1 := &dispatch.Bot{Bot: platform.Bot{ID: "bot_1", Code: code}, Version: "1", Timeout: 5 * time.Second}
	for _, want := range []string{`{"n":1}`, `{"n":2}`} {
		if got, err := action(t, r, b1, "count"); err != nil || got != want {
			t.Fatalf("count = %s, %v; want %s (a warm VM keeps its globals)", got, err, want)
		}
	}
	h1 := r.hosts["bot_1"]
	b2 := &dispatch.Bot{Bot: platform.Bot{ID: "bot_1", Code: code}, Version: "2", Timeout: 5 * time.Second}
	if got, err := action(t, r, b2, "count"); err != nil || got != `{"n":1}` {
		t.Fatalf("new code: count = %s, %v; want a fresh VM", got, err)
	}
	if r.hosts["bot_1"] == h1 {
		t.Fatal("new code ran in the process of the old code")
	}
	select {
	case <-h1.exited:
	case <-time.After(time.Minute):
		t.Fatal("the process of the old code did not end")
	}
	if h1.fault != "" {
		t.Errorf("the old process ended with %q", h1.fault)
	}
}

// TestHostStopsWhatTheVMCannot: code the VM's interrupt does not stop is
// stopped at the deadline by killing the process; another invocation that
// ran in it is handed back (errProcessLost), and the next invocation gets a
// fresh process.
func TestHostStopsWhatTheVMCannot(t *testing.T) {
	t.Parallel()
	r := New(nil, nil, platform.SystemClock{}, Config{})
	t.Cleanup(r.killProcesses)
	code := `bot.action('regex', async () => ({ ok: /^(?=\S)(\w+\s?)*$/.test('a'.repeat(40) + '!') }))
bot.action('deep', async () => { let o = {}; for (let i = 0; i < 3000000; i++) o = { a: o }; return { n: JSON.stringify(o).length } })
bot.action('getter', async () => { throw { get stack() { for (;;) {} } } })
bot.action('ok', async () => ({ ok: true }))
bot.action('slow', async () => { const end = Date.now() + 3000; while (Date.now() < end) {} return { slow: true } })`
	b := &dispatch.Bot{Bot: platform.Bot{ID: "bot_h", Code: code}, Version: "1", Timeout: time.Second}
	for _, name := range []string{"regex", "deep", "getter"} {
		_, err := action(t, r, b, name)
		var de *DeadlineError
		var ce *CrashError
		switch {
		case errors.As(err, &de) && de.Error() == "stopped after 1s: the bot's maxExecutionTime was reached":
		case name == "deep" && errors.As(err, &ce) && ce.Reason == "stopped: the bot used more than 256 MiB of memory":
			// deep grows its memory as it runs: on a fast machine it
			// passes the memory limit before the deadline. Either way
			// its process is killed, which is what this test is about.
		default:
			t.Errorf("%s: %v, want the deadline error", name, err)
		}
		if got, err := action(t, r, b, "ok"); err != nil || got != `{"ok":true}` {
			t.Fatalf("after %s: %s, %v", name, got, err)
		}
	}
	// An innocent invocation in the process killed for another's deadline.
	slow := &dispatch.Bot{Bot: b.Bot, Version: "1", Timeout: 10 * time.Second}
	lost := make(chan error, 1)
	go func() { _, err := action(t, r, slow, "slow"); lost <- err }()
	time.Sleep(200 * time.Millisecond) // let it start; either order is valid below
	_, err := action(t, r, b, "regex")
	innocent := <-lost
	var de *DeadlineError
	if !errors.As(err, &de) {
		t.Errorf("regex: %v, want the deadline error", err)
	}
	if innocent != nil && !errors.Is(innocent, errProcessLost) {
		t.Errorf("the other invocation: %v, want its result or errProcessLost", innocent)
	}
}

func TestHostMemoryLimit(t *testing.T) {
	t.Parallel()
	r := New(nil, nil, platform.SystemClock{}, Config{Memory: 64 << 20})
	t.Cleanup(r.killProcesses)
	code := `globalThis.keep = []
bot.action('double', async () => { let s = 'x'; for (;;) s += s })
bot.action('buffers', async () => { const a = []; for (let i = 0; i < 16; i++) a.push(new ArrayBuffer(1 << 30)); return { n: a.length } })
bot.action('grow', async () => { keep.push(new Array(2e5).fill(1.5)); return { n: keep.length } })
bot.action('ok', async () => ({ ok: true }))`
	b := &dispatch.Bot{Bot: platform.Bot{ID: "bot_m", Code: code}, Version: "1", Timeout: 30 * time.Second}
	for _, name := range []string{"double", "buffers", "grow"} {
		var err error
		for i := 0; i < 100 && err == nil; i++ { // grow: across invocations
			_, err = action(t, r, b, name)
		}
		var ce *CrashError
		if !errors.As(err, &ce) || ce.Reason != "stopped: the bot used more than 64 MiB of memory" || !ce.Alone {
			t.Errorf("%s: %v, want the memory error", name, err)
		}
		if got, err := action(t, r, b, "ok"); err != nil || got != `{"ok":true}` {
			t.Fatalf("after %s: %s, %v", name, got, err)
		}
	}
}

func TestCheckCode(t *testing.T) {
	t.Parallel()
	r := New(nil, nil, platform.SystemClock{}, Config{Memory: 64 << 20})
	for _, tc := range []struct{ code, want string }{
		{"bot.on.message(() => {})\nlet x = ;", "code: syntax error at line 2, column 9"},
		{"let a = 1\nlet a = 2", "code: syntax error at line 2, column 5"},
		{"\n\n  }", "code: syntax error at line 3, column 3"},
		// Its memory bound (or, in slow race builds, its time bound).
		{"const a = [" + strings.Repeat("1,", 1<<20) + "]", "code: too costly to compile: "},
	} {
		err := r.CheckCode(t.Context(), tc.code)
		e, ok := platform.AsError(err)
		if !ok || e.Type != platform.TypeInvalidPayload || !strings.HasPrefix(e.Error(), "InvalidPayload: "+tc.want) {
			t.Errorf("CheckCode(%.40q) = %v, want InvalidPayload %q…", tc.code, err, tc.want)
		}
	}
	if err := r.CheckCode(t.Context(), "bot.on.message(async ({ message }) => { await Promise.resolve(message) })"); err != nil {
		t.Errorf("valid code refused: %v", err)
	}
}

// An event running alone in a process that died of memory is at fault at
// once; one that ran beside others runs once more, and is at fault if its
// process dies again.
func TestRetryCrashBlamesTheEventAtFault(t *testing.T) {
	r := New(nil, nil, platform.SystemClock{}, Config{})
	shared := &CrashError{Reason: "stopped: the bot used more than 256 MiB of memory"}
	if !r.retryCrash("job_1", shared) {
		t.Error("an event that shared the process was not given a second run")
	}
	if r.retryCrash("job_1", shared) {
		t.Error("an event whose process died of memory twice ran again")
	}
	if r.retryCrash("job_2", &CrashError{Reason: shared.Reason, Alone: true}) {
		t.Error("the only event of a process that died of memory ran again")
	}
	if r.retryCrash("job_3", nil) || r.retryCrash("job_3", errProcessLost) || len(r.suspects) != 0 {
		t.Errorf("other outcomes are not crashes (suspects %v)", r.suspects)
	}
}
