package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// EventInput is the body of createEvent.
type EventInput struct {
	Type     string          `json:"type"`
	Payload  json.RawMessage `json:"payload"`
	Schedule *struct {
		DateTime *string  `json:"dateTime"`
		Delay    *float64 `json:"delay"`
	} `json:"schedule"`
	ConversationID string `json:"conversationId"`
	UserID         string `json:"userId"`
	MessageID      string `json:"messageId"`
	WorkflowID     string `json:"workflowId"`
}

// EventView is an event with the ids the bot sees and its status as of now.
type EventView struct {
	platform.RuntimeEvent
	ConversationFID, UserFID string
	Now                      time.Time
}

// EventJSON renders an event as the Runtime API returns it.
func EventJSON(e EventView) map[string]any {
	status := e.Status
	if status == platform.EventPending && e.RunAt.After(e.Now) {
		status = platform.EventScheduled
	}
	out := map[string]any{"id": e.ID, "createdAt": platform.FormatTime(e.CreatedAt), "type": e.Type,
		"payload": rawObject(e.Payload), "status": status, "failureReason": nil}
	if e.FailureReason != "" {
		out["failureReason"] = e.FailureReason
	}
	for k, v := range map[string]string{"conversationId": e.ConversationFID, "userId": e.UserFID, "messageId": e.MessageID} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// runAt works out when a created event is due.
func runAt(in EventInput, now time.Time) (time.Time, error) {
	if in.Schedule == nil {
		return now, nil
	}
	return platform.ScheduleAt("schedule.", in.Schedule.Delay, in.Schedule.DateTime, now)
}

// CreateEvent records an event and queues it for the bot's own handlers,
// now or as scheduled. Events of a conversation reach the handlers in order
// with the conversation's messages.
func (s *Service) CreateEvent(ctx context.Context, botID string, in EventInput) (EventView, error) {
	if alias := integrationOf(ctx); alias != "" && in.Type != "" {
		in.Type = prefix(alias, in.Type) // the bot sees "<alias>:<event>"
	}
	if in.Type == "" || len(in.Type) > 200 {
		return EventView{}, platform.Invalid("type", "is required (at most 200 characters)")
	}
	now := s.clock.Now()
	at, err := runAt(in, now)
	if err != nil {
		return EventView{}, err
	}
	ev := platform.RuntimeEvent{ID: platform.NewID("evt_"), BotID: botID, Type: in.Type, Payload: rawObject(in.Payload),
		MessageID: in.MessageID, WorkflowID: in.WorkflowID, Status: platform.EventPending, RunAt: at, CreatedAt: now}
	view := EventView{Now: now}
	subject := platform.JobSubjectBot(botID)
	if in.ConversationID != "" {
		c, err := s.Conversation(ctx, botID, in.ConversationID)
		if err != nil {
			return EventView{}, err
		}
		ev.ConversationID, view.ConversationFID, subject = c.ID, c.FID, c.ID
	}
	if in.UserID != "" {
		u, err := s.User(ctx, botID, in.UserID)
		if err != nil {
			return EventView{}, err
		}
		ev.UserID, view.UserFID = u.ID, u.FID
	}
	if in.MessageID != "" {
		if _, _, err := s.message(ctx, botID, in.MessageID); err != nil {
			return EventView{}, err
		}
	}
	n, err := s.store.CountOwnedJobs(ctx, platform.JobBotEvent, botID)
	if err != nil {
		return EventView{}, err
	}
	if max := s.cfg.MaxScheduled; n >= max {
		return EventView{}, platform.Errorf(platform.TypeLimitExceeded, "the bot has %d events pending; at most %d (--bot-max-scheduled)", n, max)
	}
	ev.JobID = "job_" + ev.ID[len("evt_"):]
	payload, _ := json.Marshal(platform.BotEventJob{Type: platform.BotEventScheduled, BotID: botID, EventID: ev.ID, EventType: ev.Type,
		Payload: ev.Payload, ConversationID: ev.ConversationID, UserID: ev.UserID, MessageID: ev.MessageID})
	job := platform.Job{ID: ev.JobID, Kind: platform.JobBotEvent, Subject: subject, Payload: payload, RunAfter: at, CreatedAt: now, Owner: botID}
	if err := s.store.CreateRuntimeEvent(ctx, ev, job); err != nil {
		return EventView{}, notFound(err, "conversation", in.ConversationID)
	}
	view.RuntimeEvent = ev
	return view, nil
}

func (s *Service) eventView(ctx context.Context, botID string, ev platform.RuntimeEvent) EventView {
	v := EventView{RuntimeEvent: ev, Now: s.clock.Now()}
	v.ConversationFID, v.UserFID = s.visibleIDs(ctx, botID, ev.ConversationID, ev.UserID)
	return v
}

// Event returns an event the bot created.
func (s *Service) Event(ctx context.Context, botID, id string) (EventView, error) {
	ev, err := s.store.GetRuntimeEvent(ctx, botID, id)
	if err != nil {
		return EventView{}, notFound(err, "event", id)
	}
	return s.eventView(ctx, botID, ev), nil
}

// CancelScheduledEvent cancels an event whose delivery has not started.
func (s *Service) CancelScheduledEvent(ctx context.Context, botID, id string) (EventView, error) {
	ev, err := s.store.CancelRuntimeEvent(ctx, botID, id)
	if errors.Is(err, platform.ErrConflict) {
		cur, gerr := s.store.GetRuntimeEvent(ctx, botID, id)
		if gerr == nil {
			return EventView{}, platform.Invalid("id", "event %q can no longer be canceled (it is %s)", id, EventJSON(s.eventView(ctx, botID, cur))["status"])
		}
		return EventView{}, platform.Invalid("id", "event %q can no longer be canceled (its delivery has started)", id)
	}
	if err != nil {
		return EventView{}, notFound(err, "event", id)
	}
	return s.eventView(ctx, botID, ev), nil
}

// EventFilter is listEvents' query.
type EventFilter struct {
	store.Page
	Type, ConversationID, UserID, MessageID, WorkflowID, Status string
}

// ListEvents lists the events the bot created, newest first.
func (s *Service) ListEvents(ctx context.Context, botID string, f EventFilter) ([]EventView, string, error) {
	now := s.clock.Now()
	sf := store.EventFilter{Page: f.Page, BotID: botID, Type: f.Type, MessageID: f.MessageID, WorkflowID: f.WorkflowID, Status: f.Status, Now: now}
	var err error
	if sf.ConversationID, sf.UserID, err = s.internalIDs(ctx, botID, f.ConversationID, f.UserID); err != nil {
		return nil, "", err
	}
	evs, next, err := s.store.ListRuntimeEvents(ctx, sf)
	if err != nil {
		return nil, "", err
	}
	out := make([]EventView, len(evs))
	for i, ev := range evs {
		out[i] = s.eventView(ctx, botID, ev)
	}
	return out, next, nil
}
