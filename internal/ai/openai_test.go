package ai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/ai/aitest"
)

var models = map[string]string{
	ai.Inexpensive: "small-model",
	ai.Balanced:    "medium-model",
	ai.Accurate:    "large-model",
}

func newClient(t *testing.T, url, key string) *ai.OpenAI {
	t.Helper()
	o, err := ai.New(ai.Config{URL: url, Key: key, Models: models}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Backoff = time.Millisecond
	return o
}

// body decodes a recorded request's raw JSON.
func body(t *testing.T, rec aitest.Recorded) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCompleteRequestShape(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "sk-test")
	ctx := context.Background()

	// System and user messages as strings; no max_tokens; temperature 0.
	resp, err := o.Complete(ctx, ai.Request{System: "You summarize.", Prompt: "Summarize this text."})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo: Summarize this text." || resp.Model != "medium-model" {
		t.Fatalf("response %+v", resp)
	}
	recs := s.Requests()
	if len(recs) != 1 {
		t.Fatalf("%d requests", len(recs))
	}
	r := recs[0]
	if r.Model != "medium-model" || r.System != "You summarize." || r.Prompt != "Summarize this text." || len(r.Images) != 0 || r.MaxTokens != 0 {
		t.Fatalf("recorded %+v", r)
	}
	if r.Authorization != "Bearer sk-test" || r.Temperature == nil || *r.Temperature != 0 {
		t.Fatalf("auth %q temperature %v", r.Authorization, r.Temperature)
	}
	m := body(t, r)
	if _, ok := m["max_tokens"]; ok {
		t.Fatalf("max_tokens sent: %s", r.Body)
	}
	msgs := m["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages %s", r.Body)
	}
	for i, want := range []map[string]any{
		{"role": "system", "content": "You summarize."},
		{"role": "user", "content": "Summarize this text."},
	} {
		if fmt.Sprint(msgs[i]) != fmt.Sprint(want) {
			t.Fatalf("message %d: %v", i, msgs[i])
		}
	}

	// Images: the content array with data URLs; max_tokens; no system.
	png := []byte("\x89PNG\r\n\x1a\nfake png")
	jpg := []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3}
	if _, err := o.Complete(ctx, ai.Request{ModelType: ai.Accurate, Prompt: "Describe.", MaxTokens: 300,
		Images: []ai.Image{{MIME: "image/png", Data: png}, {MIME: "image/jpeg", Data: jpg}, {Data: png}}}); err != nil {
		t.Fatal(err)
	}
	r = s.Requests()[1]
	if r.Model != "large-model" || r.MaxTokens != 300 || r.System != "" || r.Prompt != "Describe." || len(r.Images) != 3 {
		t.Fatalf("recorded %+v", r)
	}
	for i, want := range []aitest.Image{{MIME: "image/png", Data: png}, {MIME: "image/jpeg", Data: jpg}, {MIME: "image/png", Data: png}} {
		if r.Images[i].MIME != want.MIME || !bytes.Equal(r.Images[i].Data, want.Data) {
			t.Fatalf("image %d: %+v", i, r.Images[i])
		}
	}
	m = body(t, r)
	msgs = m["messages"].([]any)
	if len(msgs) != 1 || m["max_tokens"] != 300.0 {
		t.Fatalf("body %s", r.Body)
	}
	parts := msgs[0].(map[string]any)["content"].([]any)
	if len(parts) != 4 || fmt.Sprint(parts[0]) != fmt.Sprint(map[string]any{"type": "text", "text": "Describe."}) {
		t.Fatalf("parts %v", parts)
	}
	want := map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,/9j/4AECAw=="}}
	if fmt.Sprint(parts[2]) != fmt.Sprint(want) {
		t.Fatalf("image part %v", parts[2])
	}

	// The model per model type.
	for typ, name := range map[string]string{"": "medium-model", ai.Inexpensive: "small-model", ai.Balanced: "medium-model", ai.Accurate: "large-model"} {
		resp, err := o.Complete(ctx, ai.Request{ModelType: typ, Prompt: "x"})
		if err != nil {
			t.Fatal(err)
		}
		recs := s.Requests()
		if got := recs[len(recs)-1].Model; got != name || resp.Model != name {
			t.Fatalf("type %q: sent %q, response %q, want %q", typ, got, resp.Model, name)
		}
	}
	n := len(s.Requests())
	if _, err := o.Complete(ctx, ai.Request{ModelType: "huge", Prompt: "x"}); err == nil || !strings.Contains(err.Error(), `"huge"`) {
		t.Fatalf("unknown model type: %v", err)
	}
	if len(s.Requests()) != n {
		t.Fatal("request sent for an unknown model type")
	}

	// No key, no header.
	if _, err := newClient(t, s.URL()+"/", "").Complete(ctx, ai.Request{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
	recs = s.Requests()
	if r := recs[len(recs)-1]; r.Authorization != "" {
		t.Fatalf("authorization %q", r.Authorization)
	}
}

func TestCompleteTokens(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "")
	prompt := strings.Repeat("é", 300) // 600 bytes
	resp, err := o.Complete(context.Background(), ai.Request{System: "sys", Prompt: prompt, Images: []ai.Image{{MIME: "image/png", Data: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	wantText := "echo: " + strings.Repeat("é", 200)
	if resp.Text != wantText {
		t.Fatalf("text %q", resp.Text)
	}
	if resp.InputTokens != (3+600)/4+100 || resp.OutputTokens != int64(len(wantText)/4) {
		t.Fatalf("tokens %d %d", resp.InputTokens, resp.OutputTokens)
	}
	if rec := s.Requests()[0]; resp.InputTokens != aitest.PromptTokens(rec) || resp.OutputTokens != aitest.CompletionTokens(resp.Text) {
		t.Fatal("helpers disagree")
	}

	// Exact parsing; Response.Model is the configured name, not the server's.
	s.Respond(func(aitest.Recorded) aitest.Reply {
		return aitest.Reply{Body: `{"model":"served-name-2024","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"}}],"usage":{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290}}`}
	})
	resp, err = o.Complete(context.Background(), ai.Request{ModelType: ai.Inexpensive, Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if resp != (ai.Response{Text: "hi there", Model: "small-model", InputTokens: 1234, OutputTokens: 56}) {
		t.Fatalf("response %+v", resp)
	}

	// Bad responses.
	for body, want := range map[string]string{
		`{"choices":[],"usage":{}}`:                     "no choices",
		`{"error":{"message":"model not loaded"}}`:      "model not loaded",
		`{"choices":[{"message":{"content":`:            "decoding the response",
		`{"choices":[{"message":{"content":{"a":1}}}]}`: "decoding the answer",
	} {
		s.Respond(func(aitest.Recorded) aitest.Reply { return aitest.Reply{Body: body} })
		if _, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "model server: ") {
			t.Errorf("%s: %v", body, err)
		}
	}
	// Content as an array of parts, and null.
	for body, want := range map[string]string{
		`{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`: "ab",
		`{"choices":[{"message":{"content":null}}]}`:                                                    "",
	} {
		s.Respond(func(aitest.Recorded) aitest.Reply { return aitest.Reply{Body: body} })
		if resp, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err != nil || resp.Text != want {
			t.Errorf("%s: %q %v", body, resp.Text, err)
		}
	}
}

func TestCompleteRetry(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "k")
	ctx := context.Background()

	// 429 with Retry-After: 1 s, longer than the backoff, is honoured.
	var n atomic.Int32
	s.Respond(func(r aitest.Recorded) aitest.Reply {
		if n.Add(1) == 1 {
			return aitest.Reply{Status: 429, RetryAfter: "1", Text: "slow down"}
		}
		return aitest.Echo(r)
	})
	start := time.Now()
	resp, err := o.Complete(ctx, ai.Request{Prompt: "hello"})
	if err != nil || resp.Text != "echo: hello" {
		t.Fatalf("%q %v", resp.Text, err)
	}
	if d := time.Since(start); d < 950*time.Millisecond {
		t.Fatalf("retried after %v, want the Retry-After's 1 s", d)
	}
	if len(s.Requests()) != 2 {
		t.Fatalf("%d requests", len(s.Requests()))
	}

	// 503 twice, then success.
	s.Respond(nil)
	s.Fail(2, 503)
	if _, err := o.Complete(ctx, ai.Request{Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	recs := s.Requests()
	if len(recs) != 5 {
		t.Fatalf("%d requests", len(recs))
	}
	for _, r := range recs[2:] {
		if r.Prompt != "again" || r.Authorization != "Bearer k" {
			t.Fatalf("retried request %+v", r)
		}
	}
}

func TestCompleteNoRetryOn400(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "")
	s.Respond(func(aitest.Recorded) aitest.Reply {
		return aitest.Reply{Status: 400, Text: "This model's maximum context length is 8192 tokens"}
	})
	_, err := o.Complete(context.Background(), ai.Request{Prompt: "long"})
	if len(s.Requests()) != 1 {
		t.Fatalf("%d requests: 400 is not retried", len(s.Requests()))
	}
	if want := "model server: 400 Bad Request: This model's maximum context length is 8192 tokens"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	var se *ai.StatusError
	if !errors.As(err, &se) || se.Code != 400 {
		t.Fatalf("not a StatusError: %v", err)
	}
	// 401 neither.
	s.Fail(1, 401)
	if _, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || len(s.Requests()) != 2 {
		t.Fatalf("%d requests, err %v", len(s.Requests()), err)
	}
}

func TestCompleteRetriesExhausted(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "")
	s.Respond(func(aitest.Recorded) aitest.Reply { return aitest.Reply{Status: 503, Text: "overloaded"} })
	_, err := o.Complete(context.Background(), ai.Request{Prompt: "x"})
	if want := "model server: 503 Service Unavailable: overloaded (after 4 attempts)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if len(s.Requests()) != ai.Attempts {
		t.Fatalf("%d requests", len(s.Requests()))
	}
}

func TestCompleteBackoffDoubles(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "")
	o.Backoff = 30 * time.Millisecond
	s.Fail(3, 500)
	start := time.Now()
	if _, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 210*time.Millisecond {
		t.Fatalf("total %v, want ≥ 30 + 60 + 120 ms", d)
	}
}

func TestCompleteContextCancelDuringBackoff(t *testing.T) {
	s := aitest.New(t)
	// The context ends a second after the first failure's body was read:
	// in the 10 s wait before the next attempt, however slow the machine.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: onBodyClose{http.DefaultTransport, func() { time.AfterFunc(time.Second, cancel) }}}
	o, err := ai.New(ai.Config{URL: s.URL(), Models: models}, client)
	if err != nil {
		t.Fatal(err)
	}
	o.Backoff = 10 * time.Second
	s.Fail(4, 503)
	start := time.Now()
	_, err = o.Complete(ctx, ai.Request{Prompt: "x"})
	if d := time.Since(start); d > 9*time.Second {
		t.Fatalf("returned after %v: the wait was not cut", d)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err %v", err)
	}
	if len(s.Requests()) != 1 {
		t.Fatalf("%d requests", len(s.Requests()))
	}

	// A long Retry-After is waited for, and the deadline cuts the wait.
	o.Backoff = time.Millisecond
	s.Fail(0, 0) // the 3 failures left
	s.Respond(func(aitest.Recorded) aitest.Reply { return aitest.Reply{Status: 429, RetryAfter: "20"} })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	start = time.Now()
	_, err = o.Complete(ctx2, ai.Request{Prompt: "x"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second || len(s.Requests()) != 2 {
		t.Fatalf("%d requests, err %v", len(s.Requests()), err)
	}
}

// onBodyClose calls f when the first response's body is closed.
type onBodyClose struct {
	http.RoundTripper
	f func()
}

func (t onBodyClose) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.RoundTripper.RoundTrip(r)
	if err == nil {
		res.Body = &closeHook{ReadCloser: res.Body, f: t.f}
	}
	return res, err
}

type closeHook struct {
	io.ReadCloser
	f    func()
	once sync.Once
}

func (c *closeHook) Close() error {
	c.once.Do(c.f)
	return c.ReadCloser.Close()
}

func TestPostJSONRetryAfterCap(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	start := time.Now()
	b, err := ai.PostJSON(context.Background(), nil, srv.URL, "", map[string]int{"a": 1}, ai.Retry{Attempts: 2, Backoff: time.Millisecond, MaxRetryAfter: 50 * time.Millisecond})
	if err != nil || string(b) != `{"ok":true}` {
		t.Fatalf("%s %v", b, err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Fatalf("waited %v, want the 50 ms cap", d)
	}
}

func TestPostJSONBodyLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 101))
	}))
	defer srv.Close()
	if _, err := ai.PostJSON(context.Background(), nil, srv.URL, "", 1, ai.Retry{Attempts: 3, MaxBody: 100}); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Fatalf("err %v", err)
	}
	if b, err := ai.PostJSON(context.Background(), nil, srv.URL, "", 1, ai.Retry{MaxBody: 101}); err != nil || len(b) != 101 {
		t.Fatalf("%d bytes, err %v", len(b), err)
	}
}

func TestCompleteNetworkErrorAndTimeout(t *testing.T) {
	// The first connection is dropped without an answer.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.Write([]byte(`{"choices":[{"message":{"content":"ok"}}]}`))
	}))
	defer srv.Close()
	o := newClient(t, srv.URL+"/v1", "")
	if resp, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err != nil || resp.Text != "ok" || n.Load() != 2 {
		t.Fatalf("%d requests, %q %v", n.Load(), resp.Text, err)
	}

	// Config.Timeout bounds each request; a timed-out one is tried again.
	var m atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		if m.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		w.Write([]byte(`{"choices":[{"message":{"content":"late"}}]}`))
	}))
	defer slow.Close()
	o, err := ai.New(ai.Config{URL: slow.URL, Models: models, Timeout: 100 * time.Millisecond}, slow.Client())
	if err != nil {
		t.Fatal(err)
	}
	o.Backoff = time.Millisecond
	start := time.Now()
	if resp, err := o.Complete(context.Background(), ai.Request{Prompt: "x"}); err != nil || resp.Text != "late" || m.Load() != 2 {
		t.Fatalf("%d requests, %q %v", m.Load(), resp.Text, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestCompleteConcurrent(t *testing.T) {
	s := aitest.New(t)
	o := newClient(t, s.URL(), "")
	s.Fail(3, 502)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("prompt %d", i)
			resp, err := o.Complete(context.Background(), ai.Request{Prompt: p})
			if err != nil || resp.Text != "echo: "+p {
				t.Errorf("%q %v", resp.Text, err)
			}
		}()
	}
	wg.Wait()
	if n := len(s.Requests()); n != 23 {
		t.Fatalf("%d requests", n)
	}
}

func TestNewValidation(t *testing.T) {
	for _, u := range []string{"", "localhost:8080/v1", "/v1", "ftp://host/v1", "http://", "http//host", "://x"} {
		if _, err := ai.New(ai.Config{URL: u, Models: models}, nil); err == nil || !strings.Contains(err.Error(), "URL") {
			t.Errorf("URL %q: %v", u, err)
		}
	}
	for _, c := range []struct {
		models map[string]string
		want   string
	}{
		{nil, "inexpensive, balanced, accurate"},
		{map[string]string{ai.Inexpensive: "a", ai.Balanced: "b"}, "model type accurate"},
		{map[string]string{ai.Inexpensive: "a", ai.Balanced: " ", ai.Accurate: "c"}, "model type balanced"},
	} {
		if _, err := ai.New(ai.Config{URL: "https://api.example.com/v1", Models: c.models}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("models %v: %v", c.models, err)
		}
	}
	o, err := ai.New(ai.Config{URL: "http://127.0.0.1:11434/v1", Models: map[string]string{ai.Inexpensive: "m", ai.Balanced: "m", ai.Accurate: "m"}}, nil)
	if err != nil || o.ModelName("") != "m" || o.ModelName("other") != "" {
		t.Fatal(err)
	}
}

func TestCost(t *testing.T) {
	c := ai.Config{Prices: map[string]ai.Price{"gpt-4o-mini": {Input: 0.15, Output: 0.6}}}
	if got := c.Cost("gpt-4o-mini", 1000, 500); got != 450000 {
		t.Fatalf("cost %d, want 150000 + 300000", got)
	}
	if got := c.Cost("gpt-4o-mini", 1, 0); got != 150 {
		t.Fatalf("cost %d", got)
	}
	if got := c.Cost("unpriced", 1000, 500); got != 0 {
		t.Fatalf("cost %d", got)
	}
}

func TestAitestEmbeddings(t *testing.T) {
	s := aitest.New(t)
	post := func(input any) ([]byte, error) {
		return ai.PostJSON(context.Background(), nil, s.URL()+"/embeddings", "sk-e", map[string]any{"model": "emb", "input": input}, ai.Retry{Attempts: 2, Backoff: time.Millisecond})
	}
	s.Fail(1, 500)
	b, err := post([]string{"alpha", "a longer input text"})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Data) != 2 || r.Model != "emb" || r.Usage.PromptTokens != 1+4 {
		t.Fatalf("response %s", b)
	}
	for i, in := range []string{"alpha", "a longer input text"} {
		if r.Data[i].Index != i || len(r.Data[i].Embedding) != 8 || fmt.Sprint(r.Data[i].Embedding) != fmt.Sprint(aitest.Vector(in)) {
			t.Fatalf("embedding %d: %v", i, r.Data[i])
		}
	}
	if fmt.Sprint(aitest.Vector("alpha")) == fmt.Sprint(aitest.Vector("beta")) {
		t.Fatal("same vector for different inputs")
	}
	first := fmt.Sprint(r.Data[0].Embedding)
	b, err = post("alpha") // a single string
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Data) != 1 || fmt.Sprint(r.Data[0].Embedding) != first {
		t.Fatalf("%s %v", b, err)
	}
	er := s.EmbedRequests()
	if len(er) != 3 || er[1].Model != "emb" || er[1].Authorization != "Bearer sk-e" || len(er[2].Input) != 1 || len(s.Requests()) != 0 {
		t.Fatalf("recorded %+v", er)
	}
}
