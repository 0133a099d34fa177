package botruntime

import (
	"encoding/json"
	"errors"

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
