package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOpenAI answers embeddings requests with the vector (len(input), i+1,
// 0, ...) of dim dimensions for input i, in reverse order, after the
// canned failures in fail.
type fakeOpenAI struct {
	t    *testing.T
	dim  int
	mu   sync.Mutex
	reqs []fakeReq
	fail []func(w http.ResponseWriter) // served first, one per request
}

type fakeReq struct {
	path, auth, contentType string
	model                   string
	input                   []string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		f.t.Errorf("body %q: %v", b, err)
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) == nil && len(raw) != 2 {
		f.t.Errorf("body has fields beyond model and input: %s", b)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeReq{r.Method + " " + r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body.Model, body.Input})
	var fail func(http.ResponseWriter)
	if len(f.fail) > 0 {
		fail, f.fail = f.fail[0], f.fail[1:]
	}
	f.mu.Unlock()
	if fail != nil {
		fail(w)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float64 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var data []item
	for i := len(body.Input) - 1; i >= 0; i-- {
		v := make([]float64, f.dim)
		v[0], v[1] = float64(len(body.Input[i])), float64(i+1)
		data = append(data, item{"embedding", v, i})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body.Model})
}

func newFake(t *testing.T, dim int) (*fakeOpenAI, *httptest.Server) {
	f := &fakeOpenAI{t: t, dim: dim}
	// httptest listens on 127.0.0.1.
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func fastRetries(e *OpenAI) *OpenAI {
	e.backoff = time.Millisecond
	return e
}

func TestOpenAIRequestAndBatching(t *testing.T) {
	f, srv := newFake(t, 4)
	e := NewOpenAI(srv.URL+"/v1/", "text-embedding-3-small", "sk-test", 0, nil)
	if e.Name() != "openai:text-embedding-3-small" || e.Dim() != 0 {
		t.Fatalf("%s %d", e.Name(), e.Dim())
	}
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 4 {
		t.Fatalf("dim %d", e.Dim())
	}
	if len(f.reqs) != 3 || len(f.reqs[0].input) != 64 || len(f.reqs[1].input) != 64 || len(f.reqs[2].input) != 22 {
		t.Fatalf("%d requests", len(f.reqs))
	}
	for _, r := range f.reqs {
		if r.path != "POST /v1/embeddings" || r.auth != "Bearer sk-test" || r.model != "text-embedding-3-small" || r.contentType != "application/json" {
			t.Fatalf("request %+v", r)
		}
	}
	if f.reqs[1].input[0] != texts[64] || f.reqs[2].input[21] != texts[149] {
		t.Fatal("inputs out of order")
	}
	for i, v := range vs {
		// (len, index in batch + 1), normalized: back in input order.
		a, b := float64(i+1), float64(i%64+1)
		n := math.Hypot(a, b)
		if len(v) != 4 || math.Abs(float64(v[0])-a/n) > 1e-6 || math.Abs(float64(v[1])-b/n) > 1e-6 {
			t.Fatalf("vector %d: %v", i, v)
		}
		if math.Abs(norm(v)-1) > 1e-6 {
			t.Fatalf("vector %d not normalized", i)
		}
	}
	// No texts, no request.
	if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 || len(f.reqs) != 3 {
		t.Fatal("request for no texts")
	}
}

func TestOpenAINoKey(t *testing.T) {
	f, srv := newFake(t, 3)
	e := NewOpenAI(srv.URL, "m", "", 3, srv.Client())
	if e.Dim() != 3 {
		t.Fatal(e.Dim())
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if f.reqs[0].auth != "" || f.reqs[0].path != "POST /embeddings" {
		t.Fatalf("request %+v", f.reqs[0])
	}
}

func TestOpenAIRetry(t *testing.T) {
	f, srv := newFake(t, 2)
	f.fail = []func(http.ResponseWriter){
		func(w http.ResponseWriter) { http.Error(w, `{"error":{"message":"slow down"}}`, 429) },
		func(w http.ResponseWriter) { http.Error(w, "upstream", 502) },
	}
	e := fastRetries(NewOpenAI(srv.URL, "m", "k", 0, nil))
	vs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || len(f.reqs) != 3 {
		t.Fatalf("%d requests", len(f.reqs))
	}
	for _, r := range f.reqs {
		if len(r.input) != 1 || r.input[0] != "hello" {
			t.Fatalf("retried request %+v", r)
		}
	}

	// Three failures: the error names the last status and message.
	f.reqs = nil
	for range 3 {
		f.fail = append(f.fail, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
		})
	}
	_, err = e.Embed(context.Background(), []string{"hello"})
	if err == nil || len(f.reqs) != 3 {
		t.Fatalf("%d requests, err %v", len(f.reqs), err)
	}
	if want := "embed: openai:m: 503 Service Unavailable: overloaded (after 3 attempts)"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestOpenAIBackoffDoubles(t *testing.T) {
	f, srv := newFake(t, 2)
	var mu sync.Mutex
	var times []time.Time
	for range 2 {
		f.fail = append(f.fail, func(w http.ResponseWriter) {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
			w.WriteHeader(500)
		})
	}
	e := NewOpenAI(srv.URL, "m", "", 0, nil)
	e.backoff = 40 * time.Millisecond
	start := time.Now()
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := times[1].Sub(times[0]); d < 40*time.Millisecond {
		t.Fatalf("first wait %v", d)
	}
	if d := time.Since(start); d < 120*time.Millisecond {
		t.Fatalf("total %v, want ≥ 40 + 80 ms", d)
	}
}

func TestOpenAIErrorOn400(t *testing.T) {
	f, srv := newFake(t, 2)
	f.fail = []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error"}}`))
	}}
	e := fastRetries(NewOpenAI(srv.URL, "m", "k", 0, nil))
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil || len(f.reqs) != 1 {
		t.Fatalf("%d requests (400 is not retried), err %v", len(f.reqs), err)
	}
	if want := "embed: openai:m: 400 Bad Request: This model's maximum context length is 8192 tokens"; err.Error() != want {
		t.Fatalf("error %q", err)
	}
}

func TestServerMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"bad key"}}`: "bad key",
		`{"error":"plain"}`:               "plain",
		`{"message":"top"}`:               "top",
		"  text body\n":                   "text body",
		"":                                "(no message)",
		strings.Repeat("é", 400):          strings.Repeat("é", 250) + "…",
	} {
		if got := serverMessage([]byte(body)); got != want {
			t.Errorf("%q: %q", body, got)
		}
	}
}

func TestOpenAIBadResponses(t *testing.T) {
	for name, c := range map[string]struct {
		dim  int
		body string
		want string
	}{
		"count":      {0, `{"data":[{"embedding":[1,2],"index":0}]}`, "1 embeddings for 2 inputs"},
		"index":      {0, `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":0}]}`, "bad or repeated index 0"},
		"dimensions": {3, `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":1}]}`, "has 2 dimensions, want 3"},
		"ragged":     {0, `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2,3],"index":1}]}`, "has 3 dimensions, want 2"},
		"json":       {0, `{"data":[`, "decoding the response"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(c.body)) }))
		e := fastRetries(NewOpenAI(srv.URL, "m", "", c.dim, nil))
		_, err := e.Embed(context.Background(), []string{"a", "b"})
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenAINetworkErrorRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeOpenAI{t: t, dim: 2}
	srv := &http.Server{Handler: f}
	go srv.Serve(&dropFirst{Listener: ln})
	defer srv.Close()
	e := fastRetries(NewOpenAI("http://"+ln.Addr().String(), "m", "", 0, nil))
	vs, err := e.Embed(context.Background(), []string{"a"})
	if err != nil || len(vs) != 1 || len(f.reqs) != 1 {
		t.Fatalf("%d requests served, err %v", len(f.reqs), err)
	}
}

// dropFirst closes the first connection it accepts without a word.
type dropFirst struct {
	net.Listener
	n atomic.Int32
}

func (l *dropFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.n.Add(1) > 1 {
			return c, err
		}
		c.Close()
	}
}

func TestOpenAIContext(t *testing.T) {
	f, srv := newFake(t, 2)
	for range 3 {
		f.fail = append(f.fail, func(w http.ResponseWriter) { w.Header().Set("Retry-After", "20"); w.WriteHeader(429) })
	}
	e := NewOpenAI(srv.URL, "m", "", 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("waited %v past the deadline", d)
	}
	if len(f.reqs) != 1 {
		t.Fatalf("%d requests", len(f.reqs))
	}
	// A slow server: the deadline cuts the request itself.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := NewOpenAI(slow.URL, "m", "", 0, nil).Embed(ctx2, []string{"a"}); err == nil || !strings.Contains(fmt.Sprint(err), "deadline") {
		t.Fatalf("err %v", err)
	}
}
