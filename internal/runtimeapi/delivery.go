package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
)

// Delivery is a queued bot event as a bot written with the SDK receives it
// (docs/sdk-bots.md): the x-bp-type header and the request's {event}.
type Delivery struct {
	Type  string
	Event map[string]any
	// The ids the bot sees, for the delivery's log line.
	ConversationID, UserID string
	// What the event is about, as logs name it ("message msg_…").
	What string
}

// ChatCustomEvent is the type a user's custom Chat API event has for SDK
// bots: the chat integration's event, named integration:event.
const ChatCustomEvent = "chat:custom"

// DeliveryFor builds the delivery of a queued bot event job. A job whose
// subject no longer exists (a deleted message, a finished workflow) is
// platform.ErrNotFound: there is nothing to deliver. For a workflow's
// time-out it first times the workflow out (see WorkflowEvent): call it
// once per delivery attempt.
func (s *Service) DeliveryFor(ctx context.Context, j platform.Job, p platform.BotEventJob) (Delivery, error) {
	switch p.Type {
	case platform.BotEventMessage:
		return s.messageDelivery(ctx, p)
	case platform.BotEventChat:
		e, err := s.store.GetChatEvent(ctx, p.ID)
		if err != nil {
			return Delivery{}, err
		}
		c, err := s.store.GetConversationByID(ctx, p.ConversationID)
		if err != nil {
			return Delivery{}, err
		}
		_, user := s.visibleIDs(ctx, c.BotID, "", e.UserID)
		typ, payload := ChatCustomEvent, map[string]any{"conversationId": c.FID, "userId": user, "payload": rawObject(e.Payload)}
		if c.Integration == platform.WebchatIntegrationID {
			typ, payload = chat.WebchatEvent(e.Payload, c.FID, user)
		}
		ev := eventJSON(e.ID, typ, platform.FormatTime(e.CreatedAt), payload, c.FID, user, "")
		return Delivery{Type: typ, Event: ev, ConversationID: c.FID, UserID: user, What: "event " + e.ID}, nil
	}
	id := "evt_" + strings.TrimPrefix(j.ID, "job_")
	typ, payload, what := p.EventType, rawObject(p.Payload), p.Type+" event "+p.EventID
	switch p.Type {
	case platform.BotEventWorkflow:
		wp, err := s.WorkflowEvent(ctx, p.BotID, p.WorkflowID, p.Update)
		if err != nil {
			return Delivery{}, err
		}
		typ, payload, what = "workflow_update", wp, "workflow "+p.WorkflowID+" "+p.Update
	case platform.BotEventStateExp:
		typ, what = "state_expired", "state_expired event"
	case platform.BotEventRecurring, platform.BotEventScheduled:
		id = p.EventID
	default:
		return Delivery{}, fmt.Errorf("%w: unknown event type %q", platform.ErrNotFound, p.Type)
	}
	conv, user := s.visibleIDs(ctx, p.BotID, p.ConversationID, p.UserID)
	ev := eventJSON(id, typ, platform.FormatTime(j.RunAfter), payload, conv, user, p.MessageID)
	if p.WorkflowID != "" {
		ev["workflowId"] = p.WorkflowID
	}
	return Delivery{Type: typ, Event: ev, ConversationID: conv, UserID: user, What: what}, nil
}

// messageDelivery is a user's chat message as message_created, with the
// message, its author and its conversation in their Runtime API shapes.
func (s *Service) messageDelivery(ctx context.Context, p platform.BotEventJob) (Delivery, error) {
	m, err := s.store.GetMessage(ctx, p.ID)
	if err != nil {
		return Delivery{}, err
	}
	c, err := s.store.GetConversationByID(ctx, m.ConversationID)
	if err != nil {
		return Delivery{}, err
	}
	u, err := s.store.GetChatUser(ctx, c.BotID, m.UserID)
	if errors.Is(err, platform.ErrNotFound) {
		return Delivery{}, fmt.Errorf("%w: the message's author was deleted", platform.ErrNotFound)
	}
	if err != nil {
		return Delivery{}, err
	}
	n, err := s.store.CountMessages(ctx, c.ID)
	if err != nil {
		return Delivery{}, err
	}
	view := s.view(ctx, c.BotID, c, m)
	payload := map[string]any{"message": MessageJSON(view), "user": UserJSON(u), "conversation": ConversationJSON(c, n)}
	ev := eventJSON(m.ID, "message_created", platform.FormatTime(m.CreatedAt), payload, c.FID, u.FID, m.ID)
	return Delivery{Type: "message_created", Event: ev, ConversationID: c.FID, UserID: u.FID, What: "message " + m.ID}, nil
}

// eventJSON renders a delivered event in the shape of the Runtime API's
// events (EventJSON), as not yet processed.
func eventJSON(id, typ, createdAt string, payload any, conv, user, message string) map[string]any {
	ev := map[string]any{"id": id, "type": typ, "createdAt": createdAt, "payload": payload, "status": platform.EventPending, "failureReason": nil}
	for k, v := range map[string]string{"conversationId": conv, "userId": user, "messageId": message} {
		if v != "" {
			ev[k] = v
		}
	}
	return ev
}
