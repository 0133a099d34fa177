package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/robfig/cron/v3"

	"github.com/botplatform/botplatform/internal/platform"
)

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
func CheckRecurring(spec json.RawMessage) error {
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
func (d *Dispatcher) recurring(ctx context.Context) {
	var scheds map[string]*schedule
	var loaded, purged time.Time
	t := time.NewTicker(recurringTick)
	defer t.Stop()
	for {
		now := d.clock.Now()
		if scheds == nil || now.Sub(loaded) >= refreshRecurring {
			next, err := d.loadRecurring(ctx, scheds, now)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				d.log.Error("dispatcher: loading recurring events", "err", err)
			} else {
				scheds, loaded = next, now
			}
		}
		if now.Sub(purged) >= time.Hour {
			purged = now
			d.sweep(time.Now())
			if _, err := d.store.PurgeJobs(ctx, platform.JobBotEvent, now.Add(-doneRetention)); err != nil && ctx.Err() == nil {
				d.log.Error("dispatcher: purging done events", "err", err)
			}
			if _, err := d.store.PurgeRuntimeEvents(ctx, now.Add(-platform.EventRetention)); err != nil && ctx.Err() == nil {
				d.log.Error("dispatcher: purging ended Runtime API events", "err", err)
			}
		}
		if d.cfg.States != nil {
			if _, err := d.cfg.States.ExpireStates(ctx, now); err != nil && ctx.Err() == nil {
				d.log.Error("dispatcher: expiring Runtime API states", "err", err)
			}
		}
		for _, s := range scheds {
			if now.Before(s.next) {
				continue
			}
			if err := d.fire(ctx, s); err != nil {
				if ctx.Err() != nil {
					return
				}
				d.log.Error("dispatcher: queueing a recurring event", "bot", s.botID, "event", s.name, "err", err)
				continue
			}
			s.next = nextFiring(s.sched, now)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.recurringChanged:
			loaded = time.Time{}
		}
	}
}

// loadRecurring reads the bots' schedules, keeping the next firing time of
// those that did not change.
func (d *Dispatcher) loadRecurring(ctx context.Context, old map[string]*schedule, now time.Time) (map[string]*schedule, error) {
	bots, err := d.store.RecurringBots(ctx)
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

func (d *Dispatcher) fire(ctx context.Context, s *schedule) error {
	h := sha256.Sum256([]byte(s.botID + "\x00" + s.name + "\x00" + strconv.FormatInt(s.next.Unix(), 10)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(s.next))
	copy(id[6:], h[:10])
	suffix := strings.ToLower(id.String())
	payload := s.ev.Payload
	if len(payload) == 0 || string(payload) == "null" {
		payload = json.RawMessage(`{}`)
	}
	p, _ := json.Marshal(platform.BotEventJob{Type: platform.BotEventRecurring, BotID: s.botID, EventID: "evt_" + suffix, EventType: s.ev.Type, Name: s.name, Payload: payload})
	err := d.store.EnqueueJob(ctx, platform.Job{ID: "job_" + suffix, Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(s.botID),
		Payload: p, RunAfter: s.next, CreatedAt: d.clock.Now()})
	if errors.Is(err, platform.ErrConflict) {
		return nil // another process queued this firing
	}
	if err != nil {
		return fmt.Errorf("recurring event %s: %w", s.name, err)
	}
	return nil
}

// RecurringChanged tells the dispatcher that a bot's recurring events changed.
func (d *Dispatcher) RecurringChanged() {
	select {
	case d.recurringChanged <- struct{}{}:
	default:
	}
}
