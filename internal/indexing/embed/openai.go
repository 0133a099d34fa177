package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// OpenAIBatch is the most inputs sent in one embeddings request.
const OpenAIBatch = 64

const (
	openAIAttempts       = 3
	openAIBackoff        = 500 * time.Millisecond
	openAIMaxRetryAfter  = 30 * time.Second
	openAIMaxBody        = 256 << 20
	openAIDefaultTimeout = 2 * time.Minute
)

// OpenAI embeds texts with an OpenAI-compatible embeddings endpoint. It is
// safe for concurrent use.
type OpenAI struct {
	baseURL string
	model   string
	apiKey  string
	client  *http.Client
	fixed   bool         // dim was given: responses must match it
	dim     atomic.Int64 // the given dimension, or the first response's
	backoff time.Duration
}

// NewOpenAI returns an embedder posting to baseURL + "/embeddings" (e.g.
// baseURL "https://host/v1"). apiKey may be empty for servers that need
// none. dim is the model's dimension, or 0 to take it from the first
// response. client nil means a client with a 2-minute timeout per request;
// pass a context with a deadline to bound a whole Embed call.
func NewOpenAI(baseURL, model, apiKey string, dim int, client *http.Client) *OpenAI {
	if client == nil {
		client = &http.Client{Timeout: openAIDefaultTimeout}
	}
	e := &OpenAI{
		baseURL: strings.TrimRight(baseURL, "/"),
		model:   model,
		apiKey:  apiKey,
		client:  client,
		fixed:   dim > 0,
		backoff: openAIBackoff,
	}
	if dim > 0 {
		e.dim.Store(int64(dim))
	}
	return e
}

func (e *OpenAI) Name() string { return "openai:" + e.model }

// Dim is the dimension given to NewOpenAI, else that of the first response
// (0 before it).
func (e *OpenAI) Dim() int { return int(e.dim.Load()) }

// Embed sends texts in batches of at most OpenAIBatch and returns their
// vectors, normalized, in order.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += OpenAIBatch {
		batch := texts[start:min(start+OpenAIBatch, len(texts))]
		vs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

type openAIRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type openAIResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
}

// statusError is a response with a status other than 2xx.
type statusError struct {
	code       int
	msg        string
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.msg)
}

func (e *statusError) retryable() bool {
	return e.code == http.StatusTooManyRequests || e.code >= 500
}

// embedBatch sends one request, trying again on 429, 5xx and network
// errors.
func (e *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: e.model, Input: texts})
	if err != nil {
		return nil, err
	}
	delay := e.backoff
	for attempt := 1; ; attempt++ {
		vs, retry, err := e.post(ctx, body, len(texts))
		if err == nil {
			return vs, nil
		}
		if !retry || ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %s: %w", e.Name(), err)
		}
		if attempt == openAIAttempts {
			return nil, fmt.Errorf("embed: %s: %w (after %d attempts)", e.Name(), err, attempt)
		}
		wait := delay
		var se *statusError
		if errors.As(err, &se) && se.retryAfter > wait {
			wait = min(se.retryAfter, openAIMaxRetryAfter)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("embed: %s: %w (waiting to try again after: %v)", e.Name(), ctx.Err(), err)
		case <-t.C:
		}
		delay *= 2
	}
}

// post sends one request; retry tells whether a failure may pass on a
// later attempt.
func (e *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.baseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		se := &statusError{code: resp.StatusCode, msg: serverMessage(b)}
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
			se.retryAfter = time.Duration(s) * time.Second
		}
		return nil, se.retryable(), se
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, openAIMaxBody))
	if err != nil {
		return nil, ctx.Err() == nil, fmt.Errorf("reading the response: %w", err)
	}
	var r openAIResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, false, fmt.Errorf("decoding the response: %w", err)
	}
	vs, err := e.collect(r, n)
	return vs, false, err
}

// collect orders the response's vectors by index, checks them and
// normalizes them.
func (e *OpenAI) collect(r openAIResponse, n int) ([][]float32, error) {
	if len(r.Data) != n {
		return nil, fmt.Errorf("the response has %d embeddings for %d inputs", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("the response has a bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("the response has an empty embedding at index %d", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	want := len(out[0])
	if !e.fixed {
		e.dim.CompareAndSwap(0, int64(want))
	}
	want = int(e.dim.Load())
	for i, v := range out {
		if len(v) != want {
			return nil, fmt.Errorf("embedding %d has %d dimensions, want %d", i, len(v), want)
		}
		Normalize(v)
	}
	return out, nil
}

// serverMessage extracts the message of an error response: OpenAI's
// {"error": {"message": ...}}, {"error": "..."} or {"message": ...}, else
// the body itself, shortened.
func serverMessage(b []byte) string {
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &r) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(r.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(r.Error, &s) == nil && s != "":
			return s
		case r.Message != "":
			return r.Message
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(no message)"
	}
	if len(s) > 500 {
		cut := 500
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
