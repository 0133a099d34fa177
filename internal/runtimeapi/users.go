package runtimeapi

import (
	"context"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// UserInput is the body of createUser, getOrCreateUser and updateUser; nil
// leaves a field unchanged. Properties and attributes change as tags do.
type UserInput struct {
	Tags               map[string]string `json:"tags"`
	Properties         map[string]string `json:"properties"`
	Attributes         map[string]string `json:"attributes"`
	Name               *string           `json:"name"`
	PictureURL         *string           `json:"pictureUrl"`
	DiscriminateByTags []string          `json:"discriminateByTags"`
	// IntegrationName is accepted for bots of older SDKs: a user has no
	// integration to show, so it changes nothing.
	IntegrationName string `json:"integrationName"`
}

func (in UserInput) check() error {
	for _, m := range []struct {
		field string
		v     map[string]string
	}{{"tags", in.Tags}, {"properties", in.Properties}, {"attributes", in.Attributes}} {
		if err := platform.CheckTags(m.field, m.v); err != nil {
			return err
		}
	}
	if in.Name != nil && len([]rune(*in.Name)) > 200 {
		return platform.Invalid("name", "at most 200 characters")
	}
	if in.PictureURL != nil && len(*in.PictureURL) > 2000 {
		return platform.Invalid("pictureUrl", "at most 2000 characters")
	}
	return nil
}

func (in UserInput) apply(u *platform.ChatUser) {
	if in.Name != nil {
		u.Name = *in.Name
	}
	if in.PictureURL != nil {
		u.PictureURL = *in.PictureURL
	}
}

// UserJSON renders a user as the Runtime API returns it.
func UserJSON(u platform.ChatUser) map[string]any {
	out := map[string]any{"id": u.FID, "createdAt": platform.FormatTime(u.CreatedAt), "updatedAt": platform.FormatTime(u.UpdatedAt), "tags": u.Tags}
	if u.Tags == nil {
		out["tags"] = map[string]string{}
	}
	if len(u.Properties) > 0 {
		out["properties"] = u.Properties
	}
	if len(u.Attributes) > 0 {
		out["attributes"] = u.Attributes
	}
	if u.Name != "" {
		out["name"] = u.Name
	}
	if u.PictureURL != "" {
		out["pictureUrl"] = u.PictureURL
	}
	return out
}

// CreateUser creates a user of the bot.
func (s *Service) CreateUser(ctx context.Context, botID string, in UserInput) (platform.ChatUser, error) {
	alias := integrationOf(ctx)
	in.Tags, in.DiscriminateByTags = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags)
	if in.DiscriminateByTags != nil {
		return platform.ChatUser{}, platform.Invalid("discriminateByTags", "is only for getOrCreateUser")
	}
	if err := in.check(); err != nil {
		return platform.ChatUser{}, err
	}
	now := s.clock.Now()
	u := platform.ChatUser{ID: platform.NewID("user_"), BotID: botID, Tags: created(in.Tags), Properties: created(in.Properties),
		Attributes: created(in.Attributes), CreatedAt: now, UpdatedAt: now}
	u.FID = u.ID
	in.apply(&u)
	return u, s.store.CreateChatUser(ctx, u)
}

// GetOrCreateUser returns the bot's first user (by creation) whose tags
// match the discriminating tags, or creates one.
func (s *Service) GetOrCreateUser(ctx context.Context, botID string, in UserInput) (platform.ChatUser, bool, error) {
	alias := integrationOf(ctx)
	in.Tags, in.DiscriminateByTags = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags)
	if err := in.check(); err != nil {
		return platform.ChatUser{}, false, err
	}
	by, err := discriminators(in.Tags, in.DiscriminateByTags)
	if err != nil {
		return platform.ChatUser{}, false, err
	}
	if len(by) > 0 {
		defer s.lock(botID, "user")()
		found, _, err := s.store.ListChatUsers(ctx, store.ChatUserFilter{BotID: botID, Tags: anyOf(by), Page: store.Page{Limit: 1}})
		if err != nil {
			return platform.ChatUser{}, false, err
		}
		if len(found) > 0 {
			return found[0], false, nil
		}
	}
	in.DiscriminateByTags = nil
	u, err := s.CreateUser(ctx, botID, in)
	return u, true, err
}

// User loads a user of the bot by id. The user the bot speaks as is not
// one of its users.
func (s *Service) User(ctx context.Context, botID, id string) (platform.ChatUser, error) {
	u, err := s.store.GetChatUser(ctx, botID, id)
	if err == nil && u.ID == botID {
		err = platform.ErrNotFound
	}
	return u, notFound(err, "user", id)
}

// UpdateUser changes a user's name, picture, tags, properties and
// attributes (an empty or null value removes the key).
func (s *Service) UpdateUser(ctx context.Context, botID, id string, in UserInput) (platform.ChatUser, error) {
	alias := integrationOf(ctx)
	in.Tags, in.DiscriminateByTags = prefixed(alias, in.Tags), prefixedKeys(alias, in.DiscriminateByTags)
	if err := in.check(); err != nil {
		return platform.ChatUser{}, err
	}
	u, err := s.User(ctx, botID, id)
	if err != nil {
		return u, err
	}
	in.apply(&u)
	u.Tags = merged(u.Tags, in.Tags)
	u.Properties = merged(u.Properties, in.Properties)
	u.Attributes = merged(u.Attributes, in.Attributes)
	u.UpdatedAt = s.clock.Now()
	return u, notFound(s.store.UpdateChatUser(ctx, u), "user", id)
}

// DeleteUser deletes a user of the bot, ending its streams.
func (s *Service) DeleteUser(ctx context.Context, botID, id string) error {
	u, err := s.User(ctx, botID, id)
	if err != nil {
		return err
	}
	return notFound(s.chat.DeleteUser(ctx, u), "user", id)
}

// UserFilter is listUsers' query.
type UserFilter struct {
	store.Page
	store.DateRange
	ConversationID string
	Tags           map[string][]string
	SortField      string // createdAt (default) or updatedAt
	Descending     bool
}

// ListUsers lists the bot's users.
func (s *Service) ListUsers(ctx context.Context, botID string, f UserFilter) ([]platform.ChatUser, string, error) {
	sf := store.ChatUserFilter{Page: f.Page, DateRange: f.DateRange, BotID: botID, Tags: f.Tags, Descending: f.Descending}
	switch f.SortField {
	case "", "createdAt":
	case "updatedAt":
		sf.ByUpdate = true
	default:
		return nil, "", platform.Invalid("sortField", "must be createdAt or updatedAt")
	}
	if f.ConversationID != "" {
		c, err := s.Conversation(ctx, botID, f.ConversationID)
		if err != nil {
			return nil, "", err
		}
		sf.ConversationID = c.ID
	}
	return s.store.ListChatUsers(ctx, sf)
}
