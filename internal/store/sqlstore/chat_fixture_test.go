package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// chatFixture creates a bot with one chat user in s, and returns functions
// that create a conversation of that user and add a message to one.
func chatFixture(t testing.TB, s *sqlstore.Store) (conversation func() string, message func(conv string)) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	b := storetest.Bot(storetest.Workspace(t, s, now), "", now)
	u := platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	u.FID = u.ID
	must(s.CreateBot(ctx, b), "CreateBot")
	must(s.CreateChatUser(ctx, u), "CreateChatUser")
	conversation = func() string {
		t.Helper()
		c := platform.Conversation{ID: platform.NewID("conv_"), BotID: b.ID, OwnerID: u.ID, Tags: map[string]string{},
			Channel: "channel", Integration: "chat", CreatedAt: now, UpdatedAt: now}
		c.FID = c.ID
		must(s.CreateConversation(ctx, c), "CreateConversation")
		return c.ID
	}
	message = func(conv string) {
		t.Helper()
		_, err := s.CreateMessage(ctx, platform.Message{ID: platform.NewID("msg_"), ConversationID: conv, UserID: u.ID,
			Payload: json.RawMessage(`{"type":"text","text":"hi"}`), Tags: map[string]string{}, CreatedAt: now})
		must(err, "CreateMessage")
	}
	return conversation, message
}
