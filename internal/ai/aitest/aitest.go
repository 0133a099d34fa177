// Package aitest is a fake OpenAI-compatible server for tests: it answers
// POST /v1/chat/completions and POST /v1/embeddings deterministically,
// records the chat requests, and fails on demand.
//
// The default chat answer is "echo: " and the first 200 characters of the
// prompt (streamed as server-sent events, a word a chunk, when the request
// asks for a stream), with usage prompt_tokens = len(system + prompt)/4 + 100 per image
// (lengths in bytes) and completion_tokens = len(answer)/4, at least 1.
// An embedding is 8 floats in [-1, 1) from the SHA-256 of its input
// (Vector), with usage prompt_tokens = the sum of len(input)/4, at least 1
// per input.
package aitest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Image is an image of a chat request, decoded from its data URL.
type Image struct {
	MIME string
	Data []byte
}

// Recorded is a chat request as the server received it.
type Recorded struct {
	Stream        bool // "stream": true: answered with server-sent events
	Model         string
	System        string // the system messages' contents, joined by "\n"
	Prompt        string // the last user message's text (its text parts joined)
	Images        []Image
	MaxTokens     int      // 0 when absent
	Temperature   *float64 // nil when absent
	Authorization string   // the header, e.g. "Bearer sk-..."; "" when absent
	Body          []byte   // the raw request body
}

// Reply is a responder's answer to a chat request.
type Reply struct {
	// Text is the answer; with a failing Status, the error message (else
	// the status text).
	Text string
	// Status is the HTTP status: 0 means 200.
	Status int
	// RetryAfter is sent as the Retry-After header when set.
	RetryAfter string
	// Body, when set, is sent as the whole response body instead of the
	// one made from Text.
	Body string
	// Reasoning is sent as the message's reasoning_content.
	Reasoning string
	// ToolCalls are the tools the answer calls: each a name and its
	// arguments as JSON text; the finish reason is then tool_calls.
	ToolCalls []ToolCall
	// FinishReason replaces the finish reason (stop, or tool_calls).
	FinishReason string
}

// ToolCall is a call of a tool in a Reply.
type ToolCall struct {
	Name, Arguments string
}

// EmbedRecorded is an embeddings request as the server received it.
type EmbedRecorded struct {
	Model         string
	Input         []string
	Authorization string
}

// Server is the fake server. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	reqs       []Recorded
	embeds     []EmbedRecorded
	respond    func(Recorded) Reply
	fail       int
	failStatus int
	n          int // chat responses served, for ids
}

// New starts a server on 127.0.0.1, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{respond: Echo}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.chat)
	mux.HandleFunc("/v1/embeddings", s.embeddings)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "aitest: no endpoint "+r.URL.Path, "")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the API base, ending in /v1 (Config.URL).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Requests returns every chat request received so far, failed ones
// included, in order of arrival.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// EmbedRequests returns every embeddings request received so far.
func (s *Server) EmbedRequests() []EmbedRecorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]EmbedRecorded(nil), s.embeds...)
}

// Respond sets the chat responder; nil restores Echo. The responder may
// be called concurrently.
func (s *Server) Respond(f func(Recorded) Reply) {
	if f == nil {
		f = Echo
	}
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

// Fail makes the next n requests (chat or embeddings) fail with status,
// before the responder is asked.
func (s *Server) Fail(n, status int) {
	s.mu.Lock()
	s.fail, s.failStatus = n, status
	s.mu.Unlock()
}

// Echo is the default responder: "echo: " and the first 200 characters of
// the prompt.
func Echo(r Recorded) Reply {
	p, n := r.Prompt, 0
	for i := range p {
		if n == 200 {
			p = p[:i]
			break
		}
		n++
	}
	return Reply{Text: "echo: " + p}
}

// PromptTokens is the prompt_tokens the server reports for r.
func PromptTokens(r Recorded) int64 {
	return int64(len(r.System)+len(r.Prompt))/4 + 100*int64(len(r.Images))
}

// CompletionTokens is the completion_tokens the server reports for an
// answer.
func CompletionTokens(answer string) int64 {
	return max(int64(len(answer))/4, 1)
}

// Vector is the embedding the server returns for input.
func Vector(input string) []float32 {
	h := sha256.Sum256([]byte(input))
	v := make([]float32, 8)
	for i := range v {
		u := binary.BigEndian.Uint32(h[4*i:])
		v[i] = float32(float64(u)/(1<<31) - 1)
	}
	return v
}

// takeFailure reports whether this request is one to fail, and with which
// status.
func (s *Server) takeFailure() (int, bool) {
	if s.fail <= 0 {
		return 0, false
	}
	s.fail--
	return s.failStatus, true
}

func writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "aitest_error"}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature *float64 `json:"temperature"`
	Stream      bool     `json:"stream"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// decodeChat decodes a chat request body into rec.
func decodeChat(b []byte, rec *Recorded) error {
	var req wireRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return fmt.Errorf("aitest: bad JSON: %v", err)
	}
	if req.Model == "" {
		return fmt.Errorf("aitest: no model")
	}
	rec.Model, rec.MaxTokens, rec.Temperature, rec.Stream = req.Model, req.MaxTokens, req.Temperature, req.Stream
	var system []string
	user := false
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			switch m.Role {
			case "system":
				system = append(system, s)
			case "user":
				rec.Prompt, rec.Images, user = s, nil, true
			}
			continue
		}
		var parts []wirePart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return fmt.Errorf("aitest: %s message content is neither a string nor an array of parts", m.Role)
		}
		if m.Role != "user" {
			continue
		}
		var text strings.Builder
		var images []Image
		for _, p := range parts {
			switch p.Type {
			case "text":
				text.WriteString(p.Text)
			case "image_url":
				img, err := decodeDataURL(p.ImageURL.URL)
				if err != nil {
					return err
				}
				images = append(images, img)
			default:
				return fmt.Errorf("aitest: unknown content part type %q", p.Type)
			}
		}
		rec.Prompt, rec.Images, user = text.String(), images, true
	}
	if !user {
		return fmt.Errorf("aitest: no user message")
	}
	rec.System = strings.Join(system, "\n")
	return nil
}

// decodeDataURL decodes "data:<mime>;base64,<data>".
func decodeDataURL(u string) (Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	meta, data, ok2 := strings.Cut(rest, ",")
	mime, ok3 := strings.CutSuffix(meta, ";base64")
	if !ok || !ok2 || !ok3 || mime == "" {
		return Image{}, fmt.Errorf("aitest: image URL %.40q is not a data:<mime>;base64 URL", u)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, fmt.Errorf("aitest: image data: %v", err)
	}
	return Image{MIME: mime, Data: b}, nil
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "aitest: POST only", "")
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "aitest: reading the body: "+err.Error(), "")
		return
	}
	rec := Recorded{Authorization: r.Header.Get("Authorization"), Body: b}
	decodeErr := decodeChat(b, &rec)
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	status, failing := s.takeFailure()
	respond := s.respond
	s.n++
	id := s.n
	s.mu.Unlock()
	if failing {
		writeError(w, status, fmt.Sprintf("aitest: injected %d failure", status), "")
		return
	}
	if decodeErr != nil {
		writeError(w, http.StatusBadRequest, decodeErr.Error(), "")
		return
	}
	reply := respond(rec)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.Body != "" {
			if reply.RetryAfter != "" {
				w.Header().Set("Retry-After", reply.RetryAfter)
			}
			w.WriteHeader(reply.Status)
			io.WriteString(w, reply.Body)
			return
		}
		msg := reply.Text
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, reply.Status, msg, reply.RetryAfter)
		return
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if reply.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply.Body)
		return
	}
	in, out := PromptTokens(rec), CompletionTokens(reply.Text)
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	var calls []any
	for i, c := range reply.ToolCalls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", id, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	usage := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
	if rec.Stream {
		stream(w, id, rec.Model, reply, calls, finish, usage)
		return
	}
	message := map[string]any{"role": "assistant", "content": reply.Text}
	if reply.Reasoning != "" {
		message["reasoning_content"] = reply.Reasoning
	}
	if len(calls) > 0 {
		message["tool_calls"] = calls
	}
	writeJSON(w, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-aitest-%d", id),
		"object":  "chat.completion",
		"created": 0,
		"model":   rec.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       message,
			"finish_reason": finish,
		}},
		"usage": usage,
	})
}

// stream answers as a streaming server does: the reasoning, then the text
// a word a chunk, each tool call in two chunks (its name, then its
// arguments), the finish reason, the usage alone in a last chunk, [DONE].
func stream(w http.ResponseWriter, id int, model string, reply Reply, calls []any, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(choices []any, extra map[string]any) {
		chunk := map[string]any{"id": fmt.Sprintf("chatcmpl-aitest-%d", id), "object": "chat.completion.chunk", "created": 0, "model": model, "choices": choices}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(d map[string]any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}), nil)
	if reply.Reasoning != "" {
		send(delta(map[string]any{"reasoning_content": reply.Reasoning}), nil)
	}
	for _, word := range strings.SplitAfter(reply.Text, " ") {
		if word != "" {
			send(delta(map[string]any{"content": word}), nil)
		}
	}
	for i, c := range calls {
		f := c.(map[string]any)["function"].(map[string]any)
		send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.(map[string]any)["id"], "type": "function",
			"function": map[string]any{"name": f["name"], "arguments": ""}}}}), nil)
		send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": f["arguments"]}}}}), nil)
	}
	send([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	send([]any{}, map[string]any{"usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "aitest: POST only", "")
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	var input []string
	if err == nil {
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			input = []string{one}
		} else if err = json.Unmarshal(req.Input, &input); err != nil {
			err = fmt.Errorf("input is neither a string nor an array of strings")
		}
	}
	s.mu.Lock()
	s.embeds = append(s.embeds, EmbedRecorded{Model: req.Model, Input: input, Authorization: r.Header.Get("Authorization")})
	status, failing := s.takeFailure()
	s.mu.Unlock()
	if failing {
		writeError(w, status, fmt.Sprintf("aitest: injected %d failure", status), "")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "aitest: "+err.Error(), "")
		return
	}
	data := make([]any, len(input))
	var tokens int64
	for i, in := range input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(in)}
		tokens += max(int64(len(in))/4, 1)
	}
	writeJSON(w, map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}
