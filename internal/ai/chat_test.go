package ai_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/ai/aitest"
)

// A chat request goes out as it was given: turns, tools, stop, the JSON
// format; the answer's tool calls, reasoning and usage come back.
func TestChatRequestAndAnswer(t *testing.T) {
	srv := aitest.New(t)
	o := newClient(t, srv.URL(), "")
	srv.Respond(func(r aitest.Recorded) aitest.Reply {
		return aitest.Reply{Text: "", Reasoning: "thinking", ToolCalls: []aitest.ToolCall{{Name: "lookup", Arguments: `{"q":"x"}`}}}
	})
	temp, parallel := 0.3, false
	ans, err := o.Chat(t.Context(), ai.ChatRequest{Model: "medium-model", Temperature: &temp, Stop: []string{"END"}, MaxTokens: 50,
		ResponseFormat: &ai.ResponseFormat{Type: "json_object"}, ParallelToolCalls: &parallel, ToolChoice: "required",
		Tools: []ai.Tool{{Type: "function", Function: ai.ToolFunction{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		Messages: []ai.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "find x"},
			{Role: "assistant", Content: nil, ToolCalls: []ai.ToolCall{{ID: "c1", Type: "function"}}}, {Role: "tool", Content: "{}", ToolCallID: "c1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.ToolCalls) != 1 || ans.ToolCalls[0].Function.Name != "lookup" || ans.ToolCalls[0].Function.Arguments != `{"q":"x"}` ||
		ans.FinishReason != "tool_calls" || ans.Reasoning != "thinking" || ans.InputTokens == 0 || ans.OutputTokens == 0 {
		t.Fatalf("answer: %+v", ans)
	}
	var sent map[string]any
	if err := json.Unmarshal(srv.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"temperature": "0.3", "stop": `["END"]`, "max_tokens": "50", "response_format": `{"type":"json_object"}`,
		"parallel_tool_calls": "false", "tool_choice": `"required"`, "tools": `[{"function":{"name":"lookup","parameters":{"type":"object"}},"type":"function"}]`} {
		got, _ := json.Marshal(sent[k])
		if string(got) != want {
			t.Errorf("%s sent as %s, want %s", k, got, want)
		}
	}
	if _, ok := sent["stream"]; ok {
		t.Error("a plain chat request asked for a stream")
	}
	if msgs := sent["messages"].([]any); len(msgs) != 4 || msgs[3].(map[string]any)["tool_call_id"] != "c1" {
		t.Errorf("messages sent: %v", msgs)
	}
}

// A stream hands over its pieces in order, assembles the tool calls from
// their pieces and reads the usage of its last chunk.
func TestChatStream(t *testing.T) {
	srv := aitest.New(t)
	o := newClient(t, srv.URL(), "")
	srv.Respond(func(r aitest.Recorded) aitest.Reply {
		return aitest.Reply{Text: "one two three", Reasoning: "hmm", ToolCalls: []aitest.ToolCall{{Name: "a", Arguments: `{"n":1}`}, {Name: "b", Arguments: `{}`}}, FinishReason: "stop"}
	})
	var pieces []string
	ans, err := o.ChatStream(t.Context(), ai.ChatRequest{Model: "small-model", Messages: []ai.ChatMessage{{Role: "user", Content: "count"}}},
		func(d ai.ChatDelta) error { pieces = append(pieces, d.Reasoning+"|"+d.Content); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pieces, ",") != "hmm|,|one ,|two ,|three" {
		t.Errorf("pieces: %q", pieces)
	}
	if ans.Content != "one two three" || ans.Reasoning != "hmm" || ans.FinishReason != "stop" || ans.FirstToken <= 0 ||
		ans.InputTokens != aitest.PromptTokens(srv.Requests()[0]) || ans.OutputTokens != aitest.CompletionTokens("one two three") {
		t.Errorf("answer: %+v", ans)
	}
	if len(ans.ToolCalls) != 2 || ans.ToolCalls[0].Function.Name != "a" || ans.ToolCalls[0].Function.Arguments != `{"n":1}` || ans.ToolCalls[1].ID == "" {
		t.Errorf("tool calls: %+v", ans.ToolCalls)
	}
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &sent); err != nil || !sent.Stream || !sent.StreamOptions.IncludeUsage {
		t.Errorf("the request did not ask for a stream with its usage: %s", srv.Requests()[0].Body)
	}
}

// A stream refused before it began is tried again; a 400 is not.
func TestChatStreamRetriesBeforeTheFirstEvent(t *testing.T) {
	srv := aitest.New(t)
	o := newClient(t, srv.URL(), "")
	o.Backoff = 1
	srv.Fail(2, http.StatusServiceUnavailable)
	if _, err := o.ChatStream(t.Context(), ai.ChatRequest{Model: "small-model", Messages: []ai.ChatMessage{{Role: "user", Content: "hi"}}},
		func(ai.ChatDelta) error { return nil }); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	srv.Respond(func(aitest.Recorded) aitest.Reply {
		return aitest.Reply{Status: http.StatusBadRequest, Text: "bad model"}
	})
	n := len(srv.Requests())
	_, err := o.ChatStream(t.Context(), ai.ChatRequest{Model: "small-model", Messages: []ai.ChatMessage{{Role: "user", Content: "hi"}}},
		func(ai.ChatDelta) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "bad model") || len(srv.Requests()) != n+1 {
		t.Errorf("a 400: %v after %d requests", err, len(srv.Requests())-n)
	}
}

// A model name ending in @<server> goes to that server, with its key and
// the name before the @; the answer names the model as configured. Other
// names, and an @ naming no server, go to the main server.
func TestChatRoutesToTheModelsServer(t *testing.T) {
	main, gpu := aitest.New(t), aitest.New(t)
	o, err := ai.New(ai.Config{URL: main.URL(), Key: "main-key", Models: models,
		Servers: map[string]ai.Server{"gpu": {URL: gpu.URL(), Key: "gpu-key"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*aitest.Server{main, gpu} {
		srv.Respond(func(r aitest.Recorded) aitest.Reply { return aitest.Reply{Text: "ok " + r.Model} })
	}
	ans, err := o.Chat(t.Context(), ai.ChatRequest{Model: "big:32b@gpu", Messages: []ai.ChatMessage{{Role: "user", Content: "hi"}}})
	if err != nil || ans.Content != "ok big:32b" || ans.Model != "big:32b@gpu" {
		t.Fatalf("chat: %+v %v", ans, err)
	}
	streamed, err := o.ChatStream(t.Context(), ai.ChatRequest{Model: "big:32b@gpu", Messages: []ai.ChatMessage{{Role: "user", Content: "hi"}}},
		func(ai.ChatDelta) error { return nil })
	if err != nil || streamed.Content != "ok big:32b" || streamed.Model != "big:32b@gpu" {
		t.Fatalf("stream: %+v %v", streamed, err)
	}
	for _, name := range []string{"small", "name@nowhere"} {
		if ans, err := o.Chat(t.Context(), ai.ChatRequest{Model: name, Messages: []ai.ChatMessage{{Role: "user", Content: "hi"}}}); err != nil || ans.Content != "ok "+name {
			t.Fatalf("%s: %+v %v", name, ans, err)
		}
	}
	got := gpu.Requests()
	if len(got) != 2 || got[0].Model != "big:32b" || got[0].Authorization != "Bearer gpu-key" || !got[1].Stream {
		t.Errorf("the gpu server got %+v", got)
	}
	if got := main.Requests(); len(got) != 2 || got[0].Authorization != "Bearer main-key" || got[1].Model != "name@nowhere" {
		t.Errorf("the main server got %+v", got)
	}
	if _, err := ai.New(ai.Config{URL: main.URL(), Models: models, Servers: map[string]ai.Server{"x": {URL: "ftp://x"}}}, nil); err == nil {
		t.Error("a server with an ftp URL was accepted")
	}
}
