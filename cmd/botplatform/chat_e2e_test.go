package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/golang-jwt/jwt/v5"
)

// pingInterval is the --sse-ping-interval of the Chat API test server.
const pingInterval = 200 * time.Millisecond

// TestChatAPI runs every Chat API scenario against one real server per
// backend. Scenarios run in parallel, each with its own workspace and bot.
func TestChatAPI(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		run  func(*testing.T, *chatEnv)
	}{
		{"probe", testChatProbe},
		{"user_keys", testChatUserKeys},
		{"key_rotation", testChatKeyRotation},
		{"users_me", testChatUsersMe},
		{"foreign_ids", testChatForeignIDs},
		{"internal_ids", testChatInternalIDs},
		{"access", testChatAccess},
		{"delete_message", testChatDeleteMessage},
		{"create_event", testChatCreateEvent},
		{"list_participants", testChatListParticipants},
		{"list_pagination", testChatListPagination},
		{"message_payloads", testChatMessagePayloads},
		{"metadata", testChatMetadata},
		{"payload_too_large", testChatPayloadTooLarge},
		{"cors", testChatCORS},
		{"sse_signals", testChatSignals},
		{"sse_order", testChatSignalOrder},
		{"sse_replay", testChatReplay},
		{"sse_ping", testChatPing},
		{"sse_listen_errors", testChatListenErrors},
		{"sse_remove_participant", testChatRemoveParticipantStream},
		{"bot_event_jobs", testChatBotEventJobs},
		{"concurrent_get_or_create", testChatConcurrentGetOrCreate},
	}
	var all []scenario
	for _, sc := range scenarios {
		all = append(all, scenario{sc.name, func(t *testing.T, s *testServer) { sc.run(t, newChatEnv(t, s)) }})
	}
	runScenarios(t, all, "--sse-ping-interval", pingInterval.String())
}

// testChatReplay: a new stream first receives the messages and events of the
// last second (chat.ReplayWindow), and nothing else from before it opened.
func testChatReplay(t *testing.T, e *chatEnv) {
	o := e.user("replay-owner")
	p := e.user("replay-participant")
	c := e.conversation(o, "")
	e.addParticipant(o, c, p) // participant_added: not replayed
	m1 := str(t, e.send(o, c, "before listening"), "id")
	ev := field(t, e.call(http.MethodPost, "/events", o.Key, map[string]any{"conversationId": c, "payload": map[string]any{"k": 1}}).status(201), "event").(map[string]any)
	st := e.listenTo(p, c)
	if got := st.expect(t, "message_created"); got["id"] != m1 {
		t.Fatalf("first replayed signal %v, want message %s", got, m1)
	}
	if got := st.expect(t, "event_created"); got["id"] != ev["id"] {
		t.Fatalf("second replayed signal %v, want event %v", got, ev["id"])
	}
	m2 := str(t, e.send(o, c, "live"), "id")
	if got := st.expect(t, "message_created"); got["id"] != m2 {
		t.Fatalf("live signal %v, want message %s", got, m2)
	}
	st.close()

	time.Sleep(chat.ReplayWindow + 100*time.Millisecond) // the rule under test is the window
	late := e.listenTo(p, c)
	m3 := str(t, e.send(o, c, "after the window"), "id")
	if got := late.expect(t, "message_created"); got["id"] != m3 {
		t.Fatalf("a stream opened after the window received %v first, want the live message %s", got, m3)
	}
	late.close()
}

func testChatProbe(t *testing.T, e *chatEnv) {
	// The client's probe: GET {apiUrl}/hello/ with no key.
	r := e.call(http.MethodGet, "/hello/", "", nil)
	if r.Status != http.StatusOK || len(r.Body) == 0 {
		t.Fatalf("probe: status %d body %q, want 200 with a body", r.Status, r.Body)
	}
	var m map[string]any
	if json.Unmarshal(r.Body, &m) == nil {
		if _, ok := m["code"].(float64); ok {
			t.Errorf("probe body %s has a numeric code, which the client treats as a failure", r.Body)
		}
	}
	anon := e.s.as(t, "", "")
	anon.get("/chat/wh_unknown/hello/").fail(404, "ResourceNotFound")
	anon.post("/chat/wh_unknown/users", map[string]any{}).fail(404, "ResourceNotFound")
	anon.raw(http.MethodGet, "/chat/wh_unknown/users/me", nil, "x-user-key", e.selfKey("x")).fail(404, "ResourceNotFound")
	// The webhook id is case-sensitive.
	if up := strings.ToUpper(e.webhookID); up != e.webhookID {
		anon.get("/chat/"+up+"/hello/").fail(404, "ResourceNotFound")
	}

	// A disabled chat integration is not reachable; enabled again, it is.
	botPath := "/v1/admin/bots/" + e.botID
	setEnabled := func(on bool) {
		t.Helper()
		b := e.admin.put(botPath, map[string]any{"integrations": map[string]any{"chat": map[string]any{"enabled": on}}}).ok()
		if field(t, b, "bot", "integrations", "chat", "enabled") != on {
			t.Fatalf("updateBot enabled=%v: %v", on, b)
		}
	}
	setEnabled(false)
	e.call(http.MethodGet, "/hello/", "", nil).fail(404, "ResourceNotFound")
	setEnabled(true)
	if r := e.call(http.MethodGet, "/hello/", "", nil); r.Status != http.StatusOK {
		t.Fatalf("probe after re-enabling: status %d", r.Status)
	}

	// A deleted bot's webhook is gone.
	u := e.createUser(nil)
	e.admin.del(botPath).ok()
	e.call(http.MethodGet, "/hello/", "", nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/users/me", u.Key, nil).fail(404, "ResourceNotFound")
}

func testChatUserKeys(t *testing.T, e *chatEnv) {
	// Without an id: the internal id, and a key naming it.
	anon := e.createUser(nil)
	if !strings.HasPrefix(anon.ID, "user_") {
		t.Errorf("createUser without id: id %q, want a generated user_ id", anon.ID)
	}
	wantKeys(t, anon.Obj, "user without fields", "id", "createdAt", "updatedAt")
	wantDate(t, anon.Obj["createdAt"], "user.createdAt")
	wantDate(t, anon.Obj["updatedAt"], "user.updatedAt")
	parts := strings.Split(anon.Key, ".")
	if len(parts) != 3 {
		t.Fatalf("key %q is not a JWT", anon.Key)
	}

	alice := e.createUser(map[string]any{"id": "alice_fid-1", "name": "Alice", "pictureUrl": "https://example.com/a.png", "profile": "likes tea"})
	wantEqual(t, alice.Obj, map[string]any{"id": "alice_fid-1", "name": "Alice", "pictureUrl": "https://example.com/a.png", "profile": "likes tea",
		"createdAt": alice.Obj["createdAt"], "updatedAt": alice.Obj["updatedAt"]}, "createUser with every field")

	me := func(key string) map[string]any {
		t.Helper()
		return field(t, e.call(http.MethodGet, "/users/me", key, nil).ok(), "user").(map[string]any)
	}
	wantEqual(t, me(alice.Key), alice.Obj, "getUser with the server-issued key")
	wantEqual(t, me(anon.Key), anon.Obj, "getUser of the user without id")

	// Keys signed by the app with the encryption key work the same.
	wantEqual(t, me(e.selfKey(alice.ID)), alice.Obj, "getUser with a self-signed key")
	wantEqual(t, me(signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": alice.ID})), alice.Obj, "self-signed key without iat")
	wantEqual(t, me(signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": alice.ID, "extra": []int{1}})), alice.Obj, "self-signed key with another claim")

	// getOrCreateUser creates the user a self-signed key names, once.
	bobKey := e.selfKey("bob_fid")
	bob := field(t, e.call(http.MethodPost, "/users/get-or-create", bobKey, map[string]any{}).status(201), "user").(map[string]any)
	if bob["id"] != "bob_fid" {
		t.Fatalf("getOrCreateUser: user %v, want id bob_fid", bob)
	}
	again := field(t, e.call(http.MethodPost, "/users/get-or-create", bobKey, map[string]any{}).status(201), "user").(map[string]any)
	wantEqual(t, again, bob, "getOrCreateUser of an existing user")
	wantEqual(t, me(bobKey), bob, "getUser of a user made by getOrCreateUser")
	named := field(t, e.call(http.MethodPost, "/users/get-or-create", bobKey, map[string]any{"name": "Bob"}).status(201), "user").(map[string]any)
	if named["name"] != "Bob" || named["id"] != "bob_fid" || named["createdAt"] != bob["createdAt"] {
		t.Errorf("getOrCreateUser with a name: %v", named)
	}
	// The server-issued key also works with getOrCreateUser.
	wantEqual(t, field(t, e.call(http.MethodPost, "/users/get-or-create", alice.Key, nil).status(201), "user"), alice.Obj, "getOrCreateUser with a createUser key")
	e.call(http.MethodPost, "/users/get-or-create", alice.Key, map[string]any{"id": "x"}).fail(400, "InvalidPayload", "id")

	// Every bad key is 401 Unauthorized, "Invalid user key".
	wrong := signKey(t, jwt.SigningMethodHS256, "another-secret-of-32-characters!!", jwt.MapClaims{"id": alice.ID})
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"id": alice.ID}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	tampered := parts[0] + "." + jwtPart(t, map[string]any{"id": alice.ID}) + "." + parts[2] // anon's signature
	bad := []struct{ name, key string }{
		{"wrong secret", wrong},
		{"garbage", "not-a-key"},
		{"three garbage parts", "a.b.c"},
		{"alg none", none},
		{"HS512 with the right secret", signKey(t, jwt.SigningMethodHS512, e.encKey, jwt.MapClaims{"id": alice.ID})},
		{"payload swapped under another user's signature", tampered},
		{"no id claim", signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"sub": alice.ID})},
		{"numeric id claim", signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": 42})},
		{"empty id claim", signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": ""})},
		{"expired", signKey(t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": alice.ID, "exp": time.Now().Add(-time.Hour).Unix()})},
	}
	for _, b := range bad {
		for _, op := range []struct{ method, path string }{
			{http.MethodGet, "/users/me"}, {http.MethodPost, "/users/get-or-create"}, {http.MethodGet, "/conversations"}, {http.MethodPost, "/conversations"},
		} {
			r := e.call(op.method, op.path, b.key, map[string]any{})
			if r.Status != 401 {
				t.Errorf("%s with a key (%s): status %d, want 401; body %s", op.path, b.name, r.Status, r.Body)
				continue
			}
			r.fail(401, "Unauthorized", "Invalid user key")
		}
	}
	// No key at all.
	for _, path := range []string{"/users/me", "/conversations", "/events/evt_x", "/messages/msg_x"} {
		e.call(http.MethodGet, path, "", nil).fail(401, "Unauthorized")
	}
	e.call(http.MethodPost, "/users/get-or-create", "", map[string]any{}).fail(401, "Unauthorized")
	// A valid signature for a user that does not exist: only
	// getOrCreateUser creates it.
	e.call(http.MethodGet, "/users/me", e.selfKey("ghost"), nil).fail(401, "Unauthorized", "Invalid user key")
	e.call(http.MethodPost, "/conversations", e.selfKey("ghost"), map[string]any{}).fail(401, "Unauthorized")

	// Keys are per bot: another bot's key (its own secret) is refused here.
	other := newChatEnv(t, e.s)
	ou := other.createUser(map[string]any{"id": alice.ID})
	e.call(http.MethodGet, "/users/me", ou.Key, nil).fail(401, "Unauthorized")
	other.call(http.MethodGet, "/users/me", ou.Key, nil).ok()
}

// jwtPart encodes one JWT segment.
func jwtPart(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func testChatKeyRotation(t *testing.T, e *chatEnv) {
	alice := e.user("alice")
	self := e.selfKey("alice")
	bobSelf := e.selfKey("bob") // getOrCreateUser with the old secret, before rotation
	e.call(http.MethodPost, "/users/get-or-create", bobSelf, nil).status(201)
	for _, k := range []string{alice.Key, self, bobSelf} {
		e.call(http.MethodGet, "/users/me", k, nil).ok()
	}

	newKey := "rotated-" + strings.Repeat("k", 32)
	b := e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{
		"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"encryptionKey": newKey}}},
	}).ok()
	if got := str(t, b, "bot", "integrations", "chat", "configuration", "encryptionKey"); got != newKey {
		t.Fatalf("updateBot did not set the encryptionKey: %q", got)
	}
	if str(t, b, "bot", "integrations", "chat", "webhookId") != e.webhookID {
		t.Fatalf("updateBot changed the webhook id")
	}
	old := e.encKey
	e.encKey = newKey

	// Every key signed with the old secret now fails.
	for _, k := range []string{alice.Key, self, bobSelf} {
		e.call(http.MethodGet, "/users/me", k, nil).fail(401, "Unauthorized", "Invalid user key")
		e.call(http.MethodPost, "/users/get-or-create", k, nil).fail(401, "Unauthorized")
	}
	// The users are still there, reachable with keys of the new secret.
	if got := str(t, e.call(http.MethodGet, "/users/me", e.selfKey("alice"), nil).ok(), "user", "id"); got != "alice" {
		t.Fatalf("getUser with a key of the new secret: id %q", got)
	}
	if got := str(t, e.call(http.MethodGet, "/users/me", e.selfKey("bob"), nil).ok(), "user", "id"); got != "bob" {
		t.Fatalf("getUser of bob with a key of the new secret: id %q", got)
	}
	// createUser now signs with the new secret (createUser checks it), not the old.
	carol := e.user("carol")
	if _, err := jwt.Parse(carol.Key, func(*jwt.Token) (any, error) { return []byte(old), nil }); err == nil {
		t.Fatalf("a key issued after rotation verifies with the old secret")
	}
	e.call(http.MethodGet, "/users/me", carol.Key, nil).ok()
}

func testChatUsersMe(t *testing.T, e *chatEnv) {
	u := e.createUser(map[string]any{"id": "me", "name": "Me"})
	up := field(t, e.call(http.MethodPut, "/users/me", u.Key, map[string]any{"pictureUrl": "https://example.com/me.png", "profile": "p"}).ok(), "user").(map[string]any)
	if up["name"] != "Me" || up["pictureUrl"] != "https://example.com/me.png" || up["profile"] != "p" || up["id"] != "me" || up["createdAt"] != u.Obj["createdAt"] {
		t.Fatalf("updateUser: %v", up)
	}
	wantDate(t, up["updatedAt"], "updatedAt")
	wantEqual(t, field(t, e.call(http.MethodGet, "/users/me", u.Key, nil).ok(), "user"), up, "getUser after updateUser")
	e.call(http.MethodPut, "/users/me", u.Key, map[string]any{"profile": strings.Repeat("x", 1001)}).fail(400, "InvalidPayload", "profile")
	e.call(http.MethodPut, "/users/me", u.Key, map[string]any{"id": "other"}).fail(400, "InvalidPayload", "id")
	e.call(http.MethodPut, "/users/me", u.Key, map[string]any{"name": 5}).fail(400, "InvalidPayload", "name")
	e.call(http.MethodPost, "/users", "", map[string]any{"profile": strings.Repeat("x", 1001)}).fail(400, "InvalidPayload", "profile")
	e.call(http.MethodPost, "/users", "", `{"id":`).fail(400, "InvalidPayload")

	// Deleting the user ends its key and its streams.
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	if m := e.call(http.MethodDelete, "/users/me", u.Key, nil).ok(); len(m) != 0 {
		t.Fatalf("deleteUser returned %v, want {}", m)
	}
	st.waitEnd(t)
	e.call(http.MethodGet, "/users/me", u.Key, nil).fail(401, "Unauthorized")
	// Its foreign id is free again.
	e.user("me")
}

func testChatForeignIDs(t *testing.T, e *chatEnv) {
	id70 := strings.Repeat("a", 69) + "Z"
	id71 := strings.Repeat("b", 71)
	owner := e.createUser(nil)
	bad := []struct{ name, id, mention string }{
		{"71 characters", id71, "70"},
		{"a plus", "with+plus", "invalid characters"},
		{"a space", "with space", "invalid characters"},
		{"a dot", "with.dot", "invalid characters"},
		{"non-ASCII", "café", "invalid characters"},
		{"empty", "", ""},
	}

	// createUser and createConversation: checked when an id is given.
	for _, b := range bad {
		e.call(http.MethodPost, "/users", "", map[string]any{"id": b.id}).fail(400, "InvalidPayload", "id", b.mention)
		e.call(http.MethodPost, "/conversations", owner.Key, map[string]any{"id": b.id}).fail(400, "InvalidPayload", "id", b.mention)
		e.call(http.MethodPost, "/conversations/get-or-create", owner.Key, map[string]any{"id": b.id}).fail(400, "InvalidPayload", "id", b.mention)
		if b.id != "" {
			e.call(http.MethodPost, "/users/get-or-create", e.selfKey(b.id), map[string]any{}).fail(400, "InvalidPayload", "id", b.mention)
		}
	}
	e.call(http.MethodPost, "/users", "", map[string]any{"id": 7}).fail(400, "InvalidPayload", "id")
	e.call(http.MethodPost, "/conversations/get-or-create", owner.Key, map[string]any{}).fail(400, "InvalidPayload", "id")

	// At most 70 characters of letters, digits, _ - \ /.
	for _, id := range []string{id70, `Az09_-\/x`} {
		u := e.user(id)
		if got := str(t, e.call(http.MethodGet, "/users/me", u.Key, nil).ok(), "user", "id"); got != id {
			t.Errorf("user %q reads back as %q", id, got)
		}
		e.call(http.MethodPost, "/users", "", map[string]any{"id": id}).fail(409, "AlreadyExists", "already exists")
		c := e.conversation(owner, id)
		e.call(http.MethodPost, "/conversations", owner.Key, map[string]any{"id": id}).fail(409, "AlreadyExists", "already exists")
		// A taken conversation id is taken for every user.
		e.call(http.MethodPost, "/conversations", e.createUser(nil).Key, map[string]any{"id": c}).fail(409, "AlreadyExists")
	}
	gk := e.selfKey(strings.Repeat("g", 70))
	if got := str(t, e.call(http.MethodPost, "/users/get-or-create", gk, nil).status(201), "user", "id"); got != strings.Repeat("g", 70) {
		t.Errorf("getOrCreateUser with a 70-character id: %q", got)
	}
	// getOrCreateConversation: created once, then the same conversation.
	gc := strings.Repeat("c", 70)
	first := field(t, e.call(http.MethodPost, "/conversations/get-or-create", owner.Key, map[string]any{"id": gc}).status(201), "conversation").(map[string]any)
	if first["id"] != gc {
		t.Fatalf("getOrCreateConversation: %v", first)
	}
	wantKeys(t, first, "conversation", "id", "createdAt", "updatedAt")
	wantDate(t, first["createdAt"], "conversation.createdAt")
	second := field(t, e.call(http.MethodPost, "/conversations/get-or-create", owner.Key, map[string]any{"id": gc}).status(201), "conversation")
	wantEqual(t, second, first, "getOrCreateConversation of an existing conversation")
	// createConversation on an id made by getOrCreateConversation.
	e.call(http.MethodPost, "/conversations", owner.Key, map[string]any{"id": gc}).fail(409, "AlreadyExists")
	// Someone else's: 403.
	e.call(http.MethodPost, "/conversations/get-or-create", e.createUser(nil).Key, map[string]any{"id": gc}).fail(403, "Forbidden")
	// Without an id, conversations get generated ids.
	if c := e.conversation(owner, ""); !strings.HasPrefix(c, "conv_") {
		t.Errorf("createConversation without id: id %q", c)
	}
	e.call(http.MethodPost, "/conversations", owner.Key, map[string]any{"id": "x", "extra": 1}).fail(400, "InvalidPayload", "extra")
}

func testChatInternalIDs(t *testing.T, e *chatEnv) {
	owner := e.user("owner-fid")
	p := e.user("participant-fid")
	e.conversation(owner, "conv-fid")
	ownerID, pID, convID := e.internalUser("owner-fid"), e.internalUser("participant-fid"), e.internalConv("conv-fid")
	if ownerID == "owner-fid" || convID == "conv-fid" {
		t.Fatalf("internal ids equal the foreign ids")
	}

	// A key naming the internal id is the same user.
	ik := e.selfKey(ownerID)
	if got := str(t, e.call(http.MethodGet, "/users/me", ik, nil).ok(), "user", "id"); got != "owner-fid" {
		t.Fatalf("getUser with a key naming the internal id: %q", got)
	}
	if got := str(t, e.call(http.MethodPost, "/users/get-or-create", ik, nil).status(201), "user", "id"); got != "owner-fid" {
		t.Fatalf("getOrCreateUser with a key naming the internal id: %q (must not create another user)", got)
	}
	if got := str(t, e.call(http.MethodGet, "/conversations/"+convID, owner.Key, nil).ok(), "conversation", "id"); got != "conv-fid" {
		t.Fatalf("getConversation by internal id: id %q", got)
	}
	if got := str(t, e.call(http.MethodPost, "/conversations/get-or-create", ik, map[string]any{"id": convID}).status(201), "conversation", "id"); got != "conv-fid" {
		t.Fatalf("getOrCreateConversation by internal id: id %q", got)
	}
	r := e.call(http.MethodPost, "/conversations/"+convID+"/participants", owner.Key, map[string]any{"userId": pID}).ok()
	if got := str(t, r, "participant", "id"); got != "participant-fid" {
		t.Fatalf("addParticipant by internal ids: participant %q", got)
	}
	if got := str(t, e.call(http.MethodGet, "/conversations/"+convID+"/participants/"+pID, owner.Key, nil).ok(), "participant", "id"); got != "participant-fid" {
		t.Fatalf("getParticipant by internal ids: %q", got)
	}
	st := e.listenTo(p, convID)
	m := field(t, e.call(http.MethodPost, "/messages", ik, map[string]any{"conversationId": convID, "payload": map[string]any{"type": "text", "text": "hi"}}).status(201), "message").(map[string]any)
	if m["conversationId"] != "conv-fid" || m["userId"] != "owner-fid" {
		t.Fatalf("createMessage by internal ids: %v, want foreign ids", m)
	}
	if d := st.expect(t, "message_created"); d["id"] != m["id"] || d["conversationId"] != "conv-fid" || d["userId"] != "owner-fid" {
		t.Fatalf("message_created through the internal id: %v", d)
	}
	ev := field(t, e.call(http.MethodPost, "/events", owner.Key, map[string]any{"conversationId": convID, "payload": map[string]any{}}).status(201), "event").(map[string]any)
	if ev["conversationId"] != "conv-fid" || ev["userId"] != "owner-fid" {
		t.Fatalf("createEvent by internal id: %v", ev)
	}
	msgs := e.call(http.MethodGet, "/conversations/"+convID+"/messages", p.Key, nil).ok()["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["id"] != m["id"] {
		t.Fatalf("listMessages by internal id: %v", msgs)
	}
	parts := e.call(http.MethodGet, "/conversations/"+convID+"/participants", p.Key, nil).ok()["participants"].([]any)
	if len(parts) != 2 {
		t.Fatalf("listParticipants by internal id: %v", parts)
	}
	e.call(http.MethodDelete, "/conversations/"+convID+"/participants/"+pID, owner.Key, nil).ok()
	st.waitEnd(t)
	e.call(http.MethodGet, "/conversations/conv-fid", p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/conversations/"+convID, ik, nil).ok()
	e.call(http.MethodGet, "/conversations/conv-fid", owner.Key, nil).fail(404, "ResourceNotFound")
}

func testChatAccess(t *testing.T, e *chatEnv) {
	o := e.user("owner")
	p := e.user("participant")
	x := e.user("outsider")
	c := e.conversation(o, "room")
	e.addParticipant(o, c, p)
	msg := e.send(o, c, "hello")
	msgID := str(t, msg, "id")
	ev := e.call(http.MethodPost, "/events", o.Key, map[string]any{"conversationId": c, "payload": map[string]any{"k": "v"}}).status(201)
	evID := str(t, ev, "event", "id")
	body := func(u chatUser) map[string]any {
		return map[string]any{"conversationId": c, "payload": map[string]any{"type": "text", "text": "from " + u.ID}}
	}

	// Participant-only operations: the outsider gets 403, participants pass.
	for _, u := range []chatUser{o, p} {
		e.call(http.MethodGet, "/conversations/"+c, u.Key, nil).ok()
		e.call(http.MethodGet, "/conversations/"+c+"/messages", u.Key, nil).ok()
		e.call(http.MethodGet, "/conversations/"+c+"/participants", u.Key, nil).ok()
		e.call(http.MethodPost, "/messages", u.Key, body(u)).status(201)
		e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{}}).status(201)
		e.call(http.MethodGet, "/messages/"+msgID, u.Key, nil).ok()
		e.call(http.MethodGet, "/events/"+evID, u.Key, nil).ok()
		e.listenTo(u, c).close()
	}
	e.call(http.MethodGet, "/conversations/"+c, x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodGet, "/conversations/"+c+"/messages", x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodGet, "/conversations/"+c+"/participants", x.Key, nil).fail(403, "Forbidden")
	e.listenFail(x.Key, "/conversations/"+c+"/listen", 403, "Forbidden")
	e.call(http.MethodPost, "/messages", x.Key, body(x)).fail(403, "Forbidden")
	e.call(http.MethodPost, "/events", x.Key, map[string]any{"conversationId": c, "payload": map[string]any{}}).fail(403, "Forbidden")
	e.call(http.MethodGet, "/messages/"+msgID, x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodGet, "/events/"+evID, x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/messages/"+msgID, x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodPost, "/conversations/get-or-create", x.Key, map[string]any{"id": c}).fail(403, "Forbidden")
	// The outsider's failures wrote nothing.
	if n := len(e.call(http.MethodGet, "/conversations/"+c+"/messages", o.Key, nil).ok()["messages"].([]any)); n != 3 {
		t.Fatalf("%d messages after the outsider's attempts, want 3", n)
	}

	// Owner-only operations: the participant gets 403, the owner passes.
	e.call(http.MethodPost, "/conversations/"+c+"/participants", p.Key, map[string]any{"userId": x.ID}).fail(403, "Forbidden")
	e.call(http.MethodGet, "/conversations/"+c+"/participants/"+p.ID, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodGet, "/conversations/"+c+"/participants/"+o.ID, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+p.ID, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/conversations/"+c, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/conversations/"+c, x.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodPost, "/conversations/"+c+"/participants", x.Key, map[string]any{"userId": x.ID}).fail(403, "Forbidden")
	if got := str(t, e.call(http.MethodGet, "/conversations/"+c+"/participants/"+p.ID, o.Key, nil).ok(), "participant", "id"); got != p.ID {
		t.Fatalf("getParticipant by the owner: %q", got)
	}
	e.call(http.MethodGet, "/conversations/"+c+"/participants/"+x.ID, o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/conversations/"+c+"/participants/nobody", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodPost, "/conversations/"+c+"/participants", o.Key, map[string]any{"userId": "nobody"}).fail(404, "ResourceNotFound")
	e.call(http.MethodPost, "/conversations/"+c+"/participants", o.Key, map[string]any{}).fail(400, "InvalidPayload", "userId")
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+o.ID, o.Key, nil).fail(400, "InvalidPayload")
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+x.ID, o.Key, nil).fail(404, "ResourceNotFound")
	// Adding twice is fine and lists the participant once.
	e.addParticipant(o, c, p)
	if n := len(e.call(http.MethodGet, "/conversations/"+c+"/participants", o.Key, nil).ok()["participants"].([]any)); n != 2 {
		t.Fatalf("%d participants after adding one twice, want 2", n)
	}

	// listConversations lists only the caller's own conversations.
	ids := func(u chatUser) []string {
		var out []string
		for _, c := range e.call(http.MethodGet, "/conversations", u.Key, nil).ok()["conversations"].([]any) {
			out = append(out, c.(map[string]any)["id"].(string))
		}
		return out
	}
	mine := e.conversation(p, "p-own")
	if got := ids(o); !reflect.DeepEqual(got, []string{c}) {
		t.Errorf("listConversations of the owner = %v, want [%s]", got, c)
	}
	if got := ids(p); !reflect.DeepEqual(got, []string{mine}) {
		t.Errorf("listConversations of a participant = %v, want only its own [%s]", got, mine)
	}
	if got := ids(x); len(got) != 0 {
		t.Errorf("listConversations of the outsider = %v, want none", got)
	}

	// Unknown ids are 404.
	e.call(http.MethodGet, "/conversations/nope", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/conversations/nope/messages", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodPost, "/messages", o.Key, map[string]any{"conversationId": "nope", "payload": map[string]any{"type": "text", "text": "x"}}).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/messages/msg_nope", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/events/evt_nope", o.Key, nil).fail(404, "ResourceNotFound")

	// Another bot's conversation is not found through this bot.
	other := newChatEnv(t, e.s)
	ou := other.user("owner")
	oc := other.conversation(ou, "room")
	om := other.send(ou, oc, "elsewhere")
	ouKeyHere := e.selfKey("owner") // same foreign id, this bot
	e.call(http.MethodGet, "/messages/"+str(t, om, "id"), ouKeyHere, nil).fail(404, "ResourceNotFound")

	// A removed participant loses access; the owner deletes the conversation.
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+p.ID, o.Key, nil).ok()
	e.call(http.MethodGet, "/conversations/"+c, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodPost, "/messages", p.Key, body(p)).fail(403, "Forbidden")
	if m := e.call(http.MethodDelete, "/conversations/"+c, o.Key, nil).ok(); len(m) != 0 {
		t.Fatalf("deleteConversation returned %v, want {}", m)
	}
	e.call(http.MethodGet, "/conversations/"+c, o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/messages/"+msgID, o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/events/"+evID, o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodDelete, "/conversations/"+c, o.Key, nil).fail(404, "ResourceNotFound")
	if got := ids(o); len(got) != 0 {
		t.Errorf("listConversations after delete = %v", got)
	}
}

func testChatDeleteMessage(t *testing.T, e *chatEnv) {
	o := e.user("owner")
	p := e.user("participant")
	c := e.conversation(o, "")
	e.addParticipant(o, c, p)
	om := str(t, e.send(o, c, "owner's"), "id")
	pm := str(t, e.send(p, c, "participant's"), "id")
	lo := e.listenTo(o, c)
	// A new stream first replays the last second's messages.
	for _, id := range []string{om, pm} {
		if got := lo.expect(t, "message_created"); got["id"] != id {
			t.Fatalf("replayed %v, want message %s", got, id)
		}
	}

	// Only the sender deletes, even against the owner.
	e.call(http.MethodDelete, "/messages/"+om, p.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodDelete, "/messages/"+pm, o.Key, nil).fail(403, "Forbidden")
	e.call(http.MethodGet, "/messages/"+om, p.Key, nil).ok()
	if m := e.call(http.MethodDelete, "/messages/"+pm, p.Key, nil).ok(); len(m) != 0 {
		t.Fatalf("deleteMessage returned %v, want {}", m)
	}
	d := lo.expect(t, "message_deleted")
	if d["id"] != pm {
		t.Fatalf("message_deleted %v, want id %s", d, pm)
	}
	e.call(http.MethodGet, "/messages/"+pm, p.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/messages/"+pm, o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodDelete, "/messages/"+pm, p.Key, nil).fail(404, "ResourceNotFound")
	msgs := e.call(http.MethodGet, "/conversations/"+c+"/messages", o.Key, nil).ok()["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["id"] != om {
		t.Fatalf("listMessages after delete: %v, want only %s", msgs, om)
	}
	e.call(http.MethodDelete, "/messages/"+om, o.Key, nil).ok()
	e.call(http.MethodGet, "/messages/"+om, o.Key, nil).fail(404, "ResourceNotFound")
}

func testChatCreateEvent(t *testing.T, e *chatEnv) {
	u := e.user("evt-user")
	c := e.conversation(u, "evt-conv")
	payload := map[string]any{"kind": "typing", "n": 1.5, "nested": map[string]any{"list": []any{1.0, "a", nil, true}}, "empty": map[string]any{}}
	r := e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": payload})
	ev := field(t, r.status(201), "event").(map[string]any)
	// Spec 2.2: id, createdAt, payload, conversationId, userId.
	wantKeys(t, ev, "event", "id", "createdAt", "payload", "conversationId", "userId")
	str(t, ev, "id")
	wantDate(t, ev["createdAt"], "event.createdAt")
	wantEqual(t, ev["payload"], payload, "event.payload")
	if ev["conversationId"] != "evt-conv" || ev["userId"] != "evt-user" {
		t.Fatalf("event ids %v %v, want the foreign ids", ev["conversationId"], ev["userId"])
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("createEvent Content-Type %q", ct)
	}
	wantEqual(t, field(t, e.call(http.MethodGet, "/events/"+ev["id"].(string), u.Key, nil).ok(), "event"), ev, "getEvent")
	ev2 := field(t, e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{}}).status(201), "event").(map[string]any)
	if ev2["id"] == ev["id"] {
		t.Fatalf("two events got the same id")
	}

	for _, b := range []struct {
		body    any
		mention string
	}{
		{map[string]any{"conversationId": c}, "payload"},
		{map[string]any{"payload": map[string]any{}}, "conversationId"},
		{map[string]any{"conversationId": c, "payload": "text"}, "payload"},
		{map[string]any{"conversationId": c, "payload": []any{1}}, "payload"},
		{map[string]any{"conversationId": c, "payload": nil}, "payload"},
		{map[string]any{"conversationId": 5, "payload": map[string]any{}}, "conversationId"},
		{map[string]any{"conversationId": c, "payload": map[string]any{}, "type": "x"}, "type"},
		{`{"conversationId":`, ""},
	} {
		e.call(http.MethodPost, "/events", u.Key, b.body).fail(400, "InvalidPayload", b.mention)
	}
	e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": "nope", "payload": map[string]any{}}).fail(404, "ResourceNotFound")
}

// pages pages through a Chat API listing with the nextToken query
// parameter (and pageSize when not 0), checking each page's shape.
func (e *chatEnv) pages(t *testing.T, path, key, list string, pageSize int) (ids []string, objs []map[string]any, pages int) {
	t.Helper()
	token := ""
	for {
		q := []string{}
		if pageSize > 0 {
			q = append(q, fmt.Sprintf("pageSize=%d", pageSize))
		}
		if token != "" {
			q = append(q, "nextToken="+token)
		}
		p := path
		if len(q) > 0 {
			p += "?" + strings.Join(q, "&")
		}
		r := e.call(http.MethodGet, p, key, nil).ok()
		items, ok := r[list].([]any)
		if !ok {
			t.Fatalf("GET %s: no %s array: %v", p, list, r)
		}
		meta, ok := r["meta"].(map[string]any)
		if !ok {
			t.Fatalf("GET %s: no meta object: %v", p, r)
		}
		pages++
		if pages > 100 {
			t.Fatalf("GET %s: more than 100 pages", path)
		}
		if pageSize > 0 && len(items) > pageSize {
			t.Fatalf("GET %s: %d items, more than pageSize %d", p, len(items), pageSize)
		}
		for _, it := range items {
			m := it.(map[string]any)
			objs = append(objs, m)
			ids = append(ids, m["id"].(string))
		}
		next, _ := meta["nextToken"].(string)
		if next == "" {
			return ids, objs, pages
		}
		if len(items) == 0 {
			t.Fatalf("GET %s: an empty page with a nextToken", p)
		}
		token = next
	}
}

func testChatListParticipants(t *testing.T, e *chatEnv) {
	o := e.createUser(map[string]any{"id": "owner", "name": "Owner", "pictureUrl": "https://example.com/o.png", "profile": "the owner"})
	c := e.conversation(o, "crowd")
	want := map[string]map[string]any{"owner": o.Obj}
	for i := range 24 {
		body := map[string]any{"name": fmt.Sprintf("User %d", i), "pictureUrl": fmt.Sprintf("https://example.com/%d.png", i), "profile": fmt.Sprintf("profile %d", i)}
		if i%2 == 0 {
			body["id"] = fmt.Sprintf("member-%02d", i)
		}
		u := e.createUser(body)
		e.addParticipant(o, c, u)
		want[u.ID] = u.Obj
	}
	e.user("not-a-member")

	for _, size := range []int{7, 10, 0} {
		ids, objs, pages := e.pages(t, "/conversations/"+c+"/participants", o.Key, "participants", size)
		if size > 0 && pages != (25+size-1)/size {
			t.Errorf("pageSize %d: %d pages for 25 participants, want %d", size, pages, (25+size-1)/size)
		}
		if len(ids) != 25 {
			t.Fatalf("pageSize %d: %d participants listed, want 25: %v", size, len(ids), ids)
		}
		seen := map[string]bool{}
		for i, id := range ids {
			if seen[id] {
				t.Fatalf("pageSize %d: participant %s listed twice", size, id)
			}
			seen[id] = true
			w, ok := want[id]
			if !ok {
				t.Fatalf("pageSize %d: %s is not a participant", size, id)
			}
			// Spec 2.3: id, createdAt, updatedAt, name, pictureUrl, profile.
			wantKeys(t, objs[i], "participant "+id, "id", "createdAt", "updatedAt", "name", "pictureUrl", "profile")
			wantEqual(t, objs[i], w, "participant %s", id)
		}
	}
	// A participant lists them too; the nextToken is bound to nothing else.
	ids, _, _ := e.pages(t, "/conversations/"+c+"/participants", e.selfKey("member-00"), "participants", 5)
	if len(ids) != 25 {
		t.Fatalf("participants listed by a participant: %d, want 25", len(ids))
	}
	e.call(http.MethodGet, "/conversations/"+c+"/participants?nextToken=garbage", o.Key, nil).fail(400, "InvalidQuery", "nextToken")
	e.call(http.MethodGet, "/conversations/"+c+"/participants?pageSize=abc", o.Key, nil).fail(400, "InvalidQuery", "pageSize")
}

func testChatListPagination(t *testing.T, e *chatEnv) {
	o := e.user("pager")
	c := e.conversation(o, "")
	var sent []string
	for i := range 25 {
		sent = append(sent, str(t, e.send(o, c, fmt.Sprintf("message %d", i)), "id"))
	}
	newest := make([]string, len(sent))
	for i, id := range sent {
		newest[len(sent)-1-i] = id
	}
	// Newest first, 20 a page by default, nextToken across pages.
	ids, _, pages := e.pages(t, "/conversations/"+c+"/messages", o.Key, "messages", 0)
	if !reflect.DeepEqual(ids, newest) || pages != 2 {
		t.Fatalf("listMessages: %d pages %v, want 2 pages newest first %v", pages, ids, newest)
	}
	ids, _, pages = e.pages(t, "/conversations/"+c+"/messages", o.Key, "messages", 4)
	if !reflect.DeepEqual(ids, newest) || pages != 7 {
		t.Fatalf("listMessages pageSize 4: %d pages %v, want 7 pages newest first", pages, ids)
	}

	// New messages arriving while paging do not shift later pages.
	first := e.call(http.MethodGet, "/conversations/"+c+"/messages?pageSize=10", o.Key, nil).ok()
	tok := str(t, first, "meta", "nextToken")
	e.send(o, c, "late 1")
	e.send(o, c, "late 2")
	second := e.call(http.MethodGet, "/conversations/"+c+"/messages?pageSize=10&nextToken="+tok, o.Key, nil).ok()
	var got []string
	for _, m := range second["messages"].([]any) {
		got = append(got, m.(map[string]any)["id"].(string))
	}
	if !reflect.DeepEqual(got, newest[10:20]) {
		t.Fatalf("second page after new messages: %v, want %v", got, newest[10:20])
	}

	// listConversations pages too, and lists only the caller's.
	var convs []string
	for range 12 {
		convs = append(convs, e.conversation(o, ""))
	}
	convs = append(convs, c)
	other := e.user("other")
	e.conversation(other, "")
	e.addParticipant(other, e.conversation(other, ""), o)
	ids, _, pages = e.pages(t, "/conversations", o.Key, "conversations", 5)
	sort.Strings(ids)
	sort.Strings(convs)
	if !reflect.DeepEqual(ids, convs) || pages != 3 {
		t.Fatalf("listConversations pageSize 5: %d pages %v, want 3 pages of %v", pages, ids, convs)
	}
	e.call(http.MethodGet, "/conversations?nextToken=%25%25", o.Key, nil).fail(400, "InvalidQuery", "nextToken")
	e.call(http.MethodGet, "/conversations/"+c+"/messages?nextToken=xyz", o.Key, nil).fail(400, "InvalidQuery", "nextToken")
}

func testChatMessagePayloads(t *testing.T, e *chatEnv) {
	u := e.user("payloads")
	c := e.conversation(u, "")
	type obj = map[string]any
	type arr = []any
	card := obj{"type": "card", "title": "T", "subtitle": "S", "imageUrl": "https://example.com/i.png", "actions": arr{
		obj{"action": "postback", "label": "L", "value": "V"}, obj{"action": "url", "label": "Go", "value": "https://example.com"}, obj{"action": "say", "label": "Say", "value": "hi"},
	}}
	good := []obj{
		{"type": "text", "text": "hello"},
		{"type": "text", "text": "extra properties are kept", "extra": obj{"n": 1.0}},
		{"type": "markdown", "markdown": "**bold**"},
		{"type": "image", "imageUrl": "https://example.com/i.png"},
		{"type": "audio", "audioUrl": "https://example.com/a.mp3"},
		{"type": "video", "videoUrl": "https://example.com/v.mp4"},
		{"type": "file", "fileUrl": "https://example.com/f.pdf"},
		{"type": "file", "fileUrl": "https://example.com/f.pdf", "title": "F"},
		{"type": "location", "latitude": 45.5, "longitude": -73.6},
		{"type": "location", "latitude": 0.0, "longitude": 0.0, "address": "", "title": ""},
		card,
		{"type": "card", "title": "No actions", "actions": arr{}},
		{"type": "carousel", "items": arr{card, obj{"type": "card", "title": "Second", "actions": arr{}}}},
		{"type": "choice", "text": "Pick", "options": arr{obj{"label": "A", "value": "a"}, obj{"label": "B", "value": "b"}}},
		{"type": "dropdown", "text": "Pick", "options": arr{obj{"label": "A", "value": "a"}}},
		{"type": "bloc", "items": arr{
			obj{"type": "text", "text": "t"}, obj{"type": "markdown", "markdown": "m"}, obj{"type": "image", "imageUrl": "i"},
			obj{"type": "audio", "audioUrl": "a"}, obj{"type": "video", "videoUrl": "v"}, obj{"type": "file", "fileUrl": "f"},
			obj{"type": "location", "latitude": 1.0, "longitude": 2.0},
		}},
	}
	for _, p := range good {
		r := e.call(http.MethodPost, "/messages", u.Key, obj{"conversationId": c, "payload": p})
		if r.Status != 201 {
			t.Errorf("payload %v: status %d, want 201; body %s", p, r.Status, r.Body)
			continue
		}
		m := field(t, r.object(), "message").(map[string]any)
		wantEqual(t, m["payload"], p, "stored payload of type %v", p["type"])
		wantEqual(t, field(t, e.call(http.MethodGet, "/messages/"+m["id"].(string), u.Key, nil).ok(), "message", "payload"), p, "getMessage payload of type %v", p["type"])
	}

	bad := []obj{
		{},
		{"text": "no type"},
		{"type": "sticker", "url": "x"},
		{"type": 5},
		{"type": "text"},
		{"type": "text", "text": ""},
		{"type": "text", "text": 5.0},
		{"type": "markdown"},
		{"type": "markdown", "markdown": ""},
		{"type": "image", "imageUrl": ""},
		{"type": "audio"},
		{"type": "video", "videoUrl": ""},
		{"type": "file", "title": "no url"},
		{"type": "file", "fileUrl": "f", "title": ""},
		{"type": "location", "latitude": 1.0},
		{"type": "location", "latitude": "1", "longitude": 2.0},
		{"type": "card", "actions": arr{}},
		{"type": "card", "title": "", "actions": arr{}},
		{"type": "card", "title": "T"},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "call", "label": "L", "value": "V"}}},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "url", "label": "", "value": "V"}}},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "url", "label": "L"}}},
		{"type": "card", "title": "T", "subtitle": "", "actions": arr{}},
		{"type": "carousel"},
		{"type": "carousel", "items": obj{}},
		{"type": "carousel", "items": arr{obj{"title": "no type", "actions": arr{}}}},
		{"type": "carousel", "items": arr{obj{"type": "text", "text": "not a card"}}},
		{"type": "choice", "text": "Pick"},
		{"type": "choice", "text": "", "options": arr{}},
		{"type": "choice", "text": "Pick", "options": arr{obj{"label": "A", "value": ""}}},
		{"type": "dropdown", "options": arr{}},
		{"type": "bloc"},
		{"type": "bloc", "items": arr{card}},
		{"type": "bloc", "items": arr{obj{"type": "text", "text": ""}}},
		{"type": "bloc", "items": arr{obj{"text": "no type"}}},
	}
	for _, p := range bad {
		r := e.call(http.MethodPost, "/messages", u.Key, obj{"conversationId": c, "payload": p})
		if r.Status != 400 {
			t.Errorf("payload %v: status %d, want 400; body %s", p, r.Status, r.Body)
			continue
		}
		r.fail(400, "InvalidPayload", "payload")
	}
	for _, b := range []struct {
		body    any
		mention string
	}{
		{obj{"conversationId": c}, "payload"},
		{obj{"conversationId": c, "payload": "text"}, "payload"},
		{obj{"conversationId": c, "payload": arr{}}, "payload"},
		{obj{"payload": obj{"type": "text", "text": "x"}}, "conversationId"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "metadata": "m"}, "metadata"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "metadata": arr{}}, "metadata"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "userId": "someone"}, "userId"},
	} {
		e.call(http.MethodPost, "/messages", u.Key, b.body).fail(400, "InvalidPayload", b.mention)
	}
	// Nothing invalid was stored.
	ids, _, _ := e.pages(t, "/conversations/"+c+"/messages", u.Key, "messages", 100)
	if len(ids) != len(good) {
		t.Fatalf("%d messages stored, want the %d good ones", len(ids), len(good))
	}
}

func testChatMetadata(t *testing.T, e *chatEnv) {
	u := e.user("meta")
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	meta := map[string]any{"source": "web", "n": 2.0, "none": nil, "deep": map[string]any{"a": []any{1.0}}}
	payload := map[string]any{"type": "text", "text": "with metadata"}
	m := field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": payload, "metadata": meta}).status(201), "message").(map[string]any)
	wantKeys(t, m, "message", "id", "createdAt", "payload", "userId", "conversationId", "metadata")
	wantDate(t, m["createdAt"], "message.createdAt")
	wantEqual(t, m["metadata"], meta, "message.metadata")
	wantEqual(t, m["payload"], payload, "message.payload (no metadata inside)")
	got := field(t, e.call(http.MethodGet, "/messages/"+m["id"].(string), u.Key, nil).ok(), "message").(map[string]any)
	wantEqual(t, got, m, "getMessage")
	list := e.call(http.MethodGet, "/conversations/"+c+"/messages", u.Key, nil).ok()["messages"].([]any)
	wantEqual(t, list[0], m, "listMessages item")
	sig := st.expect(t, "message_created")
	if _, ok := sig["payload"].(map[string]any)["metadata"]; ok {
		t.Fatalf("the signal's payload carries metadata: %v", sig)
	}
	wantEqual(t, sig["metadata"], meta, "signal metadata")

	// Without metadata (or with null): no metadata anywhere.
	for _, body := range []map[string]any{
		{"conversationId": c, "payload": payload},
		{"conversationId": c, "payload": payload, "metadata": nil},
	} {
		m := field(t, e.call(http.MethodPost, "/messages", u.Key, body).status(201), "message").(map[string]any)
		if _, ok := m["metadata"]; ok {
			t.Errorf("a message without metadata has %v", m["metadata"])
		}
		if _, ok := m["payload"].(map[string]any)["metadata"]; ok {
			t.Errorf("payload carries metadata: %v", m["payload"])
		}
	}
	// A payload may itself have a property named metadata: it stays in
	// the payload, and is not the message's metadata.
	odd := map[string]any{"type": "text", "text": "x", "metadata": map[string]any{"in": "payload"}}
	m = field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": odd}).status(201), "message").(map[string]any)
	wantEqual(t, m["payload"], odd, "payload with its own metadata property")
	if _, ok := m["metadata"]; ok {
		t.Errorf("the payload's metadata property became the message's: %v", m)
	}
}

func testChatPayloadTooLarge(t *testing.T, e *chatEnv) {
	u := e.user("big")
	c := e.conversation(u, "")
	body := func(n int) string {
		return fmt.Sprintf(`{"conversationId":%q,"payload":{"type":"text","text":"%s"}}`, c, strings.Repeat("a", n))
	}
	r := e.call(http.MethodPost, "/messages", u.Key, body(1<<20+10))
	if r.Status != 413 {
		t.Fatalf("a chat body over 1 MB: status %d, want 413", r.Status)
	}
	r.fail(413, "PayloadTooLarge")
	e.call(http.MethodPost, "/events", u.Key, fmt.Sprintf(`{"conversationId":%q,"payload":{"x":"%s"}}`, c, strings.Repeat("b", 1<<20))).fail(413, "PayloadTooLarge")
	e.call(http.MethodPost, "/users", "", fmt.Sprintf(`{"name":"%s"}`, strings.Repeat("c", 2<<20))).fail(413, "PayloadTooLarge")
	// Just under the limit is fine; the server still answers afterwards.
	m := field(t, e.call(http.MethodPost, "/messages", u.Key, body(1<<20-200)).status(201), "message").(map[string]any)
	if n := len(field(t, m, "payload", "text").(string)); n != 1<<20-200 {
		t.Fatalf("stored text of %d bytes, want %d", n, 1<<20-200)
	}
	if ids, _, _ := e.pages(t, "/conversations/"+c+"/messages", u.Key, "messages", 0); len(ids) != 1 {
		t.Fatalf("%d messages stored, want the one under the limit", len(ids))
	}
}

func testChatCORS(t *testing.T, e *chatEnv) {
	const origin = "https://app.example.com"
	anon := e.s.as(t, "", "")
	for _, tc := range []struct{ path, method, headers string }{
		{e.base + "/messages", "POST", "content-type,x-user-key"},
		{e.base + "/users/me", "GET", "x-user-key"},
		{e.base + "/conversations/c1/listen", "GET", "accept,cache-control,x-user-key"},
		{e.base + "/hello/", "GET", ""},
	} {
		r := anon.raw(http.MethodOptions, tc.path, nil, "Origin", origin, "Access-Control-Request-Method", tc.method, "Access-Control-Request-Headers", tc.headers)
		if r.Status != http.StatusNoContent {
			t.Errorf("preflight %s %s: status %d, want 204; body %s", tc.method, tc.path, r.Status, r.Body)
			continue
		}
		h := r.Header
		if got := h.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("preflight %s: Allow-Origin %q, want the origin %q (never *)", tc.path, got, origin)
		}
		if got := h.Get("Access-Control-Allow-Credentials"); got != "true" {
			t.Errorf("preflight %s: Allow-Credentials %q, want true", tc.path, got)
		}
		allowH := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
		for _, want := range []string{"x-user-key", "content-type", "accept", "cache-control"} {
			if !strings.Contains(allowH, want) {
				t.Errorf("preflight %s: Allow-Headers %q lacks %s", tc.path, allowH, want)
			}
		}
		allowM := h.Get("Access-Control-Allow-Methods")
		for _, want := range []string{"GET", "POST", "PUT", "DELETE"} {
			if !strings.Contains(allowM, want) {
				t.Errorf("preflight %s: Allow-Methods %q lacks %s", tc.path, allowM, want)
			}
		}
		if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Errorf("preflight %s: no Vary: Origin", tc.path)
		}
	}
	// Actual requests, successes and errors alike, carry the CORS headers.
	u := e.user("cors")
	for _, r := range []*response{
		anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, "x-user-key", u.Key),
		anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, "x-user-key", "bad"),
		anon.raw(http.MethodGet, e.base+"/hello/", nil, "Origin", origin),
	} {
		if r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("%s (status %d): CORS headers %v", r.what, r.Status, r.Header)
		}
	}
	// Without an Origin, no CORS headers.
	if r := e.call(http.MethodGet, "/users/me", u.Key, nil); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request without Origin got Allow-Origin %q", r.Header.Get("Access-Control-Allow-Origin"))
	}
}

func testChatSignals(t *testing.T, e *chatEnv) {
	o := e.user("sig-owner")
	p := e.user("sig-participant")
	q := e.user("sig-third")
	c := e.conversation(o, "sig-conv")
	d := e.conversation(o, "sig-other")
	e.addParticipant(o, c, p)
	lo := e.listenTo(o, c)
	lp := e.listenTo(p, c)
	ld := e.listenTo(o, d)
	both := []*sseStream{lo, lp}

	// message_created: the message as listMessages shows it, plus isBot.
	meta := map[string]any{"k": "v"}
	payload := map[string]any{"type": "text", "text": "signal me"}
	m := field(t, e.call(http.MethodPost, "/messages", o.Key, map[string]any{"conversationId": c, "payload": payload, "metadata": meta}).status(201), "message").(map[string]any)
	listed := e.call(http.MethodGet, "/conversations/"+c+"/messages", p.Key, nil).ok()["messages"].([]any)[0].(map[string]any)
	for _, st := range both {
		s := st.signal(t)
		if s.Type != "message_created" {
			t.Fatalf("%s: %s, want message_created", st.what, s.Type)
		}
		if s.Raw.Lines[0] != "event: message" || s.Raw.Event != "message" {
			t.Fatalf("%s: event type %q, want message", st.what, s.Raw.Event)
		}
		wantKeys(t, s.Data, "message_created data", "id", "createdAt", "payload", "userId", "conversationId", "metadata", "isBot")
		if s.Data["isBot"] != false {
			t.Fatalf("message_created isBot = %v, want false", s.Data["isBot"])
		}
		wantDate(t, s.Data["createdAt"], "message_created createdAt")
		data := map[string]any{}
		for k, v := range s.Data {
			if k != "isBot" {
				data[k] = v
			}
		}
		wantEqual(t, data, listed, "message_created without isBot vs the listMessages item")
		wantEqual(t, data, m, "message_created without isBot vs the createMessage response")
		if data["conversationId"] != "sig-conv" || data["userId"] != "sig-owner" {
			t.Fatalf("message_created ids %v", data)
		}
	}

	// event_created: the event, plus isBot; sent by the participant.
	ev := field(t, e.call(http.MethodPost, "/events", p.Key, map[string]any{"conversationId": c, "payload": map[string]any{"typing": true}}).status(201), "event").(map[string]any)
	for _, st := range both {
		s := st.expect(t, "event_created")
		wantKeys(t, s, "event_created data", "id", "createdAt", "payload", "conversationId", "userId", "isBot")
		if s["isBot"] != false {
			t.Fatalf("event_created isBot = %v, want false", s["isBot"])
		}
		wantDate(t, s["createdAt"], "event_created createdAt")
		want := map[string]any{"isBot": false}
		for k, v := range ev {
			want[k] = v
		}
		wantEqual(t, s, want, "event_created vs the createEvent response")
	}

	// participant_added and participant_removed, with foreign ids.
	e.addParticipant(o, c, q)
	for _, st := range both {
		wantEqual(t, st.expect(t, "participant_added"), map[string]any{"conversationId": "sig-conv", "participantId": "sig-third"}, "participant_added")
	}
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/sig-third", o.Key, nil).ok()
	for _, st := range both {
		wantEqual(t, st.expect(t, "participant_removed"), map[string]any{"conversationId": "sig-conv", "participantId": "sig-third"}, "participant_removed")
	}

	// message_deleted carries internal ids (an upstream quirk).
	e.call(http.MethodDelete, "/messages/"+m["id"].(string), o.Key, nil).ok()
	wantDeleted := map[string]any{"id": m["id"], "conversationId": e.internalConv("sig-conv"), "userId": e.internalUser("sig-owner")}
	for _, st := range both {
		wantEqual(t, st.expect(t, "message_deleted"), wantDeleted, "message_deleted")
	}

	// The other conversation's listener got none of it: its first signal is
	// its own conversation's message.
	dm := e.send(o, d, "other conversation")
	if got := ld.expect(t, "message_created"); got["id"] != dm["id"] || got["conversationId"] != "sig-other" {
		t.Fatalf("listener of another conversation got %v first, want its own message %v", got, dm["id"])
	}

	// A conversation id with slashes is taken from the listen path as is.
	slash := e.conversation(o, `room/with\slashes`)
	ls := e.listenPath(o.Key, "/conversations/"+slash+"/listen")
	if got := str(t, e.call(http.MethodGet, "/conversations/room%2Fwith%5Cslashes", o.Key, nil).ok(), "conversation", "id"); got != slash {
		t.Fatalf("getConversation with an escaped slash: %q", got)
	}
	sm := e.send(o, slash, "slashed")
	if got := ls.expect(t, "message_created"); got["id"] != sm["id"] || got["conversationId"] != slash {
		t.Fatalf("listener of %q got %v", slash, got)
	}
}

func testChatSignalOrder(t *testing.T, e *chatEnv) {
	o := e.user("order-owner")
	p := e.user("order-participant")
	c := e.conversation(o, "")
	e.addParticipant(o, c, p)
	streams := []*sseStream{e.listenTo(o, c), e.listenTo(p, c)}
	var sent []string
	for i := range 50 {
		from := o
		if i%3 == 2 {
			from = p
		}
		sent = append(sent, str(t, e.send(from, c, fmt.Sprintf("n%d", i)), "id"))
	}
	for _, st := range streams {
		var got []string
		for range sent {
			got = append(got, st.expect(t, "message_created")["id"].(string))
		}
		if !reflect.DeepEqual(got, sent) {
			t.Fatalf("%s: signals in order %v, want the order of the writes %v", st.what, got, sent)
		}
	}
}

func testChatPing(t *testing.T, e *chatEnv) {
	u := e.user("quiet")
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	start := time.Now()
	for i := range 3 {
		ev, ok := st.next(t)
		if !ok {
			t.Fatalf("the stream ended before ping %d", i+1)
		}
		if ev.Data != "ping" || !reflect.DeepEqual(ev.Lines, []string{"event: message", "data: ping"}) {
			t.Fatalf("on a quiet stream got %q, want exactly event: message / data: ping", ev.Lines)
		}
	}
	// Three pings take at least about two intervals after the first.
	if el := time.Since(start); el < 2*pingInterval-50*time.Millisecond {
		t.Errorf("3 pings within %s, faster than the %s interval", el, pingInterval)
	}
	// A signal still arrives between pings.
	m := e.send(u, c, "after pings")
	if got := st.expect(t, "message_created"); got["id"] != m["id"] {
		t.Fatalf("got %v, want the message", got)
	}
}

func testChatListenErrors(t *testing.T, e *chatEnv) {
	o := e.user("listen-owner")
	x := e.user("listen-outsider")
	c := e.conversation(o, "listen-conv")
	path := "/conversations/" + c + "/listen"
	e.listenFail("", path, 401, "Unauthorized")
	e.listenFail("bad-key", path, 401, "Unauthorized")
	e.listenFail(x.Key, path, 403, "Forbidden")
	e.listenFail(o.Key, "/conversations/nope/listen", 404, "ResourceNotFound")
	e.listenFail(o.Key, "/conversations/"+c+"/listen/more", 404, "ResourceNotFound")
	e.listenFail(o.Key, "/conversations//listen", 404, "ResourceNotFound")
	e.call(http.MethodGet, "/conversations/a/b/c", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodPost, path, o.Key, map[string]any{}).fail(405, "MethodNotFound")
	e.listenTo(o, c).close()
}

func testChatRemoveParticipantStream(t *testing.T, e *chatEnv) {
	o := e.user("rm-owner")
	r := e.user("rm-removed")
	k := e.user("rm-kept")
	c := e.conversation(o, "rm-conv")
	d := e.conversation(o, "rm-other")
	for _, u := range []chatUser{r, k} {
		e.addParticipant(o, c, u)
	}
	e.addParticipant(o, d, r)
	lo := e.listenTo(o, c)
	lk := e.listenTo(k, c)
	rc := e.listenTo(r, c)
	rd := e.listenTo(r, d)
	rc2 := e.listenTo(r, c) // a second stream of the same user

	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+r.ID, o.Key, nil).ok()
	for _, st := range []*sseStream{lo, lk} {
		wantEqual(t, st.expect(t, "participant_removed"), map[string]any{"conversationId": c, "participantId": r.ID}, "participant_removed")
	}
	// Every stream of the removed user ends (its per-user channel, as
	// upstream), the one on the other conversation included.
	for _, st := range []*sseStream{rc, rc2, rd} {
		for _, ev := range st.waitEnd(t) {
			if strings.Contains(ev.Data, "message_created") {
				t.Errorf("%s: a removed user's stream got %s", st.what, ev.Data)
			}
		}
	}
	// The others keep listening.
	m := e.send(o, c, "after removal")
	for _, st := range []*sseStream{lo, lk} {
		if got := st.expect(t, "message_created"); got["id"] != m["id"] {
			t.Fatalf("%s: got %v, want the message after removal", st.what, got)
		}
	}
	e.listenFail(r.Key, "/conversations/"+c+"/listen", 403, "Forbidden")
	// Still a participant of the other conversation: it may listen again.
	rd2 := e.listenTo(r, d)
	dm := e.send(o, d, "still here")
	if got := rd2.expect(t, "message_created"); got["id"] != dm["id"] {
		t.Fatalf("re-opened stream got %v", got)
	}
}

func testChatBotEventJobs(t *testing.T, e *chatEnv) {
	// Each message and custom event a user sends reaches the bot once, in
	// order; writes that fail reach it not at all.
	e.deploy(`bot.on.message(({ event, logger }) => logger.info('got', event.type, event.id))
bot.on.event(({ event, logger }) => logger.info('got', event.type, event.id))`, nil)
	u := e.user("jobs")
	c := e.conversation(u, "") // no foreign id: the id is the internal id
	if e.internalConv(c) != c {
		t.Fatalf("a conversation created without id has internal id %s, not %s", e.internalConv(c), c)
	}
	m := e.send(u, c, "for the bot")
	ev := field(t, e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{"x": 1}}).status(201), "event").(map[string]any)
	x := e.user("jobs-outsider")
	e.call(http.MethodPost, "/messages", x.Key, map[string]any{"conversationId": c, "payload": map[string]any{"type": "text", "text": "no"}}).fail(403, "Forbidden")
	e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{"type": "text", "text": ""}}).fail(400, "InvalidPayload")
	last := e.send(u, c, "last")
	e.waitLog("conversationId="+c, "got message", last["id"].(string))
	var got []string
	for _, l := range e.logs("conversationId=" + c) {
		got = append(got, l.Message)
	}
	wantEqual(t, got, []string{"got message " + m["id"].(string), "got custom " + ev["id"].(string), "got message " + last["id"].(string)}, "what the bot received")
	if js := e.botEventJobs(c); len(js) != 0 {
		t.Fatalf("bot_event jobs left once handled: %v", js)
	}
}

// testChatConcurrentGetOrCreate: many first uses of one id at once all
// succeed with the same user or conversation (one is created, the others
// find it).
func testChatConcurrentGetOrCreate(t *testing.T, e *chatEnv) {
	const n = 12
	do := func(path, key string, body string) (int, map[string]any, error) {
		req, err := http.NewRequest(http.MethodPost, e.s.URL+e.base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-user-key", key)
		res, err := sseClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		var m map[string]any
		err = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m, err
	}
	run := func(what, path, key, body, obj string) {
		t.Helper()
		type result struct {
			status int
			obj    map[string]any
			err    error
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				st, m, err := do(path, key, body)
				o, _ := m[obj].(map[string]any)
				results[i] = result{st, o, err}
				if o == nil && err == nil {
					results[i].err = fmt.Errorf("body %v", m)
				}
			})
		}
		wg.Wait()
		for i, r := range results {
			if r.err != nil || r.status != 201 {
				t.Fatalf("%s: concurrent call %d: status %d, %v", what, i, r.status, r.err)
			}
			wantEqual(t, r.obj, results[0].obj, "%s: concurrent call %d", what, i)
		}
	}
	key := e.selfKey("racer")
	run("getOrCreateUser", "/users/get-or-create", key, "{}", "user")
	run("getOrCreateConversation", "/conversations/get-or-create", key, `{"id":"race-conv"}`, "conversation")
	owned, _, _ := e.pages(t, "/conversations", key, "conversations", 0)
	if len(owned) != 1 || owned[0] != "race-conv" {
		t.Fatalf("conversations after concurrent getOrCreate: %v, want [race-conv]", owned)
	}
}

// TestChatShutdown: stopping the server ends open event streams, and run
// returns nil promptly instead of waiting for them.
func TestChatShutdown(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackendWith(t, backend, "--shutdown-timeout", "20s")
			e := newChatEnv(t, s)
			a, b := e.user("a"), e.user("b")
			c := e.conversation(a, "")
			e.addParticipant(a, c, b)
			streams := []*sseStream{e.listenTo(a, c), e.listenTo(b, c), e.listenTo(a, e.conversation(a, ""))}
			m := e.send(a, c, "before shutdown")
			for _, st := range streams[:2] {
				if got := st.skipTo(t, "message_created"); got["id"] != m["id"] {
					t.Fatalf("got %v", got)
				}
			}
			start := time.Now()
			stopped := make(chan error, 1)
			go func() { stopped <- s.stop() }()
			for _, st := range streams {
				st.waitEnd(t)
			}
			select {
			case err := <-stopped:
				if err != nil {
					t.Fatalf("run returned %v, want nil", err)
				}
			case <-time.After(signalTimeout):
				t.Fatalf("run did not return within %s of cancelling, with streams open", signalTimeout)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("shutdown with open streams took %s, want well under the 20s shutdown timeout", el)
			}
		})
	}
}

// Two server processes on one PostgreSQL database share live signals: a
// listener on one receives what is written through the other, large signals
// included, and a participant removed through one loses its streams on the
// other.
func TestChatSignalsAcrossServers(t *testing.T) {
	t.Parallel()
	dir, dbURL := storage(t, "postgres")
	a := startServer(t, dir, dbURL)
	b := launchServer(t, dir, dbURL) // shared file storage, as scale-out requires
	b.waitListening(t)
	e := newChatEnv(t, a)
	onB := *e
	onB.s = b

	alice := e.createUser(nil)
	conv := e.conversation(alice, "shared")
	st := onB.listenTo(alice, conv)
	defer st.close()

	sent := e.send(alice, conv, "hello from a")
	if got := st.expect(t, "message_created"); got["id"] != sent["id"] {
		t.Fatalf("listener on b got message %v, want %v", got["id"], sent["id"])
	}
	big := strings.Repeat("é", 9000) + strings.Repeat("x", 7001) // several notification pieces
	sent = e.send(alice, conv, big)
	got := st.expect(t, "message_created")
	if payload, _ := got["payload"].(map[string]any); got["id"] != sent["id"] || payload["text"] != big {
		t.Fatalf("listener on b got a different large message (%d bytes)", len(fmt.Sprint(got["payload"])))
	}

	bob := e.createUser(nil)
	e.addParticipant(alice, conv, bob)
	if got := st.expect(t, "participant_added"); got["participantId"] != bob.ID {
		t.Fatalf("participant_added for %v, want %s", got["participantId"], bob.ID)
	}
	bobs := onB.listenTo(bob, conv)
	e.call(http.MethodDelete, "/conversations/"+conv+"/participants/"+bob.ID, alice.Key, nil).ok()
	bobs.waitEnd(t)
	if got := st.expect(t, "participant_removed"); got["participantId"] != bob.ID {
		t.Fatalf("participant_removed for %v, want %s", got["participantId"], bob.ID)
	}
}
