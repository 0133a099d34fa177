package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "dev-1")
	ch := call(t.Context(), e.srv, "POST", "http://localhost:8080/dev-1/hooks/x%20y?a=1&b=2", `{"hi":"there"}`)
	r := c.read()
	for k, want := range map[string]any{"type": "request", "method": "POST", "path": "/hooks/x%20y", "query": "a=1&b=2", "body": `{"hi":"there"}`} {
		if r[k] != want {
			t.Errorf("request frame %s = %#v, want %#v", k, r[k], want)
		}
	}
	if id, _ := r["id"].(string); id == "" {
		t.Errorf("request frame id = %#v, want a string", r["id"])
	}
	h, _ := r["headers"].(map[string]any)
	if h["X-Single"] != "one" || !reflect.DeepEqual(h["X-Multi"], []any{"a", "b"}) {
		t.Errorf("request frame headers = %#v, want X-Single one and X-Multi [a b]", h)
	}
	// As dev-command.js sends them: numbers for some values, a stale length.
	c.answer(r, 201, map[string]any{"content-type": "application/json", "x-count": 3, "x-list": []string{"p", "q"}, "content-length": 999}, `{"ok":true}`)
	res := wait(t, ch)
	if res.err != nil {
		t.Fatalf("RoundTrip: %v", res.err)
	}
	got := res.res
	if got.StatusCode != 201 || got.Status != "201 Created" {
		t.Errorf("status = %d %q, want 201 \"201 Created\"", got.StatusCode, got.Status)
	}
	if got.Header.Get("Content-Type") != "application/json" || got.Header.Get("X-Count") != "3" || !reflect.DeepEqual(got.Header.Values("X-List"), []string{"p", "q"}) {
		t.Errorf("headers = %v", got.Header)
	}
	if got.Header.Get("Content-Length") != "" || got.ContentLength != int64(len(`{"ok":true}`)) {
		t.Errorf("Content-Length header %q, ContentLength %d: want none and the relayed body's length", got.Header.Get("Content-Length"), got.ContentLength)
	}
	if string(res.body) != `{"ok":true}` || got.Request == nil || got.Request.URL.Path != "/dev-1/hooks/x y" {
		t.Errorf("body %q, request %v", res.body, got.Request)
	}
}

func TestRoundTripPaths(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "paths")
	for _, tc := range []struct{ url, path, query string }{
		{"http://h/paths", "/", ""},
		{"http://h/paths/", "/", ""},
		{"http://h/paths/a/b?x=%2F", "/a/b", "x=%2F"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			ch := call(t.Context(), e.srv, "GET", tc.url, "")
			r := c.read()
			q, _ := r["query"].(string)
			if r["path"] != tc.path || q != tc.query || r["body"] != nil {
				t.Errorf("path %#v query %#v body %#v, want %q %q and no body", r["path"], r["query"], r["body"], tc.path, tc.query)
			}
			// Older clients leave the type out.
			c.write(map[string]any{"requestId": r["id"], "status": 204})
			if res := wait(t, ch); res.err != nil || res.res.StatusCode != 204 || len(res.body) != 0 {
				t.Errorf("answer = %+v, want 204 with no body", res)
			}
		})
	}
}

func TestConcurrentRoundTrips(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "busy")
	const n = 50
	chans := make([]<-chan result, n)
	for i := range n {
		chans[i] = call(t.Context(), e.srv, "POST", fmt.Sprintf("http://h/busy/item/%d", i), fmt.Sprint(i))
	}
	reqs := make([]map[string]any, n)
	ids := map[any]bool{}
	for i := range n {
		reqs[i] = c.read()
		ids[reqs[i]["id"]] = true
	}
	if len(ids) != n {
		t.Fatalf("%d distinct request ids among %d requests", len(ids), n)
	}
	for i := n - 1; i >= 0; i-- {
		c.answer(reqs[i], 200, nil, fmt.Sprintf("answer %s %s", reqs[i]["body"], reqs[i]["path"]))
	}
	for i, ch := range chans {
		res := wait(t, ch)
		if want := fmt.Sprintf("answer %d /item/%d", i, i); res.err != nil || string(res.body) != want {
			t.Errorf("request %d: %q, %v; want %q", i, res.body, res.err, want)
		}
	}
}

func TestHelloAnswered(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "hi") // dial already waits for one answer
	for range 3 {
		c.write(map[string]any{"type": "hello"})
		if f := c.read(); f["type"] != "hello" {
			t.Fatalf("answer to hello = %v", f)
		}
	}
}

func TestNoTunnel(t *testing.T) {
	e := newEnv(t)
	check := func(t *testing.T) {
		t.Helper()
		res := wait(t, call(t.Context(), e.srv, "POST", "http://h/gone/x", "{}"))
		if !errors.Is(res.err, ErrNoTunnel) || !strings.Contains(res.err.Error(), "`bp dev`") || !strings.Contains(res.err.Error(), "gone") {
			t.Errorf("RoundTrip error = %v, want ErrNoTunnel naming the tunnel and `bp dev`", res.err)
		}
	}
	t.Run("never connected", check)
	t.Run("disconnected", func(t *testing.T) {
		c := e.dial(t, "gone")
		if !e.srv.Connected("gone") {
			t.Fatal("Connected = false while connected")
		}
		_ = c.ws.Close(websocket.StatusNormalClosure, "bye")
		waitFor(t, "the tunnel to be gone", func() bool { return !e.srv.Connected("gone") })
		check(t)
	})
}

func TestDeadlineThenTunnelStillWorks(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "slow")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	res := wait(t, call(ctx, e.srv, "POST", "http://h/slow", "first"))
	if !errors.Is(res.err, context.DeadlineExceeded) || !strings.Contains(res.err.Error(), "tunnel slow") {
		t.Fatalf("RoundTrip error = %v, want the deadline, naming the tunnel", res.err)
	}
	ch := call(t.Context(), e.srv, "POST", "http://h/slow", "second")
	for {
		r := c.read()
		if r["body"] == "first" { // sent before the deadline: answer late
			c.answer(r, 200, nil, "late")
			continue
		}
		c.answer(r, 200, nil, "fresh")
		break
	}
	if res := wait(t, ch); res.err != nil || string(res.body) != "fresh" {
		t.Fatalf("after a deadline: %q, %v; want fresh", res.body, res.err)
	}
}

func TestClosedWithPendingRequest(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "drop")
	ch := call(t.Context(), e.srv, "GET", "http://h/drop", "")
	c.read()
	_ = c.ws.Close(websocket.StatusNormalClosure, "bye")
	res := wait(t, ch)
	if res.err == nil || errors.Is(res.err, ErrNoTunnel) || !strings.Contains(res.err.Error(), "connection closed") {
		t.Fatalf("RoundTrip error = %v, want the connection closed", res.err)
	}
}

// TestLiveTunnelNotTakenOver: the id is a tunnel's only credential, and
// knowing it is not enough to take a live tunnel over: a second connection
// is refused while the first answers pings, and the first keeps its
// requests.
func TestLiveTunnelNotTakenOver(t *testing.T) {
	e := newEnv(t)
	first := e.dial(t, "same")
	frames := first.serve()
	ctx, cancel := context.WithTimeout(t.Context(), hang)
	defer cancel()
	ws, res, err := websocket.Dial(ctx, e.wsURL+"/same", &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {"tunnel-client"}}})
	if err == nil {
		ws.CloseNow()
		t.Fatal("a second connection with a live tunnel's id was accepted")
	}
	if res == nil || res.StatusCode != http.StatusConflict {
		t.Fatalf("second connection: %v (%+v), want 409", err, res)
	}
	if !e.srv.Connected("same") {
		t.Fatal("the refused connection ended the live one")
	}
	ch := call(t.Context(), e.srv, "GET", "http://h/same/after", "")
	r := <-frames
	first.answer(r, 200, nil, "from the first")
	if res := wait(t, ch); res.err != nil || string(res.body) != "from the first" {
		t.Fatalf("after the refused connection: %q, %v", res.body, res.err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "second connection for a live tunnel refused") {
		t.Errorf("logs, want the refusal:\n%s", logs)
	}
}

// TestReconnectReplacesDeadPeer: the CLI reconnects with the same id
// after a network drop, before the old socket is known dead here; the old
// one answers no ping and the new one takes its place.
func TestReconnectReplacesDeadPeer(t *testing.T) {
	e := newEnv(t, func(s *Server) { s.pingEvery, s.pingWait = time.Hour, 50*time.Millisecond })
	e.dial(t, "same") // from now on it reads nothing, so it answers no ping
	ch := call(t.Context(), e.srv, "GET", "http://h/same/first", "")
	waitFor(t, "the request to be pending", func() bool { return pending(e.srv, "same") == 1 })
	fresh := e.dial(t, "same")
	if res := wait(t, ch); res.err == nil || !strings.Contains(res.err.Error(), "replaced") {
		t.Errorf("pending request on the old connection: %v, want it failed as replaced", res.err)
	}
	select {
	case <-e.accepted: // the old connection's Accept returned
	case <-time.After(hang):
		t.Fatal("the old connection's Accept did not return")
	}
	if !e.srv.Connected("same") {
		t.Fatal("the old connection's end disconnected the new one")
	}
	ch = call(t.Context(), e.srv, "GET", "http://h/same/second", "")
	r := fresh.read()
	fresh.answer(r, 200, nil, "from fresh")
	if res := wait(t, ch); res.err != nil || r["path"] != "/second" || string(res.body) != "from fresh" {
		t.Fatalf("after reconnecting: %q, %v (path %v)", res.body, res.err, r["path"])
	}
}

// pending counts the requests waiting on tunnel id.
func pending(s *Server, id string) int {
	t := s.live(id)
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

func TestMalformedFrameCloses(t *testing.T) {
	e := newEnv(t)
	for i, frame := range []string{
		`{oops`,
		`["response"]`,
		`{"type":"request","id":"1","method":"GET","path":"/"}`,
		`{"type":"response","status":200}`,
		`{"type":"response","requestId":"1"}`,
		`{"type":"response","requestId":"1","status":42}`,
		`{"type":"response","requestId":"1","status":200,"body":{"secret":"s3cr3t"}}`,
		`{"type":"response","requestId":"1","status":200,"headers":{"x":{"secret":"s3cr3t"}}}`,
	} {
		t.Run(frame, func(t *testing.T) {
			id := fmt.Sprintf("bad-%d", i)
			c := e.dial(t, id)
			ch := call(t.Context(), e.srv, "GET", "http://h/"+id, "")
			c.read()
			c.writeRaw(frame)
			if code := c.closedWith(); code != closeInvalidResponse {
				t.Errorf("closed with %d, want %d", code, closeInvalidResponse)
			}
			if res := wait(t, ch); res.err == nil || !strings.Contains(res.err.Error(), "invalid response payload") {
				t.Errorf("pending request: %v, want it failed", res.err)
			}
			if logs := e.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "tunnel="+id) || strings.Contains(logs, "s3cr3t") {
				t.Errorf("logs, want a warning naming %s and no body:\n%s", id, logs)
			}
		})
	}
}

func TestBadID(t *testing.T) {
	for _, id := range []string{"", "a.b", "has space", "semi;colon", "é", strings.Repeat("a", 101)} {
		if err := checkID(id); !errors.Is(err, ErrBadID) {
			t.Errorf("checkID(%q) = %v, want ErrBadID", id, err)
		}
	}
	for _, id := range []string{"a", "0f8e3c4e-6a53-4c62-9a4e-1b2c3d4e5f60", "A_b-9", strings.Repeat("a", 100)} {
		if err := checkID(id); err != nil {
			t.Errorf("checkID(%q) = %v, want nil", id, err)
		}
	}
	e := newEnv(t)
	t.Run("Accept writes nothing", func(t *testing.T) {
		rec := httptest.NewRecorder()
		err := e.srv.Accept(rec, httptest.NewRequest("GET", "/v1/tunnels/a.b", nil), "a.b")
		if !errors.Is(err, ErrBadID) || rec.Body.Len() != 0 || len(rec.Header()) != 0 {
			t.Errorf("Accept = %v, wrote %q %v; want ErrBadID and nothing written", err, rec.Body, rec.Header())
		}
	})
	t.Run("over HTTP", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), hang)
		defer cancel()
		_, resp, err := websocket.Dial(ctx, e.wsURL+"/a.b", nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("dial with a bad id: %v, %v; want 400", err, resp)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		if res := wait(t, call(t.Context(), e.srv, "GET", "http://h/a.b/x", "")); !errors.Is(res.err, ErrBadID) {
			t.Errorf("RoundTrip = %v, want ErrBadID", res.err)
		}
	})
}

func TestCloseEndsAccept(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "shutdown")
	ch := call(t.Context(), e.srv, "GET", "http://h/shutdown", "")
	c.read()
	e.srv.Close()
	if code := c.closedWith(); code != websocket.StatusGoingAway {
		t.Errorf("closed with %d, want %d", code, websocket.StatusGoingAway)
	}
	select {
	case err := <-e.accepted:
		if err != nil {
			t.Errorf("Accept = %v, want nil", err)
		}
	case <-time.After(hang):
		t.Fatal("Accept did not return after Close")
	}
	if res := wait(t, ch); res.err == nil || !strings.Contains(res.err.Error(), "shutting down") {
		t.Errorf("pending request: %v, want it failed", res.err)
	}
	if e.srv.Connected("shutdown") {
		t.Error("Connected after Close")
	}
	ctx, cancel := context.WithTimeout(t.Context(), hang)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, e.wsURL+"/late", nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after Close: %v, %v; want 503", err, resp)
	}
}

func TestLargeBodies(t *testing.T) {
	e := newEnv(t)
	c := e.dial(t, "big")
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, far past coder/websocket's 32 KiB default
	ch := call(t.Context(), e.srv, "POST", "http://h/big", big)
	r := c.read()
	if r["body"] != big {
		t.Fatalf("request body arrived with %d bytes, want %d", len(r["body"].(string)), len(big))
	}
	c.answer(r, 200, nil, big)
	if res := wait(t, ch); res.err != nil || string(res.body) != big {
		t.Fatalf("answer of %d bytes, %v; want %d bytes", len(res.body), res.err, len(big))
	}
	res := wait(t, call(t.Context(), e.srv, "POST", "http://h/big", strings.Repeat("x", maxMessage+1)))
	if res.err == nil || !strings.Contains(res.err.Error(), "over 8 MiB") {
		t.Fatalf("RoundTrip with a body over the limit: %v", res.err)
	}
}

func TestUnresponsivePeerDropped(t *testing.T) {
	e := newEnv(t, func(s *Server) { s.pingEvery, s.pingWait = 10*time.Millisecond, 50*time.Millisecond })
	e.dial(t, "mute") // from now on it reads nothing, so it answers no ping
	waitFor(t, "the mute peer to be dropped", func() bool { return !e.srv.Connected("mute") })
	if logs := e.logs.String(); !strings.Contains(logs, "does not answer pings") {
		t.Errorf("logs, want the dropped peer:\n%s", logs)
	}
}
