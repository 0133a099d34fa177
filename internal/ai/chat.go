package ai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ChatRequest is a chat completion with all that an API caller may ask
// for: several turns, tools, stop sequences, a JSON answer. It is sent as
// it is (the OpenAI chat completions body).
type ChatRequest struct {
	Model             string          `json:"model"`
	Messages          []ChatMessage   `json:"messages"`
	MaxTokens         int             `json:"max_tokens,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	Stop              []string        `json:"stop,omitempty"`
	ResponseFormat    *ResponseFormat `json:"response_format,omitempty"`
	Tools             []Tool          `json:"tools,omitempty"`
	ToolChoice        any             `json:"tool_choice,omitempty"` // "auto", "none", "required" or {"type":"function","function":{"name":…}}
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	ReasoningEffort   string          `json:"reasoning_effort,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	StreamOptions     *StreamOptions  `json:"stream_options,omitempty"`
}

// ChatMessage is one turn. Content is a string, a []ContentPart or nil (an
// assistant's turn that only calls tools).
type ChatMessage struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    any        `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ContentPart is a part of a message: text, or an image by URL (a data URL
// for inline bytes).
type ContentPart struct {
	Type     string    `json:"type"` // text or image_url
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image part's URL.
type ImageURL struct {
	URL string `json:"url"`
}

// ResponseFormat asks for a JSON answer ({"type": "json_object"}).
type ResponseFormat struct {
	Type string `json:"type"`
}

// StreamOptions asks a streaming server for the usage in its last chunk.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Tool is a function the model may call.
type Tool struct {
	Type     string       `json:"type"` // function
	Function ToolFunction `json:"function"`
}

// ToolFunction describes a tool: its name, what it does, the JSON Schema
// of its arguments.
type ToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToolCall is a call of a tool the model asked for; Arguments is JSON text.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // function
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatAnswer is a model's answer to a ChatRequest.
type ChatAnswer struct {
	Content   string
	Reasoning string // the server's reasoning_content, for models that show it
	ToolCalls []ToolCall
	// FinishReason is the server's: stop, length, tool_calls,
	// content_filter, or another word.
	FinishReason string
	Model        string // the model name asked for
	InputTokens  int64
	OutputTokens int64
	// FirstToken is how long the first token took (streams only).
	FirstToken time.Duration
}

// ChatDelta is a piece of a streamed answer.
type ChatDelta struct {
	Content, Reasoning string
}

type chatAnswerWire struct {
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        []ToolCall      `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Chat sends r as it is (r.Model names the model). Status 429 and 5xx and
// network errors are tried again, Attempts in all; errors start with
// "model server: ".
func (o *OpenAI) Chat(ctx context.Context, r ChatRequest) (ChatAnswer, error) {
	r.Stream, r.StreamOptions = false, nil
	model := r.Model
	srv := o.route(&r)
	b, err := PostJSON(ctx, o.client, srv.url, srv.key, r, Retry{Attempts: Attempts, Backoff: o.Backoff, Timeout: o.timeout, MaxBody: DefaultMaxBody})
	if err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: %w", err)
	}
	var resp chatAnswerWire
	if err := json.Unmarshal(b, &resp); err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: decoding the response: %w", err)
	}
	if len(resp.Choices) == 0 {
		if len(resp.Error) > 0 && string(resp.Error) != "null" {
			return ChatAnswer{}, fmt.Errorf("model server: no answer: %s", ServerMessage(b))
		}
		return ChatAnswer{}, errors.New("model server: the response has no choices")
	}
	c := resp.Choices[0]
	text, err := contentText(c.Message.Content)
	if err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: decoding the answer: %w", err)
	}
	return ChatAnswer{Content: text, Reasoning: c.Message.ReasoningContent + c.Message.Reasoning, ToolCalls: c.Message.ToolCalls,
		FinishReason: c.FinishReason, Model: model, InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens}, nil
}

type chatChunkWire struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// maxStreamLine bounds one line of a streamed answer.
const maxStreamLine = 4 << 20

// ChatStream sends r as a stream (server-sent events) and calls each with
// every piece of text as it arrives; the answer it returns holds the
// whole text, the tool calls (assembled from their pieces), the finish
// reason and the usage the server sent last. A failure before the first
// event is tried again as Chat's are; after it, the stream fails. An error
// each returns ends the stream with that error.
func (o *OpenAI) ChatStream(ctx context.Context, r ChatRequest, each func(ChatDelta) error) (ChatAnswer, error) {
	r.Stream, r.StreamOptions = true, &StreamOptions{IncludeUsage: true}
	model := r.Model
	srv := o.route(&r)
	body, err := json.Marshal(r)
	if err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: encoding the request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := time.Now()
	var resp *http.Response
	err = retrying(ctx, Retry{Attempts: Attempts, Backoff: o.Backoff}, func() (bool, error) {
		var again bool
		var err error
		resp, again, err = o.openStream(ctx, srv, body)
		return again, err
	})
	if err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: %w", err)
	}
	defer resp.Body.Close()
	ans := ChatAnswer{Model: model}
	var text, reasoning strings.Builder
	calls := map[int]*ToolCall{}
	var order []int
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxStreamLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // comments, event names, blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			// Read to the end, so that the connection is kept for the
			// next call.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxStreamLine))
			break
		}
		var c chatChunkWire
		if err := json.Unmarshal(data, &c); err != nil {
			return ChatAnswer{}, fmt.Errorf("model server: decoding a streamed chunk: %w", err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return ChatAnswer{}, fmt.Errorf("model server: the stream failed: %s", ServerMessage(data))
		}
		if c.Usage != nil {
			ans.InputTokens, ans.OutputTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			d := ChatDelta{Content: ch.Delta.Content, Reasoning: ch.Delta.ReasoningContent + ch.Delta.Reasoning}
			for _, tc := range ch.Delta.ToolCalls {
				call := calls[tc.Index]
				if call == nil {
					call = &ToolCall{Type: "function"}
					calls[tc.Index] = call
					order = append(order, tc.Index)
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				call.Function.Name += tc.Function.Name
				call.Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				ans.FinishReason = *ch.FinishReason
			}
			if d.Content == "" && d.Reasoning == "" {
				continue
			}
			if ans.FirstToken == 0 {
				ans.FirstToken = time.Since(start)
			}
			text.WriteString(d.Content)
			reasoning.WriteString(d.Reasoning)
			if err := each(d); err != nil {
				return ChatAnswer{}, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return ChatAnswer{}, fmt.Errorf("model server: reading the stream: %w", err)
	}
	ans.Content, ans.Reasoning = text.String(), reasoning.String()
	for _, i := range order {
		ans.ToolCalls = append(ans.ToolCalls, *calls[i])
	}
	return ans, nil
}

// openStream posts a streaming request and returns the response once its
// status is 2xx; retry tells whether a failure may pass on a later
// attempt.
func (o *OpenAI) openStream(ctx context.Context, srv server, body []byte) (*http.Response, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if srv.key != "" {
		req.Header.Set("Authorization", "Bearer "+srv.key)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		se := &StatusError{Code: resp.StatusCode, Message: ServerMessage(b), RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		return nil, se.Retryable(), se
	}
	return resp, false, nil
}
