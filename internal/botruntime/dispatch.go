package botruntime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// maxAttempts bounds the redeliveries of an event whose handling keeps
// failing for a reason other than the bot's code (the database, say).
const maxAttempts = 10

// Run dispatches queued events until ctx ends, then waits for the events
// in progress. It also fires the bots' recurring events.
func (r *Runtime) Run(ctx context.Context) {
	if r.cfg.ReleaseAtStart || r.cfg.Node != "" {
		if n, err := r.store.ReleaseJobs(ctx, platform.JobBotEvent, platform.ReleaseNode(r.cfg.Node, r.cfg.ReleaseAtStart)); err != nil {
			r.log.Error("bot runtime: releasing events", "err", err)
		} else if n > 0 {
			r.log.Info("bot runtime: events of the previous run queued again", "count", n)
		}
	}
	go r.recurring(ctx)
	var inflight atomic.Int64
	// starved: jobs may wait for a free worker (every worker was busy, or
	// the last claim took as many jobs as there were free workers), so a
	// worker's end must wake the loop (done).
	var starved atomic.Bool
	done := make(chan struct{}, r.cfg.Workers)
	for {
		free := r.cfg.Workers - int(inflight.Load())
		if free <= 0 {
			starved.Store(true)
			// A worker that ended before it could see starved set freed
			// a worker: look again rather than sleep.
			if r.cfg.Workers > int(inflight.Load()) {
				continue
			}
		}
		// Taken before the claim: a job committed after the claim looked
		// wakes the wait below.
		queued := r.store.Queued(platform.JobBotEvent)
		full := false
		now := r.clock.Now()
		if free > 0 {
			jobs, err := r.store.ClaimJobs(ctx, platform.JobBotEvent, r.cfg.Node, now, now.Add(r.cfg.Lease), free)
			if err != nil && ctx.Err() == nil {
				r.log.Error("bot runtime: claiming events", "err", err)
			}
			full = len(jobs) == free
			starved.Store(full)
			for _, j := range jobs {
				inflight.Add(1)
				r.inflight.Add(1)
				go func(j platform.Job) {
					defer r.inflight.Done()
					// The job's end may claim its conversation's next
					// event, which this worker then runs.
					wake := true
					for next := &j; next != nil; {
						next, wake = r.process(context.WithoutCancel(ctx), *next, ctx.Done())
					}
					inflight.Add(-1)
					if !wake && !starved.Load() {
						return // nothing waits for this worker or its job
					}
					select {
					case done <- struct{}{}:
					default:
					}
				}(j)
			}
		}
		if full {
			continue
		}
		// Sleep until the next job falls due after this claim's now: such
		// a job may be due already (time passed since), then look at once.
		// Jobs due by now are running, or wait for their subject's running
		// job, whose end wakes the loop (done).
		wait := r.cfg.Poll
		if at, ok, err := r.store.NextJobAt(ctx, platform.JobBotEvent, now); err == nil && ok {
			wait = min(max(at.Sub(r.clock.Now()), 0), wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			r.stop()
			return
		case <-queued:
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}

// stop waits for the events in progress, at most StopTimeout: then their
// processes are killed and the events handed back. Every bot process ends.
func (r *Runtime) stop() {
	idle := make(chan struct{})
	go func() { r.inflight.Wait(); close(idle) }()
	t := time.NewTimer(r.cfg.StopTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		r.log.Warn("bot runtime: stopping the events still running", "after", r.cfg.StopTimeout)
	}
	r.killProcesses()
	<-idle
}

// process handles one event and finishes its job. Failures of the bot's
// code end the event (logged); other failures hand it back for later.
// Unless stopping is closed, finishing the job claims the next job of its
// subject when it can run now, which process returns. wake is false when
// the finish found no other job of the subject left unclaimed: then no
// claim needs to look at the queue again for this job's sake.
func (r *Runtime) process(ctx context.Context, j platform.Job, stopping <-chan struct{}) (next *platform.Job, wake bool) {
	start := time.Now()
	rep := &eventReport{stopping: stopping}
	stop := store.KeepLease(ctx, r.store, r.clock, j.ID, r.cfg.Lease, r.log)
	err := r.handle(context.WithValue(ctx, reportKey{}, rep), j)
	stop()
	typ := cmp.Or(rep.typ, "unknown")
	if err == nil || errors.Is(err, platform.ErrNotFound) {
		outcome := rep.outcome()
		if err != nil {
			outcome = metrics.OutcomeIgnored
		}
		r.cfg.Metrics.BotEvent(typ, outcome, time.Since(start))
		return rep.next, !rep.quiet
	}
	if j.Attempts >= maxAttempts {
		r.cfg.Metrics.BotEvent(typ, metrics.OutcomeFailed, time.Since(start))
		r.log.Error("bot runtime: giving up on an event", "job", j.ID, "attempts", j.Attempts, "err", err)
		r.endEvent(ctx, j, platform.EventFailed, fmt.Sprintf("gave up after %d attempts", j.Attempts))
		if ferr := r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now()); ferr != nil {
			r.log.Error("bot runtime: dropping an event", "job", j.ID, "err", ferr)
		}
		return nil, true
	}
	r.cfg.Metrics.BotEvent(typ, metrics.OutcomeRetry, time.Since(start))
	backoff := time.Duration(1<<min(j.Attempts, 8)) * 100 * time.Millisecond
	r.log.Warn("bot runtime: event will be retried", "job", j.ID, "attempt", j.Attempts, "in", backoff, "err", err)
	if rerr := r.store.RetryJob(ctx, j.ID, r.clock.Now().Add(backoff)); rerr != nil && !errors.Is(rerr, platform.ErrNotFound) {
		r.log.Error("bot runtime: handing an event back", "job", j.ID, "err", rerr)
	}
	return nil, true
}

// incoming is an event ready to be handed to bot code.
type incoming struct {
	bot          *botInfo
	event        map[string]any
	message      []byte // handler argument `message`, for messages
	conversation []byte // handler argument `conversation`
	userID       string // internal ids, for state
	convID       string
	conv         *platform.Conversation // message and custom events
	at           time.Time
	what         string // how the event is named in logs
}

// errGone marks an event whose message, conversation or bot no longer
// exists: there is nothing to handle.
var errGone = errors.New("gone")

func (r *Runtime) handle(ctx context.Context, j platform.Job) error {
	var p platform.BotEventJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		r.log.Error("bot runtime: unreadable event", "job", j.ID, "err", err)
		return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now())
	}
	if rep := reportOf(ctx); rep != nil {
		rep.typ = p.Type
	}
	if p.BotID != "" && r.remote != nil {
		// Decide before load: it has effects for workflow events.
		b, err := r.botInfo(ctx, p.BotID)
		if err == nil && r.serves(b) {
			return r.deliver(ctx, j, p, b)
		}
	}
	in, err := r.load(ctx, j, p)
	if err == nil && r.serves(in.bot) {
		return r.deliver(ctx, j, p, in.bot)
	}
	if errors.Is(err, errGone) || errors.Is(err, platform.ErrNotFound) {
		r.endEvent(ctx, j, platform.EventIgnored, "what the event is about no longer exists")
		return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now())
	}
	if err != nil {
		return err
	}
	if in.bot.Code == "" {
		r.endEvent(ctx, j, platform.EventIgnored, "the bot has no code to handle it")
		return r.store.FinishJob(ctx, j.ID, keepJob(j), nil, nil, r.clock.Now())
	}
	saved, err := r.store.BotStates(ctx, in.bot.ID, in.userID, in.convID)
	if err != nil {
		return err
	}
	state := map[string]any{"bot": stateOr(saved["bot"], true), "user": stateOr(saved["user"], in.userID != ""),
		"conversation": stateOr(saved["conversation"], in.convID != "")}
	in.event["state"] = state
	eventJSON, err := json.Marshal(in.event)
	if err != nil {
		return err
	}
	id, _ := in.event["id"].(string)
	c := r.newCall(ctx, in.bot, id, in.at)
	c.userFID, _ = in.event["userId"].(string)
	c.logUser = c.userFID
	c.logConv, _ = in.event["conversationId"].(string)
	c.conv = in.conv
	var runErr error
	if j.Attempts > maxAttempts {
		// Its earlier runs ended without finishing it: the server
		// stopped (or crashed) while it ran, each time.
		runErr = fmt.Errorf("gave up: it was started %d times without finishing (the server stopped while handling it)", j.Attempts-1)
	}
	var res string
	if runErr == nil {
		res, runErr = r.invoke(c, "handle", string(eventJSON), string(in.message), string(in.conversation), in.bot.ctxJSON)
	}
	if r.retryCrash(j.ID, runErr) || errors.Is(runErr, errProcessLost) {
		return runErr
	}
	var states []platform.BotState
	if runErr == nil {
		states, runErr = r.changedStates(in, saved, res)
	}
	if runErr != nil {
		// Whatever the code did to event.state is dropped; what it sent
		// stays sent. Both must be plain to the bot's developer, who may
		// otherwise see a counter repeat after a failure.
		runErr = fmt.Errorf("%w (its state changes were dropped; messages it sent stay sent)", runErr)
		r.endEvent(ctx, j, platform.EventFailed, runErr.Error())
	} else {
		r.endEvent(ctx, j, platform.EventProcessed, "")
	}
	return r.finishJob(ctx, j, states, c.finish(in.what, runErr))
}

// finishJob ends j's handling: saves states and logs and finishes the job,
// and, under process (unless stopping), claims the next job of j's subject
// for process to run (eventReport.next).
func (r *Runtime) finishJob(ctx context.Context, j platform.Job, states []platform.BotState, logs []platform.LogEntry) error {
	if rep := reportOf(ctx); rep != nil && !closed(rep.stopping) {
		next, waiting, err := r.store.FinishJobClaimNext(ctx, j.ID, keepJob(j), states, logs, r.cfg.Node, r.clock.Now, r.cfg.Lease)
		rep.next, rep.quiet = next, err == nil && !waiting
		return err
	}
	return r.store.FinishJob(ctx, j.ID, keepJob(j), states, logs, r.clock.Now())
}

// closed tells whether ch is closed (without waiting).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// eventReport is what process learns of an event's handling for the
// metrics: its type, and how it ended (endEvent's status); and the next
// job its finish claimed, or that nothing of its subject was left (quiet).
type eventReport struct {
	typ, status string
	stopping    <-chan struct{} // closed once the dispatcher stops
	next        *platform.Job
	quiet       bool
}

type reportKey struct{}

// reportOf is the report of the event ctx handles (nil outside process).
func reportOf(ctx context.Context) *eventReport {
	rep, _ := ctx.Value(reportKey{}).(*eventReport)
	return rep
}

// outcome is the metrics' name of how the event ended.
func (e *eventReport) outcome() string {
	switch e.status {
	case platform.EventFailed:
		return metrics.OutcomeError
	case platform.EventIgnored:
		return metrics.OutcomeIgnored
	}
	return metrics.OutcomeOK
}

// endEvent records how the delivery of an event the bot created through the
// Runtime API ended (its getEvent status), before its job is finished: if
// the finish does not happen, the event is handled again and its outcome
// recorded again.
func (r *Runtime) endEvent(ctx context.Context, j platform.Job, status, reason string) {
	if rep := reportOf(ctx); rep != nil {
		rep.status = status
	}
	if !keepJob(j) {
		return // only scheduled events (and recurring firings) are recorded
	}
	if err := r.store.EndRuntimeEvent(ctx, j.ID, status, reason); err != nil {
		r.log.Warn("bot runtime: recording an event's outcome", "job", j.ID, "err", err)
	}
}

// retryCrash tells whether an event whose bot process died of something
// bot code did runs again: when other events ran in the process, it may not
// be the one at fault, so it runs once more; the next time it is.
func (r *Runtime) retryCrash(jobID string, err error) bool {
	var ce *CrashError
	r.suspectsMu.Lock()
	defer r.suspectsMu.Unlock()
	if !errors.As(err, &ce) || ce.Alone || r.suspects[jobID] {
		delete(r.suspects, jobID)
		return false
	}
	r.suspects[jobID] = true
	return true
}

// keepJob tells whether a job stays as a done row (BotEventJob.Keep) for
// doneRetention.
func keepJob(j platform.Job) bool {
	var p platform.BotEventJob
	_ = json.Unmarshal(j.Payload, &p)
	return p.Keep()
}

// doneRetention is how long done recurring and scheduled jobs are kept.
const doneRetention = 24 * time.Hour

func stateOr(saved json.RawMessage, scoped bool) any {
	if !scoped {
		return nil
	}
	if saved == nil {
		return map[string]any{}
	}
	return saved
}

// changedStates checks the state the code left and returns the scopes that
// changed. A scope over the limit fails the event; nothing is saved.
func (r *Runtime) changedStates(in *incoming, saved map[string]json.RawMessage, res string) ([]platform.BotState, error) {
	var out struct {
		State map[string]*string `json:"state"`
	}
	if err := json.Unmarshal([]byte(res), &out); err != nil {
		return nil, fmt.Errorf("the handler's result: %w", err)
	}
	var states []platform.BotState
	for _, scope := range []string{platform.StateBot, platform.StateUser, platform.StateConversation} {
		p := out.State[scope]
		if p == nil {
			continue
		}
		v := *p
		if len(v) > r.cfg.StateLimit {
			return nil, fmt.Errorf("event.state.%s is %d bytes of JSON; the limit is %d: the state was not saved", scope, len(v), r.cfg.StateLimit)
		}
		old := saved[scope]
		if old == nil {
			old = json.RawMessage(`{}`)
		}
		if v == string(old) {
			continue
		}
		id := map[string]string{platform.StateBot: "", platform.StateUser: in.userID, platform.StateConversation: in.convID}[scope]
		states = append(states, platform.BotState{BotID: in.bot.ID, Scope: scope, ScopeID: id, Value: json.RawMessage(v)})
	}
	return states, nil
}

// load reads what an event is about and builds its event object.
func (r *Runtime) load(ctx context.Context, j platform.Job, p platform.BotEventJob) (*incoming, error) {
	switch p.Type {
	case platform.BotEventMessage, platform.BotEventChat:
		conv, err := r.store.GetConversationByID(ctx, p.ConversationID)
		if err != nil {
			return nil, err
		}
		b, err := r.botInfo(ctx, conv.BotID)
		if err != nil {
			return nil, err
		}
		convJSON, _ := json.Marshal(chat.ConversationJSON(conv))
		in := &incoming{bot: b, conversation: convJSON, convID: conv.ID, conv: &conv}
		var userID string
		var payload json.RawMessage
		if p.Type == platform.BotEventMessage {
			m, err := r.store.GetMessage(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			view := r.chat.Views(ctx, conv, []platform.Message{m})[0]
			in.message, _ = json.Marshal(chat.MessageJSON(view))
			userID, payload, in.at = m.UserID, m.Payload, m.CreatedAt
			in.event = map[string]any{"type": "message", "messageId": m.ID, "userId": view.UserFID}
			in.what = "message " + m.ID
		} else {
			e, err := r.store.GetChatEvent(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			userID, payload, in.at = e.UserID, e.Payload, e.CreatedAt
			in.event = map[string]any{"type": "custom", "userId": r.chat.UserFID(ctx, conv.BotID, e.UserID)}
			in.what = "event " + e.ID
		}
		in.userID = userID
		ev := in.event
		ev["botId"], ev["conversationId"], ev["createdOn"] = b.ID, conv.FID, platform.FormatTime(in.at)
		ev["direction"], ev["id"], ev["integration"] = "incoming", p.ID, "chat"
		ev["payload"], ev["preview"], ev["tags"] = payload, Preview(payload), emptyTags()
		return in, nil
	case platform.BotEventWorkflow:
		// A workflow_update: the Runtime API says what it carries (and
		// times the workflow out, for a time-out), then it is delivered as
		// a scheduled event is.
		if r.api == nil {
			return nil, fmt.Errorf("%w: workflows are not served", errGone)
		}
		payload, err := r.api.WorkflowEvent(ctx, p.BotID, p.WorkflowID, p.Update)
		if errors.Is(err, platform.ErrNotFound) {
			return nil, fmt.Errorf("%w: workflow %s has nothing to deliver", errGone, p.WorkflowID)
		}
		if err != nil {
			return nil, err
		}
		p.EventType, p.Payload, p.EventID = "workflow_update", payload, "evt_"+strings.TrimPrefix(j.ID, "job_")
		fallthrough
	case platform.BotEventStateExp:
		if p.Type == platform.BotEventStateExp { // its payload, {state}, was written when it lapsed
			p.EventType, p.EventID = "state_expired", "evt_"+strings.TrimPrefix(j.ID, "job_")
		}
		fallthrough
	case platform.BotEventRecurring, platform.BotEventScheduled:
		b, err := r.botInfo(ctx, p.BotID)
		if err != nil {
			return nil, err
		}
		in := &incoming{bot: b, at: j.RunAfter, what: p.Type + " event " + p.EventID}
		payload := rawOr(p.Payload, `{}`)
		ev := map[string]any{"botId": b.ID, "createdOn": platform.FormatTime(j.RunAfter), "direction": "incoming",
			"id": p.EventID, "payload": payload, "preview": Preview(payload), "tags": emptyTags(), "type": p.EventType}
		trigger := map[string]any{"eventName": p.EventType}
		switch p.Type {
		case platform.BotEventRecurring:
			trigger["flowId"], trigger["nodeId"] = "recurring", p.Name
		case platform.BotEventWorkflow:
			trigger["flowId"], trigger["nodeId"] = "workflow", p.WorkflowID
			ev["workflowId"] = p.WorkflowID
		case platform.BotEventStateExp:
			trigger["flowId"], trigger["nodeId"] = "state", p.EventID
		default:
			trigger["flowId"], trigger["nodeId"] = "schedule", p.EventID
		}
		if p.ConversationID != "" {
			conv, err := r.store.GetConversationByID(ctx, p.ConversationID)
			if err != nil {
				return nil, err
			}
			in.convID = conv.ID
			in.conversation, _ = json.Marshal(chat.ConversationJSON(conv))
			ev["conversationId"], trigger["conversationId"], ev["integration"] = conv.FID, conv.FID, "chat"
			trigger["integration"] = "chat"
		}
		if p.UserID != "" {
			fid := r.chat.UserFID(ctx, b.ID, p.UserID)
			in.userID = p.UserID
			ev["userId"], trigger["userId"] = fid, fid
		}
		if p.MessageID != "" {
			ev["messageId"] = p.MessageID
		}
		ev["trigger"] = trigger
		in.event = ev
		return in, nil
	}
	return nil, fmt.Errorf("%w: unknown event type %q", errGone, p.Type)
}
