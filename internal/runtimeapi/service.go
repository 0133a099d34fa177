// Package runtimeapi holds the rules of the Runtime API, the bot-facing
// half of the client: what a bot reads and writes about its own users,
// conversations, participants and messages, by tags.
package runtimeapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
)

// Chat is what the Runtime API needs of the Chat API: the user a bot speaks
// as, and the writes whose signals reach chat users' streams.
type Chat interface {
	BotUser(ctx context.Context, botID string) (platform.ChatUser, error)
	SendMessage(ctx context.Context, c platform.Conversation, u platform.ChatUser, m platform.Message, after time.Time) (chat.MessageView, error)
	RemoveMessage(ctx context.Context, c platform.Conversation, m platform.Message) error
	DeleteUser(ctx context.Context, u platform.ChatUser) error
	MessageUpdated(c platform.Conversation, m chat.MessageView)
}

var _ Chat = (*chat.Service)(nil)

// Service implements the Runtime API for one bot at a time: every method
// takes the calling bot's id and reaches only that bot's rows.
type Service struct {
	store Store
	chat  Chat
	clock platform.Clock
	cfg   Config
	// locks serialize getOrCreate calls of a bot and kind, so that two
	// concurrent calls with the same tags create one row.
	locks platform.KeyLocks
}

// Config tunes the Runtime API.
type Config struct {
	MaxScheduled int // a bot's pending scheduled events at most; 0 = serve's default
	// Channels sends the bot's messages in installed integrations'
	// conversations to their code; nil: they are only stored.
	Channels Channels
}

// New returns the Runtime API's service. The events and workflows it queues
// wake the bot runtime through the store (store.Store.Queued).
func New(st Store, c Chat, clock platform.Clock, cfg Config) *Service {
	if cfg.MaxScheduled <= 0 {
		cfg.MaxScheduled = config.Defaults().BotMaxScheduled
	}
	return &Service{store: st, chat: c, clock: clock, cfg: cfg}
}

func (s *Service) lock(botID, kind string) func() { return s.locks.Lock(botID + "\x00" + kind) }

// Limits of messages and conversations (tags: platform.CheckTags).
const (
	MaxImport      = 100 // messages per importMessages call
	MaxChannelName = 200
)

// created drops the empty values of tags given at creation: an empty
// value means no tag.
func created(tags map[string]string) map[string]string {
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// merged applies an update's tags: a key with an empty value is removed.
func merged(old, patch map[string]string) map[string]string {
	out := make(map[string]string, len(old)+len(patch))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range patch {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// discriminators returns the tags a getOrCreate looks up by: those named by
// discriminateByTags (each must be given), else every tag given.
func discriminators(tags map[string]string, by []string) (map[string]string, error) {
	if by == nil {
		return created(tags), nil
	}
	out := make(map[string]string, len(by))
	for _, k := range by {
		v, ok := tags[k]
		if !ok || v == "" {
			return nil, platform.Invalid("discriminateByTags", "tag %q is not among the tags given", k)
		}
		out[k] = v
	}
	return out, nil
}

// anyOf is tags as a filter: every key with its one value.
func anyOf(tags map[string]string) map[string][]string {
	out := make(map[string][]string, len(tags))
	for k, v := range tags {
		out[k] = []string{v}
	}
	return out
}

// notFound turns the store's ErrNotFound into a 404 naming the resource.
func notFound(err error, kind, id string) error {
	if err == platform.ErrNotFound {
		return platform.NotFound(kind, id)
	}
	return err
}

// rawObject is a JSON object as the API returns it, never null.
func rawObject(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage(`{}`)
	}
	return v
}

// internalIDs resolves an optional conversation id and user id of the bot
// (as the bot sees them) to internal ids; "" stays "".
func (s *Service) internalIDs(ctx context.Context, botID, convID, userID string) (conv, user string, err error) {
	if convID != "" {
		c, err := s.Conversation(ctx, botID, convID)
		if err != nil {
			return "", "", err
		}
		conv = c.ID
	}
	if userID != "" {
		u, err := s.User(ctx, botID, userID)
		if err != nil {
			return "", "", err
		}
		user = u.ID
	}
	return conv, user, nil
}

// visibleIDs maps an optional internal conversation id and user id to the
// ids the bot sees (the internal id when the row has gone).
func (s *Service) visibleIDs(ctx context.Context, botID, convID, userID string) (conv, user string) {
	conv, user = convID, userID
	if convID != "" {
		if c, err := s.store.GetConversationByID(ctx, convID); err == nil {
			conv = c.FID
		}
	}
	if userID != "" {
		if u, err := s.store.GetChatUser(ctx, botID, userID); err == nil {
			user = u.FID
		}
	}
	return conv, user
}
