package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
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

// embedBatch sends one request, trying again on 429, 5xx and network
// errors.
func (e *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	b, err := ai.PostJSON(ctx, e.client, e.baseURL+"/embeddings", e.apiKey, openAIRequest{Model: e.model, Input: texts}, ai.Retry{
		Attempts:      openAIAttempts,
		Backoff:       e.backoff,
		MaxRetryAfter: openAIMaxRetryAfter,
		MaxBody:       openAIMaxBody,
	})
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", e.Name(), err)
	}
	var r openAIResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("embed: %s: decoding the response: %w", e.Name(), err)
	}
	vs, err := e.collect(r, len(texts))
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", e.Name(), err)
	}
	return vs, nil
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

// serverMessage extracts the message of an error response (ai.ServerMessage).
var serverMessage = ai.ServerMessage
