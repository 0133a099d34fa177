package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// A Runtime message is a Chat API message seen from the bot, as an SDK
// message (payload.go); it is outgoing when the bot wrote it, incoming when
// a user did.

// MessageInput is the body of createMessage and getOrCreateMessage, and one
// message of importMessages.
type MessageInput struct {
	Payload            json.RawMessage   `json:"payload"`
	UserID             string            `json:"userId"`
	ConversationID     string            `json:"conversationId"`
	Type               string            `json:"type"`
	Tags               map[string]string `json:"tags"`
	Origin             string            `json:"origin"`
	CreatedAt          string            `json:"createdAt"` // importMessages only
	DiscriminateByTags []string          `json:"discriminateByTags"`
	Schedule           json.RawMessage   `json:"schedule"` // refused: not supported
}

// MessageJSON renders a message as the Runtime API returns it.
func MessageJSON(m chat.MessageView) map[string]any {
	typ, payload := fromChat(m.Payload, m.Metadata)
	direction := "incoming"
	if m.IsBot {
		direction = "outgoing"
	}
	updated := m.UpdatedAt
	if updated.IsZero() {
		updated = m.CreatedAt
	}
	tags := m.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return map[string]any{
		"id": m.ID, "createdAt": platform.FormatTime(m.CreatedAt), "updatedAt": platform.FormatTime(updated),
		"type": typ, "payload": payload, "direction": direction, "userId": m.UserFID, "conversationId": m.ConversationFID, "tags": tags,
	}
}

// author resolves the writer of a message: the bot itself (its id) or one
// of its users.
func (s *Service) author(ctx context.Context, botID, field, id string) (platform.ChatUser, error) {
	if id == "" {
		return platform.ChatUser{}, platform.Invalid(field, "is required")
	}
	if id == botID {
		return s.chat.BotUser(ctx, botID)
	}
	u, err := s.store.GetChatUser(ctx, botID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return u, platform.Errorf(platform.TypeReferenceNotFound, "%s: user %q not found", field, id)
	}
	return u, err
}

// CreateMessage writes a message of the bot in one of its conversations;
// chat users listening to it receive it as they receive the bot's replies.
// The message is outgoing (written by the bot) whoever userId names.
func (s *Service) CreateMessage(ctx context.Context, botID string, in MessageInput) (chat.MessageView, error) {
	alias := integrationOf(ctx)
	in.Tags, in.DiscriminateByTags = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags)
	if in.Schedule != nil {
		return chat.MessageView{}, platform.Invalid("schedule", "scheduled messages are not supported; send the message when it is due")
	}
	if in.DiscriminateByTags != nil {
		return chat.MessageView{}, platform.Invalid("discriminateByTags", "is only for getOrCreateMessage")
	}
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return chat.MessageView{}, err
	}
	payload, metadata, err := chatMessage("", in.Type, in.Payload)
	if err != nil {
		return chat.MessageView{}, err
	}
	c, err := s.Conversation(ctx, botID, in.ConversationID)
	if err != nil {
		return chat.MessageView{}, err
	}
	u, err := s.author(ctx, botID, "userId", in.UserID)
	if err != nil {
		return chat.MessageView{}, err
	}
	// An integration writes its users' messages (incoming: the bot receives
	// them) and, naming the bot, the bot's; the bot writes its own.
	isBot := alias == "" || in.UserID == botID
	m := platform.Message{ID: platform.NewID("msg_"), Payload: payload, Metadata: metadata, IsBot: isBot, Tags: created(in.Tags)}
	v, err := s.chat.SendMessage(ctx, c, u, m, time.Time{})
	if err != nil || !isBot || alias != "" {
		return v, err
	}
	return v, s.SendOut(ctx, c, u, v)
}

// SendOut sends the bot's message v, written as u in conversation c, out
// through the channel of the integration c is of, when it is not one the
// Chat API serves (chat, webchat): the integration's answer is the message's (an error is
// the bot's createMessage's).
func (s *Service) SendOut(ctx context.Context, c platform.Conversation, u platform.ChatUser, v chat.MessageView) error {
	if c.Integration == "" || platform.ServesChatAPI(c.Integration) || s.cfg.Channels == nil {
		return nil
	}
	msg := Unprefixed(c.Integration, MessageJSON(v))
	typ, _ := msg["type"].(string)
	return s.cfg.Channels.MessageCreated(ctx, c.BotID, c.Integration, typ, s.outgoing(c, u, msg))
}

// Channels sends the bot's messages in the conversations of integrations it
// installed to their code (package integration).
type Channels interface {
	// MessageCreated hands the message to the channel handler of the
	// integration the bot installed as alias; body is the contract's
	// {type, payload, conversation, user, message}. A failure is the
	// integration's, as it reported it.
	MessageCreated(ctx context.Context, botID, alias, messageType string, body []byte) error
}

// outgoing is the body of message_created for an integration: the message,
// its conversation and its author as the integration reads them.
func (s *Service) outgoing(c platform.Conversation, u platform.ChatUser, msg map[string]any) []byte {
	alias := c.Integration
	conv := Unprefixed(alias, NewConversationJSON(c))
	user := Unprefixed(alias, UserJSON(u))
	body, _ := json.Marshal(map[string]any{"type": msg["type"], "payload": msg["payload"], "conversation": conv, "user": user, "message": msg})
	return body
}

// GetOrCreateMessage returns the conversation's newest message whose tags
// match the discriminating tags, or creates one.
func (s *Service) GetOrCreateMessage(ctx context.Context, botID string, in MessageInput) (chat.MessageView, bool, error) {
	alias := integrationOf(ctx)
	in.Tags, in.DiscriminateByTags = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags)
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return chat.MessageView{}, false, err
	}
	by, err := discriminators(in.Tags, in.DiscriminateByTags)
	if err != nil {
		return chat.MessageView{}, false, err
	}
	if len(by) > 0 {
		c, err := s.Conversation(ctx, botID, in.ConversationID)
		if err != nil {
			return chat.MessageView{}, false, err
		}
		defer s.lock(botID, "message")()
		found, _, err := s.store.FindMessages(ctx, store.MessageFilter{BotID: botID, ConversationID: c.ID, Tags: anyOf(by), Page: store.Page{Limit: 1}})
		if err != nil {
			return chat.MessageView{}, false, err
		}
		if len(found) > 0 {
			return s.view(ctx, botID, c, found[0]), false, nil
		}
	}
	in.DiscriminateByTags = nil
	v, err := s.CreateMessage(ctx, botID, in)
	return v, true, err
}

func (s *Service) view(ctx context.Context, botID string, c platform.Conversation, m platform.Message) chat.MessageView {
	_, fid := s.visibleIDs(ctx, botID, "", m.UserID)
	return chat.MessageView{Message: m, UserFID: fid, ConversationFID: c.FID}
}

// message loads a message of one of the bot's conversations.
func (s *Service) message(ctx context.Context, botID, id string) (platform.Message, platform.Conversation, error) {
	m, err := s.store.GetMessage(ctx, id)
	if err != nil {
		return m, platform.Conversation{}, notFound(err, "message", id)
	}
	c, err := s.store.GetConversationByID(ctx, m.ConversationID)
	if err == nil && c.BotID != botID {
		err = platform.ErrNotFound // another bot's message
	}
	return m, c, notFound(err, "message", id)
}

// Message returns a message of the bot.
func (s *Service) Message(ctx context.Context, botID, id string) (chat.MessageView, error) {
	m, c, err := s.message(ctx, botID, id)
	if err != nil {
		return chat.MessageView{}, err
	}
	return s.view(ctx, botID, c, m), nil
}

// MessageUpdate is the body of updateMessage.
type MessageUpdate struct {
	Tags    map[string]string `json:"tags"`
	Payload json.RawMessage   `json:"payload"`
}

// UpdateMessage replaces a message's payload (same type), its metadata
// with it, and merges its tags (an empty value removes a tag).
func (s *Service) UpdateMessage(ctx context.Context, botID, id string, in MessageUpdate) (chat.MessageView, error) {
	in.Tags = prefixed(integrationOf(ctx), in.Tags)
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return chat.MessageView{}, err
	}
	m, c, err := s.message(ctx, botID, id)
	if err != nil {
		return chat.MessageView{}, err
	}
	if in.Payload != nil {
		var old struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Payload, &old)
		if m.Payload, m.Metadata, err = chatMessage("", old.Type, in.Payload); err != nil {
			return chat.MessageView{}, err
		}
	}
	m.Tags = merged(m.Tags, in.Tags)
	m.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateMessage(ctx, m, botID); err != nil {
		return chat.MessageView{}, notFound(err, "message", id)
	}
	v := s.view(ctx, botID, c, m)
	s.chat.MessageUpdated(c, v) // a bot editing its answer: listeners see it change
	return v, nil
}

// DeleteMessage deletes a message of the bot, signalling it to listeners.
func (s *Service) DeleteMessage(ctx context.Context, botID, id string) error {
	m, c, err := s.message(ctx, botID, id)
	if err != nil {
		return err
	}
	return notFound(s.chat.RemoveMessage(ctx, c, m), "message", id)
}

// MessageFilter is listMessages' query.
type MessageFilter struct {
	store.Page
	store.DateRange
	ConversationID string
	Tags           map[string][]string
}

// ListMessages lists the bot's messages, newest first.
func (s *Service) ListMessages(ctx context.Context, botID string, f MessageFilter) ([]chat.MessageView, string, error) {
	sf := store.MessageFilter{Page: f.Page, DateRange: f.DateRange, BotID: botID, Tags: f.Tags}
	convs := map[string]platform.Conversation{}
	if f.ConversationID != "" {
		c, err := s.Conversation(ctx, botID, f.ConversationID)
		if err != nil {
			return nil, "", err
		}
		sf.ConversationID = c.ID
		convs[c.ID] = c
	}
	ms, next, err := s.store.FindMessages(ctx, sf)
	if err != nil {
		return nil, "", err
	}
	out := make([]chat.MessageView, 0, len(ms))
	for _, m := range ms {
		c, ok := convs[m.ConversationID]
		if !ok {
			if c, err = s.store.GetConversationByID(ctx, m.ConversationID); err != nil {
				return nil, "", err
			}
			convs[c.ID] = c
		}
		out = append(out, s.view(ctx, botID, c, m))
	}
	return out, next, nil
}

// ImportMessages stores messages as history, with their own dates: nothing
// is signalled and no user's message goes to the bot. A message whose
// discriminating tags match one already in its conversation is returned as
// it is, so that an import can be run again.
func (s *Service) ImportMessages(ctx context.Context, botID string, in []MessageInput) ([]chat.MessageView, error) {
	if len(in) > MaxImport {
		return nil, platform.Invalid("messages", "at most %d messages per call (got %d)", MaxImport, len(in))
	}
	defer s.lock(botID, "message")()
	out := make([]chat.MessageView, 0, len(in))
	for i, m := range in {
		field := fmt.Sprintf("messages[%d].", i)
		if err := platform.CheckTags(field+"tags", m.Tags); err != nil {
			return nil, err
		}
		payload, metadata, err := chatMessage(field, m.Type, m.Payload)
		if err != nil {
			return nil, err
		}
		at, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
		if err != nil {
			return nil, platform.Invalid(field+"createdAt", "must be an ISO 8601 date-time")
		}
		if at.After(s.clock.Now()) {
			return nil, platform.Invalid(field+"createdAt", "must not be in the future")
		}
		c, err := s.Conversation(ctx, botID, m.ConversationID)
		if err != nil {
			return nil, err
		}
		u, err := s.author(ctx, botID, field+"userId", m.UserID)
		if err != nil {
			return nil, err
		}
		by, err := discriminators(m.Tags, m.DiscriminateByTags)
		if err != nil {
			return nil, err
		}
		if len(by) > 0 && m.DiscriminateByTags != nil {
			found, _, err := s.store.FindMessages(ctx, store.MessageFilter{BotID: botID, ConversationID: c.ID, Tags: anyOf(by), Page: store.Page{Limit: 1}})
			if err != nil {
				return nil, err
			}
			if len(found) > 0 {
				out = append(out, s.view(ctx, botID, c, found[0]))
				continue
			}
		}
		msg := platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID, Payload: payload, Metadata: metadata,
			IsBot: u.ID == botID, History: true, Tags: created(m.Tags), CreatedAt: at.UTC()}
		if _, err := s.store.CreateMessage(ctx, msg); err != nil {
			return nil, notFound(err, "conversation", m.ConversationID)
		}
		out = append(out, chat.MessageView{Message: msg, UserFID: u.FID, ConversationFID: c.FID})
	}
	return out, nil
}

// ListTagValues pages through the values of a tag key on the bot's users,
// conversations or messages.
func (s *Service) ListTagValues(ctx context.Context, botID, kind, key string, p store.Page) ([]string, string, error) {
	switch kind {
	case store.TagKindUser, store.TagKindConversation, store.TagKindMessage:
	default:
		return nil, "", platform.Invalid("type", "must be one of user, conversation, message")
	}
	return s.store.ListChatTagValues(ctx, botID, kind, key, p)
}
