package main

// The Runtime API end-to-end: a bot's users, conversations, participants,
// messages and tag values, called with a bot API key as a bot served
// elsewhere calls them, on each database.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRuntimeAPI(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"users", testRuntimeUsers},
		{"conversations", testRuntimeConversations},
		{"messages", testRuntimeMessages},
		{"import_and_tags", testRuntimeImportAndTags},
		{"other_bots", testRuntimeOtherBots},
		{"bad_input", testRuntimeBadInput},
		{"roles", testRuntimeRoles},
		{"states", testRuntimeStates},
		{"declared_states", testRuntimeDeclaredStates},
		{"events", testRuntimeEvents},
		{"workflows", testRuntimeWorkflows},
		{"state_expired", testRuntimeStateExpired},
		{"analytics", testRuntimeAnalytics},
		{"introspect", testIntrospect},
		{"embedded_client", testEmbeddedClient},
		{"fetch_private_refused", testFetchPrivateRefused},
	})
}

// rtEnv is a bot with its Chat API and a Runtime API caller holding one of
// its bot API keys.
type rtEnv struct {
	*chatEnv
	rt filesClient
}

func newRuntimeEnv(t *testing.T, s *testServer) rtEnv {
	t.Helper()
	e := newChatEnv(t, s)
	key := str(t, e.admin.post("/v1/admin/bots/baks", map[string]any{"botId": e.botID}).ok(), "value")
	return rtEnv{e, s.files(t, key, e.botID)}
}

func (e rtEnv) do(method, path string, body any) *response {
	e.t.Helper()
	return e.rt.do(method, "/v1/chat"+path, body)
}

func testRuntimeUsers(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := field(t, e.do(http.MethodPost, "/users", map[string]any{"name": "Ada", "tags": map[string]any{"crm": "42", "empty": ""}}).status(201), "user").(map[string]any)
	id := str(t, u, "id")
	wantEqual(t, u["tags"], map[string]any{"crm": "42"}, "createUser's tags (an empty value is no tag)")
	if u["name"] != "Ada" || u["createdAt"] == nil || u["updatedAt"] == nil {
		t.Errorf("createUser returned %v", u)
	}
	wantEqual(t, field(t, e.do(http.MethodGet, "/users/"+id, nil).ok(), "user"), u, "getUser")

	// getOrCreate finds by the discriminating tags, else creates.
	r := e.do(http.MethodPost, "/users/get-or-create", map[string]any{"tags": map[string]any{"crm": "42", "x": "1"}, "discriminateByTags": []string{"crm"}}).ok()
	if str(t, r, "user", "id") != id || field(t, r, "meta", "created") != false {
		t.Errorf("getOrCreateUser by crm=42: %v, want the existing user %s", r, id)
	}
	r = e.do(http.MethodPost, "/users/get-or-create", map[string]any{"tags": map[string]any{"crm": "43"}, "name": "Bob"}).ok()
	other := str(t, r, "user", "id")
	if other == id || field(t, r, "meta", "created") != true {
		t.Errorf("getOrCreateUser by crm=43: %v, want a new user", r)
	}

	// update merges tags; an empty value removes one.
	up := field(t, e.do(http.MethodPut, "/users/"+id, map[string]any{"tags": map[string]any{"crm": "", "plan": "pro"}, "pictureUrl": "https://example.test/a.png"}).ok(), "user").(map[string]any)
	wantEqual(t, up["tags"], map[string]any{"plan": "pro"}, "updateUser's tags")
	if up["pictureUrl"] != "https://example.test/a.png" || up["name"] != "Ada" {
		t.Errorf("updateUser returned %v", up)
	}

	// list: by tag, all, paged; the bot's own user is never listed.
	list := func(q string) []string {
		t.Helper()
		var ids []string
		for _, u := range field(t, e.do(http.MethodGet, "/users"+q, nil).ok(), "users").([]any) {
			ids = append(ids, u.(map[string]any)["id"].(string))
		}
		return ids
	}
	wantEqual(t, list("?tags.plan=pro"), []string{id}, "listUsers by tag")
	wantEqual(t, list(""), []string{id, other}, "listUsers")
	wantEqual(t, list("?sortDirection=desc"), []string{other, id}, "listUsers newest first")
	p1 := e.do(http.MethodGet, "/users?pageSize=1", nil).ok()
	next := str(t, p1, "meta", "nextToken")
	wantEqual(t, list("?pageSize=1&nextToken="+url.QueryEscape(next)), []string{other}, "listUsers' second page")

	e.do(http.MethodDelete, "/users/"+other, nil).ok()
	e.do(http.MethodGet, "/users/"+other, nil).fail(404, "ResourceNotFound", other)
	e.do(http.MethodDelete, "/users/"+other, nil).fail(404, "ResourceNotFound")
	e.do(http.MethodGet, "/users/"+e.botID, nil).fail(404, "ResourceNotFound")
}

func testRuntimeConversations(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	c := field(t, e.do(http.MethodPost, "/conversations", map[string]any{"channel": "web", "tags": map[string]any{"topic": "billing"}}).status(201), "conversation").(map[string]any)
	id := str(t, c, "id")
	if c["channel"] != "web" || c["integration"] != "chat" || c["messageCount"] != 0.0 {
		t.Errorf("createConversation returned %v", c)
	}
	r := e.do(http.MethodPost, "/conversations/get-or-create", map[string]any{"channel": "web", "tags": map[string]any{"topic": "billing"}}).ok()
	if str(t, r, "conversation", "id") != id || field(t, r, "meta", "created") != false {
		t.Errorf("getOrCreateConversation: %v, want %s", r, id)
	}
	up := field(t, e.do(http.MethodPut, "/conversations/"+id, map[string]any{"tags": map[string]any{"topic": "", "lang": "fr"}}).ok(), "conversation")
	wantEqual(t, field(t, up, "tags"), map[string]any{"lang": "fr"}, "updateConversation's tags")

	// A chat user added by the bot takes part, and lists it.
	u := e.user("rt-participant")
	rtUser := str(t, e.do(http.MethodGet, "/users/"+u.ID, nil).ok(), "user", "id")
	p := e.do(http.MethodPost, "/conversations/"+id+"/participants", map[string]any{"userId": rtUser}).ok()
	if str(t, p, "participant", "id") != u.ID {
		t.Errorf("addParticipant returned %v", p)
	}
	e.do(http.MethodGet, "/conversations/"+id+"/participants/"+u.ID, nil).ok()
	parts := field(t, e.do(http.MethodGet, "/conversations/"+id+"/participants", nil).ok(), "participants").([]any)
	if len(parts) != 2 { // the bot, which owns it, and the user
		t.Errorf("listParticipants: %v, want the bot and %s", parts, u.ID)
	}
	e.call(http.MethodGet, "/conversations/"+id, u.Key, nil).ok()

	own := e.conversation(u, "") // the user's own, through the Chat API
	byUser := field(t, e.do(http.MethodGet, "/conversations?participantIds="+u.ID, nil).ok(), "conversations").([]any)
	if len(byUser) != 2 {
		t.Errorf("listConversations by participant: %v, want 2", byUser)
	}
	byTag := field(t, e.do(http.MethodGet, "/conversations?tags.lang=fr", nil).ok(), "conversations").([]any)
	if len(byTag) != 1 || byTag[0].(map[string]any)["id"] != id {
		t.Errorf("listConversations by tag: %v, want %s", byTag, id)
	}
	onWeb := field(t, e.do(http.MethodGet, "/conversations?channel=web", nil).ok(), "conversations").([]any)
	if len(onWeb) != 1 {
		t.Errorf("listConversations on channel web: %v", onWeb)
	}
	e.send(u, own, "hello")
	withMessages := field(t, e.do(http.MethodGet, "/conversations?minMessageCount=1", nil).ok(), "conversations").([]any)
	if len(withMessages) != 1 || withMessages[0].(map[string]any)["id"] != own || withMessages[0].(map[string]any)["messageCount"] != 1.0 {
		t.Errorf("listConversations with a message: %v, want %s with 1", withMessages, own)
	}

	e.do(http.MethodDelete, "/conversations/"+id+"/participants/"+u.ID, nil).ok()
	e.do(http.MethodGet, "/conversations/"+id+"/participants/"+u.ID, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodGet, "/conversations/"+id, u.Key, nil).fail(403, "Forbidden")
	e.do(http.MethodDelete, "/conversations/"+id, nil).ok()
	e.do(http.MethodGet, "/conversations/"+id, nil).fail(404, "ResourceNotFound", id)
}

func testRuntimeMessages(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := e.user("rt-reader")
	conv := e.conversation(u, "rt-conv")
	st := e.listenTo(u, conv)
	defer st.close()

	// A message the bot creates reaches the chat user's stream as a reply does.
	m := field(t, e.do(http.MethodPost, "/messages", map[string]any{
		"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "hi from the bot"}, "tags": map[string]any{"kind": "greeting"},
	}).status(201), "message").(map[string]any)
	if m["direction"] != "outgoing" || m["type"] != "text" || m["userId"] != e.botID || m["conversationId"] != conv {
		t.Errorf("createMessage returned %v", m)
	}
	wantEqual(t, m["payload"], map[string]any{"text": "hi from the bot"}, "the Runtime payload (its type apart)")
	sig := st.expect(t, "message_created")
	if sig["isBot"] != true || sig["id"] != m["id"] {
		t.Errorf("signal %v, want the bot's message %v", sig, m["id"])
	}
	wantEqual(t, sig["payload"], map[string]any{"type": "text", "text": "hi from the bot"}, "the chat payload")

	// The user's message is incoming; both are listed newest first.
	um := e.send(u, conv, "hello bot")
	st.expect(t, "message_created")
	msgs := field(t, e.do(http.MethodGet, "/messages?conversationId="+conv, nil).ok(), "messages").([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["id"] != um["id"] || msgs[0].(map[string]any)["direction"] != "incoming" || msgs[0].(map[string]any)["userId"] != u.ID {
		t.Fatalf("listMessages: %v", msgs)
	}
	wantEqual(t, msgs[1], m, "the bot's message in listMessages")
	tagged := field(t, e.do(http.MethodGet, "/messages?tags.kind=greeting", nil).ok(), "messages").([]any)
	if len(tagged) != 1 || tagged[0].(map[string]any)["id"] != m["id"] {
		t.Errorf("listMessages by tag: %v", tagged)
	}

	// getOrCreate finds the greeting again instead of sending it twice.
	again := e.do(http.MethodPost, "/messages/get-or-create", map[string]any{
		"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "again"}, "tags": map[string]any{"kind": "greeting"},
	}).ok()
	if str(t, again, "message", "id") != m["id"] || field(t, again, "meta", "created") != false {
		t.Errorf("getOrCreateMessage: %v, want %v", again, m["id"])
	}

	id := str(t, m, "id")
	up := field(t, e.do(http.MethodPut, "/messages/"+id, map[string]any{"payload": map[string]any{"text": "edited"}, "tags": map[string]any{"edited": "yes"}}).ok(), "message").(map[string]any)
	wantEqual(t, up["payload"], map[string]any{"text": "edited"}, "updateMessage's payload")
	wantEqual(t, up["tags"], map[string]any{"kind": "greeting", "edited": "yes"}, "updateMessage's tags")
	wantEqual(t, field(t, e.do(http.MethodGet, "/messages/"+id, nil).ok(), "message"), up, "getMessage after the update")
	// Listeners see the bot's edit (the web chat's message_updated).
	if sig := st.expect(t, "message_updated"); sig["id"] != id {
		t.Errorf("message_updated signal %v, want %s", sig, id)
	} else {
		wantEqual(t, sig["payload"], map[string]any{"type": "text", "text": "edited"}, "the updated chat payload")
	}
	e.do(http.MethodPut, "/messages/"+id, map[string]any{"payload": map[string]any{"markdown": "x"}}).fail(400, "InvalidPayload", "text")

	e.do(http.MethodDelete, "/messages/"+id, nil).ok()
	if sig := st.expect(t, "message_deleted"); sig["id"] != id {
		t.Errorf("message_deleted signal %v, want %s", sig, id)
	}
	e.do(http.MethodGet, "/messages/"+id, nil).fail(404, "ResourceNotFound", id)
}

func testRuntimeImportAndTags(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := str(t, e.do(http.MethodPost, "/users", map[string]any{"tags": map[string]any{"src": "legacy"}}).status(201), "user", "id")
	conv := str(t, e.do(http.MethodPost, "/conversations", map[string]any{"channel": "import", "tags": map[string]any{"src": "legacy"}}).status(201), "conversation", "id")
	past := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Millisecond)
	batch := []map[string]any{
		{"conversationId": conv, "userId": u, "type": "text", "payload": map[string]any{"text": "old question"}, "tags": map[string]any{"legacyId": "1"},
			"createdAt": past.Format(time.RFC3339Nano), "discriminateByTags": []string{"legacyId"}},
		{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "old answer"}, "tags": map[string]any{"legacyId": "2"},
			"createdAt": past.Add(time.Second).Format(time.RFC3339Nano), "discriminateByTags": []string{"legacyId"}},
	}
	first := field(t, e.do(http.MethodPost, "/messages/import-messages", map[string]any{"messages": batch}).ok(), "messages").([]any)
	if len(first) != 2 || first[0].(map[string]any)["createdAt"] != past.Format("2006-01-02T15:04:05.000Z") ||
		first[0].(map[string]any)["direction"] != "incoming" || first[1].(map[string]any)["direction"] != "outgoing" {
		t.Fatalf("importMessages: %v", first)
	}
	// Run again: the same messages, nothing added.
	second := field(t, e.do(http.MethodPost, "/messages/import-messages", map[string]any{"messages": batch}).ok(), "messages").([]any)
	wantEqual(t, second, first, "importMessages run twice")
	if n := field(t, e.do(http.MethodGet, "/conversations/"+conv, nil).ok(), "conversation", "messageCount"); n != 2.0 {
		t.Errorf("messageCount after two imports: %v, want 2", n)
	}
	// History is not delivered to the bot (it has no code here) nor signalled;
	// listTagValues sees each kind apart.
	for kind, want := range map[string][]any{
		"user": {map[string]any{"value": "legacy"}}, "conversation": {map[string]any{"value": "legacy"}}, "message": {},
	} {
		got := field(t, e.do(http.MethodGet, "/tags/src/values?type="+kind, nil).ok(), "tags")
		wantEqual(t, got, want, "listTagValues src of %s", kind)
	}
	got := field(t, e.do(http.MethodGet, "/tags/legacyId/values?type=message", nil).ok(), "tags")
	wantEqual(t, got, []any{map[string]any{"value": "1"}, map[string]any{"value": "2"}}, "listTagValues legacyId of messages")
	e.do(http.MethodGet, "/tags/src/values", nil).fail(400, "InvalidQuery", "type")
	e.do(http.MethodGet, "/tags/src/values?type=bot", nil).fail(400, "InvalidQuery", "type")
}

// testRuntimeOtherBots: every operation on another bot's rows is a 404 (as
// if they did not exist), and changes nothing.
func testRuntimeOtherBots(t *testing.T, s *testServer) {
	mine := newRuntimeEnv(t, s)
	theirs := newRuntimeEnv(t, s)
	u := theirs.user("their-user")
	conv := theirs.conversation(u, "their-conv")
	msg := str(t, theirs.send(u, conv, "private"), "id")
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/users/" + u.ID, nil},
		{http.MethodPut, "/users/" + u.ID, map[string]any{"name": "pwned"}},
		{http.MethodDelete, "/users/" + u.ID, nil},
		{http.MethodGet, "/conversations/" + conv, nil},
		{http.MethodPut, "/conversations/" + conv, map[string]any{"tags": map[string]any{"x": "y"}}},
		{http.MethodDelete, "/conversations/" + conv, nil},
		{http.MethodGet, "/conversations/" + conv + "/participants", nil},
		{http.MethodPost, "/conversations/" + conv + "/participants", map[string]any{"userId": u.ID}},
		{http.MethodGet, "/conversations/" + conv + "/participants/" + u.ID, nil},
		{http.MethodDelete, "/conversations/" + conv + "/participants/" + u.ID, nil},
		{http.MethodGet, "/messages?conversationId=" + conv, nil},
		{http.MethodGet, "/users?conversationId=" + conv, nil},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": mine.botID, "type": "text", "payload": map[string]any{"text": "intrusion"}, "tags": map[string]any{}}},
		{http.MethodGet, "/messages/" + msg, nil},
		{http.MethodPut, "/messages/" + msg, map[string]any{"tags": map[string]any{"x": "y"}}},
		{http.MethodDelete, "/messages/" + msg, nil},
	} {
		mine.do(c.method, c.path, c.body).fail(404, "ResourceNotFound")
	}
	if got := field(t, mine.do(http.MethodGet, "/messages", nil).ok(), "messages").([]any); len(got) != 0 {
		t.Errorf("listMessages of a bot without messages: %v", got)
	}
	if got := field(t, mine.do(http.MethodGet, "/users", nil).ok(), "users").([]any); len(got) != 0 {
		t.Errorf("listUsers of a bot without users: %v", got)
	}
	// A key of one bot with x-bot-id of another is refused.
	mine.rt.with("x-bot-id", theirs.botID).do(http.MethodGet, "/v1/chat/users/"+u.ID, nil).fail(403, "Forbidden")
	// Nothing changed.
	msgs := theirs.messages(u, conv)
	if len(msgs) != 1 || theirs.do(http.MethodGet, "/users/"+u.ID, nil).ok() == nil {
		t.Errorf("the other bot's data changed: %v", msgs)
	}
}

func testRuntimeBadInput(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := e.user("bad-input")
	conv := e.conversation(u, "")
	long := make([]byte, 1001)
	for i := range long {
		long[i] = 'x'
	}
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		typ          string
		mentions     string
	}{
		{http.MethodPost, "/users", map[string]any{"tags": map[string]any{"a": 1}}, 400, "InvalidPayload", "tags"},
		{http.MethodPost, "/users", map[string]any{"tags": map[string]any{"a": string(long)}}, 400, "InvalidPayload", "tags.a"},
		{http.MethodPost, "/users", map[string]any{"nickname": "x"}, 400, "InvalidPayload", "nickname"},
		{http.MethodPost, "/users", map[string]any{"tags": map[string]any{"a\u0000": "x"}}, 400, "InvalidPayload", "NUL"},
		{http.MethodPost, "/users/get-or-create", map[string]any{"tags": map[string]any{"a": "x\u0000"}}, 400, "InvalidPayload", "NUL"},
		{http.MethodPost, "/users", map[string]any{"discriminateByTags": []string{"a"}}, 400, "InvalidPayload", "discriminateByTags"},
		{http.MethodPost, "/users/get-or-create", map[string]any{"tags": map[string]any{"a": "1"}, "discriminateByTags": []string{"b"}}, 400, "InvalidPayload", "discriminateByTags"},
		{http.MethodPost, "/conversations", map[string]any{"tags": map[string]any{}}, 400, "InvalidPayload", "channel"},
		{http.MethodPost, "/conversations", map[string]any{"channel": ""}, 400, "InvalidPayload", "channel"},
		{http.MethodPost, "/conversations/" + conv + "/participants", map[string]any{"userId": "nobody"}, 404, "ResourceNotFound", "nobody"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{}}, 400, "InvalidPayload", "text"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": e.botID, "type": "hologram", "payload": map[string]any{}}, 400, "InvalidPayload", "type"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": "nobody", "type": "text", "payload": map[string]any{"text": "x"}}, 400, "ReferenceNotFound", "userId"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": "nowhere", "userId": e.botID, "type": "text", "payload": map[string]any{"text": "x"}}, 404, "ResourceNotFound", "nowhere"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": "hi"}, 400, "InvalidPayload", "payload"},
		{http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "x"}, "schedule": map[string]any{"delay": 1000}}, 400, "InvalidPayload", "schedule"},
		{http.MethodPost, "/messages/import-messages", map[string]any{"messages": []any{map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "x"}, "createdAt": "yesterday"}}}, 400, "InvalidPayload", "messages[0].createdAt"},
		{http.MethodPost, "/messages/import-messages", map[string]any{"messages": []any{map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "x"}, "createdAt": time.Now().Add(time.Hour).Format(time.RFC3339)}}}, 400, "InvalidPayload", "future"},
		{http.MethodGet, "/users?pageSize=0", nil, 400, "InvalidQuery", "pageSize"},
		{http.MethodGet, "/users?afterDate=soon", nil, 400, "InvalidQuery", "afterDate"},
		{http.MethodGet, "/users?sortField=name", nil, 400, "InvalidQuery", "sortField"},
		{http.MethodGet, "/users?nextToken=garbage", nil, 400, "", ""},
		{http.MethodGet, "/conversations?minMessageCount=many", nil, 400, "InvalidQuery", "minMessageCount"},
		{http.MethodGet, "/messages?tags=notjson", nil, 400, "InvalidQuery", "tags"},
	} {
		r := e.do(c.method, c.path, c.body)
		if c.typ == "" {
			if r.Status != c.status {
				t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Body)
			}
			continue
		}
		r.fail(c.status, c.typ, c.mentions)
	}
	// Nothing was stored by the refused calls.
	if got := field(t, e.do(http.MethodGet, "/users", nil).ok(), "users").([]any); len(got) != 1 {
		t.Errorf("users after refused calls: %v, want only %s", got, u.ID)
	}
	if n := field(t, e.do(http.MethodGet, "/conversations/"+conv, nil).ok(), "conversation", "messageCount"); n != 0.0 {
		t.Errorf("messageCount after refused messages: %v", n)
	}
}

// testRuntimeRoles: a viewer's token reads but does not write; a developer's
// token with x-bot-id does both; no token is refused.
func testRuntimeRoles(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	viewer, _ := e.admin.addMember("viewer")
	dev, _ := e.admin.addMember("developer")
	asViewer := s.files(t, viewer.token, e.botID)
	asDev := s.files(t, dev.token, e.botID)
	id := str(t, asDev.do(http.MethodPost, "/v1/chat/users", map[string]any{"name": "by dev"}).status(201), "user", "id")
	asViewer.do(http.MethodGet, "/v1/chat/users/"+id, nil).ok()
	asViewer.do(http.MethodPost, "/v1/chat/users", map[string]any{}).fail(403, "Forbidden")
	asViewer.do(http.MethodDelete, "/v1/chat/users/"+id, nil).fail(403, "Forbidden")
	s.files(t, "", e.botID).do(http.MethodGet, "/v1/chat/users", nil).fail(401, "Unauthorized")
}

func testRuntimeStates(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := e.user("state-user")
	conv := e.conversation(u, "state-conv")
	path := "/states/conversation/" + conv + "/progress"
	e.do(http.MethodGet, path, nil).fail(404, "ResourceNotFound", "progress")

	st := field(t, e.do(http.MethodPost, path, map[string]any{"payload": map[string]any{"step": 1, "name": "x"}}).ok(), "state").(map[string]any)
	if st["type"] != "conversation" || st["conversationId"] != conv || st["botId"] != e.botID || st["name"] != "progress" || st["expiresAt"] != nil {
		t.Errorf("setState returned %v", st)
	}
	got := e.do(http.MethodGet, path, nil).ok()
	wantEqual(t, got["state"], st, "getState")
	wantEqual(t, got["meta"], map[string]any{"cached": false}, "getState's meta")

	// getOrSet returns what is there; patch merges (null removes a key).
	again := field(t, e.do(http.MethodPost, path+"/get-or-set", map[string]any{"payload": map[string]any{"step": 99}}).ok(), "state", "payload")
	wantEqual(t, again, map[string]any{"step": 1, "name": "x"}, "getOrSetState of an existing state")
	patched := field(t, e.do(http.MethodPatch, path, map[string]any{"payload": map[string]any{"step": 2, "name": nil}}).ok(), "state").(map[string]any)
	wantEqual(t, patched["payload"], map[string]any{"step": 2}, "patchState")
	if patched["id"] != st["id"] || patched["createdAt"] != st["createdAt"] {
		t.Errorf("patchState changed the state's identity: %v, was %v", patched, st)
	}

	// An expiry is idle time: the state lapses once left unwritten that long.
	withExpiry := field(t, e.do(http.MethodPost, path+"/expiry", map[string]any{"expiry": 3_600_000}).ok(), "state").(map[string]any)
	if withExpiry["expiry"] != 3_600_000.0 || withExpiry["expiresAt"] == nil {
		t.Errorf("setStateExpiry returned %v", withExpiry)
	}
	e.do(http.MethodPost, path+"/expiry", map[string]any{"expiry": 1}).ok()
	time.Sleep(20 * time.Millisecond)
	e.do(http.MethodGet, path, nil).fail(404, "ResourceNotFound")
	e.do(http.MethodPatch, path, map[string]any{"payload": map[string]any{}}).fail(404, "ResourceNotFound")
	fresh := field(t, e.do(http.MethodPost, path+"/get-or-set", map[string]any{"payload": map[string]any{"step": 0}}).ok(), "state").(map[string]any)
	if fresh["id"] == st["id"] || fresh["expiry"] != nil {
		t.Errorf("getOrSetState after the state lapsed: %v, want a new state without expiry", fresh)
	}
	// Concurrent patches lose none of each other's keys.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := e.do(http.MethodPatch, path, map[string]any{"payload": map[string]any{fmt.Sprint("k", i): i}})
			if r.Status != http.StatusOK {
				t.Errorf("concurrent patch %d: %d %s", i, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	if keys := field(t, e.do(http.MethodGet, path, nil).ok(), "state", "payload").(map[string]any); len(keys) != 9 {
		t.Errorf("after 8 concurrent patches: %v, want step and k0…k7", keys)
	}
	// A null payload deletes it.
	e.do(http.MethodPost, path, map[string]any{"payload": nil}).ok()
	e.do(http.MethodGet, path, nil).fail(404, "ResourceNotFound")

	// User, bot and workflow states; each is its own.
	e.do(http.MethodPost, "/states/user/"+u.ID+"/progress", map[string]any{"payload": map[string]any{"who": "user"}}).ok()
	e.do(http.MethodPost, "/states/bot/"+e.botID+"/progress", map[string]any{"payload": map[string]any{"who": "bot"}}).ok()
	e.do(http.MethodPost, "/states/workflow/wf-1/progress", map[string]any{"payload": map[string]any{"who": "workflow"}}).ok()
	for p, want := range map[string]string{"/states/user/" + u.ID: "user", "/states/bot/" + e.botID: "bot", "/states/workflow/wf-1": "workflow"} {
		if got := field(t, e.do(http.MethodGet, p+"/progress", nil).ok(), "state", "payload", "who"); got != want {
			t.Errorf("%s: %v, want %s", p, got, want)
		}
	}
	// Bad keys and bodies.
	e.do(http.MethodPost, "/states/session/x/progress", map[string]any{"payload": map[string]any{}}).fail(400, "InvalidPayload", "type")
	e.do(http.MethodGet, "/states/bot/"+"bot_other/progress", nil).fail(404, "ResourceNotFound")
	e.do(http.MethodGet, "/states/user/nobody/progress", nil).fail(404, "ResourceNotFound", "nobody")
	e.do(http.MethodPost, "/states/user/"+u.ID+"/progress", map[string]any{"payload": []any{1}}).fail(400, "InvalidPayload", "payload")
	e.do(http.MethodPost, "/states/user/"+u.ID+"/progress", map[string]any{"payload": map[string]any{}, "expiry": -5}).fail(400, "InvalidPayload", "expiry")
	e.do(http.MethodPost, "/states/user/"+u.ID+"/progress/expiry", map[string]any{}).fail(400, "InvalidPayload", "expiry")

	// Another bot reaches none of them, even with the same names.
	other := newRuntimeEnv(t, s)
	other.do(http.MethodGet, "/states/user/"+u.ID+"/progress", nil).fail(404, "ResourceNotFound")
	other.do(http.MethodPost, "/states/user/"+u.ID+"/progress", map[string]any{"payload": map[string]any{}}).fail(404, "ResourceNotFound")
	other.do(http.MethodGet, "/states/workflow/wf-1/progress", nil).fail(404, "ResourceNotFound")
	other.do(http.MethodGet, "/states/bot/"+e.botID+"/progress", nil).fail(404, "ResourceNotFound")
	if got := field(t, e.do(http.MethodGet, "/states/user/"+u.ID+"/progress", nil).ok(), "state", "payload", "who"); got != "user" {
		t.Errorf("the user's state after another bot's calls: %v", got)
	}
}

// testRuntimeDeclaredStates: states the bot declares are checked against
// their schema and type, and get their declared expiry.
func testRuntimeDeclaredStates(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"states": map[string]any{
		"profile": map[string]any{"type": "user", "schema": map[string]any{
			"type": "object", "additionalProperties": false, "properties": map[string]any{"age": map[string]any{"type": "integer", "minimum": 0}},
		}},
		"session": map[string]any{"type": "conversation", "schema": map[string]any{"type": "object"}, "expiry": 60_000},
		"broken":  map[string]any{"type": "bot", "schema": map[string]any{"type": 12}},
	}}).ok()
	u := e.user("declared")
	conv := e.conversation(u, "")
	p := "/states/user/" + u.ID + "/profile"
	e.do(http.MethodPost, p, map[string]any{"payload": map[string]any{"age": 30}}).ok()
	e.do(http.MethodPost, p, map[string]any{"payload": map[string]any{"age": "thirty"}}).fail(400, "InvalidPayload", "payload", "age")
	e.do(http.MethodPost, p, map[string]any{"payload": map[string]any{"height": 2}}).fail(400, "InvalidPayload", "height")
	e.do(http.MethodPatch, p, map[string]any{"payload": map[string]any{"age": -1}}).fail(400, "InvalidPayload", "age")
	if got := field(t, e.do(http.MethodGet, p, nil).ok(), "state", "payload", "age"); got != 30.0 {
		t.Errorf("profile after refused writes: age %v, want 30", got)
	}
	e.do(http.MethodPost, "/states/conversation/"+conv+"/profile", map[string]any{"payload": map[string]any{}}).fail(400, "InvalidPayload", "type")
	sess := field(t, e.do(http.MethodPost, "/states/conversation/"+conv+"/session", map[string]any{"payload": map[string]any{}}).ok(), "state").(map[string]any)
	if sess["expiry"] != 60_000.0 || sess["expiresAt"] == nil {
		t.Errorf("a declared expiry: %v", sess)
	}
	e.do(http.MethodPost, "/states/bot/"+e.botID+"/broken", map[string]any{"payload": map[string]any{}}).fail(400, "InvalidJsonSchema", "broken")
}

const eventsJS = `bot.on.event('reminder', async ({ event, client }) => {
  await client.createMessage({ conversationId: event.conversationId,
    payload: { type: 'text', text: 'reminder ' + event.payload.n + (event.messageId ? ' about ' + event.messageId : '') } })
})
bot.on.event('boom', async () => { throw new Error('kaboom') })
`

// testRuntimeEvents: events a bot creates reach its own handlers, in order
// per conversation, and end processed or failed; scheduled ones wait and can
// be canceled.
func testRuntimeEvents(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.deploy(eventsJS, nil)
	u := e.user("events-user")
	conv := e.conversation(u, "")
	m := e.send(u, conv, "hello")
	var ids []string
	for n := 1; n <= 3; n++ {
		body := map[string]any{"type": "reminder", "payload": map[string]any{"n": n}, "conversationId": conv, "userId": u.ID}
		if n == 2 {
			body["messageId"] = m["id"]
		}
		ev := field(t, e.do(http.MethodPost, "/events", body).status(201), "event").(map[string]any)
		if ev["type"] != "reminder" || ev["status"] != "pending" || ev["conversationId"] != conv || ev["userId"] != u.ID || ev["failureReason"] != nil {
			t.Errorf("createEvent returned %v", ev)
		}
		ids = append(ids, ev["id"].(string))
	}
	replies := e.waitReplies(u, conv, 3)
	wantEqual(t, texts(replies), []string{"reminder 1", "reminder 2 about " + m["id"].(string), "reminder 3"}, "replies to the events, in order")
	for _, id := range ids {
		eventually(t, "event "+id+" processed", func() bool {
			return field(t, e.do(http.MethodGet, "/events/"+id, nil).ok(), "event", "status") == "processed"
		})
	}
	boom := str(t, e.do(http.MethodPost, "/events", map[string]any{"type": "boom", "payload": map[string]any{}}).status(201), "event", "id")
	var failed map[string]any
	eventually(t, "the failing event ends failed", func() bool {
		failed = field(t, e.do(http.MethodGet, "/events/"+boom, nil).ok(), "event").(map[string]any)
		return failed["status"] == "failed"
	})
	if reason, _ := failed["failureReason"].(string); !strings.Contains(reason, "kaboom") {
		t.Errorf("failureReason %q does not say why", reason)
	}

	// Scheduled: it waits, is listed as scheduled, and can be canceled once.
	later := str(t, e.do(http.MethodPost, "/events", map[string]any{"type": "reminder", "payload": map[string]any{"n": 9},
		"conversationId": conv, "schedule": map[string]any{"delay": 3_600_000}}).status(201), "event", "id")
	if st := field(t, e.do(http.MethodGet, "/events/"+later, nil).ok(), "event", "status"); st != "scheduled" {
		t.Errorf("an event an hour ahead is %v, want scheduled", st)
	}
	sched := field(t, e.do(http.MethodGet, "/events?status=scheduled", nil).ok(), "events").([]any)
	if len(sched) != 1 || sched[0].(map[string]any)["id"] != later {
		t.Errorf("listEvents status=scheduled: %v", sched)
	}
	byConv := field(t, e.do(http.MethodGet, "/events?conversationId="+conv+"&type=reminder", nil).ok(), "events").([]any)
	if len(byConv) != 4 || byConv[0].(map[string]any)["id"] != later {
		t.Errorf("listEvents of the conversation, newest first: %v", byConv)
	}
	other := newRuntimeEnv(t, s)
	other.do(http.MethodGet, "/events/"+later, nil).fail(404, "ResourceNotFound")
	other.do(http.MethodDelete, "/events/scheduled/"+later, nil).fail(404, "ResourceNotFound")
	e.do(http.MethodDelete, "/events/scheduled/"+later, nil).ok()
	if st := field(t, e.do(http.MethodGet, "/events/"+later, nil).ok(), "event", "status"); st != "canceled" {
		t.Errorf("a canceled event is %v", st)
	}
	e.do(http.MethodDelete, "/events/scheduled/"+later, nil).fail(400, "InvalidPayload", "canceled")
	e.do(http.MethodDelete, "/events/scheduled/"+ids[0], nil).fail(400, "InvalidPayload", "processed")

	// Bad input.
	e.do(http.MethodPost, "/events", map[string]any{"payload": map[string]any{}}).fail(400, "InvalidPayload", "type")
	e.do(http.MethodPost, "/events", map[string]any{"type": "x", "payload": map[string]any{}, "schedule": map[string]any{"delay": 1, "dateTime": "2030-01-01T00:00:00Z"}}).fail(400, "InvalidPayload", "schedule")
	e.do(http.MethodPost, "/events", map[string]any{"type": "x", "payload": map[string]any{}, "schedule": map[string]any{"delay": 100 * 24 * 3_600_000}}).fail(400, "InvalidPayload", "90 days")
	e.do(http.MethodPost, "/events", map[string]any{"type": "x", "payload": map[string]any{}, "conversationId": "nowhere"}).fail(404, "ResourceNotFound", "nowhere")
	e.do(http.MethodPost, "/events", map[string]any{"type": "x", "payload": map[string]any{}, "messageId": "msg_nothing"}).fail(404, "ResourceNotFound")
	e.do(http.MethodGet, "/events?status=done", nil).fail(400, "InvalidQuery", "status")
	// The reply to the canceled event never came.
	if got := len(e.fromBot(e.messages(u, conv))); got != 3 {
		t.Errorf("%d bot messages, want 3", got)
	}
}

const workflowsJS = `bot.on.event('workflow_update', async ({ event, client }) => {
  const wf = event.payload.workflow
  await client.createMessage({ conversationId: event.conversationId,
    payload: { type: 'text', text: [event.payload.type, wf.name, wf.status, event.payload.conversation.id, event.workflowId].join(' ') } })
})
`

// testRuntimeWorkflows: workflows are kept, found and updated; one created
// pending is started in the bot's handlers, and one past its timeoutAt is
// timed out and reported to them.
func testRuntimeWorkflows(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.deploy(workflowsJS, nil)
	u := e.user("wf-user")
	conv := e.conversation(u, "wf-conv")
	wf := field(t, e.do(http.MethodPost, "/workflows", map[string]any{"name": "onboard", "status": "pending", "conversationId": conv,
		"userId": u.ID, "input": map[string]any{"a": 1}, "tags": map[string]any{"k": "v"}}).status(201), "workflow").(map[string]any)
	id := str(t, wf, "id")
	if wf["status"] != "pending" || wf["conversationId"] != conv || wf["userId"] != u.ID || wf["completedAt"] != nil {
		t.Errorf("createWorkflow returned %v", wf)
	}
	wantEqual(t, wf["output"], map[string]any{}, "a new workflow's output")
	if at, err := time.Parse(time.RFC3339, wf["timeoutAt"].(string)); err != nil || time.Until(at) < 6*24*time.Hour {
		t.Errorf("default timeoutAt %v, want about a week ahead", wf["timeoutAt"])
	}
	started := e.waitReplies(u, conv, 1)
	wantEqual(t, texts(started), []string{"workflow_started onboard pending " + conv + " " + id}, "the start delivered to the bot")

	up := field(t, e.do(http.MethodPut, "/workflows/"+id, map[string]any{"status": "in_progress", "output": map[string]any{"step": 1},
		"tags": map[string]any{"k": nil, "z": "1"}}).ok(), "workflow").(map[string]any)
	if up["status"] != "in_progress" {
		t.Errorf("updateWorkflow: %v", up)
	}
	wantEqual(t, up["tags"], map[string]any{"z": "1"}, "tags after the update")
	got := e.do(http.MethodPost, "/workflows/get-or-create", map[string]any{"name": "onboard", "status": "pending", "tags": map[string]any{"z": "1"}}).ok()
	if str(t, got, "workflow", "id") != id || field(t, got, "meta", "created") != false {
		t.Errorf("getOrCreateWorkflow by tag: %v", got)
	}
	second := e.do(http.MethodPost, "/workflows/get-or-create", map[string]any{"name": "onboard", "status": "in_progress",
		"tags": map[string]any{"z": "1"}, "discriminateByStatusGroup": "finished"}).ok()
	if str(t, second, "workflow", "id") == id || field(t, second, "meta", "created") != true {
		t.Errorf("getOrCreateWorkflow among finished ones: %v, want a new one", second)
	}
	done := field(t, e.do(http.MethodPut, "/workflows/"+id, map[string]any{"status": "completed"}).ok(), "workflow").(map[string]any)
	if done["completedAt"] == nil {
		t.Errorf("a completed workflow has no completedAt: %v", done)
	}
	e.do(http.MethodPut, "/workflows/"+id, map[string]any{"status": "in_progress"}).fail(400, "InvalidPayload", "finished")
	list := func(q string) []any {
		t.Helper()
		return field(t, e.do(http.MethodGet, "/workflows"+q, nil).ok(), "workflows").([]any)
	}
	if ws := list("?statuses=completed"); len(ws) != 1 || ws[0].(map[string]any)["id"] != id {
		t.Errorf("listWorkflows completed: %v", ws)
	}
	if ws := list("?statuses=completed&statuses=in_progress&name=onboard"); len(ws) != 2 {
		t.Errorf("listWorkflows of two statuses: %v", ws)
	}
	if ws := list("?conversationId=" + conv); len(ws) != 1 {
		t.Errorf("listWorkflows of the conversation: %v", ws)
	}

	// Past its timeoutAt, a workflow still active times out and the bot hears of it.
	soon := time.Now().Add(2500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	late := str(t, e.do(http.MethodPost, "/workflows", map[string]any{"name": "wait", "status": "listening", "conversationId": conv, "timeoutAt": soon}).status(201), "workflow", "id")
	var timed map[string]any
	eventually(t, "the workflow timed out", func() bool {
		timed = field(t, e.do(http.MethodGet, "/workflows/"+late, nil).ok(), "workflow").(map[string]any)
		return timed["status"] == "timedout"
	})
	if timed["failureReason"] == nil || timed["completedAt"] == nil {
		t.Errorf("a timed-out workflow: %v", timed)
	}
	replies := e.waitReplies(u, conv, 2)
	if got := texts(replies)[1]; got != "workflow_timedout wait timedout "+conv+" "+late {
		t.Errorf("the time-out delivered to the bot: %q", got)
	}

	// Bad input, and another bot.
	e.do(http.MethodPost, "/workflows", map[string]any{"name": "x", "status": "done"}).fail(400, "InvalidPayload", "status")
	e.do(http.MethodPost, "/workflows", map[string]any{"name": "x", "status": "pending", "timeoutAt": "2001-01-01T00:00:00Z"}).fail(400, "InvalidPayload", "timeoutAt")
	e.do(http.MethodPost, "/workflows", map[string]any{"name": "x", "status": "pending", "parentWorkflowId": "wfl_none"}).fail(400, "ReferenceNotFound", "parentWorkflowId")
	e.do(http.MethodPost, "/workflows", map[string]any{"status": "pending"}).fail(400, "InvalidPayload", "name")
	e.do(http.MethodGet, "/workflows?statuses=asleep", nil).fail(400, "InvalidQuery", "statuses")
	other := newRuntimeEnv(t, s)
	other.do(http.MethodGet, "/workflows/"+id, nil).fail(404, "ResourceNotFound")
	other.do(http.MethodPut, "/workflows/"+id, map[string]any{"status": "failed"}).fail(404, "ResourceNotFound")
	other.do(http.MethodDelete, "/workflows/"+id, nil).fail(404, "ResourceNotFound")
	e.do(http.MethodDelete, "/workflows/"+id, nil).ok()
	e.do(http.MethodGet, "/workflows/"+id, nil).fail(404, "ResourceNotFound", id)
}

// testRuntimeStateExpired: a state that lapses is removed and the bot's
// handlers receive state_expired with it, once.
func testRuntimeStateExpired(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.deploy(`bot.on.event('state_expired', async ({ event, client }) => {
  const st = event.payload.state
  await client.createMessage({ conversationId: event.conversationId,
    payload: { type: 'text', text: ['expired', st.name, st.type, st.conversationId, JSON.stringify(st.payload)].join(' ') } })
})`, nil)
	u := e.user("expiry-user")
	conv := e.conversation(u, "")
	e.do(http.MethodPost, "/states/conversation/"+conv+"/draft", map[string]any{"payload": map[string]any{"text": "half"}, "expiry": 1}).ok()
	e.do(http.MethodPost, "/states/conversation/"+conv+"/kept", map[string]any{"payload": map[string]any{}}).ok()
	replies := e.waitReplies(u, conv, 1)
	wantEqual(t, texts(replies), []string{`expired draft conversation ` + conv + ` {"text":"half"}`}, "the state_expired event")
	e.do(http.MethodGet, "/states/conversation/"+conv+"/draft", nil).fail(404, "ResourceNotFound")
	e.do(http.MethodGet, "/states/conversation/"+conv+"/kept", nil).ok()
}

// testRuntimeAnalytics: what a bot tracks and what happens in its
// conversations shows in the Admin API's getBotAnalytics; observations go
// to its logs.
func testRuntimeAnalytics(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	u := e.user("analytics-user")
	conv := e.conversation(u, "")
	e.send(u, conv, "one")
	e.send(u, conv, "two")
	e.do(http.MethodPost, "/messages", map[string]any{"conversationId": conv, "userId": e.botID, "type": "text", "payload": map[string]any{"text": "hi"}, "tags": map[string]any{}}).status(201)
	e.do(http.MethodPost, "/events", map[string]any{"type": "nudge", "payload": map[string]any{}}).status(201)
	for range 2 {
		e.do(http.MethodPost, "/analytics", map[string]any{"name": "signup", "count": 2}).ok()
	}
	e.do(http.MethodPost, "/analytics", map[string]any{"name": "signup", "count": 1.5}).fail(400, "InvalidPayload", "count")
	e.do(http.MethodPost, "/analytics", map[string]any{"count": 1}).fail(400, "InvalidPayload", "name")

	now := time.Now().UTC()
	q := "?startDate=" + url.QueryEscape(now.Add(-24*time.Hour).Format(time.RFC3339)) + "&endDate=" + url.QueryEscape(now.Format(time.RFC3339))
	records := field(t, e.admin.get("/v1/admin/bots/"+e.botID+"/analytics"+q).ok(), "records").([]any)
	if len(records) != 2 {
		t.Fatalf("getBotAnalytics over a day: %d records, want 2 (yesterday, today)", len(records))
	}
	today := records[1].(map[string]any)
	for k, want := range map[string]float64{"messages": 3, "userMessages": 2, "botMessages": 1, "newUsers": 1, "sessions": 1, "returningUsers": 0, "events": 1} {
		if today[k] != want {
			t.Errorf("today's %s: %v, want %v", k, today[k], want)
		}
	}
	wantEqual(t, today["customEvents"], map[string]any{"signup": 4}, "today's customEvents")
	wantEqual(t, today["eventTypes"], map[string]any{"nudge": 1}, "today's eventTypes")
	if field(t, today, "llm", "calls") != 0.0 || records[0].(map[string]any)["messages"] != 0.0 {
		t.Errorf("figures where nothing happened: %v / %v", today["llm"], records[0])
	}
	e.admin.get("/v1/admin/bots/"+e.botID+"/analytics?startDate=2026-01-01T00:00:00Z").fail(400, "InvalidQuery", "endDate")
	e.admin.get("/v1/admin/bots/"+e.botID+"/analytics?startDate=2020-01-01T00:00:00Z&endDate=2026-01-01T00:00:00Z").fail(400, "InvalidQuery", "366")
	newRuntimeEnv(t, s).admin.get("/v1/admin/bots/"+e.botID+"/analytics"+q).fail(404, "ResourceNotFound")

	e.do(http.MethodPost, "/observations", map[string]any{"name": "llm.step", "data": map[string]any{"ms": 12}, "conversationId": conv, "traceId": "tr-1"}).ok()
	line := e.waitLog("conversationId="+url.QueryEscape(conv), "observation llm.step", `{"ms":12}`, "traceId=tr-1")
	if line.Level != "info" {
		t.Errorf("observation logged at %q", line.Level)
	}
	e.do(http.MethodPost, "/observations", map[string]any{"name": "x", "data": map[string]any{}, "conversationId": "nowhere"}).fail(404, "ResourceNotFound")
}

func testIntrospect(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	ws := e.admin.ws
	got := e.rt.do(http.MethodPost, "/v1/admin/introspect", map[string]any{"botId": e.botID}).ok()
	wantEqual(t, got, map[string]any{"workspaceId": ws, "botId": e.botID, "userId": e.botID}, "introspect with a bot API key")
	acc := str(t, e.admin.get("/v1/admin/account/me").ok(), "account", "id")
	got = s.as(t, e.admin.token, "").post("/v1/admin/introspect", map[string]any{"botId": e.botID}).ok()
	wantEqual(t, got, map[string]any{"workspaceId": ws, "botId": e.botID, "userId": acc}, "introspect with a personal access token")
	other := newRuntimeEnv(t, s)
	other.rt.do(http.MethodPost, "/v1/admin/introspect", map[string]any{"botId": e.botID}).fail(403, "Forbidden")
	stranger := s.issueToken(t, uniqueEmail("stranger"))
	s.as(t, stranger, "").post("/v1/admin/introspect", map[string]any{"botId": e.botID}).fail(404, "ResourceNotFound")
	s.as(t, "", "").post("/v1/admin/introspect", map[string]any{"botId": e.botID}).fail(401, "Unauthorized")
	e.rt.do(http.MethodPost, "/v1/admin/introspect", map[string]any{}).fail(400, "InvalidPayload", "botId")
}

const embeddedJS = `bot.on.message('text', async ({ message, client }) => {
  const conv = message.conversationId
  const { state } = await client.getOrSetState({ type: 'conversation', id: conv, name: 'count', payload: { n: 0 } })
  await client.setState({ type: 'conversation', id: conv, name: 'count', payload: { n: state.payload.n + 1 } })
  await client.getOrCreateTable({ table: 'NotesTable', schema: { properties: { text: { type: 'string' }, conv: { type: 'string' } } } })
  await client.createTableRows({ table: 'NotesTable', rows: [{ text: message.payload.text, conv }] })
  const { rows } = await client.findTableRows({ table: 'NotesTable', filter: { conv } })
  const { user } = await client.getOrCreateUser({ tags: { who: 'embedded' } })
  const { workflows } = await client.listWorkflows({ conversationId: conv, statuses: ['in_progress'] })
  await client.createWorkflow({ name: 'w', status: 'in_progress', conversationId: conv })
  let err = ''
  try { await client.getState({ type: 'session', id: 'x', name: 'y' }) } catch (e) { err = e.type + ': ' + e.message }
  await client.createMessage({ conversationId: conv,
    payload: { type: 'text', text: [state.payload.n, rows.length, user.tags.who, workflows.length, err].join(' | ') } })
})
`

// testEmbeddedClient: bot code's client reaches the Runtime and Tables
// APIs as the bot, with their answers and errors.
func testEmbeddedClient(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.deploy(embeddedJS, nil)
	u := e.user("embedded-user")
	conv := e.conversation(u, "")
	first := textOf(e.ask(u, conv, "one"))
	second := textOf(e.ask(u, conv, "two"))
	if first != "0 | 1 | embedded | 0 | InvalidPayload: type: must be one of conversation, user, bot, integration, workflow, task (got \"session\")" ||
		!strings.HasPrefix(second, "1 | 2 | embedded | 1 | InvalidPayload") {
		t.Errorf("the bot's replies: %q, %q", first, second)
	}
	// What the code wrote is the bot's, through the Runtime API too.
	if n := field(t, e.do(http.MethodGet, "/states/conversation/"+conv+"/count", nil).ok(), "state", "payload", "n"); n != 2.0 {
		t.Errorf("the state the code set: %v", n)
	}
	if rows := field(t, e.rt.do(http.MethodPost, "/v1/tables/NotesTable/rows/find", map[string]any{}).ok(), "rows").([]any); len(rows) != 2 {
		t.Errorf("the rows the code wrote: %v", rows)
	}
}
