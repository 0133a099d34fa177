package chat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
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
			a := platform.Account{ID: platform.NewID("acc_"), Email: "a@example.com", DisplayName: "A", CreatedAt: now}
			if err := st.CreateAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
			w := platform.Workspace{ID: platform.NewID(platform.PrefixWorkspace), Name: "W", OwnerID: a.ID, Plan: "community", BillingVersion: "v4", CreatedAt: now, UpdatedAt: now}
			m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: a.ID, Email: a.Email, Role: platform.RoleOwner, CreatedAt: now}
			if err := st.CreateWorkspace(ctx, w, m); err != nil {
				t.Fatal(err)
			}
			conversation := func(code string) platform.Conversation {
				t.Helper()
				b := platform.Bot{ID: platform.NewID(platform.PrefixBot), WorkspaceID: w.ID, Name: "b", Type: "studio", Status: "active",
					SigningSecret: "s", Tags: map[string]string{}, Code: code, CreatedAt: now, UpdatedAt: now}
				if err := st.CreateBot(ctx, b); err != nil {
					t.Fatal(err)
				}
				u := platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
				u.FID = u.ID
				if err := st.CreateChatUser(ctx, u); err != nil {
					t.Fatal(err)
				}
				c := platform.Conversation{ID: platform.NewID("conv_"), BotID: b.ID, OwnerID: u.ID, Tags: map[string]string{}, Channel: "channel", Integration: "chat", CreatedAt: now, UpdatedAt: now}
				c.FID = c.ID
				if err := st.CreateConversation(ctx, c); err != nil {
					t.Fatal(err)
				}
				return c
			}
			svc := chat.New(st, chat.NewLocalHub(chat.StreamLimits{}), platform.SystemClock{})
			wakes := 0
			svc.OnQueued(func() { wakes++ })
			text := json.RawMessage(`{"type":"text","text":"hi"}`)
			send := func(c platform.Conversation, isBot bool, want int, what string) {
				t.Helper()
				u := platform.ChatUser{ID: c.OwnerID, FID: c.OwnerID}
				if _, err := svc.SendMessage(ctx, c, u, platform.Message{ID: platform.NewID("msg_"), Payload: text, IsBot: isBot}, time.Time{}); err != nil {
					t.Fatal(err)
				}
				if wakes != want {
					t.Fatalf("%s: %d wake-ups, want %d", what, wakes, want)
				}
			}
			codeless := conversation("")
			send(codeless, false, 0, "a user's message to a bot without code")
			withCode := conversation("bot.on.message(() => {})")
			send(withCode, true, 0, "the bot's own message")
			send(withCode, false, 1, "a user's message to a bot with code")
		})
	}
}
