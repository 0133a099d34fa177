package botruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sdkbot"
)

// Remote sends events and actions to bots written with the SDK, whose code
// runs outside the embedded VM (sdkbot.Caller): served at a url, or a Node
// bundle in the bot host.
type Remote interface {
	Send(ctx context.Context, c sdkbot.Call) (sdkbot.Result, error)
	CheckCode(ctx context.Context, code string) (platform.CodeDefinition, error)
	CheckURL(url string) error
}

var _ Remote = (*sdkbot.Caller)(nil)

// remoteAttempts bounds the deliveries of an event to a bot that does not
// answer at all (unreachable, or answering 502–504: a `bp dev` worker
// still starting), with backoff, before the event fails.
const remoteAttempts = 8

// CheckURL checks the url a bot is about to be served at (Remote.CheckURL);
// without a Remote no url is ever called, and any passes.
func (r *Runtime) CheckURL(url string) error {
	if r.remote == nil {
		return nil
	}
	return r.remote.CheckURL(url)
}

// serves tells whether b's events go to the remote contract.
func (r *Runtime) serves(b *botInfo) bool { return r.remote != nil && (b.Spec.URL != "" || b.bundle) }

// deliver hands one event to a bot written with the SDK and finishes its
// job: processed on a 2xx answer, failed on another answer or past the
// deadline, retried while the bot cannot be reached. Each attempt writes a
// line to the bot's logs.
func (r *Runtime) deliver(ctx context.Context, j platform.Job, p platform.BotEventJob, b *botInfo) error {
	if r.api == nil {
		return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now())
	}
	d, err := r.api.DeliveryFor(ctx, j, p)
	if errors.Is(err, platform.ErrNotFound) {
		r.endEvent(ctx, j, platform.EventIgnored, "what the event is about no longer exists")
		return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now())
	}
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"event": d.Event})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	start := time.Now()
	res, sendErr := r.remote.Send(cctx, sdkbot.Call{Bot: b.Bot, Version: b.version, Bundle: b.bundle, Operation: sdkbot.OpEvent, Type: d.Type, Body: body})
	took := time.Since(start)
	cancel()
	entry := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: r.clock.Now(), UserID: d.UserID, ConversationID: d.ConversationID}
	what := fmt.Sprintf("%s (%s) to %s", d.What, d.Type, res.Via)
	reason, retry := outcome(res, sendErr, cctx, b.timeout)
	switch {
	case reason == "":
		entry.Level, entry.Message = "info", fmt.Sprintf("delivered %s: %d in %s", what, res.Status, round(took))
		r.endEvent(ctx, j, platform.EventProcessed, "")
	case retry && j.Attempts < remoteAttempts:
		backoff := time.Duration(1<<min(j.Attempts, 8)) * 100 * time.Millisecond
		entry.Level, entry.Message = "warn", fmt.Sprintf("delivering %s failed (attempt %d of %d, again in %s): %s", what, j.Attempts, remoteAttempts, backoff, reason)
		if err := r.store.AppendLogs(ctx, []platform.LogEntry{entry}); err != nil {
			r.log.Error("bot runtime: writing a delivery's log", "bot", b.ID, "err", err)
		}
		return r.store.RetryJob(ctx, j.ID, r.clock.Now().Add(backoff))
	case j.Attempts > 1:
		// The time since the event was queued: the last try's alone says little of a give-up.
		entry.Level, entry.Message = "error", fmt.Sprintf("delivering %s failed after %d tries over %s (the last took %s): %s",
			what, j.Attempts, round(r.clock.Now().Sub(j.CreatedAt)), round(took), reason)
		r.endEvent(ctx, j, platform.EventFailed, reason)
	default:
		entry.Level, entry.Message = "error", fmt.Sprintf("delivering %s failed after %s: %s", what, round(took), reason)
		r.endEvent(ctx, j, platform.EventFailed, reason)
	}
	return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, []platform.LogEntry{entry}, r.clock.Now())
}

// outcome reads a bot's answer: the reason it failed ("" when it did not),
// and whether sending again may help (the bot was not reached, or said it
// is not ready; not a Node bundle that crashed on the event).
func outcome(res sdkbot.Result, err error, ctx context.Context, timeout time.Duration) (reason string, retry bool) {
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("the bot did not answer within its deadline (%s)", timeout), false
	case errors.Is(err, sdkbot.ErrUnreachable):
		return err.Error(), true
	case err != nil:
		// The bot's process crashed (or another failure where it was
		// reached): that event fails, the next one is handled.
		return err.Error(), false
	case res.Status >= 200 && res.Status < 300:
		return "", false
	}
	reason = fmt.Sprintf("the bot answered %d", res.Status)
	if msg := botError(res.Status, res.Body); msg != "" {
		reason += ": " + msg
	}
	switch res.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return reason, true
	}
	return reason, false
}

// botError is the message of a bot's error answer when it is in the SDK's
// error format, else "": @botpress/sdk answers a thrown error with a
// RuntimeError's JSON ({"id", "code", "type": "Runtime", "message"}, code
// being the status). Nothing else of an answer reaches the caller or the
// bot's logs: a bot's url may name a service that is no bot, whose answers
// are not the developer's to read.
func botError(status int, body []byte) string {
	var e struct {
		Code    int    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil || e.Type != "Runtime" || e.Code != status || e.Message == "" {
		return ""
	}
	if len(e.Message) > maxBotError {
		return strings.ToValidUTF8(e.Message[:maxBotError], "") + "…"
	}
	return e.Message
}

// maxBotError bounds the message of a bot's error kept in its logs.
const maxBotError = 1000

func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// remoteAction calls an action of a bot written with the SDK
// (action_triggered) and returns its output.
func (r *Runtime) remoteAction(ctx context.Context, b *botInfo, name string, input json.RawMessage) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"type": name, "input": input})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	start := time.Now()
	res, sendErr := r.remote.Send(cctx, sdkbot.Call{Bot: b.Bot, Version: b.version, Bundle: b.bundle, Operation: sdkbot.OpAction, Type: name, Body: body})
	took := time.Since(start)
	reason, _ := outcome(res, sendErr, cctx, b.timeout)
	entry := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: r.clock.Now(), Level: "info",
		Message: fmt.Sprintf("action %s to %s: %d in %s", name, res.Via, res.Status, round(took))}
	var out struct {
		Output json.RawMessage `json:"output"`
	}
	if reason == "" {
		if err := json.Unmarshal(res.Body, &out); err != nil || len(out.Output) == 0 || out.Output[0] != '{' {
			reason = `the bot's answer is not {"output": {…}}`
		}
	}
	if reason != "" {
		entry.Level, entry.Message = "error", fmt.Sprintf("action %s to %s failed after %s: %s", name, res.Via, round(took), reason)
	}
	if err := r.store.AppendLogs(context.WithoutCancel(ctx), []platform.LogEntry{entry}); err != nil {
		r.log.Error("bot runtime: writing an action's logs", "bot", b.ID, "err", err)
	}
	switch {
	case reason == "":
		return out.Output, nil
	case sendErr != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, platform.Errorf(platform.TypeOperationTimeout, "action %q: %s", name, reason)
	}
	return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %s", name, reason)
}
