package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/cognitive"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/httpapi"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/integration"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/sdkbot"
	"github.com/botplatform/botplatform/internal/store"
)

// botSearch lets bot code search its bot's files with the indexing
// service: the runtime declares its own search types, so that it does not
// depend on indexing.
type botSearch struct{ idx *indexing.Service }

var _ botruntime.Searcher = botSearch{}

func (b botSearch) Search(ctx context.Context, q botruntime.SearchQuery) ([]botruntime.SearchResult, error) {
	found, err := b.idx.Search(ctx, indexing.Query{Visibility: store.FileVisibility{BotID: q.BotID, All: true},
		Text: q.Text, Tags: q.Tags, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]botruntime.SearchResult, len(found))
	for i, r := range found {
		out[i] = botruntime.SearchResult{Passage: r.Passage, Score: r.Score, File: r.File}
	}
	return out, nil
}

// botChecker checks what a deploy brings for the executors that will run
// it: a Node bundle with the Node host, a script with the embedded VM, a
// url with the SDK bots' caller, recurring events with the dispatcher.
type botChecker struct {
	vm  *botruntime.Runtime
	sdk *sdkbot.Caller
}

var _ admin.BotChecker = botChecker{}

func (c botChecker) CheckCode(ctx context.Context, code string) (platform.CodeDefinition, error) {
	if sdkbot.IsNodeBundle(code) {
		return c.sdk.CheckCode(ctx, code)
	}
	return platform.CodeDefinition{}, c.vm.CheckCode(ctx, code)
}

func (botChecker) CheckRecurring(spec json.RawMessage) error { return dispatch.CheckRecurring(spec) }

func (c botChecker) CheckURL(url string) error { return c.sdk.CheckURL(url) }

// llmActions runs the actions of the built-in LLM integration (the llm
// interface) with the LLM API's service, charged to
// the calling bot's workspace.
type llmActions struct{ svc *cognitive.Service }

var _ dispatch.Integration = llmActions{}

func (m llmActions) Action(ctx context.Context, b *dispatch.Bot, _ platform.BotIntegration, action string, input json.RawMessage) (json.RawMessage, error) {
	return m.svc.Action(ctx, cognitive.Caller{WorkspaceID: b.WorkspaceID, BotID: b.ID}, action, input)
}

// deployedActions runs the actions of the integrations workspaces deployed,
// in their code.
type deployedActions struct{ r *integration.Runner }

var _ dispatch.Integration = deployedActions{}

func (d deployedActions) Action(ctx context.Context, b *dispatch.Bot, in platform.BotIntegration, action string, input json.RawMessage) (json.RawMessage, error) {
	return d.r.Action(ctx, b.Bot, in, action, input)
}

// webhookDelivery hands providers' webhooks to installed integrations'
// code, and logs each in the bot's logs with its answer and duration.
type webhookDelivery struct {
	r   *integration.Runner
	st  store.Store
	log *slog.Logger
}

var _ httpapi.Webhooks = webhookDelivery{}

func (d webhookDelivery) Webhook(ctx context.Context, webhookID string, admit func(string) error, read func() (httpapi.WebhookRequest, error)) (httpapi.WebhookAnswer, error) {
	b, in, err := d.r.Installation(ctx, webhookID)
	if err != nil {
		return httpapi.WebhookAnswer{}, err
	}
	if err := admit(b.ID); err != nil {
		return httpapi.WebhookAnswer{}, err
	}
	req, err := read()
	if err != nil {
		return httpapi.WebhookAnswer{}, err
	}
	start := time.Now()
	ans, err := d.r.Receive(ctx, b, in, integration.Request{Method: req.Method, Path: req.Path, Query: req.Query, Header: req.Header, Body: req.Body})
	took := time.Since(start).Round(time.Millisecond)
	entry := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: time.Now(), Level: "info",
		Message: fmt.Sprintf("[%s] webhook %s %s: %d in %s", in.Name, req.Method, req.Path, ans.Status, took)}
	if err != nil {
		entry.Level, entry.Message = "error", fmt.Sprintf("[%s] webhook %s %s failed after %s: %v", in.Name, req.Method, req.Path, took, err)
	} else if ans.Status >= 400 {
		entry.Level = "warn"
	}
	if lerr := d.st.AppendLogs(context.WithoutCancel(ctx), []platform.LogEntry{entry}); lerr != nil {
		d.log.Warn("logging a webhook", "bot", b.ID, "err", lerr)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return httpapi.WebhookAnswer{}, platform.Errorf(platform.TypeOperationTimeout, "integration %s did not answer the webhook in time", in.Name)
		}
		var pe *platform.Error
		if errors.As(err, &pe) {
			return httpapi.WebhookAnswer{}, err
		}
		return httpapi.WebhookAnswer{}, platform.Errorf(platform.TypeRuntime, "integration %s could not take the webhook (the bot's logs say why)", in.Name)
	}
	return httpapi.WebhookAnswer{Status: ans.Status, Header: ans.Header, Body: ans.Body}, nil
}

// chatActions runs the actions of the built-in chat and webchat
// integrations: chat:sendEvent, a custom event from the bot to the
// conversation's listeners (what `bots/echo` of the public repository
// calls), and the typing indicator's startTypingIndicator and
// stopTypingIndicator (the typing-indicator interface's input:
// conversationId, messageId, timeout in milliseconds); and the webchat
// integration's own (webchatActions).
type chatActions struct {
	rt   *runtimeapi.Service
	chat *chat.Service
}

var _ dispatch.Integration = chatActions{}

func (c chatActions) Action(ctx context.Context, b *dispatch.Bot, in platform.BotIntegration, action string, input json.RawMessage) (json.RawMessage, error) {
	var args struct {
		ConversationID string          `json:"conversationId"`
		Payload        json.RawMessage `json:"payload"`
		Timeout        *float64        `json:"timeout"`
	}
	switch {
	case action == "sendEvent", action == "startTypingIndicator", action == "stopTypingIndicator":
	case in.IntegrationID == platform.WebchatIntegrationID:
		return c.webchat(ctx, b, action, input)
	default:
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the chat integration's actions are sendEvent, startTypingIndicator and stopTypingIndicator", "chat:"+action)
	}
	if err := json.Unmarshal(input, &args); err != nil || args.ConversationID == "" {
		return nil, platform.Invalid("input.conversationId", "is required")
	}
	if action != "sendEvent" {
		if args.Timeout != nil && (*args.Timeout < 0 || *args.Timeout > 600_000) {
			return nil, platform.Invalid("input.timeout", "milliseconds from 0 to 600000")
		}
		conv, err := c.rt.Conversation(ctx, b.ID, args.ConversationID)
		if err != nil {
			return nil, err
		}
		timeout := 0
		if args.Timeout != nil {
			timeout = int(*args.Timeout)
		}
		c.chat.Typing(conv, action == "startTypingIndicator", timeout)
		return json.RawMessage(`{}`), nil
	}
	var payload map[string]any
	if json.Unmarshal(args.Payload, &payload) != nil || payload == nil {
		return nil, platform.Invalid("input.payload", "must be an object")
	}
	conv, err := c.rt.Conversation(ctx, b.ID, args.ConversationID)
	if err != nil {
		return nil, err
	}
	if _, err := c.chat.BotEvent(ctx, conv, platform.NewID("evt_"), args.Payload, time.Time{}); err != nil {
		return nil, err
	}
	return json.RawMessage(`{}`), nil
}

// webchatActions are the webchat integration's own actions (webchat@0.3's):
// getUserData {userId} → {userData}; showWebchat, hideWebchat,
// toggleWebchat {conversationId}; configWebchat {conversationId, config: a
// JSON object as a string}; customEvent {conversationId, event: JSON as a
// string}.
var webchatActions = []string{"getUserData", "showWebchat", "hideWebchat", "toggleWebchat", "configWebchat", "customEvent"}

func (c chatActions) webchat(ctx context.Context, b *dispatch.Bot, action string, input json.RawMessage) (json.RawMessage, error) {
	var args struct {
		UserID         string `json:"userId"`
		ConversationID string `json:"conversationId"`
		Config         string `json:"config"`
		Event          string `json:"event"`
	}
	if !slices.Contains(webchatActions, action) {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the webchat integration's actions are sendEvent, startTypingIndicator, stopTypingIndicator, %s", "webchat:"+action, strings.Join(webchatActions, ", "))
	}
	if err := json.Unmarshal(input, &args); err != nil {
		return nil, platform.Invalid("input", "must be an object of strings")
	}
	if action == "getUserData" {
		if args.UserID == "" {
			return nil, platform.Invalid("input.userId", "is required")
		}
		data, err := c.chat.WebchatUserData(ctx, b.ID, args.UserID)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"userData": data})
	}
	if args.ConversationID == "" {
		return nil, platform.Invalid("input.conversationId", "is required")
	}
	conv, err := c.rt.Conversation(ctx, b.ID, args.ConversationID)
	if err != nil {
		return nil, err
	}
	switch action {
	case "showWebchat", "hideWebchat", "toggleWebchat":
		c.chat.WebchatVisibility(conv, strings.TrimSuffix(action, "Webchat"))
	case "configWebchat":
		var config map[string]any
		if json.Unmarshal([]byte(args.Config), &config) != nil || config == nil {
			return nil, platform.Invalid("input.config", "must be a JSON object, as a string")
		}
		c.chat.WebchatConfig(conv, config)
	case "customEvent":
		var event any
		if json.Unmarshal([]byte(args.Event), &event) != nil {
			return nil, platform.Invalid("input.event", "must be JSON, as a string")
		}
		c.chat.WebchatCustom(conv, event)
	}
	return json.RawMessage(`{}`), nil
}
