// Package cognitive answers the platform's LLM API, /v2/cognitive
// (generate-text, its stream, the models), with the operator's
// OpenAI-compatible model server (--ai-url): the ids bots ask for (best,
// fast, auto, provider:model or a list) are mapped to the models the
// operator configured, each call is priced with --ai-prices and counted in
// the workspace's AI Spend, and a workspace past its spending limit is
// refused. See docs/llm.md.
package cognitive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/platform"
)

// Purpose is the purpose AI Spend records the calls of this API under.
const Purpose = "cognitive"

// Provider is what metadata.provider says of every answer: the operator's
// OpenAI-compatible model server.
const Provider = "openai-compatible"

// Chatter makes chat completions (ai.OpenAI).
type Chatter interface {
	Chat(ctx context.Context, r ai.ChatRequest) (ai.ChatAnswer, error)
	ChatStream(ctx context.Context, r ai.ChatRequest, each func(ai.ChatDelta) error) (ai.ChatAnswer, error)
}

// Store is what the service needs of the database: AI Spend, and the
// bots' logs, where each call leaves a line.
type Store interface {
	aispend.Store
	RecordAIUsage(ctx context.Context, u platform.AIUsage) error
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	InTx(ctx context.Context, f func(ctx context.Context) error) error
}

// Config is what the service is built from.
type Config struct {
	// Model is the model server (nil: none is configured, and the API
	// answers 503).
	Model Chatter
	// AI holds the model names of the three model types and their prices.
	AI ai.Config
	// PerBot is how many model calls one bot makes at once (default 4);
	// more wait for one to end, so that a bot never waits behind another
	// bot's calls.
	PerBot int
	// PerWorkspace is how many model calls the bots of one workspace make
	// at once (default 16): a bot first waits for one of its own slots,
	// then for one of its workspace's, so that one workspace cannot take
	// the whole model server.
	PerWorkspace int
	// LogPrompts puts each call's messages and answer in its line of the
	// bot's logs (--ai-log-prompts), each cut at MaxLoggedText bytes.
	LogPrompts bool
	Log        *slog.Logger
}

// MaxLoggedText bounds the prompt and the answer a line of the bot's logs
// shows with LogPrompts.
const MaxLoggedText = 8 << 10

// Service answers the /v2/cognitive API.
type Service struct {
	store Store
	clock platform.Clock
	cfg   Config
	log   *slog.Logger
	slots sync.Map // bot id -> chan struct{} of PerBot slots, workspace id -> PerWorkspace slots
}

// New returns the service.
func New(st Store, clock platform.Clock, cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.PerBot <= 0 {
		cfg.PerBot = 4
	}
	if cfg.PerWorkspace <= 0 {
		cfg.PerWorkspace = 16
	}
	return &Service{store: st, clock: clock, cfg: cfg, log: cfg.Log}
}

// slot waits for one of the caller's bot's slots, then for one of its
// workspace's, and returns their release; it fails when ctx ends first
// (the caller left).
func (s *Service) slot(ctx context.Context, c Caller) (func(), error) {
	bot, err := s.take(ctx, "bot:"+c.BotID, s.cfg.PerBot)
	if err != nil {
		return nil, err
	}
	ws, err := s.take(ctx, "workspace:"+c.WorkspaceID, s.cfg.PerWorkspace)
	if err != nil {
		bot()
		return nil, err
	}
	return func() { ws(); bot() }, nil
}

// take waits for one of n slots named key.
func (s *Service) take(ctx context.Context, key string, n int) (func(), error) {
	v, _ := s.slots.LoadOrStore(key, make(chan struct{}, n))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Caller is who calls: the bot and its workspace, whose AI Spend pays.
type Caller struct {
	WorkspaceID, BotID string
}

// Request is generate-text's body (cognitive's CognitiveRequest).
type Request struct {
	Messages        []Message       `json:"messages"`
	Model           json.RawMessage `json:"model"` // an id or a list of ids
	Temperature     *float64        `json:"temperature"`
	TopP            *float64        `json:"-"` // the llm interface's (generateContent) only
	SystemPrompt    string          `json:"systemPrompt"`
	MaxTokens       int             `json:"maxTokens"`
	StopSequences   json.RawMessage `json:"stopSequences"` // a string or a list
	Stream          bool            `json:"stream"`
	ResponseFormat  string          `json:"responseFormat"`
	ReasoningEffort string          `json:"reasoningEffort"`
	Search          json.RawMessage `json:"search"`
	Tools           []Tool          `json:"tools"`
	ToolControl     *ToolControl    `json:"toolControl"`
	Options         json.RawMessage `json:"options"`
	Meta            json.RawMessage `json:"meta"`
}

// Message is one turn of a Request.
type Message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"` // a string, parts or null
	Type             string          `json:"type"`
	ToolCalls        []MessageCall   `json:"toolCalls"`
	ToolResultCallID string          `json:"toolResultCallId"`
}

// MessageCall is a tool call of an assistant's turn.
type MessageCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// Part is a part of a message's content.
type Part struct {
	Type     string `json:"type"` // text, image or audio
	Text     string `json:"text"`
	URL      string `json:"url"`
	MimeType string `json:"mimeType"`
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// ToolControl says how the model uses the tools.
type ToolControl struct {
	Mode     string `json:"mode"` // auto, none, required, specific
	ToolName string `json:"toolName"`
	Parallel *bool  `json:"parallel"`
}

// Response is generate-text's answer (cognitive's CognitiveResponse).
type Response struct {
	Output    string     `json:"output"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Metadata  Metadata   `json:"metadata"`
}

// ToolCall is a tool call the model asked for.
type ToolCall struct {
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// Metadata says what ran and what it cost.
type Metadata struct {
	Provider   string    `json:"provider"`
	Model      string    `json:"model"`
	Usage      Usage     `json:"usage"`
	Cost       float64   `json:"cost"` // US dollars
	Cached     bool      `json:"cached"`
	Latency    int64     `json:"latency"`        // milliseconds
	TTFT       *int64    `json:"ttft,omitempty"` // milliseconds, streams only
	StopReason string    `json:"stopReason"`
	Warnings   []Warning `json:"warnings,omitempty"`
}

// Usage is a call's tokens and their cost in US dollars.
type Usage struct {
	InputTokens  int64   `json:"inputTokens"`
	InputCost    float64 `json:"inputCost"`
	OutputTokens int64   `json:"outputTokens"`
	OutputCost   float64 `json:"outputCost"`
}

// Warning tells of a parameter the call could not honour.
type Warning struct {
	Type    string `json:"type"` // parameter_ignored, provider_limitation, fallback_used
	Message string `json:"message"`
}

// Chunk is a line of generate-text-stream's answer.
type Chunk struct {
	Output    string     `json:"output,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Created   int64      `json:"created"` // Unix milliseconds
	Finished  bool       `json:"finished,omitempty"`
	Metadata  *Metadata  `json:"metadata,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// GenerateText answers req with one call of the model server.
func (s *Service) GenerateText(ctx context.Context, c Caller, req Request) (Response, error) {
	return s.generateText(ctx, c, req, "generate-text")
}

// generateText is GenerateText, named in the bot's logs as via.
func (s *Service) generateText(ctx context.Context, c Caller, req Request, via string) (Response, error) {
	call, err := s.prepare(ctx, c, req, via)
	if err != nil {
		return Response{}, err
	}
	release, err := s.slot(ctx, c)
	if err != nil {
		return Response{}, err
	}
	defer release()
	start := time.Now()
	ans, err := s.cfg.Model.Chat(ctx, call.chat)
	if err != nil {
		return Response{}, s.failed(ctx, c, call, time.Since(start), err)
	}
	return s.answered(ctx, c, call, ans, time.Since(start)), nil
}

// GenerateTextStream answers req as a stream: emit gets each piece of text
// as the model server sends it, then the last chunk (finished, with the
// tool calls and the metadata). An error before the first emit is the
// call's error (nothing was sent); after it, the stream ends with a last
// chunk that carries the error.
func (s *Service) GenerateTextStream(ctx context.Context, c Caller, req Request, emit func(Chunk) error) error {
	call, err := s.prepare(ctx, c, req, "generate-text-stream")
	if err != nil {
		return err
	}
	release, err := s.slot(ctx, c)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	emitted := false
	ans, err := s.cfg.Model.ChatStream(ctx, call.chat, func(d ai.ChatDelta) error {
		emitted = true
		return emit(Chunk{Output: d.Content, Reasoning: d.Reasoning, Created: s.clock.Now().UnixMilli()})
	})
	if err != nil {
		err = s.failed(ctx, c, call, time.Since(start), err)
		if !emitted {
			return err
		}
		return emit(Chunk{Finished: true, Error: err.Error(), Created: s.clock.Now().UnixMilli()})
	}
	resp := s.answered(ctx, c, call, ans, time.Since(start))
	ttft := ans.FirstToken.Milliseconds()
	resp.Metadata.TTFT = &ttft
	return emit(Chunk{Finished: true, ToolCalls: resp.ToolCalls, Metadata: &resp.Metadata, Created: s.clock.Now().UnixMilli()})
}

// call is a request turned into the model server's.
type call struct {
	chat     ai.ChatRequest
	warnings []Warning
	via      string // what the bot called, for its logs
}

// prepare checks that a model server is there and the workspace may spend,
// and turns req into a chat completion.
func (s *Service) prepare(ctx context.Context, c Caller, req Request, via string) (*call, error) {
	if s.cfg.Model == nil {
		return nil, platform.Errorf(platform.TypeUnavailable, "this server has no model server: its operator sets one with --ai-url (docs/llm.md)")
	}
	left, limit, err := aispend.SpendLeft(ctx, s.store, c.WorkspaceID, s.clock.Now())
	if err != nil {
		return nil, err
	}
	if left == 0 {
		return nil, platform.Errorf(platform.TypeQuotaExceeded, "AI Spend limit reached: this workspace's monthly spending limit is $%.0f; raise spendingLimit or wait for next month", aispend.Dollars(limit))
	}
	out := &call{via: via}
	ids, err := stringOrList("model", req.Model)
	if err != nil {
		return nil, err
	}
	out.chat.Model, out.warnings = s.resolve(ids)
	if req.SystemPrompt != "" {
		out.chat.Messages = append(out.chat.Messages, ai.ChatMessage{Role: "system", Content: req.SystemPrompt})
	}
	for i, m := range req.Messages {
		msg, warn, err := chatMessage(fmt.Sprintf("messages.%d", i), m)
		if err != nil {
			return nil, err
		}
		out.chat.Messages = append(out.chat.Messages, msg)
		out.warnings = append(out.warnings, warn...)
	}
	out.chat.Temperature, out.chat.TopP, out.chat.MaxTokens = req.Temperature, req.TopP, req.MaxTokens
	if out.chat.Stop, err = stringOrList("stopSequences", req.StopSequences); err != nil {
		return nil, err
	}
	switch req.ResponseFormat {
	case "json", "json_object":
		out.chat.ResponseFormat = &ai.ResponseFormat{Type: "json_object"}
	}
	switch req.ReasoningEffort {
	case "low", "medium", "high":
		out.chat.ReasoningEffort = req.ReasoningEffort
	case "none":
		out.warnings = append(out.warnings, Warning{"parameter_ignored", "reasoningEffort none: the model server's model reasons as it is configured to"})
	}
	if len(req.Search) > 0 && string(req.Search) != "null" && string(req.Search) != "false" {
		out.warnings = append(out.warnings, Warning{"parameter_ignored", "search: web search is not available on this server"})
	}
	for _, t := range req.Tools {
		out.chat.Tools = append(out.chat.Tools, ai.Tool{Type: "function", Function: ai.ToolFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if tc := req.ToolControl; tc != nil && (len(req.Tools) > 0 || tc.Mode == "none") {
		switch tc.Mode {
		case "auto", "none", "required":
			out.chat.ToolChoice = tc.Mode
		case "specific":
			out.chat.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.ToolName}}
		}
		if tc.Mode != "none" {
			out.chat.ParallelToolCalls = tc.Parallel
		}
	}
	return out, nil
}

// stringOrList reads a field that is absent, a string or a list of
// strings.
func stringOrList(field string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, platform.Invalid(field, "must be a string or a list of strings")
	}
	return list, nil
}

// resolve maps the ids asked for, in order, to a model the operator
// configured: best is the accurate model, auto the balanced one, fast the
// inexpensive one; another id names a configured model, with or without a
// provider ("provider:model"). The first id that maps wins; none asked
// for means auto; when none maps, the balanced model answers and a warning
// says so.
func (s *Service) resolve(ids []string) (string, []Warning) {
	if len(ids) == 0 {
		return s.cfg.AI.Models[ai.Balanced], nil
	}
	var warnings []Warning
	for i, id := range ids {
		if name := s.modelFor(id); name != "" {
			if i > 0 {
				warnings = append(warnings, Warning{"fallback_used", fmt.Sprintf("%s: not served here; %s answered instead", strings.Join(ids[:i], ", "), name)})
			}
			return name, warnings
		}
	}
	name := s.cfg.AI.Models[ai.Balanced]
	return name, []Warning{{"fallback_used", fmt.Sprintf("%s: not served here; this server's balanced model, %s, answered instead", strings.Join(ids, ", "), name)}}
}

// modelFor is the configured model id names, or "": the operator's
// model map first, then best, auto and fast, then a configured model's
// own name, with or without a provider.
func (s *Service) modelFor(id string) string {
	if name, ok := s.cfg.AI.Aliases[id]; ok {
		return name
	}
	switch id {
	case "best":
		return s.cfg.AI.Models[ai.Accurate]
	case "auto":
		return s.cfg.AI.Models[ai.Balanced]
	case "fast":
		return s.cfg.AI.Models[ai.Inexpensive]
	}
	for _, candidate := range []string{id, id[strings.IndexByte(id, ':')+1:]} {
		for _, t := range []string{ai.Inexpensive, ai.Balanced, ai.Accurate} {
			if s.cfg.AI.Models[t] == candidate {
				return candidate
			}
		}
		for _, name := range s.cfg.AI.Aliases {
			if name == candidate {
				return candidate
			}
		}
	}
	return ""
}

// chatMessage turns a turn into the model server's. Audio parts are not
// sent (the models behind an OpenAI-compatible server take text and
// images): a warning says so.
func chatMessage(field string, m Message) (ai.ChatMessage, []Warning, error) {
	out := ai.ChatMessage{Role: m.Role}
	var warnings []Warning
	if m.Type == "tool_result" || m.ToolResultCallID != "" {
		out.Role, out.ToolCallID = "tool", m.ToolResultCallID
	}
	for _, tc := range m.ToolCalls {
		call := ai.ToolCall{ID: tc.ID, Type: "function"}
		call.Function.Name = tc.Function.Name
		call.Function.Arguments = "{}"
		if a := tc.Function.Arguments; len(a) > 0 && string(a) != "null" {
			call.Function.Arguments = string(a)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return out, nil, nil
	}
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		out.Content = text
		return out, nil, nil
	}
	var parts []Part
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return out, nil, platform.Invalid(field+".content", "must be a string, a list of parts or null")
	}
	var sent []ai.ContentPart
	for j, p := range parts {
		switch p.Type {
		case "text":
			sent = append(sent, ai.ContentPart{Type: "text", Text: p.Text})
		case "image":
			if p.URL == "" {
				return out, nil, platform.Invalid(fmt.Sprintf("%s.content.%d.url", field, j), "is required for an image")
			}
			sent = append(sent, ai.ContentPart{Type: "image_url", ImageURL: &ai.ImageURL{URL: p.URL}})
		default:
			warnings = append(warnings, Warning{"provider_limitation", fmt.Sprintf("%s.content.%d: %s parts are not sent to this server's models", field, j, p.Type)})
		}
	}
	if out.Role == "tool" { // a tool's result is text
		var b strings.Builder
		for _, p := range sent {
			b.WriteString(p.Text)
		}
		out.Content = b.String()
		return out, warnings, nil
	}
	out.Content = sent
	return out, warnings, nil
}

// answered records the call's usage in AI Spend and builds the answer.
func (s *Service) answered(ctx context.Context, c Caller, call *call, ans ai.ChatAnswer, took time.Duration) Response {
	cost := s.cfg.AI.Cost(ans.Model, ans.InputTokens, ans.OutputTokens)
	u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: c.WorkspaceID, BotID: c.BotID, Purpose: Purpose, Model: ans.Model,
		InputTokens: ans.InputTokens, OutputTokens: ans.OutputTokens, Cost: cost, Latency: took, CreatedAt: s.clock.Now()}
	line := fmt.Sprintf("LLM call (%s): model %s, %d + %d tokens, $%.6f, %s", call.via, ans.Model, ans.InputTokens, ans.OutputTokens,
		aispend.Dollars(cost), took.Round(time.Millisecond)) + s.transcript(call, &ans)
	if err := s.record(ctx, u, "info", line); err != nil {
		// The call was made and answered: its answer is given; the spend
		// goes unrecorded.
		s.log.Error("cognitive: recording AI Spend", "bot", c.BotID, "cost_nanodollars", cost, "err", err)
	}
	price := s.cfg.AI.Prices[ans.Model]
	md := Metadata{Provider: Provider, Model: ans.Model, Latency: took.Milliseconds(), StopReason: stopReason(ans.FinishReason),
		Usage: Usage{InputTokens: ans.InputTokens, InputCost: float64(ans.InputTokens) * price.Input / 1e6,
			OutputTokens: ans.OutputTokens, OutputCost: float64(ans.OutputTokens) * price.Output / 1e6},
		Cost: aispend.Dollars(cost), Warnings: call.warnings}
	resp := Response{Output: ans.Content, Reasoning: ans.Reasoning}
	for _, tc := range ans.ToolCalls {
		input := map[string]any{}
		if tc.Function.Arguments != "" && json.Unmarshal([]byte(tc.Function.Arguments), &input) != nil {
			input = map[string]any{}
			md.Warnings = append(md.Warnings, Warning{"provider_limitation", fmt.Sprintf("tool call %s: the model's arguments are not a JSON object: %.200q", tc.Function.Name, tc.Function.Arguments)})
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	resp.Metadata = md
	return resp
}

// failed records a failed call (it costs nothing) and says why it failed:
// the model server refused the request (400), is busy (429), or did not
// answer (503, which clients try again).
func (s *Service) failed(ctx context.Context, c Caller, call *call, took time.Duration, err error) error {
	u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: c.WorkspaceID, BotID: c.BotID, Purpose: Purpose, Model: call.chat.Model,
		Latency: took, Failed: true, CreatedAt: s.clock.Now()}
	line := fmt.Sprintf("LLM call (%s): model %s failed after %s: %v", call.via, call.chat.Model, took.Round(time.Millisecond), err) + s.transcript(call, nil)
	if rerr := s.record(ctx, u, "error", line); rerr != nil {
		s.log.Warn("cognitive: recording a failed model call", "bot", c.BotID, "err", rerr)
	}
	var pe *platform.Error
	if errors.As(err, &pe) || ctx.Err() != nil {
		return err
	}
	var se *ai.StatusError
	var out *platform.Error
	switch {
	case errors.As(err, &se) && se.Code == http.StatusTooManyRequests:
		return platform.Errorf(platform.TypeRateLimited, "%v", err)
	case errors.As(err, &se) && se.Code >= 400 && se.Code < 500:
		out = platform.Errorf(platform.TypeInvalidPayload, "the model server refused the request: %v", err)
	default:
		out = platform.Errorf(platform.TypeUnavailable, "%v", err)
	}
	// The hosted platform's word for it: @botpress/cognitive then tries
	// another model rather than give up.
	out.Metadata = map[string]any{"subtype": UpstreamFailed}
	return out
}

// UpstreamFailed is the metadata.subtype of an error of the model server.
const UpstreamFailed = "UPSTREAM_PROVIDER_FAILED"

// transcript is what a call's log line shows of its messages and of the
// answer (nil: none) when the operator asked for prompts in the logs:
// each turn as "role: text", tool calls by name, each side cut at
// MaxLoggedText bytes.
func (s *Service) transcript(call *call, ans *ai.ChatAnswer) string {
	if !s.cfg.LogPrompts {
		return ""
	}
	var prompt strings.Builder
	for _, m := range call.chat.Messages {
		prompt.WriteString("\n  " + m.Role + ": " + messageText(m.Content))
		for _, tc := range m.ToolCalls {
			prompt.WriteString(" [calls " + tc.Function.Name + "]")
		}
	}
	out := "\nprompt:" + cut(prompt.String(), MaxLoggedText)
	if ans != nil {
		answer := ans.Content
		for _, tc := range ans.ToolCalls {
			answer += " [calls " + tc.Function.Name + " " + tc.Function.Arguments + "]"
		}
		out += "\nanswer: " + cut(answer, MaxLoggedText)
	}
	return out
}

// messageText is the text of a chat message's content: a string, or its
// text parts (an image shows as [image]).
func messageText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []ai.ContentPart:
		var b strings.Builder
		for _, p := range c {
			if p.Type == "text" {
				b.WriteString(p.Text)
			} else {
				b.WriteString("[" + strings.TrimSuffix(p.Type, "_url") + "]")
			}
		}
		return b.String()
	}
	return ""
}

// cut is s cut to n bytes (at a rune boundary), marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}

// record writes a call's usage and its line in the bot's logs, in one
// transaction.
func (s *Service) record(ctx context.Context, u platform.AIUsage, level, line string) error {
	ctx = context.WithoutCancel(ctx)
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.RecordAIUsage(ctx, u); err != nil {
			return err
		}
		return s.store.AppendLogs(ctx, []platform.LogEntry{{ID: platform.NewID(platform.PrefixLog), BotID: u.BotID, Timestamp: u.CreatedAt, Level: level, Message: line}})
	})
}

// stopReason is the API's name of the model server's finish reason.
func stopReason(finish string) string {
	switch finish {
	case "stop", "":
		return "stop"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "content_filter"
	case "tool_calls", "function_call":
		return "tool_calls"
	}
	return "other"
}

// Model is an entry of the models list (cognitive's Model).
type Model struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Aliases     []string    `json:"aliases,omitempty"`
	Tags        []string    `json:"tags"`
	Input       ModelTokens `json:"input"`
	Output      ModelTokens `json:"output"`
	Lifecycle   string      `json:"lifecycle"`
}

// ModelTokens are a model's bound and price on one side of a call.
type ModelTokens struct {
	MaxTokens      int     `json:"maxTokens"`
	CostPer1MToken float64 `json:"costPer1MTokens"`
}

// Context sizes the models list gives: the model server's own are not
// known here (docs/llm.md: set the model server's context to at least
// these).
const (
	InputTokens  = 128_000
	OutputTokens = 8_192
)

// Models lists the configured models, each once, with the aliases that
// map to it (best, auto, fast, and the model map's ids) and its price.
func (s *Service) Models() []Model {
	if s.cfg.Model == nil {
		return []Model{}
	}
	type alias struct{ name, alias, tag string }
	var aliases []alias
	for _, t := range []struct{ typ, alias, tag string }{{ai.Accurate, "best", "recommended"}, {ai.Balanced, "auto", "general-purpose"}, {ai.Inexpensive, "fast", "low-cost"}} {
		if _, mapped := s.cfg.AI.Aliases[t.alias]; !mapped { // the map decides
			aliases = append(aliases, alias{s.cfg.AI.Models[t.typ], t.alias, t.tag})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.cfg.AI.Aliases)) {
		aliases = append(aliases, alias{s.cfg.AI.Aliases[id], id, "general-purpose"})
	}
	var out []Model
	for _, t := range aliases {
		name := t.name
		i := slices.IndexFunc(out, func(m Model) bool { return m.ID == name })
		if i < 0 {
			p := s.cfg.AI.Prices[name]
			out = append(out, Model{ID: name, Name: name, Description: "a model of this server's model server", Tags: []string{"general-purpose"},
				Input: ModelTokens{InputTokens, p.Input}, Output: ModelTokens{OutputTokens, p.Output}, Lifecycle: "production"})
			i = len(out) - 1
		}
		out[i].Aliases = append(out[i].Aliases, t.alias)
		if !slices.Contains(out[i].Tags, t.tag) {
			out[i].Tags = append(out[i].Tags, t.tag)
		}
	}
	return out
}
