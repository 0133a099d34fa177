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
