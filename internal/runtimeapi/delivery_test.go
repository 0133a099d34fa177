package runtimeapi_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestWebchatChannel: the conversations a user opens through the webchat
// integration's webhook are that integration's channel, tagged with their
// user; the web chat's events in them reach the bot as the webchat
// integration's (webchat:conversationStarted, webchat:trigger), while the
// chat integration's stay chat:custom; each webhook sees its own
// conversations only.
func TestWebchatChannel(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, backend)
			now := time.Now().UTC().Truncate(time.Millisecond)
			w := storetest.Workspace(t, st, now)
			u, chatConv := storetest.Conversation(t, st, w, "bot.on.event(() => {})", now)
			svc := chat.New(st, chat.NewLocalHub(chat.StreamLimits{}), platform.SystemClock{})
			rt := runtimeapi.New(st, svc, platform.SystemClock{}, runtimeapi.Config{})
			web := &chat.Webhook{ID: chatConv.BotID, Integration: platform.WebchatIntegrationID}
			plain := &chat.Webhook{ID: chatConv.BotID, Integration: platform.ChatIntegrationID}

			c, err := svc.CreateConversation(ctx, web, u, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := st.GetConversationByID(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Integration != "webchat" || stored.Channel != "channel" || stored.Tags[chat.WebchatUserTag] != u.FID {
				t.Fatalf("the webchat's conversation: integration %q, channel %q, tags %v", stored.Integration, stored.Channel, stored.Tags)
			}
			if _, err := svc.Conversation(ctx, plain, u, c.FID, false); !isType(err, platform.TypeResourceNotFound) {
				t.Fatalf("the chat webhook reads the webchat's conversation: %v", err)
			}
			if _, err := svc.Conversation(ctx, web, u, chatConv.FID, false); !isType(err, platform.TypeResourceNotFound) {
				t.Fatalf("the webchat webhook reads the chat's conversation: %v", err)
			}
			if _, err := svc.CreateConversation(ctx, web, u, &chatConv.FID, true); !isType(err, platform.TypeForbidden) {
				t.Fatalf("getOrCreate through the webchat webhook of the chat's conversation: %v", err)
			}
			for _, l := range []struct {
				b    *chat.Webhook
				want string
			}{{web, c.ID}, {plain, chatConv.ID}} {
				cs, _, err := svc.ListConversations(ctx, l.b, u, store.Page{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) != 1 || cs[0].ID != l.want {
					t.Fatalf("%s lists %v, want only %s", l.b.Integration, cs, l.want)
				}
			}

			deliver := func(b *chat.Webhook, conv platform.Conversation, payload string) runtimeapi.Delivery {
				t.Helper()
				e, err := svc.CreateEvent(ctx, b, u, conv.FID, json.RawMessage(payload))
				if err != nil {
					t.Fatal(err)
				}
				d, err := rt.DeliveryFor(ctx, platform.Job{ID: "job_1"}, platform.BotEventJob{Type: platform.BotEventChat, ID: e.ID, ConversationID: conv.ID})
				if err != nil {
					t.Fatal(err)
				}
				if d.Event["conversationId"] != conv.FID || d.Event["userId"] != u.FID {
					t.Fatalf("delivery of %s: conversation %v, user %v", payload, d.Event["conversationId"], d.Event["userId"])
				}
				return d
			}
			for _, want := range []struct {
				b       *chat.Webhook
				conv    platform.Conversation
				payload string
				typ     string
				event   map[string]any
			}{
				{web, c, `{"type":"conversation_started","data":{}}`, "webchat:conversationStarted",
					map[string]any{"userId": u.FID, "conversationId": c.FID}},
				{web, c, `{"type":"custom","data":{"kind":"upsertAnalyzer","id":"a1"}}`, "webchat:trigger",
					map[string]any{"origin": "website", "userId": u.FID, "conversationId": c.FID, "payload": map[string]any{"kind": "upsertAnalyzer", "id": "a1"}}},
				{web, c, `{"type":"custom","data":7}`, "webchat:trigger",
					map[string]any{"origin": "website", "userId": u.FID, "conversationId": c.FID, "payload": map[string]any{"value": 7.0}}},
				{web, c, `{"ping":true}`, "webchat:trigger",
					map[string]any{"origin": "website", "userId": u.FID, "conversationId": c.FID, "payload": map[string]any{"ping": true}}},
				{plain, chatConv, `{"type":"custom","data":{"kind":"x"}}`, "chat:custom",
					map[string]any{"userId": u.FID, "conversationId": chatConv.FID, "payload": map[string]any{"type": "custom", "data": map[string]any{"kind": "x"}}}},
			} {
				d := deliver(want.b, want.conv, want.payload)
				var got map[string]any
				raw, _ := json.Marshal(d.Event["payload"])
				_ = json.Unmarshal(raw, &got)
				if d.Type != want.typ || d.Event["type"] != want.typ || !reflect.DeepEqual(got, want.event) {
					t.Errorf("%s: delivered %s %v, want %s %v", want.payload, d.Type, got, want.typ, want.event)
				}
			}
		})
	}
}

func isType(err error, typ platform.ErrorType) bool {
	e, ok := platform.AsError(err)
	return ok && e.Type == typ
}
