package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestCognitiveAPI: /v2/cognitive answers a bot's LLM calls with the
// operator's model server (a local stand-in that records what it
// receives): the ids map to the configured models, the request reaches the
// model server translated, the answer and its stream come back in the
// official shapes, every call is in AI Spend, and a workspace past its
// limit, a viewer, a bad body and a server without a model are refused.
func TestCognitiveAPI(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			model := aitest.New(t)
			s := startBackendWith(t, backend, "--ai-url", model.URL(), "--ai-model", "mid-1", "--ai-model-accurate", "big-1",
				"--ai-model-inexpensive", "small-1", "--ai-prices", `{"big-1":{"input":2,"output":4},"mid-1":{"input":1,"output":1}}`)
			owner := s.owner(t)
			botID := owner.createBot(map[string]any{"name": "thinker"})["id"].(string)
			call := func(c client, path string, body any) *response {
				t.Helper()
				return c.raw(http.MethodPost, path, body, "x-bot-id", botID)
			}

			// One call with all a bot may send.
			model.Respond(func(r aitest.Recorded) aitest.Reply {
				return aitest.Reply{Text: "", Reasoning: "let me see", ToolCalls: []aitest.ToolCall{{Name: "weather", Arguments: `{"city":"Paris"}`}}}
			})
			var out struct {
				Output    string `json:"output"`
				Reasoning string `json:"reasoning"`
				ToolCalls []struct {
					ID    string         `json:"id"`
					Name  string         `json:"name"`
					Input map[string]any `json:"input"`
				} `json:"toolCalls"`
				Metadata struct {
					Provider string `json:"provider"`
					Model    string `json:"model"`
					Usage    struct {
						InputTokens  int64   `json:"inputTokens"`
						InputCost    float64 `json:"inputCost"`
						OutputTokens int64   `json:"outputTokens"`
						OutputCost   float64 `json:"outputCost"`
					} `json:"usage"`
					Cost       float64 `json:"cost"`
					StopReason string  `json:"stopReason"`
					Warnings   []struct{ Type, Message string }
				} `json:"metadata"`
			}
			call(owner, "/v2/cognitive/generate-text", map[string]any{
				"model": []string{"openai:gpt-4o", "best"}, "systemPrompt": "You are terse.", "temperature": 0.2, "maxTokens": 300,
				"stopSequences": "###", "responseFormat": "json", "search": true, "reasoningEffort": "low",
				"messages": []any{
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "weather? "},
						map[string]any{"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}, map[string]any{"type": "audio", "url": "https://example.test/a.wav"}}},
					map[string]any{"role": "assistant", "type": "tool_calls", "content": nil, "toolCalls": []any{map[string]any{"id": "c0", "type": "function",
						"function": map[string]any{"name": "weather", "arguments": map[string]any{"city": "Rome"}}}}},
					map[string]any{"role": "user", "type": "tool_result", "toolResultCallId": "c0", "content": `{"temp":20}`},
				},
				"tools":       []any{map[string]any{"name": "weather", "description": "the weather", "parameters": map[string]any{"type": "object"}}},
				"toolControl": map[string]any{"mode": "specific", "toolName": "weather", "parallel": false},
				"options":     map[string]any{"requestId": "r1"}, "meta": map[string]any{"promptSource": "test"},
			}).decode(&out)
			if len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "weather" || out.ToolCalls[0].Input["city"] != "Paris" || out.ToolCalls[0].ID == "" ||
				out.Reasoning != "let me see" || out.Metadata.StopReason != "tool_calls" || out.Metadata.Model != "big-1" || out.Metadata.Provider == "" {
				t.Fatalf("answer: %+v", out)
			}
			rec := model.Requests()[0]
			wantIn, wantOut := aitest.PromptTokens(rec), aitest.CompletionTokens("")
			if u := out.Metadata.Usage; u.InputTokens != wantIn || u.OutputTokens != wantOut || u.InputCost != float64(wantIn)*2/1e6 || u.OutputCost != float64(wantOut)*4/1e6 {
				t.Errorf("usage %+v; the model server counted %d and %d tokens", u, wantIn, wantOut)
			}
			warned := map[string]bool{}
			for _, w := range out.Metadata.Warnings {
				warned[w.Type+": "+strings.SplitN(w.Message, ":", 2)[0]] = true
			}
			for _, want := range []string{"fallback_used: openai", "parameter_ignored: search", "provider_limitation: messages.0.content.2"} {
				if !warned[want] {
					t.Errorf("no warning %q in %+v", want, out.Metadata.Warnings)
				}
			}
			var sent struct {
				Model    string `json:"model"`
				Messages []struct {
					Role       string          `json:"role"`
					Content    json.RawMessage `json:"content"`
					ToolCalls  []any           `json:"tool_calls"`
					ToolCallID string          `json:"tool_call_id"`
				} `json:"messages"`
				Temperature       float64         `json:"temperature"`
				MaxTokens         int             `json:"max_tokens"`
				Stop              []string        `json:"stop"`
				ResponseFormat    map[string]any  `json:"response_format"`
				ToolChoice        json.RawMessage `json:"tool_choice"`
				ParallelToolCalls *bool           `json:"parallel_tool_calls"`
				Tools             []any           `json:"tools"`
				ReasoningEffort   string          `json:"reasoning_effort"`
			}
			if err := json.Unmarshal(rec.Body, &sent); err != nil {
				t.Fatal(err)
			}
			if sent.Model != "big-1" || len(sent.Messages) != 4 || sent.Messages[0].Role != "system" || string(sent.Messages[0].Content) != `"You are terse."` ||
				sent.Messages[2].Role != "assistant" || len(sent.Messages[2].ToolCalls) != 1 || sent.Messages[3].Role != "tool" || sent.Messages[3].ToolCallID != "c0" ||
				string(sent.Messages[3].Content) != `"{\"temp\":20}"` || sent.Temperature != 0.2 || sent.MaxTokens != 300 || len(sent.Stop) != 1 || sent.Stop[0] != "###" ||
				sent.ResponseFormat["type"] != "json_object" || string(sent.ToolChoice) != `{"function":{"name":"weather"},"type":"function"}` ||
				sent.ParallelToolCalls == nil || *sent.ParallelToolCalls || len(sent.Tools) != 1 || sent.ReasoningEffort != "low" {
				t.Errorf("the model server received: %s", rec.Body)
			}
			if !strings.Contains(string(sent.Messages[1].Content), `"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}`) || strings.Contains(string(rec.Body), "a.wav") {
				t.Errorf("the user's parts reached the model server as %s", sent.Messages[1].Content)
			}

			// fast and auto; a stream.
			model.Respond(nil)
			var plain struct {
				Output   string
				Metadata struct{ Model string }
			}
			call(owner, "/v2/cognitive/generate-text", map[string]any{"model": "fast", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}).decode(&plain)
			if plain.Output != "echo: hi" || plain.Metadata.Model != "small-1" {
				t.Errorf("fast: %+v", plain)
			}
			res := call(owner, "/v2/cognitive/generate-text-stream", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "one two three"}}, "stream": true})
			if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/x-ndjson") {
				t.Fatalf("stream: %d %s %s", res.Status, res.Header.Get("Content-Type"), res.Body)
			}
			var lines []map[string]any
			sc := bufio.NewScanner(bytes.NewReader(res.Body))
			for sc.Scan() {
				var l map[string]any
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				lines = append(lines, l)
			}
			var text strings.Builder
			for _, l := range lines[:len(lines)-1] {
				s, _ := l["output"].(string)
				text.WriteString(s)
				if l["finished"] != nil || l["created"] == nil {
					t.Errorf("a piece of the stream: %v", l)
				}
			}
			last := lines[len(lines)-1]
			md, _ := last["metadata"].(map[string]any)
			if text.String() != "echo: one two three" || len(lines) < 4 || last["finished"] != true || md["model"] != "mid-1" || md["ttft"] == nil {
				t.Errorf("stream lines: %v", lines)
			}

			// The models, with their aliases and prices.
			var models struct {
				Models []struct {
					ID      string   `json:"id"`
					Aliases []string `json:"aliases"`
					Input   struct {
						MaxTokens       int     `json:"maxTokens"`
						CostPer1MTokens float64 `json:"costPer1MTokens"`
					} `json:"input"`
				} `json:"models"`
			}
			owner.raw(http.MethodGet, "/v2/cognitive/models", nil, "x-bot-id", botID).decode(&models)
			if len(models.Models) != 3 || models.Models[0].ID != "big-1" || models.Models[0].Aliases[0] != "best" || models.Models[0].Input.CostPer1MTokens != 2 {
				t.Errorf("models: %+v", models.Models)
			}

			// Every call is in the workspace's AI Spend: 3 calls, one priced at
			// big-1's, one unpriced (small-1), one at mid-1's.
			want := (float64(wantIn)*2 + float64(wantOut)*4) / 1e6
			streamRec := model.Requests()[2]
			want += float64(aitest.PromptTokens(streamRec)+aitest.CompletionTokens("echo: one two three")) / 1e6
			if got := aiSpend(t, owner, ""); got.Value < want-1e-9 || got.Value > want+1e-9 {
				t.Errorf("AI Spend %v, want %v", got.Value, want)
			}

			// Refused: a viewer; a bad body, naming the field; past the limit;
			// the model server failing.
			viewer, _ := owner.addMember("viewer")
			call(viewer, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}).fail(403, "Forbidden")
			call(owner, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "hi"}}}).fail(400, "InvalidPayload", "messages.0.role")
			call(owner, "/v2/cognitive/generate-text", map[string]any{"messages": []any{}}).fail(400, "InvalidPayload", "messages")
			model.Fail(8, http.StatusServiceUnavailable)
			call(owner, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}).fail(503, "ServiceUnavailable", "model server")
			model.Fail(0, 0)
			model.Respond(func(aitest.Recorded) aitest.Reply { return aitest.Reply{Status: 400, Text: "context length exceeded"} })
			call(owner, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}).fail(400, "InvalidPayload", "context length exceeded")
			model.Respond(nil)

			// Each call left a line in the bot's logs: model, tokens, cost and
			// time, or why it failed; never the prompt.
			logs := string(owner.get("/v1/admin/bots/" + botID + "/logs?timeStart=2000-01-01T00:00:00Z").Body)
			for _, want := range []string{`LLM call (generate-text): model big-1, ` + fmt.Sprint(wantIn) + ` + ` + fmt.Sprint(wantOut) + ` tokens, $0.000`,
				`LLM call (generate-text-stream): model mid-1`, `LLM call (generate-text): model mid-1 failed after`, `context length exceeded`} {
				if !strings.Contains(logs, want) {
					t.Errorf("the bot's logs have no %q:\n%s", want, logs)
				}
			}
			if strings.Contains(logs, "You are terse") {
				t.Error("a prompt is in the bot's logs")
			}
			owner.in("").put("/v1/admin/workspaces/"+owner.ws, map[string]any{"spendingLimit": 0}).ok()
			n := len(model.Requests())
			call(owner, "/v2/cognitive/generate-text-stream", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}).fail(403, "QuotaExceeded", "spendingLimit")
			if len(model.Requests()) != n {
				t.Error("a workspace past its spending limit reached the model server")
			}

			// Without a model server.
			plainServer := startBackend(t, backend)
			po := plainServer.owner(t)
			pb := po.createBot(map[string]any{"name": "no-model"})["id"].(string)
			po.raw(http.MethodPost, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "x-bot-id", pb).
				fail(503, "ServiceUnavailable", "--ai-url")
		})
	}
}

// TestLLMIntegration: a bot installs the built-in LLM integration, openai,
// from the hub (any version is this one), and calls its llm interface
// actions through callAction with its own key; it reads its own bot with
// that key (not another's); uninstalling it takes the actions away. What
// is refused: another alias, a configuration, an integration the hub does
// not have, the chat API through the integration's webhook id.
func TestLLMIntegration(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			model := aitest.New(t)
			s := startBackendWith(t, backend, "--ai-url", model.URL(), "--ai-model", "mid-1", "--ai-model-accurate", "big-1")
			owner := s.owner(t)
			botID := owner.createBot(map[string]any{"name": "llm user"})["id"].(string)
			other := owner.createBot(map[string]any{"name": "other"})["id"].(string)
			key := owner.post("/v1/admin/bots/baks", map[string]any{"botId": botID}).ok()["value"].(string)
			asBot := s.as(t, key, "")

			var hub struct {
				Integration struct {
					ID         string
					Name       string
					Actions    map[string]any
					Interfaces map[string]struct{ Name, Version string }
				}
			}
			owner.get("/v1/admin/hub/integrations/openai/13.2.0").decode(&hub)
			if hub.Integration.Name != "openai" || hub.Integration.Interfaces["llm"].Version != "11.0.0" || hub.Integration.Actions["generateContent"] == nil {
				t.Fatalf("the hub's openai: %+v", hub.Integration)
			}
			owner.get("/v1/admin/hub/integrations/slack/1.0.0").fail(404, "ResourceNotFound", "slack")

			path := "/v1/admin/bots/" + botID
			owner.put(path, map[string]any{"integrations": map[string]any{"gpt": map[string]any{"integrationId": hub.Integration.ID, "enabled": true}}}).fail(400, "InvalidPayload", "integrations.gpt")
			owner.put(path, map[string]any{"integrations": map[string]any{"openai": map[string]any{"integrationId": hub.Integration.ID, "enabled": true, "configuration": map[string]any{"apiKey": "sk"}}}}).
				fail(400, "InvalidPayload", "integrations.openai.configuration")
			owner.put(path, map[string]any{"integrations": map[string]any{"slack": map[string]any{"integrationId": "intver_slack", "enabled": true}}}).fail(400, "ReferenceNotFound", "integrations.slack")
			var got struct {
				Bot struct {
					Integrations map[string]struct {
						ID, Name, Status, WebhookID string
						Enabled                     bool
					}
				}
			}
			owner.put(path, map[string]any{"integrations": map[string]any{"openai": map[string]any{"integrationId": hub.Integration.ID, "enabled": true}}}).decode(&got)
			// Keyed by integration id, as the official clients ask by default.
			in := got.Bot.Integrations[hub.Integration.ID]
			if in.ID != hub.Integration.ID || in.Name != "openai" || in.Status != "registered" || !in.Enabled || got.Bot.Integrations["chat"].Name != "chat" {
				t.Fatalf("integrations after the install: %+v", got.Bot.Integrations)
			}
			// By alias with x-multiple-integrations; a bot's key reads its own
			// bot, not another.
			got.Bot.Integrations = nil
			asBot.raw(http.MethodGet, path, nil, "x-bot-id", botID, "x-multiple-integrations", "true").decode(&got)
			if got.Bot.Integrations["openai"].Status != "registered" || got.Bot.Integrations["chat"].Name != "chat" {
				t.Errorf("getBot with the bot's key, by alias: %+v", got.Bot.Integrations)
			}
			asBot.raw(http.MethodGet, "/v1/admin/bots/"+other, nil, "x-bot-id", botID).fail(403, "Forbidden")
			// Its key sets the bot's tags only (the agent kit's runtime does).
			asBot.raw(http.MethodPut, path, map[string]any{"name": "x"}, "x-bot-id", botID).fail(403, "Forbidden", "name: a bot API key may change its bot's tags only")
			// Its webhook id is no chat webhook.
			owner.get("/chat/"+in.WebhookID+"/users/me").fail(404, "ResourceNotFound")

			action := func(typ string, input any) *response {
				return asBot.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": typ, "input": input}, "x-bot-id", botID)
			}
			var models struct {
				Output struct {
					Models []struct{ ID string }
				}
				Meta struct{ Cached bool }
			}
			action("openai:listLanguageModels", map[string]any{}).decode(&models)
			if len(models.Output.Models) != 2 || models.Output.Models[0].ID != "big-1" {
				t.Errorf("listLanguageModels: %+v", models)
			}
			model.Respond(func(aitest.Recorded) aitest.Reply {
				return aitest.Reply{ToolCalls: []aitest.ToolCall{{Name: "lookup", Arguments: `{"q":"walrus"}`}}}
			})
			var content struct {
				Output struct {
					Model   string
					Choices []struct {
						Type, StopReason string
						Content          *string
						ToolCalls        []struct {
							ID       string
							Function struct {
								Name      string
								Arguments map[string]any
							}
						}
					}
					Usage    struct{ InputTokens, OutputTokens int64 }
					Botpress struct{ Cost float64 }
				}
			}
			action("openai:generateContent", map[string]any{"model": map[string]any{"id": "big-1"}, "systemPrompt": "Use the tool.", "topP": 0.5,
				"messages":   []any{map[string]any{"role": "user", "content": "find walruses"}},
				"tools":      []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup", "argumentsSchema": map[string]any{"type": "object"}}}},
				"toolChoice": map[string]any{"type": "any"}}).decode(&content)
			c := content.Output
			if c.Model != "big-1" || len(c.Choices) != 1 || c.Choices[0].Type != "tool_calls" || c.Choices[0].Content != nil || c.Choices[0].StopReason != "tool_calls" ||
				len(c.Choices[0].ToolCalls) != 1 || c.Choices[0].ToolCalls[0].Function.Name != "lookup" || c.Choices[0].ToolCalls[0].Function.Arguments["q"] != "walrus" || c.Usage.InputTokens == 0 {
				t.Errorf("generateContent: %+v", content)
			}
			var sent struct {
				Model      string
				TopP       float64         `json:"top_p"`
				ToolChoice json.RawMessage `json:"tool_choice"`
				Messages   []struct{ Role string }
			}
			if err := json.Unmarshal(model.Requests()[0].Body, &sent); err != nil || sent.Model != "big-1" || sent.TopP != 0.5 || string(sent.ToolChoice) != `"required"` ||
				len(sent.Messages) != 2 || sent.Messages[0].Role != "system" {
				t.Errorf("the model server received %s", model.Requests()[0].Body)
			}
			if logs := string(owner.get(path + "/logs?timeStart=2000-01-01T00:00:00Z").Body); !strings.Contains(logs, "LLM call (openai:generateContent): model big-1") {
				t.Errorf("the bot's logs: %s", logs)
			}
			// The model server failing: a Runtime error whose subtype makes
			// @botpress/cognitive 0.5 try another model.
			model.Fail(8, http.StatusServiceUnavailable)
			failed := action("openai:generateContent", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
			failed.fail(400, "Runtime", "model server")
			var body struct{ Metadata map[string]any }
			if err := json.Unmarshal(failed.Body, &body); err != nil || body.Metadata["subtype"] != "UPSTREAM_PROVIDER_FAILED" {
				t.Errorf("a failed generateContent's metadata: %v", body.Metadata)
			}
			model.Fail(0, 0)
			action("openai:transcribe", map[string]any{}).fail(404, "ResourceNotFound", "generateContent")
			action("chat:listLanguageModels", map[string]any{}).fail(404, "ResourceNotFound", "chat")
			action("anthropic:listLanguageModels", map[string]any{}).fail(404, "ResourceNotFound", "anthropic")
			action("openai:generateContent", map[string]any{"messages": "hi"}).fail(400, "InvalidPayload", "input")

			// A bot moved by an archive keeps its installation.
			file := filepath.Join(t.TempDir(), "llm-bot.tar.gz")
			owner.cliOK("bots", "export", botID, "-o", file)
			res := importCLI(t, owner, file, "--name", "llm user, moved")
			got.Bot.Integrations = nil
			owner.get("/v1/admin/bots/" + res.BotID).decode(&got)
			if moved := got.Bot.Integrations[hub.Integration.ID]; moved.Status != "registered" || moved.ID != hub.Integration.ID || moved.WebhookID == in.WebhookID {
				t.Errorf("the imported bot's integrations: %+v", got.Bot.Integrations)
			}

			// Uninstalled, as bp deploy does for an integration the bot no longer
			// declares: its actions are gone; chat stays.
			got.Bot.Integrations = nil
			owner.put(path, map[string]any{"integrations": map[string]any{"openai": nil, "chat": nil}}).decode(&got)
			if _, ok := got.Bot.Integrations[hub.Integration.ID]; ok || got.Bot.Integrations["chat"].Name != "chat" {
				t.Errorf("integrations after removing openai: %+v", got.Bot.Integrations)
			}
			action("openai:listLanguageModels", map[string]any{}).fail(404, "ResourceNotFound", "openai")
		})
	}
}

// TestCognitivePerBotShare: a bot makes --ai-bot-concurrency model calls at
// once; its next waits for one of them to end, while another bot's call
// goes through at once.
func TestCognitivePerBotShare(t *testing.T) {
	t.Parallel()
	h := holdingModel(t)
	s := startBackendWith(t, "sqlite", "--ai-url", h.model.URL(), "--ai-model", "m-1", "--ai-bot-concurrency", "2")
	owner := s.owner(t)
	busy := owner.createBot(map[string]any{"name": "busy"})["id"].(string)
	other := owner.createBot(map[string]any{"name": "other"})["id"].(string)
	for i := range 2 {
		h.ask(owner, busy, fmt.Sprint("hold ", i))
	}
	h.waitRequests(2) // the busy bot's two slots are taken
	h.ask(owner, busy, "hold 2")
	h.through(owner, other, "the other bot's", "its third call")
}

// TestCognitivePerWorkspaceShare: the bots of one workspace make
// --ai-workspace-concurrency model calls at once in all; the next one, of
// any of its bots, waits, while a bot of another workspace goes through.
func TestCognitivePerWorkspaceShare(t *testing.T) {
	t.Parallel()
	h := holdingModel(t)
	s := startBackendWith(t, "sqlite", "--ai-url", h.model.URL(), "--ai-model", "m-1", "--ai-bot-concurrency", "2", "--ai-workspace-concurrency", "2")
	owner := s.owner(t)
	first := owner.createBot(map[string]any{"name": "first"})["id"].(string)
	second := owner.createBot(map[string]any{"name": "second"})["id"].(string)
	elsewhere := s.newWorkspace(t, "another team")
	outside := elsewhere.createBot(map[string]any{"name": "outside"})["id"].(string)
	h.ask(owner, first, "hold 1")
	h.ask(owner, second, "hold 2")
	h.waitRequests(2) // the workspace's two slots are taken, one by each bot
	h.ask(owner, second, "hold 3")
	h.through(elsewhere, outside, "the other workspace's", "the second bot's second call")
}

// holding is a stand-in model server whose answers to prompts starting
// with "hold" wait, and the calls made to it in the background.
type holding struct {
	t       *testing.T
	model   *aitest.Server
	held    chan struct{}
	answers chan int
	calls   int
}

func holdingModel(t *testing.T) *holding {
	h := &holding{t: t, model: aitest.New(t), held: make(chan struct{}), answers: make(chan int, 8)}
	h.model.Respond(func(r aitest.Recorded) aitest.Reply {
		if strings.HasPrefix(r.Prompt, "hold") {
			<-h.held
		}
		return aitest.Echo(r)
	})
	return h
}

func (h *holding) call(c client, bot, text string) *response {
	return c.raw(http.MethodPost, "/v2/cognitive/generate-text", map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}, "x-bot-id", bot)
}

// ask calls in the background.
func (h *holding) ask(c client, bot, text string) {
	h.calls++
	go func() { h.answers <- h.call(c, bot, text).Status }()
}

func (h *holding) waitRequests(n int) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for len(h.model.Requests()) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("the model server got %d requests, want %d", len(h.model.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// through checks that bot's call is answered while the held calls hold
// their slots and the last one asked (waiting) has not reached the model
// server; then it lets them all end.
func (h *holding) through(c client, bot, whose, waiting string) {
	h.t.Helper()
	var out struct{ Output string }
	h.call(c, bot, "free").decode(&out)
	if out.Output != "echo: free" {
		h.t.Errorf("%s answer: %q", whose, out.Output)
	}
	if n := len(h.model.Requests()); n != h.calls {
		h.t.Errorf("the model server got %d requests while the slots were taken, want %d (%s waits)", n, h.calls, waiting)
	}
	close(h.held)
	for range h.calls {
		if status := <-h.answers; status != 200 {
			h.t.Errorf("a held call answered %d", status)
		}
	}
	if n := len(h.model.Requests()); n != h.calls+1 {
		h.t.Errorf("the model server got %d requests in all, want %d", n, h.calls+1)
	}
}

// TestCognitiveLogPrompts: with --ai-log-prompts, a call's line in the
// bot's logs shows its messages and the answer.
func TestCognitiveLogPrompts(t *testing.T) {
	t.Parallel()
	model := aitest.New(t)
	s := startBackendWith(t, "sqlite", "--ai-url", model.URL(), "--ai-model", "m-1", "--ai-log-prompts")
	owner := s.owner(t)
	bot := owner.createBot(map[string]any{"name": "logged"})["id"].(string)
	owner.raw(http.MethodPost, "/v2/cognitive/generate-text", map[string]any{"systemPrompt": "You are terse.",
		"messages": []any{map[string]any{"role": "user", "content": "what is 2+2?"}}}, "x-bot-id", bot).ok()
	logs := string(owner.get("/v1/admin/bots/" + bot + "/logs?timeStart=2000-01-01T00:00:00Z").Body)
	for _, want := range []string{`LLM call (generate-text): model m-1`, `prompt:\n  system: You are terse.\n  user: what is 2+2?`, `answer: echo: what is 2+2?`} {
		if !strings.Contains(logs, strings.ReplaceAll(want, "\n", `\n`)) {
			t.Errorf("the bot's logs have no %q:\n%s", want, logs)
		}
	}
}
