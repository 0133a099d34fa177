package main

// End-to-end tests of the Chat API: the scenario table, the probe,
// conversations, messages, events and participants and their listings, bot
// event jobs and concurrent get-or-create. Users, access, payloads and
// event streams are in chat_users, chat_access, chat_payloads and
// chat_sse_e2e_test.go.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
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
		{"sse_watch", testChatWatch},
		{"bot_event_jobs", testChatBotEventJobs},
		{"concurrent_get_or_create", testChatConcurrentGetOrCreate},
	}
	var all []scenario
	for _, sc := range scenarios {
		all = append(all, scenario{sc.name, func(t *testing.T, s *testServer) { sc.run(t, newChatEnv(t, s)) }})
	}
	runScenarios(t, all, "--sse-ping-interval", pingInterval.String())
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
