package nodehost

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hangGuard only keeps a broken test from hanging; no test depends on how fast node is.
const hangGuard = 2 * time.Minute

// toolbox is a hand-written CommonJS bundle shaped like `bp build` output, with one behaviour per path.
const toolbox = `
const fs = require('fs')
const routes = {
  '/echo': async (req) => ({
    status: 200,
    headers: { 'x-out': 'yes' },
    body: JSON.stringify({ echo: req.body ?? null, op: req.headers['x-bp-operation'] ?? null, method: req.method, path: req.path, query: req.query }),
  }),
  '/empty': async () => undefined,
  '/sleep': async (req) => { await new Promise((r) => setTimeout(r, 20)); return { body: req.body } },
  '/pid': async () => ({ body: String(process.pid) }),
  '/env': async () => ({ body: JSON.stringify(process.env) }),
  '/log': async () => {
    console.log('plain log')
    console.debug('debug line')
    console.warn('warn line')
    console.error('error line')
    console.info(JSON.stringify({ msg: 'sdk line', options: { conversationId: 'conv1', userId: 'user1' } }))
    process.stdout.write('raw stdout line\n')
    process.stderr.write('raw stderr line\n')
    return { status: 204 }
  },
  '/throw': async () => { throw new Error('boom from handler') },
  '/hang': () => { console.info('hanging'); return new Promise(() => {}) },
  '/spin': () => { console.info('spinning'); for (;;) {} },
  '/exit': () => process.exit(3),
  '/gate': async () => {
    console.info('waiting at gate')
    while (!fs.existsSync(process.env.GATE)) await new Promise((r) => setTimeout(r, 20))
    return { body: 'through' }
  },
  // At most 2 GiB, so that a missing limit fails the test instead of the machine.
  '/buffers': async () => {
    const kept = []
    for (let i = 0; i < 256; i++) kept.push(Buffer.alloc(8 << 20, 1))
    return { body: 'not limited' }
  },
  '/heap': async () => {
    const kept = []
    for (let i = 0; i < 3e7; i++) kept.push({ i, s: 'x'.repeat(32) + i })
    return { body: 'not limited' }
  },
}
exports.default = { handler: (req) => (routes[req.path] ?? routes['/echo'])(req) }
`

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
}

// recorder collects the Lines of a Host.
type recorder struct {
	mu    sync.Mutex
	lines []Line
}

func (r *recorder) add(l Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l)
}

func (r *recorder) waitFor(t *testing.T, what string, match func(Line) bool) Line {
	t.Helper()
	var found *Line
	eventually(t, "a log line "+what, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := range r.lines {
			if match(r.lines[i]) {
				found = &r.lines[i]
				return true
			}
		}
		return false
	})
	return *found
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(hangGuard); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newHost(t *testing.T, cfg Config) (*Host, *recorder) {
	t.Helper()
	needNode(t)
	rec := &recorder{}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Lines = rec.add
	h, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h, rec
}

func bot(id string) Bundle { return Bundle{BotID: id, Version: "v1", Code: toolbox} }

func call(h *Host, b Bundle, path string) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	return h.Call(ctx, b, Request{Method: "POST", Path: path})
}

func mustCall(t *testing.T, h *Host, b Bundle, path string) Response {
	t.Helper()
	res, err := call(h, b, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return res
}

func (h *Host) startCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts
}

func TestCallRoundTrip(t *testing.T) {
	h, _ := newHost(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req := Request{
		Method: "post", Path: "/echo", Query: "a=1&b=2",
		Header: http.Header{"X-Bp-Operation": {"event_received"}}, Body: []byte(`{"hello":"world"}`),
	}
	res, err := h.Call(ctx, bot("b1"), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Header.Get("X-Out") != "yes" {
		t.Fatalf("status %d, headers %v", res.Status, res.Header)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Body, &got); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	want := map[string]any{"echo": `{"hello":"world"}`, "op": "event_received", "method": "POST", "path": "/echo", "query": "a=1&b=2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	t.Run("no response", func(t *testing.T) {
		// Like the SDK's own HTTP server: 200 and "{}".
		res := mustCall(t, h, bot("b1"), "/empty")
		if res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("got %d %q", res.Status, res.Body)
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	h, _ := newHost(t, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			body := "call-" + strconv.Itoa(i)
			res, err := h.Call(ctx, bot("b1"), Request{Method: "POST", Path: "/sleep", Body: []byte(body)})
			if err == nil && string(res.Body) != body {
				err = errors.New("got body " + string(res.Body) + ", want " + body)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := h.startCount(); n != 1 {
		t.Fatalf("%d processes started, want 1", n)
	}
}

func TestLogLines(t *testing.T) {
	h, rec := newHost(t, Config{})
	if res := mustCall(t, h, bot("b1"), "/log"); res.Status != 204 {
		t.Fatalf("status %d", res.Status)
	}
	tests := []struct{ msg, level string }{
		{"plain log", "info"}, {"debug line", "debug"}, {"warn line", "warn"}, {"error line", "error"},
		{"sdk line", "info"}, {"raw stdout line", "info"}, {"raw stderr line", "error"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			l := rec.waitFor(t, tt.msg, func(l Line) bool { return l.Message == tt.msg })
			if l.Level != tt.level || l.BotID != "b1" || l.Version != "v1" || l.At.IsZero() {
				t.Fatalf("got %+v", l)
			}
		})
	}
	l := rec.waitFor(t, "sdk line", func(l Line) bool { return l.Message == "sdk line" })
	if l.ConversationID != "conv1" || l.UserID != "user1" {
		t.Fatalf("SDK options not parsed: %+v", l)
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("NODEHOST_TEST_SECRET", "leaked")
	t.Setenv("NODE_OPTIONS", "--max-old-space-size=4096")
	h, _ := newHost(t, Config{})
	b := bot("b1")
	b.Env = []string{"BP_TOKEN=tok", "BP_API_URL=http://127.0.0.1:1/v1", "NODE_OPTIONS=--require=/x.js"}
	var env map[string]string
	if err := json.Unmarshal(mustCall(t, h, b, "/env").Body, &env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"BP_LOG_FORMAT": "json", "NODE_ENV": "production", "HOME": "/tmp", "TMPDIR": "/tmp", // the sandbox's own
		"BP_TOKEN": "tok", "BP_API_URL": "http://127.0.0.1:1/v1", "PATH": os.Getenv("PATH"),
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for k := range env {
		if _, ok := want[k]; !ok && k != "TZ" && k != "LANG" {
			t.Errorf("unexpected variable %s=%q reached the bot", k, env[k])
		}
	}
}

func TestMissingNode(t *testing.T) {
	tests := []struct {
		name, node, text string
	}{
		{"not on PATH", "", `no "node" executable was found on PATH`},
		{"configured path", "/nonexistent/bin/node", `"/nonexistent/bin/node" was not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			h, err := New(Config{Node: tt.node, Dir: t.TempDir()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			_, err = call(h, bot("b1"), "/echo")
			if !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), tt.text) || !strings.Contains(err.Error(), "Node.js 18") {
				t.Fatalf("Call: %v", err)
			}
			if _, err := h.Check(context.Background(), toolbox); !errors.Is(err, ErrNoNode) {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}
