package main

// Chat API end-to-end: users and their keys (user keys, key rotation,
// users/me), foreign ids and internal ids.

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

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
