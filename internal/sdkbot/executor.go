package sdkbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// Executor runs the bots written with the SDK, whose code runs outside the
// embedded VM: served at a url (or a `bp dev` tunnel), or a Node bundle in
// the bot host. It speaks the SDK's contract to them through a Caller: a
// dispatch.Executor.
type Executor struct {
	caller     *Caller
	deliveries Deliveries
	logs       LogWriter
	clock      platform.Clock
	log        *slog.Logger
	// bundles remembers, per bot version, whether its code is a Node
	// bundle (asked once per version: bundles are megabytes).
	bundles sync.Map // bot id -> bundleOf
}

var _ dispatch.Executor = (*Executor)(nil)

type bundleOf struct {
	version string
	bundle  bool
}

// Deliveries builds what a bot written with the SDK receives for a queued
// event (runtimeapi.Service).
type Deliveries interface {
	DeliveryFor(ctx context.Context, j platform.Job, p platform.BotEventJob) (runtimeapi.Delivery, error)
}

// LogWriter writes the lines of a bot's logs.
type LogWriter interface {
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
}

// NewExecutor returns an executor sending through caller.
func NewExecutor(caller *Caller, deliveries Deliveries, logs LogWriter, clock platform.Clock, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.Default()
	}
	return &Executor{caller: caller, deliveries: deliveries, logs: logs, clock: clock, log: log}
}

// Serves tells whether b is served at a url or its code is a Node bundle.
func (x *Executor) Serves(b *dispatch.Bot) bool {
	bundle := IsNodeBundle(b.Code)
	x.bundles.Store(b.ID, bundleOf{b.Version, bundle})
	return b.Spec.URL != "" || bundle
}

// bundle tells whether b's code is a Node bundle.
func (x *Executor) bundle(b *dispatch.Bot) bool {
	if v, ok := x.bundles.Load(b.ID); ok && v.(bundleOf).version == b.Version {
		return v.(bundleOf).bundle
	}
	return IsNodeBundle(b.Code)
}

// call is what Send gets for b.
func (x *Executor) call(b *dispatch.Bot, op, typ string, body []byte) Call {
	return Call{Bot: b.Bot, Version: b.Version, Bundle: x.bundle(b), Operation: op, Type: typ, Body: body}
}

// Sweep keeps nothing per bot but the bundle flags: the Node host closes
// idle processes itself.
func (x *Executor) Sweep(time.Time) { x.bundles.Clear() }

// Stop has nothing to stop: the Node host's processes end when it closes.
func (x *Executor) Stop() {}

// remoteAttempts bounds the deliveries of an event to a bot that does not
// answer at all (unreachable, or answering 502–504: a `bp dev` worker
// still starting), with backoff, before the event fails.
const remoteAttempts = 8

// Event hands one event to a bot written with the SDK: processed on a 2xx
// answer, failed on another answer or past the deadline, retried while the
// bot cannot be reached. Each attempt writes a line to the bot's logs.
func (x *Executor) Event(ctx context.Context, b *dispatch.Bot, e dispatch.Event) (dispatch.Outcome, error) {
	j := e.Job
	d, err := x.deliveries.DeliveryFor(ctx, j, e.Payload)
	if err != nil {
		return dispatch.Outcome{}, err
	}
	body, err := json.Marshal(map[string]any{"event": d.Event})
	if err != nil {
		return dispatch.Outcome{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, b.Timeout)
	start := time.Now()
	res, sendErr := x.caller.Send(cctx, x.call(b, OpEvent, d.Type, body))
	took := time.Since(start)
	cancel()
	entry := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: x.clock.Now(), UserID: d.UserID, ConversationID: d.ConversationID}
	what := fmt.Sprintf("%s (%s) to %s", d.What, d.Type, res.Via)
	reason, retry := outcome(res, sendErr, cctx, b.Timeout)
	logs := []platform.LogEntry{entry}
	switch {
	case reason == "":
		logs[0].Level, logs[0].Message = "info", fmt.Sprintf("delivered %s: %d in %s", what, res.Status, round(took))
		return dispatch.Processed(logs), nil
	case retry && j.Attempts < remoteAttempts:
		backoff := dispatch.Backoff(j.Attempts)
		logs[0].Level, logs[0].Message = "warn", fmt.Sprintf("delivering %s failed (attempt %d of %d, again in %s): %s", what, j.Attempts, remoteAttempts, backoff, reason)
		return dispatch.Outcome{Logs: logs, RetryAt: x.clock.Now().Add(backoff)}, nil
	case j.Attempts > 1:
		// The time since the event was queued: the last try's alone says little of a give-up.
		logs[0].Level, logs[0].Message = "error", fmt.Sprintf("delivering %s failed after %d tries over %s (the last took %s): %s",
			what, j.Attempts, round(x.clock.Now().Sub(j.CreatedAt)), round(took), reason)
	default:
		logs[0].Level, logs[0].Message = "error", fmt.Sprintf("delivering %s failed after %s: %s", what, round(took), reason)
	}
	return dispatch.Failed(reason, logs), nil
}

// outcome reads a bot's answer: the reason it failed ("" when it did not),
// and whether sending again may help (the bot was not reached, or said it
// is not ready; not a Node bundle that crashed on the event).
func outcome(res Result, err error, ctx context.Context, timeout time.Duration) (reason string, retry bool) {
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("the bot did not answer within its deadline (%s)", timeout), false
	case errors.Is(err, ErrUnreachable):
		return err.Error(), true
	case err != nil:
		// The bot's process crashed (or another failure where it was
		// reached): that event fails, the next one is handled.
		return err.Error(), false
	case res.Status >= 200 && res.Status < 300:
		return "", false
	}
	reason = fmt.Sprintf("the bot answered %d", res.Status)
	if msg := AnswerError(res.Status, res.Body); msg != "" {
		reason += ": " + msg
	}
	switch res.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return reason, true
	}
	return reason, false
}

// AnswerError is the message of an error answer of a bot or an integration when it is in the SDK's
// error format, else "": @botpress/sdk answers a thrown error with a
// RuntimeError's JSON ({"id", "code", "type": "Runtime", "message"}, code
// being the status). Nothing else of an answer reaches the caller or the
// bot's logs: a bot's url may name a service that is no bot, whose answers
// are not the developer's to read.
func AnswerError(status int, body []byte) string {
	// Decoded into a map, so keys match exactly (a struct would also take
	// "Type" or "mEssage"): only the SDK's own format counts.
	var e map[string]any
	if json.Unmarshal(body, &e) != nil || e["type"] != "Runtime" || e["code"] != float64(status) {
		return ""
	}
	msg, _ := e["message"].(string)
	if len(msg) > maxBotError {
		return strings.ToValidUTF8(msg[:maxBotError], "") + "…"
	}
	return msg
}

// maxBotError bounds the message of a bot's error kept in its logs.
const maxBotError = 1000

func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// Action calls an action of a bot written with the SDK (action_triggered)
// and returns its output.
func (x *Executor) Action(ctx context.Context, b *dispatch.Bot, name string, input json.RawMessage) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"type": name, "input": input})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	start := time.Now()
	res, sendErr := x.caller.Send(cctx, x.call(b, OpAction, name, body))
	took := time.Since(start)
	reason, _ := outcome(res, sendErr, cctx, b.Timeout)
	entry := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: x.clock.Now(), Level: "info",
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
	if err := x.logs.AppendLogs(context.WithoutCancel(ctx), []platform.LogEntry{entry}); err != nil {
		x.log.Error("sdk bots: writing an action's logs", "bot", b.ID, "err", err)
	}
	switch {
	case reason == "":
		return out.Output, nil
	case sendErr != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, platform.Errorf(platform.TypeOperationTimeout, "action %q: %s", name, reason)
	}
	return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %s", name, reason)
}
