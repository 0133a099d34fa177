package runtimeapi

import (
	"cmp"
	"context"
	"errors"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ConversationInput is the body of createConversation,
// getOrCreateConversation and updateConversation.
type ConversationInput struct {
	Channel            *string           `json:"channel"`
	Tags               map[string]string `json:"tags"`
	Properties         map[string]string `json:"properties"`
	DiscriminateByTags []string          `json:"discriminateByTags"`
	// IntegrationName (deprecated, still sent by older SDKs) names the
	// integration the conversation is of, as its integration field shows;
	// "chat" when not given.
	IntegrationName string `json:"integrationName"`
}

func (in ConversationInput) check(creating bool) error {
	if creating {
		if in.Channel == nil || *in.Channel == "" {
			return platform.Invalid("channel", "is required")
		}
		if len(*in.Channel) > MaxChannelName {
			return platform.Invalid("channel", "at most %d characters", MaxChannelName)
		}
		if len(in.IntegrationName) > MaxChannelName {
			return platform.Invalid("integrationName", "at most %d characters", MaxChannelName)
		}
	}
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return err
	}
	return platform.CheckTags("properties", in.Properties)
}

// of is in as the integration alias sends it ("": the bot): its tags
// prefixed, its conversations the integration's.
func (in ConversationInput) of(alias string) ConversationInput {
	if alias != "" {
		in.Tags, in.DiscriminateByTags, in.IntegrationName = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags), alias
	}
	return in
}

// integration is the integration a conversation created with in is of.
func (in ConversationInput) integration() string { return cmp.Or(in.IntegrationName, "chat") }

// NewConversationJSON renders a conversation just created (no messages).
func NewConversationJSON(c platform.Conversation) map[string]any { return ConversationJSON(c, 0) }

// ConversationJSON renders a conversation with its number of messages.
func ConversationJSON(c platform.Conversation, messages int64) map[string]any {
	tags := c.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	out := map[string]any{
		"id": c.FID, "createdAt": platform.FormatTime(c.CreatedAt), "updatedAt": platform.FormatTime(c.UpdatedAt),
		"channel": c.Channel, "integration": c.Integration, "tags": tags, "messageCount": messages,
	}
	if len(c.Properties) > 0 {
		out["properties"] = c.Properties
	}
	return out
}

// CreateConversation creates a conversation of the bot. The bot's own user
// owns it (chat users take part once added as participants).
func (s *Service) CreateConversation(ctx context.Context, botID string, in ConversationInput) (platform.Conversation, error) {
	in = in.of(integrationOf(ctx))
	if in.DiscriminateByTags != nil {
		return platform.Conversation{}, platform.Invalid("discriminateByTags", "is only for getOrCreateConversation")
	}
	if err := in.check(true); err != nil {
		return platform.Conversation{}, err
	}
	bu, err := s.chat.BotUser(ctx, botID)
	if err != nil {
		return platform.Conversation{}, err
	}
	now := s.clock.Now()
	c := platform.Conversation{ID: platform.NewID("conv_"), BotID: botID, OwnerID: bu.ID, Tags: created(in.Tags),
		Properties: created(in.Properties), Channel: *in.Channel, Integration: in.integration(), CreatedAt: now, UpdatedAt: now}
	c.FID = c.ID
	return c, s.store.CreateConversation(ctx, c)
}

// GetOrCreateConversation returns the bot's first conversation (by
// creation) of that integration and channel whose tags match the
// discriminating tags, or creates one.
func (s *Service) GetOrCreateConversation(ctx context.Context, botID string, in ConversationInput) (store.CountedConversation, bool, error) {
	in = in.of(integrationOf(ctx))
	if err := in.check(true); err != nil {
		return store.CountedConversation{}, false, err
	}
	by, err := discriminators(in.Tags, in.DiscriminateByTags)
	if err != nil {
		return store.CountedConversation{}, false, err
	}
	if len(by) > 0 {
		defer s.lock(botID, "conversation")()
		found, _, err := s.store.ListBotConversations(ctx, store.ConversationFilter{BotID: botID, Tags: anyOf(by), Channel: *in.Channel,
			Integration: in.integration(), Page: store.Page{Limit: 1}})
		if err != nil {
			return store.CountedConversation{}, false, err
		}
		if len(found) > 0 {
			return found[0], false, nil
		}
	}
	in.DiscriminateByTags = nil
	c, err := s.CreateConversation(ctx, botID, in)
	return store.CountedConversation{Conversation: c}, true, err
}

// Conversation loads a conversation of the bot by id.
func (s *Service) Conversation(ctx context.Context, botID, id string) (platform.Conversation, error) {
	c, err := s.store.GetConversation(ctx, botID, id)
	return c, notFound(err, "conversation", id)
}

// CountedConversation loads a conversation with its number of messages.
func (s *Service) CountedConversation(ctx context.Context, botID, id string) (store.CountedConversation, error) {
	c, err := s.Conversation(ctx, botID, id)
	if err != nil {
		return store.CountedConversation{}, err
	}
	return s.counted(ctx, c)
}

func (s *Service) counted(ctx context.Context, c platform.Conversation) (store.CountedConversation, error) {
	n, err := s.store.CountMessages(ctx, c.ID)
	return store.CountedConversation{Conversation: c, Messages: n}, err
}

// UpdateConversation changes a conversation's tags and properties (an
// empty or null value removes a key).
func (s *Service) UpdateConversation(ctx context.Context, botID, id string, in ConversationInput) (store.CountedConversation, error) {
	in = in.of(integrationOf(ctx))
	if err := in.check(false); err != nil {
		return store.CountedConversation{}, err
	}
	c, err := s.Conversation(ctx, botID, id)
	if err != nil {
		return store.CountedConversation{}, err
	}
	c.Tags = merged(c.Tags, in.Tags)
	c.Properties = merged(c.Properties, in.Properties)
	c.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateConversation(ctx, c); err != nil {
		return store.CountedConversation{}, notFound(err, "conversation", id)
	}
	return s.counted(ctx, c)
}

// DeleteConversation deletes a conversation of the bot with its messages.
func (s *Service) DeleteConversation(ctx context.Context, botID, id string) error {
	c, err := s.Conversation(ctx, botID, id)
	if err != nil {
		return err
	}
	return notFound(s.store.DeleteConversation(ctx, c.ID), "conversation", id)
}

// ConversationFilter is listConversations' query.
type ConversationFilter struct {
	store.Page
	store.DateRange
	Tags                     map[string][]string
	ParticipantIDs           []string
	Channel, Integration     string
	MinMessages, MaxMessages *int64
	SortField                string
	Descending               bool
}

// ListConversations lists the bot's conversations.
func (s *Service) ListConversations(ctx context.Context, botID string, f ConversationFilter) ([]store.CountedConversation, string, error) {
	sf := store.ConversationFilter{Page: f.Page, DateRange: f.DateRange, BotID: botID, Tags: f.Tags, Channel: f.Channel,
		Integration: f.Integration, MinMessages: f.MinMessages, MaxMessages: f.MaxMessages, Descending: f.Descending}
	switch f.SortField {
	case "", "createdAt":
	case "updatedAt":
		sf.ByUpdate = true
	default:
		return nil, "", platform.Invalid("sortField", "must be createdAt or updatedAt")
	}
	for _, id := range f.ParticipantIDs {
		u, err := s.store.GetChatUser(ctx, botID, id)
		if errors.Is(err, platform.ErrNotFound) {
			return []store.CountedConversation{}, "", nil // nobody by that id takes part in anything
		}
		if err != nil {
			return nil, "", err
		}
		sf.ParticipantIDs = append(sf.ParticipantIDs, u.ID)
	}
	return s.store.ListBotConversations(ctx, sf)
}

// AddParticipant adds a user of the bot to a conversation of the bot.
func (s *Service) AddParticipant(ctx context.Context, botID, conversationID, userID string) (platform.ChatUser, error) {
	c, err := s.Conversation(ctx, botID, conversationID)
	if err != nil {
		return platform.ChatUser{}, err
	}
	u, err := s.User(ctx, botID, userID)
	if err != nil {
		return u, err
	}
	return u, notFound(s.store.AddParticipant(ctx, c.ID, u.ID, s.clock.Now().UnixMicro()), "conversation", conversationID)
}

// Participant returns a participant of a conversation of the bot.
func (s *Service) Participant(ctx context.Context, botID, conversationID, userID string) (platform.ChatUser, error) {
	c, err := s.Conversation(ctx, botID, conversationID)
	if err != nil {
		return platform.ChatUser{}, err
	}
	u, err := s.store.GetChatUser(ctx, botID, userID)
	if err != nil {
		return u, notFound(err, "participant", userID)
	}
	ok, err := s.store.IsParticipant(ctx, c.ID, u.ID)
	if err == nil && !ok {
		err = platform.NotFound("participant", userID)
	}
	return u, err
}

// RemoveParticipant removes a participant from a conversation of the bot.
func (s *Service) RemoveParticipant(ctx context.Context, botID, conversationID, userID string) error {
	u, err := s.Participant(ctx, botID, conversationID, userID)
	if err != nil {
		return err
	}
	c, err := s.Conversation(ctx, botID, conversationID)
	if err != nil {
		return err
	}
	return notFound(s.store.RemoveParticipant(ctx, c.ID, u.ID), "participant", userID)
}

// ListParticipants lists a conversation's participants.
func (s *Service) ListParticipants(ctx context.Context, botID, conversationID string, p store.Page) ([]platform.ChatUser, string, error) {
	c, err := s.Conversation(ctx, botID, conversationID)
	if err != nil {
		return nil, "", err
	}
	return s.store.ListParticipants(ctx, c.ID, p)
}
