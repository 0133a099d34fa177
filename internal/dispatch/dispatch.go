// Package dispatch hands the bots' queued events to the code that runs
// them. It claims the bot_event jobs, asks the executor that serves each
// bot (the embedded VM, a Node bundle, a bot at a url) to handle it,
// records how each event ended and finishes its job, claiming the next
// event of the same conversation at once. It also fires the bots'
// recurring events and routes action calls. It runs no bot code itself.
package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Config tunes the dispatcher.
type Config struct {
	// Metrics counts handled events (nil: none).
	Metrics *metrics.Metrics
	// Workers is how many events run at once (each conversation's events
	// still run one at a time, in order).
	Workers int
	// Timeout is the deadline of an invocation for bots that set no
	// maxExecutionTime; MaxTimeout caps what a bot may set.
	Timeout, MaxTimeout time.Duration
	// Poll is the longest the dispatcher sleeps before looking for work
	// queued by another process.
	Poll time.Duration
	// Lease is how long a claimed event is held without being renewed
	// (default --job-lease's): its worker renews it while the event runs;
	// past it, the worker is taken for dead and the event handled again.
	Lease time.Duration
	// Node is this process's id among those sharing the database: its
	// claims are recorded under it, and at start it hands back the events
	// it held when it last stopped (a crash).
	Node string
	// ReleaseAtStart hands back, at start, every event claimed by anyone
	// (a single process owns the database).
	ReleaseAtStart bool
	// StopTimeout bounds the wait for the events in progress when the
	// dispatcher stops; past it the executors stop them and the events
	// are handed back.
	StopTimeout time.Duration
	// States expires the Runtime API's states, whose state_expired events
	// are then dispatched (nil: none expire).
	States StateExpirer
	// Integrations run the actions of the built-in integrations, by
	// integration id.
	Integrations map[string]Integration
	// Deployed runs the actions of the integrations workspaces deployed
	// (nil: they have none here).
	Deployed Integration
	Log      *slog.Logger
}

// StateExpirer expires the Runtime API's states that lapsed by now
// (runtimeapi.Service).
type StateExpirer interface {
	ExpireStates(ctx context.Context, now time.Time) (int, error)
}

// Dispatcher dispatches the bots' events to the executors.
type Dispatcher struct {
	store Store
	clock platform.Clock
	cfg   Config
	log   *slog.Logger
	// execs are asked in order which serves a bot.
	execs []Executor

	recurringChanged chan struct{}

	botsMu sync.Mutex
	bots   map[string]*Bot

	inflight sync.WaitGroup
}

// New returns a dispatcher handing events to execs (the first that serves
// a bot runs its code); Run starts it.
func New(st Store, clock platform.Clock, cfg Config, execs ...Executor) *Dispatcher {
	// Settings left zero take serve's defaults.
	defaults := config.Defaults()
	if cfg.Workers <= 0 {
		cfg.Workers = defaults.BotWorkers
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaults.BotTimeout
	}
	if cfg.MaxTimeout < cfg.Timeout {
		cfg.MaxTimeout = max(cfg.Timeout, defaults.BotTimeoutMax)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = defaults.BotPoll
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaults.JobLease
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = defaults.ShutdownTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Dispatcher{store: st, clock: clock, cfg: cfg, log: cfg.Log, execs: execs,
		recurringChanged: make(chan struct{}, 1), bots: map[string]*Bot{}}
}

// Run dispatches queued events until ctx ends, then waits for the events
// in progress. It also fires the bots' recurring events.
func (d *Dispatcher) Run(ctx context.Context) {
	if d.cfg.ReleaseAtStart || d.cfg.Node != "" {
		if n, err := d.store.ReleaseJobs(ctx, platform.JobBotEvent, platform.ReleaseNode(d.cfg.Node, d.cfg.ReleaseAtStart)); err != nil {
			d.log.Error("dispatcher: releasing events", "err", err)
		} else if n > 0 {
			d.log.Info("dispatcher: events of the previous run queued again", "count", n)
		}
	}
	go d.recurring(ctx)
	var inflight atomic.Int64
	// starved: jobs may wait for a free worker (every worker was busy, or
	// the last claim took as many jobs as there were free workers), so a
	// worker's end must wake the loop (done).
	var starved atomic.Bool
	done := make(chan struct{}, d.cfg.Workers)
	for {
		free := d.cfg.Workers - int(inflight.Load())
		if free <= 0 {
			starved.Store(true)
			// A worker that ended before it could see starved set freed
			// a worker: look again rather than sleep.
			if d.cfg.Workers > int(inflight.Load()) {
				continue
			}
		}
		// Taken before the claim: a job committed after the claim looked
		// wakes the wait below.
		queued := d.store.Queued(platform.JobBotEvent)
		full := false
		now := d.clock.Now()
		if free > 0 {
			jobs, err := d.store.ClaimJobs(ctx, platform.JobBotEvent, d.cfg.Node, now, now.Add(d.cfg.Lease), free)
			if err != nil && ctx.Err() == nil {
				d.log.Error("dispatcher: claiming events", "err", err)
			}
			full = len(jobs) == free
			starved.Store(full)
			for _, j := range jobs {
				inflight.Add(1)
				d.inflight.Add(1)
				go func(j platform.Job) {
					defer d.inflight.Done()
					// The job's end may claim its conversation's next
					// event, which this worker then runs.
					wake := true
					for next := &j; next != nil; {
						next, wake = d.process(context.WithoutCancel(ctx), *next, ctx.Done())
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
		wait := d.cfg.Poll
		if at, ok, err := d.store.NextJobAt(ctx, platform.JobBotEvent, now); err == nil && ok {
			wait = min(max(at.Sub(d.clock.Now()), 0), wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			d.stop()
			return
		case <-queued:
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}

// stop waits for the events in progress, at most StopTimeout: then the
// executors stop them and the events are handed back.
func (d *Dispatcher) stop() {
	idle := make(chan struct{})
	go func() { d.inflight.Wait(); close(idle) }()
	t := time.NewTimer(d.cfg.StopTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		d.log.Warn("dispatcher: stopping the events still running", "after", d.cfg.StopTimeout)
	}
	for _, e := range d.execs {
		e.Stop()
	}
	<-idle
}

// process handles one event and finishes its job. Failures of the bot's
// code end the event (logged); other failures hand it back for later.
// Unless stopping is closed, finishing the job claims the next job of its
// subject when it can run now, which process returns. wake is false when
// the finish found no other job of the subject left unclaimed: then no
// claim needs to look at the queue again for this job's sake.
func (d *Dispatcher) process(ctx context.Context, j platform.Job, stopping <-chan struct{}) (next *platform.Job, wake bool) {
	start := time.Now()
	stop := store.KeepLease(ctx, d.store, d.clock, j.ID, d.cfg.Lease, d.log)
	var p platform.BotEventJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		stop()
		d.log.Error("dispatcher: unreadable event", "job", j.ID, "err", err)
		if err := d.store.FinishJob(ctx, j.ID, false, nil, nil, d.clock.Now()); err != nil {
			d.log.Error("dispatcher: dropping an unreadable event", "job", j.ID, "err", err)
		}
		return nil, true
	}
	out, err := d.handle(ctx, j, p)
	stop()
	typ := cmp.Or(p.Type, "unknown")
	if errors.Is(err, ErrGone) || errors.Is(err, platform.ErrNotFound) {
		out, err = Ignored("what the event is about no longer exists"), nil
	}
	if err == nil && !out.RetryAt.IsZero() {
		d.cfg.Metrics.BotEvent(typ, metrics.OutcomeRetry, time.Since(start))
		if len(out.Logs) > 0 {
			if err := d.store.AppendLogs(ctx, out.Logs); err != nil {
				d.log.Error("dispatcher: writing an event's logs", "job", j.ID, "err", err)
			}
		}
		d.retry(ctx, j, out.RetryAt)
		return nil, true
	}
	if err == nil {
		d.endEvent(ctx, j, p, out.Status, out.Reason)
		var next *platform.Job
		var quiet bool
		next, quiet, err = d.finish(ctx, j, p, out, stopping)
		if err == nil || errors.Is(err, platform.ErrNotFound) { // not found: the job went with its bot
			d.cfg.Metrics.BotEvent(typ, outcome(out.Status), time.Since(start))
			return next, !quiet
		}
	}
	if j.Attempts >= MaxAttempts {
		d.cfg.Metrics.BotEvent(typ, metrics.OutcomeFailed, time.Since(start))
		d.log.Error("dispatcher: giving up on an event", "job", j.ID, "attempts", j.Attempts, "err", err)
		d.endEvent(ctx, j, p, platform.EventFailed, fmt.Sprintf("gave up after %d attempts", j.Attempts))
		if ferr := d.store.FinishJob(ctx, j.ID, p.Keep(), nil, nil, d.clock.Now()); ferr != nil {
			d.log.Error("dispatcher: dropping an event", "job", j.ID, "err", ferr)
		}
		return nil, true
	}
	d.cfg.Metrics.BotEvent(typ, metrics.OutcomeRetry, time.Since(start))
	backoff := Backoff(j.Attempts)
	d.log.Warn("dispatcher: event will be retried", "job", j.ID, "attempt", j.Attempts, "in", backoff, "err", err)
	d.retry(ctx, j, d.clock.Now().Add(backoff))
	return nil, true
}

// retry hands j back, to run from at.
func (d *Dispatcher) retry(ctx context.Context, j platform.Job, at time.Time) {
	if err := d.store.RetryJob(ctx, j.ID, at); err != nil && !errors.Is(err, platform.ErrNotFound) {
		d.log.Error("dispatcher: handing an event back", "job", j.ID, "err", err)
	}
}

// handle finds the event's bot and has its executor handle the event.
func (d *Dispatcher) handle(ctx context.Context, j platform.Job, p platform.BotEventJob) (Outcome, error) {
	e := Event{Job: j, Payload: p}
	botID := p.BotID
	if p.Type == platform.BotEventMessage || p.Type == platform.BotEventChat {
		conv, err := d.store.GetConversationByID(ctx, p.ConversationID)
		if err != nil {
			return Outcome{}, err
		}
		e.Conversation, botID = &conv, conv.BotID
	}
	if botID == "" {
		return Outcome{}, fmt.Errorf("%w: the event names no bot", ErrGone)
	}
	b, err := d.bot(ctx, botID)
	if err != nil {
		return Outcome{}, err
	}
	if b.exec == nil {
		return Ignored("the bot has no code to handle it"), nil
	}
	return b.exec.Event(ctx, b, e)
}

// finish ends j's handling: saves states and logs and finishes the job,
// and, unless stopping, claims the next job of j's subject (next).
// quiet tells that no other job of the subject was left.
func (d *Dispatcher) finish(ctx context.Context, j platform.Job, p platform.BotEventJob, out Outcome, stopping <-chan struct{}) (next *platform.Job, quiet bool, err error) {
	if !closed(stopping) {
		next, waiting, err := d.store.FinishJobClaimNext(ctx, j.ID, p.Keep(), out.States, out.Logs, d.cfg.Node, d.clock.Now, d.cfg.Lease)
		return next, err == nil && !waiting, err
	}
	return nil, false, d.store.FinishJob(ctx, j.ID, p.Keep(), out.States, out.Logs, d.clock.Now())
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

// outcome is the metrics' name of how an event ended.
func outcome(status string) string {
	switch status {
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
func (d *Dispatcher) endEvent(ctx context.Context, j platform.Job, p platform.BotEventJob, status, reason string) {
	if !p.Keep() {
		return // only scheduled events (and recurring firings) are recorded
	}
	if err := d.store.EndRuntimeEvent(ctx, j.ID, status, reason); err != nil {
		d.log.Warn("dispatcher: recording an event's outcome", "job", j.ID, "err", err)
	}
}

// doneRetention is how long done recurring and scheduled jobs are kept.
const doneRetention = 24 * time.Hour
