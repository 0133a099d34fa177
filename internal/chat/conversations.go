package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// CreateConversation creates a conversation owned by the caller, who is its
// first participant. getOrCreate returns an existing one the caller owns.
func (s *Service) CreateConversation(ctx context.Context, b *Webhook, u platform.ChatUser, id *string, getOrCreate bool) (platform.Conversation, error) {
	if getOrCreate {
		if c, err := s.store.GetConversation(ctx, b.ID, *id); err == nil {
			if !b.serves(c) {
				return c, platform.Errorf(platform.TypeForbidden, "conversation %q is another channel's", *id)
			}
			if c.OwnerID != u.ID {
				return c, platform.Errorf(platform.TypeForbidden, "conversation %q belongs to another user", *id)
			}
			return c, nil
		} else if !errors.Is(err, platform.ErrNotFound) {
			return c, err
		}
	}
	now := s.clock.Now()
	c := platform.Conversation{ID: platform.NewID("conv_"), BotID: b.ID, OwnerID: u.ID, Integration: b.Integration, CreatedAt: now, UpdatedAt: now}
	c.FID = c.ID
	if b.Integration == platform.WebchatIntegrationID {
		// The web chat's user, as the webchat integration tags its
		// conversations for the bot.
		c.Tags = map[string]string{WebchatUserTag: u.FID}
	}
	if id != nil {
		if err := checkFID("id", *id); err != nil {
			return c, err
		}
		c.FID = *id
	}
	if err := s.store.CreateConversation(ctx, c); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			if getOrCreate { // created concurrently
				return s.CreateConversation(ctx, b, u, id, true)
			}
			return c, platform.Errorf(platform.TypeAlreadyExists, "id: a conversation with id %q already exists", c.FID)
		}
		return c, err
	}
	return c, nil
}

// Conversation loads a conversation the caller takes part in (403 otherwise);
// owner additionally requires the caller to own it.
func (s *Service) Conversation(ctx context.Context, b *Webhook, u platform.ChatUser, id string, owner bool) (platform.Conversation, error) {
	c, participant, err := s.store.GetConversationAs(ctx, b.ID, id, u.ID)
	if errors.Is(err, platform.ErrNotFound) {
		return c, platform.NotFound("conversation", id)
	}
	if err != nil {
		return c, err
	}
	if !b.serves(c) {
		return c, platform.NotFound("conversation", id)
	}
	if owner {
		if c.OwnerID != u.ID {
			return c, platform.Errorf(platform.TypeForbidden, "only the owner of conversation %q may do this", id)
		}
		return c, nil
	}
	if !participant {
		return c, platform.Errorf(platform.TypeForbidden, "you are not a participant of conversation %q", id)
	}
	return c, nil
}

func (s *Service) DeleteConversation(ctx context.Context, b *Webhook, u platform.ChatUser, id string) error {
	c, err := s.Conversation(ctx, b, u, id, true)
	if err != nil {
		return err
	}
	return s.store.DeleteConversation(ctx, c.ID)
}

// ConversationView is a conversation as the list of a user's shows it:
// with its newest message (nil when it has none), which the web chat
// shows as its history's preview.
type ConversationView struct {
	platform.Conversation
	LastMessage *MessageView
}

// ListConversations lists the conversations the caller owns in the
// webhook's channel, each with its newest message.
func (s *Service) ListConversations(ctx context.Context, b *Webhook, u platform.ChatUser, p store.Page) ([]ConversationView, string, error) {
	cs, next, err := s.store.ListConversations(ctx, u.ID, b.channel(), p)
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	last, err := s.store.LastMessages(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	authors := make([]string, 0, len(last))
	for _, m := range last {
		authors = append(authors, m.UserID)
	}
	fids := s.fids(ctx, b.ID, authors...)
	out := make([]ConversationView, len(cs))
	for i, c := range cs {
		out[i].Conversation = c
		if m, ok := last[c.ID]; ok {
			out[i].LastMessage = &MessageView{m, fids[m.UserID], c.FID}
		}
	}
	return out, next, nil
}

// owned loads a conversation the caller owns and the user named by userID
// (foreign or internal id), for the owner-only participant operations.
func (s *Service) owned(ctx context.Context, b *Webhook, u platform.ChatUser, convID, userID string) (platform.Conversation, platform.ChatUser, error) {
	c, err := s.Conversation(ctx, b, u, convID, true)
	if err != nil {
		return c, platform.ChatUser{}, err
	}
	p, err := s.store.GetChatUser(ctx, b.ID, userID)
	if errors.Is(err, platform.ErrNotFound) {
		err = platform.NotFound("user", userID)
	}
	return c, p, err
}

// AddParticipant adds a user to a conversation the caller owns.
func (s *Service) AddParticipant(ctx context.Context, b *Webhook, u platform.ChatUser, convID, userID string) (platform.ChatUser, error) {
	c, p, err := s.owned(ctx, b, u, convID, userID)
	if err != nil {
		return p, err
	}
	unlock := s.lock(c.ID)
	defer unlock()
	if err := s.store.AddParticipant(ctx, c.ID, p.ID, s.clock.Now().UnixMicro()); err != nil {
		return p, err
	}
	s.hub.Publish(c.ID, Signal{"participant_added", map[string]string{"conversationId": c.FID, "participantId": p.FID}})
	return p, nil
}

// GetParticipant is owner-only, as upstream.
func (s *Service) GetParticipant(ctx context.Context, b *Webhook, u platform.ChatUser, convID, userID string) (platform.ChatUser, error) {
	c, p, err := s.owned(ctx, b, u, convID, userID)
	if err != nil {
		return p, err
	}
	if ok, err := s.store.IsParticipant(ctx, c.ID, p.ID); err != nil || !ok {
		if err == nil {
			err = platform.Errorf(platform.TypeResourceNotFound, "user %q is not a participant of conversation %q", userID, convID)
		}
		return p, err
	}
	return p, nil
}

// RemoveParticipant removes a user from a conversation the caller owns
// (never the owner), and ends that user's streams.
func (s *Service) RemoveParticipant(ctx context.Context, b *Webhook, u platform.ChatUser, convID, userID string) error {
	c, p, err := s.owned(ctx, b, u, convID, userID)
	if err != nil {
		return err
	}
	if p.ID == c.OwnerID {
		return platform.Invalid("userId", "the owner of a conversation cannot be removed from it")
	}
	unlock := s.lock(c.ID)
	defer unlock()
	if err := s.store.RemoveParticipant(ctx, c.ID, p.ID); err != nil {
		if errors.Is(err, platform.ErrNotFound) {
			return platform.Errorf(platform.TypeResourceNotFound, "user %q is not a participant of conversation %q", userID, convID)
		}
		return err
	}
	s.hub.CloseUser(p.ID)
	s.hub.Publish(c.ID, Signal{"participant_removed", map[string]string{"conversationId": c.FID, "participantId": p.FID}})
	return nil
}

func (s *Service) ListParticipants(ctx context.Context, b *Webhook, u platform.ChatUser, convID string, p store.Page) ([]platform.ChatUser, string, error) {
	c, err := s.Conversation(ctx, b, u, convID, false)
	if err != nil {
		return nil, "", err
	}
	return s.store.ListParticipants(ctx, c.ID, p)
}

// MessageView is a message as clients see it: foreign ids.
type MessageView struct {
	platform.Message
	UserFID, ConversationFID string
}

// MessageJSON renders a message as responses and signals carry it.
func MessageJSON(m MessageView) map[string]any {
	d := map[string]any{
		"id": m.ID, "createdAt": platform.FormatTime(m.CreatedAt), "payload": m.Payload,
		"userId": m.UserFID, "conversationId": m.ConversationFID,
	}
	if m.Metadata != nil {
		d["metadata"] = m.Metadata
	}
	if v := m.Tags[FeedbackTag]; v != "" {
		fb := map[string]any{"value": v}
		if c := m.Tags[FeedbackCommentTag]; c != "" {
			fb["comment"] = c
		}
		d["feedback"] = fb
	}
	return d
}

// CreateMessage stores a message from the caller and signals it.
func (s *Service) CreateMessage(ctx context.Context, b *Webhook, u platform.ChatUser, convID string, payload, metadata json.RawMessage) (MessageView, error) {
	c, err := s.Conversation(ctx, b, u, convID, false)
	if err != nil {
		return MessageView{}, err
	}
	return s.SendMessage(ctx, c, u, platform.Message{ID: platform.NewID("msg_"), Payload: payload, Metadata: metadata}, time.Time{})
}

// deleted turns the store's ErrNotFound for a write into a conversation
// into the conversation's 404: it was deleted after it was read.
func deleted(err error, c platform.Conversation) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("conversation", c.FID)
	}
	return err
}

// message loads a message of a conversation the caller takes part in.
func (s *Service) message(ctx context.Context, b *Webhook, u platform.ChatUser, id string) (MessageView, platform.Conversation, error) {
	m, err := s.store.GetMessage(ctx, id)
	if errors.Is(err, platform.ErrNotFound) {
		return MessageView{}, platform.Conversation{}, platform.NotFound("message", id)
	}
	if err != nil {
		return MessageView{}, platform.Conversation{}, err
	}
	c, err := s.Conversation(ctx, b, u, m.ConversationID, false)
	if err != nil {
		if e, ok := platform.AsError(err); ok && e.Type == platform.TypeResourceNotFound {
			err = platform.NotFound("message", id) // another bot's message
		}
		return MessageView{}, c, err
	}
	return MessageView{m, s.fids(ctx, b.ID, m.UserID)[m.UserID], c.FID}, c, nil
}

func (s *Service) GetMessage(ctx context.Context, b *Webhook, u platform.ChatUser, id string) (MessageView, error) {
	m, _, err := s.message(ctx, b, u, id)
	return m, err
}

// DeleteMessage deletes the caller's own message and signals it.
func (s *Service) DeleteMessage(ctx context.Context, b *Webhook, u platform.ChatUser, id string) error {
	m, c, err := s.message(ctx, b, u, id)
	if err != nil {
		return err
	}
	if m.UserID != u.ID {
		return platform.Errorf(platform.TypeForbidden, "only the sender may delete message %q", id)
	}
	return s.RemoveMessage(ctx, c, m.Message)
}

// RemoveMessage deletes a message of c and signals it.
func (s *Service) RemoveMessage(ctx context.Context, c platform.Conversation, m platform.Message) error {
	unlock := s.lock(c.ID)
	defer unlock()
	if err := s.store.DeleteMessage(ctx, m.ID); err != nil {
		return err
	}
	// Upstream sends internal ids in this signal.
	s.hub.Publish(c.ID, Signal{"message_deleted", map[string]string{"id": m.ID, "conversationId": c.ID, "userId": m.UserID}})
	return nil
}

func (s *Service) ListMessages(ctx context.Context, b *Webhook, u platform.ChatUser, convID string, p store.Page) ([]MessageView, string, error) {
	c, err := s.Conversation(ctx, b, u, convID, false)
	if err != nil {
		return nil, "", err
	}
	ms, next, err := s.store.ListMessages(ctx, c.ID, p)
	if err != nil {
		return nil, "", err
	}
	return s.Views(ctx, c, ms), next, nil
}

// EventView is a custom event as clients see it.
type EventView struct {
	platform.ChatEvent
	UserFID, ConversationFID string
}

// EventJSON renders an event (spec 2.2).
func EventJSON(e EventView) map[string]any {
	return map[string]any{"id": e.ID, "createdAt": platform.FormatTime(e.CreatedAt), "payload": e.Payload,
		"conversationId": e.ConversationFID, "userId": e.UserFID}
}

// CreateEvent stores a custom event from the caller and signals it.
func (s *Service) CreateEvent(ctx context.Context, b *Webhook, u platform.ChatUser, convID string, payload json.RawMessage) (EventView, error) {
	c, err := s.Conversation(ctx, b, u, convID, false)
	if err != nil {
		return EventView{}, err
	}
	if payload, err = s.conversationStarted(ctx, c, payload); err != nil {
		return EventView{}, err
	}
	e := platform.ChatEvent{ID: platform.NewID("evt_"), ConversationID: c.ID, UserID: u.ID, Payload: payload}
	unlock := s.lock(c.ID)
	defer unlock()
	e.CreatedAt, e.DueAt = s.stamp(c.ID, time.Time{})
	_, err = s.store.CreateChatEvent(ctx, e)
	if err != nil {
		return EventView{}, deleted(err, c)
	}
	v := EventView{e, u.FID, c.FID}
	d := EventJSON(v)
	d["isBot"] = e.IsBot
	s.hub.Publish(c.ID, Signal{"event_created", d})
	return v, nil
}

func (s *Service) GetEvent(ctx context.Context, b *Webhook, u platform.ChatUser, id string) (EventView, error) {
	e, err := s.store.GetChatEvent(ctx, id)
	if errors.Is(err, platform.ErrNotFound) {
		return EventView{}, platform.NotFound("event", id)
	}
	if err != nil {
		return EventView{}, err
	}
	c, err := s.Conversation(ctx, b, u, e.ConversationID, false)
	if err != nil {
		if pe, ok := platform.AsError(err); ok && pe.Type == platform.TypeResourceNotFound {
			err = platform.NotFound("event", id)
		}
		return EventView{}, err
	}
	return EventView{e, s.fids(ctx, b.ID, e.UserID)[e.UserID], c.FID}, nil
}

// Watch subscribes watcher, a member of the bot's workspace whom the caller
// has let see the bot (the console), to one of the bot's conversations:
// the signals its chat users receive. watcher names the stream for the
// stream limits; it must not be a chat user's id.
func (s *Service) Watch(ctx context.Context, botID, convID, watcher string) (*Subscription, error) {
	c, err := s.store.GetConversation(ctx, botID, convID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("conversation", convID)
	}
	if err != nil {
		return nil, err
	}
	return s.hub.Subscribe(c.ID, watcher)
}

// Listen subscribes the caller to a conversation it takes part in.
func (s *Service) Listen(ctx context.Context, b *Webhook, u platform.ChatUser, convID string) (*Subscription, error) {
	c, err := s.Conversation(ctx, b, u, convID, false)
	if err != nil {
		return nil, err
	}
	return s.hub.Subscribe(c.ID, u.ID)
}
