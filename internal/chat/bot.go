package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// The bot's side of a conversation: what bot code sends. A bot speaks as a
// chat user of its own whose id is the bot's id; its messages and events
// carry isBot: true and are never handed back to the bot.

// BotUser returns the chat user a bot speaks as, creating it on first use.
func (s *Service) BotUser(ctx context.Context, botID string) (platform.ChatUser, error) {
	if v, ok := s.botUsers.Load(botID); ok {
		return v.(platform.ChatUser), nil
	}
	u, err := s.store.GetChatUser(ctx, botID, botID)
	if errors.Is(err, platform.ErrNotFound) {
		now := s.clock.Now()
		u = platform.ChatUser{ID: botID, BotID: botID, FID: botID, Name: "bot", CreatedAt: now, UpdatedAt: now}
		if err = s.store.CreateChatUser(ctx, u); errors.Is(err, platform.ErrConflict) {
			u, err = s.store.GetChatUser(ctx, botID, botID)
		}
	}
	if err != nil {
		return u, err
	}
	s.botUsers.Store(botID, u)
	return u, nil
}

// BotMessage stores a message from the bot and signals it, dated no earlier
// than after. The id is chosen by the caller so that a redelivered event
// does not send its replies twice: when a message with that id exists, it is
// returned and nothing is sent.
func (s *Service) BotMessage(ctx context.Context, c platform.Conversation, id string, payload, metadata json.RawMessage, after time.Time) (MessageView, error) {
	u, err := s.BotUser(ctx, c.BotID)
	if err != nil {
		return MessageView{}, err
	}
	return s.SendMessage(ctx, c, u, platform.Message{ID: id, Payload: payload, Metadata: metadata, IsBot: true}, after)
}

// SendMessage stores m, written by u in c, and signals it to c's listeners,
// dated no earlier than after. A message whose id exists in c is returned as
// is, and nothing is sent. Only a user's message (not IsBot) is queued for
// the bot.
func (s *Service) SendMessage(ctx context.Context, c platform.Conversation, u platform.ChatUser, m platform.Message, after time.Time) (MessageView, error) {
	m.ConversationID, m.UserID = c.ID, u.ID
	unlock := s.lock(c.ID)
	defer unlock()
	var due time.Time
	m.CreatedAt, due = s.stamp(c.ID, after)
	if !m.IsBot {
		m.DueAt = due
	}
	_, err := s.store.CreateMessage(ctx, m)
	if err != nil {
		if errors.Is(err, platform.ErrConflict) {
			if old, gerr := s.store.GetMessage(ctx, m.ID); gerr == nil && old.ConversationID == c.ID {
				return MessageView{old, u.FID, c.FID}, nil
			}
		}
		return MessageView{}, deleted(err, c)
	}
	if m.Tags == nil {
		m.Tags = map[string]string{}
	}
	v := MessageView{m, u.FID, c.FID}
	d := MessageJSON(v)
	d["isBot"] = m.IsBot
	s.hub.Publish(c.ID, Signal{"message_created", d})
	return v, nil
}

// BotEvent stores a custom event from the bot and signals it; like
// BotMessage, an existing id is returned as is.
func (s *Service) BotEvent(ctx context.Context, c platform.Conversation, id string, payload json.RawMessage, after time.Time) (EventView, error) {
	u, err := s.BotUser(ctx, c.BotID)
	if err != nil {
		return EventView{}, err
	}
	e := platform.ChatEvent{ID: id, ConversationID: c.ID, UserID: u.ID, Payload: payload, IsBot: true}
	unlock := s.lock(c.ID)
	defer unlock()
	e.CreatedAt, _ = s.stamp(c.ID, after)
	if _, err := s.store.CreateChatEvent(ctx, e); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			if old, gerr := s.store.GetChatEvent(ctx, id); gerr == nil && old.ConversationID == c.ID {
				return EventView{old, u.FID, c.FID}, nil
			}
		}
		return EventView{}, deleted(err, c)
	}
	v := EventView{e, u.FID, c.FID}
	d := EventJSON(v)
	d["isBot"] = true
	s.hub.Publish(c.ID, Signal{"event_created", d})
	return v, nil
}

// Views renders stored messages with foreign ids.
func (s *Service) Views(ctx context.Context, c platform.Conversation, ms []platform.Message) []MessageView {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.UserID
	}
	fids := s.fids(ctx, c.BotID, ids...)
	out := make([]MessageView, len(ms))
	for i, m := range ms {
		out[i] = MessageView{m, fids[m.UserID], c.FID}
	}
	return out
}

// UserFID returns the id clients see for a user of the bot.
func (s *Service) UserFID(ctx context.Context, botID, userID string) string {
	return s.fids(ctx, botID, userID)[userID]
}

// UserJSON renders a chat user as responses carry it.
func UserJSON(u platform.ChatUser) map[string]any {
	out := map[string]any{"id": u.FID, "createdAt": platform.FormatTime(u.CreatedAt), "updatedAt": platform.FormatTime(u.UpdatedAt)}
	for k, v := range map[string]string{"name": u.Name, "pictureUrl": u.PictureURL, "profile": u.Profile} {
		if v != "" {
			out[k] = v
		}
	}
	// The web chat's view of the same user: its data, its attributes.
	if d := userData(u); d != nil {
		out["data"] = d
	}
	if len(u.Attributes) > 0 {
		out["attributes"] = u.Attributes
	}
	return out
}

// ConversationJSON renders a conversation as responses carry it.
func ConversationJSON(c platform.Conversation) map[string]any {
	return map[string]any{"id": c.FID, "createdAt": platform.FormatTime(c.CreatedAt), "updatedAt": platform.FormatTime(c.UpdatedAt)}
}
