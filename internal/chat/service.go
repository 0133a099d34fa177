// Package chat holds the Chat API's rules: bots' chat webhooks, user keys,
// users, conversations, participants, messages, custom events, and the live
// signals sent to listeners once a write has committed.
package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/webchat"
)

// Service implements the Chat API.
type Service struct {
	store Store
	hub   Hub
	clock platform.Clock
	// locks order each conversation's writes with their signals, so that
	// listeners receive signals in the order the writes happened.
	locks platform.KeyLocks
	// botUsers caches the chat user each bot speaks as.
	botUsers sync.Map
	// last holds the creation time of each conversation's latest message
	// or event written by this process (see stamp).
	lastMu sync.Mutex
	last   map[string]stamped
}

// stamp dates the next message or event of a conversation: now (or after,
// if later), but always at least a millisecond after the previous one, as
// clients see dates to the millisecond. Sorting a conversation by createdAt
// then keeps the order of its writes, a bot's replies after what they
// answer. Called with the conversation's lock held.
//
// It also returns when the bot's event for a user's write is due: now, and
// never before the previous one's. The date can be ahead of the clock (a
// fast exchange), but the event must not wait for it: a dispatcher would
// find nothing due when woken, and a bot answering within the millisecond
// would wait for its own clock.
func (s *Service) stamp(conversationID string, after time.Time) (at, due time.Time) {
	now := s.clock.Now()
	at, due = now, now
	if after.After(at) {
		at = after
	}
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	if prev, ok := s.last[conversationID]; ok {
		if earliest := prev.at.Truncate(time.Millisecond).Add(time.Millisecond); at.Before(earliest) {
			at = earliest
		}
		if due.Before(prev.due) {
			due = prev.due
		}
	}
	if len(s.last) >= maxStamps { // forget conversations quiet for a second
		for k, t := range s.last {
			if at.Sub(t.at) > time.Second {
				delete(s.last, k)
			}
		}
	}
	s.last[conversationID] = stamped{at, due}
	return at, due
}

// stamped is what stamp remembers of a conversation's latest write.
type stamped struct{ at, due time.Time }

// maxStamps is how many conversations stamp remembers before forgetting the
// quiet ones.
const maxStamps = 4096

// New returns a Service publishing signals to hub.
func New(st Store, hub Hub, clock platform.Clock) *Service {
	return &Service{store: st, hub: hub, clock: clock, last: map[string]stamped{}}
}

// Hub is where the service publishes signals.
func (s *Service) Hub() Hub { return s.hub }

func (s *Service) lock(conversationID string) func() { return s.locks.Lock(conversationID) }

// Webhook is a chat webhook as the Chat API sees it: the bot behind it,
// its user-key secret and the web origins it allows (platform.Bot is the
// bot itself).
type Webhook struct {
	ID        string // the bot's
	WebhookID string
	Key       []byte
	// Origins are the web origins whose pages may call the Chat API
	// (webchat.Allowed).
	Origins []string
	// Integration is the built-in integration whose webhook this is
	// (platform.ChatIntegrationID or WebchatIntegrationID): its
	// conversations are that integration's channel.
	Integration string
}

// Webhook resolves a chat webhook id. Unknown and disabled webhooks, and
// those of a bot's other integrations, are 404, so that the client's
// connection probe fails.
func (s *Service) Webhook(ctx context.Context, webhookID string) (*Webhook, error) {
	in, err := s.store.GetIntegrationByWebhook(ctx, webhookID)
	return webhookOf(webhookID, in, err)
}

// serves tells whether c is a conversation of the webhook's integration:
// the chat and webchat webhooks of a bot each see their own.
func (b *Webhook) serves(c platform.Conversation) bool {
	return cmp.Or(c.Integration, platform.ChatIntegrationID) == b.channel()
}

// channel is the integration whose channel the webhook's conversations
// are (chat when unset).
func (b *Webhook) channel() string { return cmp.Or(b.Integration, platform.ChatIntegrationID) }

// WebchatUserTag is the conversation tag the webchat integration's
// conversations carry: the id of the user who started it.
const WebchatUserTag = "webchat:userId"

// webhookOf is the webhook of the integration read for webhookID (with
// the error of that read).
func webhookOf(webhookID string, in platform.BotIntegration, err error) (*Webhook, error) {
	if errors.Is(err, platform.ErrNotFound) || (err == nil && (!in.Enabled || !platform.ServesChatAPI(in.IntegrationID))) {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "no chat webhook %q", webhookID)
	}
	if err != nil {
		return nil, err
	}
	key, _ := in.Configuration["encryptionKey"].(string)
	if key == "" {
		return nil, errors.New("chat integration without an encryption key")
	}
	return &Webhook{ID: in.BotID, WebhookID: webhookID, Key: []byte(key), Origins: webchat.Origins(in.Configuration), Integration: in.IntegrationID}, nil
}

// BotName is the name of the bot behind a webhook, for the pages that
// show it.
func (s *Service) BotName(ctx context.Context, b *Webhook) (string, error) {
	ws, err := s.store.GetBotWorkspace(ctx, b.ID)
	if err != nil {
		return "", err
	}
	bot, err := s.store.GetBot(ctx, ws, b.ID)
	return bot.Name, err
}

var fidRe = regexp.MustCompile(`^[a-zA-Z0-9_\-\\/]+$`)

// MaxFIDLength is the longest foreign id (compat-notes §1.7).
const MaxFIDLength = 70

func checkFID(field, id string) error {
	if len(id) > MaxFIDLength {
		return platform.Invalid(field, "Fid length exceeds the maximum allowed length of %d", MaxFIDLength)
	}
	if !fidRe.MatchString(id) {
		return platform.Invalid(field, "Fid contains invalid characters (allowed: letters, digits, _ - \\ /)")
	}
	return nil
}

// checkUserFID is checkFID for user ids, whose prefix bot_ is reserved for
// the user each bot speaks as.
func checkUserFID(id string) error {
	if strings.HasPrefix(id, platform.PrefixBot) {
		return platform.Invalid("id", "user ids starting with %q are reserved for bots", platform.PrefixBot)
	}
	return checkFID("id", id)
}

// UserInput holds a user's descriptive fields; nil leaves one unchanged.
// UserData and Attributes are the official web chat's (webchat.go).
type UserInput struct {
	ID         *string         `json:"id"`
	Name       *string         `json:"name"`
	PictureURL *string         `json:"pictureUrl"`
	Profile    *string         `json:"profile"`
	UserData   json.RawMessage `json:"userData"`
	Attributes json.RawMessage `json:"attributes"`
}

// apply sets in's fields on u; b's secret verifies a signed userData or
// attributes.
func (in UserInput) apply(b *Webhook, u *platform.ChatUser) error {
	if in.Profile != nil && len(*in.Profile) > 1000 {
		return platform.Invalid("profile", "at most 1000 characters")
	}
	if err := in.applyWebchat(b, u); err != nil {
		return err
	}
	for _, f := range []struct {
		v   *string
		dst *string
	}{{in.Name, &u.Name}, {in.PictureURL, &u.PictureURL}, {in.Profile, &u.Profile}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return nil
}

// CreateUser creates a user (with the foreign id given, if any) and signs
// its user key.
func (s *Service) CreateUser(ctx context.Context, b *Webhook, in UserInput) (platform.ChatUser, string, error) {
	now := s.clock.Now()
	u := platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, CreatedAt: now, UpdatedAt: now}
	u.FID = u.ID
	if in.ID != nil {
		if err := checkUserFID(*in.ID); err != nil {
			return u, "", err
		}
		u.FID = *in.ID
	}
	if err := in.apply(b, &u); err != nil {
		return u, "", err
	}
	if err := s.store.CreateChatUser(ctx, u); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return u, "", platform.Errorf(platform.TypeAlreadyExists, "id: a user with id %q already exists", u.FID)
		}
		return u, "", err
	}
	key, err := SignUserKey(b.Key, u.FID, time.Time{})
	return u, key, err
}

// Authenticate verifies a user key and returns its user. getOrCreate
// creates the user named by a valid key that has none yet.
func (s *Service) Authenticate(ctx context.Context, b *Webhook, key string, getOrCreate bool) (platform.ChatUser, error) {
	fid, err := VerifyUserKey(b.Key, key)
	if err != nil {
		return platform.ChatUser{}, errInvalidKey
	}
	return s.authenticated(ctx, b, fid, nil, getOrCreate)
}

// WebhookUser is Webhook and then Authenticate, with the webhook and the
// user its key names read in one query: the key's id is read before the
// key is verified, and nothing read is used unless it then verifies.
func (s *Service) WebhookUser(ctx context.Context, webhookID, key string, getOrCreate bool) (*Webhook, platform.ChatUser, error) {
	fid, ok := UserKeyID(key)
	if !ok {
		b, err := s.Webhook(ctx, webhookID) // an unknown webhook is 404 before the key is 401
		if err != nil {
			return nil, platform.ChatUser{}, err
		}
		return b, platform.ChatUser{}, errInvalidKey
	}
	in, u, found, err := s.store.GetWebhookUser(ctx, webhookID, fid)
	b, err := webhookOf(webhookID, in, err)
	if err != nil {
		return nil, platform.ChatUser{}, err
	}
	if verified, err := VerifyUserKey(b.Key, key); err != nil || verified != fid {
		return b, platform.ChatUser{}, errInvalidKey
	}
	var known *platform.ChatUser
	if found {
		known = &u
	}
	u, err = s.authenticated(ctx, b, fid, known, getOrCreate)
	return b, u, err
}

// authenticated is the chat user of a verified key naming fid: known when
// already read (nil: looked up).
func (s *Service) authenticated(ctx context.Context, b *Webhook, fid string, known *platform.ChatUser, getOrCreate bool) (platform.ChatUser, error) {
	var u platform.ChatUser
	var err error
	if known != nil {
		u = *known
	} else {
		u, err = s.store.GetChatUser(ctx, b.ID, fid)
	}
	if err == nil && u.ID == b.ID {
		return platform.ChatUser{}, errInvalidKey // the bot's own user
	}
	if errors.Is(err, platform.ErrNotFound) {
		if !getOrCreate {
			return u, errInvalidKey
		}
		if err := checkUserFID(fid); err != nil {
			return u, err
		}
		now := s.clock.Now()
		u = platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, FID: fid, CreatedAt: now, UpdatedAt: now}
		if err := s.store.CreateChatUser(ctx, u); err != nil {
			if errors.Is(err, platform.ErrConflict) { // created concurrently
				return s.store.GetChatUser(ctx, b.ID, fid)
			}
			return u, err
		}
		return u, nil
	}
	return u, err
}

var errInvalidKey = platform.Errorf(platform.TypeUnauthorized, "Invalid user key")

// UpdateUser changes the caller's descriptive fields.
func (s *Service) UpdateUser(ctx context.Context, b *Webhook, u platform.ChatUser, in UserInput) (platform.ChatUser, error) {
	if err := in.apply(b, &u); err != nil {
		return u, err
	}
	u.UpdatedAt = s.clock.Now()
	return u, s.store.UpdateChatUser(ctx, u)
}

// DeleteUser deletes the caller, ending its streams.
func (s *Service) DeleteUser(ctx context.Context, u platform.ChatUser) error {
	if err := s.store.DeleteChatUser(ctx, u.ID); err != nil {
		return err
	}
	s.hub.CloseUser(u.ID)
	return nil
}

// fids maps internal user ids to the ids clients see.
func (s *Service) fids(ctx context.Context, botID string, ids ...string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		out[id] = id
		if u, err := s.store.GetChatUser(ctx, botID, id); err == nil {
			out[id] = u.FID
		}
	}
	return out
}
