package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/botplatform/botplatform/internal/syncbuf"
)

// hang guards a wait that should end at once; it is never a speed check.
const hang = 30 * time.Second

// env is a tunnel Server behind a real HTTP server, as serve.go mounts it.
type env struct {
	srv      *Server
	hs       *httptest.Server
	wsURL    string // what `bp dev --tunnelUrl` would be given, as ws://
	accepted chan error
	logs     *syncbuf.Buffer
}

// newEnv starts one; opts adjust the Server before it serves.
func newEnv(t *testing.T, opts ...func(*Server)) *env {
	t.Helper()
	e := &env{accepted: make(chan error, 100), logs: &syncbuf.Buffer{}}
	e.srv = New(slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, o := range opts {
		o(e.srv)
	}
	var handlers sync.WaitGroup
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/tunnels/{id}", func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		err := e.srv.Accept(w, r, r.PathValue("id"))
		switch {
		case errors.Is(err, ErrBadID):
			http.Error(w, err.Error(), http.StatusBadRequest)
		case errors.Is(err, ErrServerClosed):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case errors.Is(err, ErrInUse):
			http.Error(w, err.Error(), http.StatusConflict)
		}
		e.accepted <- err
	})
	e.hs = httptest.NewServer(mux)
	e.wsURL = "ws" + strings.TrimPrefix(e.hs.URL, "http") + "/v1/tunnels"
	t.Cleanup(func() {
		e.srv.Close()
		waitFor(t, "every Accept to return", func() bool { handlers.Wait(); return true })
		e.hs.Close()
	})
	return e
}

// cli acts as `bp dev`: it dials like TunnelTail and speaks the frames.
type cli struct {
	t  *testing.T
	ws *websocket.Conn
}

// dial connects as tunnel id and returns once the server serves it (its
// hello is answered).
func (e *env) dial(t *testing.T, id string) *cli {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hang)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.wsURL+"/"+id, &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {"tunnel-client"}}})
	if err != nil {
		t.Fatalf("dial tunnel %s: %v", id, err)
	}
	ws.SetReadLimit(maxMessage * 2)
	t.Cleanup(func() { _ = ws.CloseNow() })
	c := &cli{t: t, ws: ws}
	c.write(map[string]any{"type": "hello"})
	if f := c.read(); f["type"] != "hello" {
		t.Fatalf("answer to hello = %v, want a hello", f)
	}
	return c
}

// serve reads frames in the background, as `bp dev` does, so the socket
// answers pings; the requests arrive on the channel, which closes when the
// socket does.
func (c *cli) serve() <-chan map[string]any {
	out := make(chan map[string]any, 16)
	go func() {
		defer close(out)
		for {
			_, b, err := c.ws.Read(context.Background())
			if err != nil {
				return
			}
			var f map[string]any
			if json.Unmarshal(b, &f) == nil {
				out <- f
			}
		}
	}()
	return out
}

func (c *cli) write(frame any) {
	c.t.Helper()
	b, err := json.Marshal(frame)
	if err != nil {
		c.t.Fatal(err)
	}
	c.writeRaw(string(b))
}

func (c *cli) writeRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("cli write: %v", err)
	}
}

// read returns the next frame, or fails the test.
func (c *cli) read() map[string]any {
	c.t.Helper()
	f, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("cli read: %v", err)
	}
	return f
}

func (c *cli) tryRead() (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var f map[string]any
	return f, json.Unmarshal(b, &f)
}

// closedWith reads until the server closes the socket and returns the code.
func (c *cli) closedWith() websocket.StatusCode {
	c.t.Helper()
	for {
		if _, err := c.tryRead(); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// answer replies to request frame r.
func (c *cli) answer(r map[string]any, status int, headers map[string]any, body string) {
	c.t.Helper()
	c.write(map[string]any{"type": "response", "requestId": r["id"], "status": status, "headers": headers, "body": body})
}

// call runs a RoundTrip in the background; its result arrives on the channel.
func call(ctx context.Context, srv *Server, method, url, body string) <-chan result {
	out := make(chan result, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			out <- result{err: err}
			return
		}
		req.Header.Set("X-Single", "one")
		req.Header.Add("X-Multi", "a")
		req.Header.Add("X-Multi", "b")
		res, err := srv.RoundTrip(req)
		r := result{res: res, err: err}
		if res != nil {
			r.body, _ = io.ReadAll(res.Body)
		}
		out <- r
	}()
	return out
}

type result struct {
	res  *http.Response
	body []byte
	err  error
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(hang):
		t.Fatal("RoundTrip did not return")
		return result{}
	}
}

// waitFor runs cond until it holds, polling; a hang guard, not a timer.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		for !cond() {
			time.Sleep(5 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatalf("waiting for %s", what)
	}
}
