package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestServiceWakesOnlyForQueuedEvents: the runtime's dispatcher is woken
// when a user's message or event was queued for the bot, and not when
// nothing was (a bot without code, the bot's own message): each wake-up
// costs every node that wrote a message a claim of the job queue.
func TestServiceWakesOnlyForQueuedEvents(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, backend)
			now := time.Now().UTC().Truncate(time.Millisecond)
			w := storetest.Workspace(t, st, now)
			conversation := func(code string) platform.Conversation {
				_, c := storetest.Conversation(t, st, w, code, now)
				return c
			}
			svc := chat.New(st, chat.NewLocalHub(chat.StreamLimits{}), platform.SystemClock{})
			text := json.RawMessage(`{"type":"text","text":"hi"}`)
			send := func(c platform.Conversation, isBot bool, wake bool, what string) {
				t.Helper()
				queued := st.Queued(platform.JobBotEvent)
				u := platform.ChatUser{ID: c.OwnerID, FID: c.OwnerID}
				if _, err := svc.SendMessage(ctx, c, u, platform.Message{ID: platform.NewID("msg_"), Payload: text, IsBot: isBot}, time.Time{}); err != nil {
					t.Fatal(err)
				}
				select {
				case <-queued:
					if !wake {
						t.Fatalf("%s: the bot runtime was woken", what)
					}
				default:
					if wake {
						t.Fatalf("%s: the bot runtime was not woken", what)
					}
				}
			}
			codeless := conversation("")
			send(codeless, false, false, "a user's message to a bot without code")
			withCode := conversation("bot.on.message(() => {})")
			send(withCode, true, false, "the bot's own message")
			send(withCode, false, true, "a user's message to a bot with code")
		})
	}
}

// lookups counts a store's reads of webhooks and chat users.
type lookups struct {
	store.Store
	integrations, users, both int
}

func (l *lookups) GetIntegrationByWebhook(ctx context.Context, id string) (platform.BotIntegration, error) {
	l.integrations++
	return l.Store.GetIntegrationByWebhook(ctx, id)
}

func (l *lookups) GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error) {
	l.users++
	return l.Store.GetChatUser(ctx, botID, id)
}

func (l *lookups) GetWebhookUser(ctx context.Context, webhookID, fid string) (platform.BotIntegration, platform.ChatUser, bool, error) {
	l.both++
	return l.Store.GetWebhookUser(ctx, webhookID, fid)
}

// TestWebhookUser: a Chat API request's webhook and the user its key
// names are read in one query; a key is verified before anything read is
// used: an unknown webhook is 404 whatever the key, a key signed with
// another secret, naming nobody, malformed or naming the bot itself is
// 401, and getOrCreate creates the user a valid key names.
func TestWebhookUser(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := &lookups{Store: storetest.Open(t, backend)}
			now := time.Now().UTC().Truncate(time.Millisecond)
			b := storetest.Bot(storetest.Workspace(t, st, now), "", now)
			hook, off := platform.NewID("wh_"), platform.NewID("wh_")
			secret := []byte("the-encryption-key")
			b.Integrations = []platform.BotIntegration{
				{BotID: b.ID, IntegrationID: platform.ChatIntegrationID, Name: "chat", Version: "1", WebhookID: hook, Enabled: true,
					Configuration: map[string]any{"encryptionKey": string(secret)}, DisabledChannels: []string{}, CreatedAt: now, UpdatedAt: now},
				{BotID: b.ID, IntegrationID: "other", Name: "other", Version: "1", WebhookID: off, Enabled: false,
					Configuration: map[string]any{"encryptionKey": string(secret)}, DisabledChannels: []string{}, CreatedAt: now, UpdatedAt: now},
			}
			if err := st.CreateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			svc := chat.New(st, chat.NewLocalHub(chat.StreamLimits{}), platform.SystemClock{})
			u := platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, FID: "alice", Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
			if err := st.CreateChatUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.BotUser(ctx, b.ID); err != nil {
				t.Fatal(err)
			}
			key := func(s []byte, fid string) string {
				k, err := chat.SignUserKey(s, fid, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				return k
			}
			st.integrations, st.users, st.both = 0, 0, 0
			got, gu, err := svc.WebhookUser(ctx, hook, key(secret, "alice"), false)
			if err != nil || got.ID != b.ID || gu.ID != u.ID {
				t.Fatalf("a valid key: %v %v %v", got, gu, err)
			}
			if st.integrations+st.users != 0 || st.both != 1 {
				t.Fatalf("a valid key's request read the webhook %d, the user %d and both %d times; want both once", st.integrations, st.users, st.both)
			}
			for _, c := range []struct {
				hook, key, what string
				status          int
			}{
				{"wh_unknown", key(secret, "alice"), "an unknown webhook", 404},
				{"wh_unknown", "not a key", "an unknown webhook and a malformed key", 404},
				{off, key(secret, "alice"), "a disabled integration's webhook", 404},
				{hook, key([]byte("another secret"), "alice"), "a key signed with another secret", 401},
				{hook, key(secret, "bob"), "a key naming nobody", 401},
				{hook, "not a key", "a malformed key", 401},
				{hook, key(secret, b.ID), "a key naming the bot", 401},
			} {
				_, _, err := svc.WebhookUser(ctx, c.hook, c.key, false)
				var pe *platform.Error
				if !errors.As(err, &pe) || pe.Type.Status() != c.status {
					t.Errorf("%s: %v, want %d", c.what, err, c.status)
				}
			}
			_, bob, err := svc.WebhookUser(ctx, hook, key(secret, "bob"), true)
			if err != nil || bob.FID != "bob" || bob.BotID != b.ID {
				t.Fatalf("getOrCreate with a valid key naming nobody yet: %+v %v", bob, err)
			}
		})
	}
}
