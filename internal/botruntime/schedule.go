package botruntime

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/robfig/cron/v3"

	"github.com/botplatform/botplatform/internal/platform"
)

// scheduleEvent queues an event for the bot's own handlers, to run after a
// delay (milliseconds) or at a date.
func (c *call) scheduleEvent(in []byte) (any, error) {
	var a struct {
		Type           string          `json:"type"`
		Payload        json.RawMessage `json:"payload"`
		ConversationID string          `json:"conversationId"`
		UserID         string          `json:"userId"`
		Delay          *float64        `json:"delay"`
		DateTime       string          `json:"dateTime"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	if a.Type == "" || len(a.Type) > 200 {
		return nil, platform.Invalid("type", "is required (at most 200 characters)")
	}
	if len(a.Payload) == 0 {
		a.Payload = json.RawMessage(`{}`)
	}
	if err := c.checkSend(a.Payload, true); err != nil {
		return nil, err
	}
	now := c.r.clock.Now()
	var dateTime *string
	if a.DateTime != "" {
		dateTime = &a.DateTime
	}
	at, err := platform.ScheduleAt("", a.Delay, dateTime, now)
	if err != nil {
		return nil, err
	}
	p := platform.BotEventJob{Type: platform.BotEventScheduled, BotID: c.bot.ID, EventType: a.Type, Payload: a.Payload}
	subject := platform.JobSubjectBot(c.bot.ID)
	if a.ConversationID != "" {
		conv, err := c.conversation("conversationId", a.ConversationID)
		if err != nil {
			return nil, err
		}
		p.ConversationID, subject = conv.ID, conv.ID
	}
	if a.UserID != "" {
		u, err := c.r.store.GetChatUser(c.ctx, c.bot.ID, a.UserID)
		if errors.Is(err, platform.ErrNotFound) {
			return nil, platform.NotFound("user", a.UserID)
		}
		if err != nil {
			return nil, err
		}
		p.UserID = u.ID
	}
	p.EventID = c.nextID("evt_")
	payload, _ := json.Marshal(p)
	c.sent++
	id := "job_" + p.EventID[len("evt_"):]
	if err := c.checkScheduled(); err != nil {
		return nil, err
	}
	err = c.r.store.EnqueueJob(c.ctx, platform.Job{ID: id, Kind: platform.JobBotEvent, Subject: subject,
		Payload: payload, RunAfter: at, CreatedAt: now, Owner: c.bot.ID})
	if err != nil && !errors.Is(err, platform.ErrConflict) { // a conflict: queued by an earlier delivery
		return nil, err
	}
	return map[string]any{"event": map[string]any{"id": p.EventID, "type": a.Type, "runAt": platform.FormatTime(at)}}, nil
}

// checkScheduled applies the cap on a bot's pending scheduled events
// (--bot-max-scheduled): over it, scheduleEvent fails, and the bot's logs
// say so even if the code catches the error.
func (c *call) checkScheduled() error {
	n, err := c.r.store.CountOwnedJobs(c.ctx, platform.JobBotEvent, c.bot.ID)
	if err != nil || n < c.r.cfg.MaxScheduled {
		return err
	}
	e := platform.Errorf(platform.TypeLimitExceeded, "the bot has %d scheduled events pending; at most %d (--bot-max-scheduled): the event was not scheduled", n, c.r.cfg.MaxScheduled)
	c.logs = append(c.logs, platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: c.bot.ID, Timestamp: c.r.clock.Now(),
		Level: "error", Message: "scheduleEvent: " + e.Message, UserID: c.logUser, ConversationID: c.logConv})
	return e
}

// recurringEvent is one entry of a bot's recurringEvents.
type recurringEvent struct {
	Schedule struct {
		Cron string `json:"cron"`
	} `json:"schedule"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// CheckRecurring validates a bot's recurringEvents: each needs a type and a
// cron schedule this runtime understands.
func (r *Runtime) CheckRecurring(spec json.RawMessage) error { return checkRecurring(spec) }

func checkRecurring(spec json.RawMessage) error {
	if len(spec) == 0 || string(spec) == "null" {
		return nil
	}
	var evs map[string]*recurringEvent
	if err := json.Unmarshal(spec, &evs); err != nil {
		return platform.Invalid("recurringEvents", "must map names to {schedule: {cron}, type, payload}")
	}
	for name, ev := range evs {
		if ev == nil {
			continue
		}
		if ev.Type == "" {
			return platform.Invalid("recurringEvents."+name+".type", "is required")
		}
		if _, err := cronParser.Parse(ev.Schedule.Cron); err != nil {
			return platform.Invalid("recurringEvents."+name+".schedule.cron", "%v", err)
		}
		if len(ev.Payload) > 0 && ev.Payload[0] != '{' && string(ev.Payload) != "null" {
			return platform.Invalid("recurringEvents."+name+".payload", "must be an object")
		}
	}
	return nil
}

// recurringTick is how often the recurring-event clock looks at the time.
const recurringTick = time.Second

// refreshRecurring is how often the list of bots with recurring events is
// read again (changes made through another process).
const refreshRecurring = 10 * time.Second

type schedule struct {
	botID, name string
	ev          recurringEvent
	sched       cron.Schedule
	next        time.Time
}

// recurring fires the bots' recurring events on schedule. Each firing is a
// job whose id derives from the bot, the event and the time, so that
// several processes sharing a database queue it once.
func (r *Runtime) recurring(ctx context.Context) {
	var scheds map[string]*schedule
	var loaded, purged time.Time
	t := time.NewTicker(recurringTick)
	defer t.Stop()
	for {
		now := r.clock.Now()
		if scheds == nil || now.Sub(loaded) >= refreshRecurring {
			next, err := r.loadRecurring(ctx, scheds, now)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.Error("bot runtime: loading recurring events", "err", err)
			} else {
				scheds, loaded = next, now
			}
		}
		if now.Sub(purged) >= time.Hour {
			purged = now
			r.forgetIdle(time.Now())
			if _, err := r.store.PurgeJobs(ctx, platform.JobBotEvent, now.Add(-doneRetention)); err != nil && ctx.Err() == nil {
				r.log.Error("bot runtime: purging done events", "err", err)
			}
			if _, err := r.store.PurgeRuntimeEvents(ctx, now.Add(-platform.EventRetention)); err != nil && ctx.Err() == nil {
				r.log.Error("bot runtime: purging ended Runtime API events", "err", err)
			}
		}
		if r.api != nil {
			if _, err := r.api.ExpireStates(ctx, now); err != nil && ctx.Err() == nil {
				r.log.Error("bot runtime: expiring Runtime API states", "err", err)
			}
		}
		for _, s := range scheds {
			if now.Before(s.next) {
				continue
			}
			if err := r.fire(ctx, s); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.Error("bot runtime: queueing a recurring event", "bot", s.botID, "event", s.name, "err", err)
				continue
			}
			s.next = nextFiring(s.sched, now)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.recurringChanged:
			loaded = time.Time{}
		}
	}
}

// loadRecurring reads the bots' schedules, keeping the next firing time of
// those that did not change.
func (r *Runtime) loadRecurring(ctx context.Context, old map[string]*schedule, now time.Time) (map[string]*schedule, error) {
	bots, err := r.store.RecurringBots(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]*schedule{}
	for _, b := range bots {
		var evs map[string]*recurringEvent
		if err := json.Unmarshal(b.Spec.RecurringEvents, &evs); err != nil {
			continue
		}
		for name, ev := range evs {
			if ev == nil || ev.Type == "" {
				continue
			}
			sched, err := cronParser.Parse(ev.Schedule.Cron)
			if err != nil {
				continue
			}
			key := b.ID + "\x00" + name + "\x00" + ev.Schedule.Cron + "\x00" + ev.Type + "\x00" + string(ev.Payload)
			if s, ok := old[key]; ok {
				out[key] = s
				continue
			}
			out[key] = &schedule{botID: b.ID, name: name, ev: *ev, sched: sched, next: nextFiring(sched, now)}
		}
	}
	return out, nil
}

// nextFiring is the schedule's first due time after now. An "@every D"
// schedule counts from the process's own start in the cron library; here
// its due times are the multiples of D, so that every process sharing the
// database, whenever it read the schedule, fires it at the same times and
// queues each firing once (fire's job id is made of the due time).
func nextFiring(sched cron.Schedule, now time.Time) time.Time {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		return now.UTC().Truncate(every.Delay).Add(every.Delay)
	}
	return sched.Next(now.UTC())
}

func (r *Runtime) fire(ctx context.Context, s *schedule) error {
	h := sha256.Sum256([]byte(s.botID + "\x00" + s.name + "\x00" + strconv.FormatInt(s.next.Unix(), 10)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(s.next))
	copy(id[6:], h[:10])
	suffix := toLower(id.String())
	payload := rawOr(s.ev.Payload, `{}`)
	if string(payload) == "null" {
		payload = json.RawMessage(`{}`)
	}
	p, _ := json.Marshal(platform.BotEventJob{Type: platform.BotEventRecurring, BotID: s.botID, EventID: "evt_" + suffix, EventType: s.ev.Type, Name: s.name, Payload: payload})
	err := r.store.EnqueueJob(ctx, platform.Job{ID: "job_" + suffix, Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(s.botID),
		Payload: p, RunAfter: s.next, CreatedAt: r.clock.Now()})
	if errors.Is(err, platform.ErrConflict) {
		return nil // another process queued this firing
	}
	if err != nil {
		return fmt.Errorf("recurring event %s: %w", s.name, err)
	}
	return nil
}

// RecurringChanged tells the runtime that a bot's recurring events changed.
func (r *Runtime) RecurringChanged() {
	select {
	case r.recurringChanged <- struct{}{}:
	default:
	}
}
