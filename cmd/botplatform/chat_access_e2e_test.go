package main

// Chat API end-to-end: who may call what, and CORS.

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

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

func testChatCORS(t *testing.T, e *chatEnv) {
	const origin = "https://app.example.com"
	anon := e.s.as(t, "", "")
	preflight := func(origin, path, method, headers string) *response {
		t.Helper()
		return anon.raw(http.MethodOptions, path, nil, "Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers)
	}
	u := e.user("cors")

	// By default no other origin may: preflights are refused naming the
	// setting, answers carry no allow headers.
	r := preflight(origin, e.base+"/messages", "POST", "content-type,x-user-key")
	r.fail(403, "Forbidden", origin, "allowedOrigins")
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("refused preflight: Allow-Origin %q, want none", got)
	}
	if got := anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, "x-user-key", u.Key); got.Status != 200 || got.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request from a refused origin: status %d, Allow-Origin %q; want 200 (the browser withholds it) and none", got.Status, got.Header.Get("Access-Control-Allow-Origin"))
	}
	// The server's own origin (its own pages) always may.
	if got := preflight(e.s.URL, e.base+"/messages", "POST", "content-type,x-user-key"); got.Status != http.StatusNoContent || got.Header.Get("Access-Control-Allow-Origin") != e.s.URL {
		t.Errorf("preflight from the server's own origin: status %d, Allow-Origin %q", got.Status, got.Header.Get("Access-Control-Allow-Origin"))
	}
	// An unknown webhook: 404, no allow headers.
	if got := preflight(origin, strings.TrimSuffix(e.base, e.webhookID)+"nope/messages", "POST", ""); got.Status != 404 || got.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight for an unknown webhook: status %d, Allow-Origin %q; want 404 and none", got.Status, got.Header.Get("Access-Control-Allow-Origin"))
	}

	setOrigins(e.admin, e.botID, origin, "https://*.shop.example")
	for _, tc := range []struct{ path, method, headers string }{
		{e.base + "/messages", "POST", "content-type,x-user-key"},
		{e.base + "/users/me", "GET", "x-user-key"},
		{e.base + "/conversations/c1/listen", "GET", "accept,cache-control,x-user-key"},
		{e.base + "/hello/", "GET", ""},
	} {
		r := preflight(origin, tc.path, tc.method, tc.headers)
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
	// Actual requests, successes and errors alike, carry the CORS headers;
	// so does a subdomain of the wildcard, and not its parent or another
	// scheme.
	for _, r := range []*response{
		anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, "x-user-key", u.Key),
		anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, "x-user-key", "bad"),
		anon.raw(http.MethodGet, e.base+"/hello/", nil, "Origin", origin),
	} {
		if r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("%s (status %d): CORS headers %v", r.what, r.Status, r.Header)
		}
	}
	// The origin is echoed with credentials because the official chat client
	// sends its requests with credentials in a browser; no ambient credential
	// (a cookie, HTTP authentication, an owner's token) identifies a chat
	// user, so a page that borrows a visitor's browser learns nothing.
	for _, hdr := range [][]string{
		{"Cookie", "session=1"},
		{"Authorization", "Basic dXNlcjpwYXNz"},
		{"Authorization", "Bearer " + e.s.Boot.Token},
	} {
		r := anon.raw(http.MethodGet, e.base+"/users/me", nil, "Origin", origin, hdr[0], hdr[1])
		r.fail(401, "Unauthorized", "user key")
		if r.Header.Get("Set-Cookie") != "" {
			t.Errorf("the Chat API set a cookie: %q", r.Header.Get("Set-Cookie"))
		}
	}
	for o, want := range map[string]bool{"https://eu.shop.example": true, "https://shop.example": false, "http://eu.shop.example": false,
		"https://app.example.com:8443": false, "null": false} {
		got := anon.raw(http.MethodGet, e.base+"/hello/", nil, "Origin", o).Header.Get("Access-Control-Allow-Origin")
		if (got == o) != want || (got != "" && got != o) {
			t.Errorf("origin %s: Allow-Origin %q; allowed should be %v", o, got, want)
		}
	}
	// The signal stream, cross-origin.
	conv := e.conversation(u, "cors-room")
	req, _ := http.NewRequest(http.MethodGet, e.s.URL+e.base+"/conversations/"+conv+"/listen", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("x-user-key", u.Key)
	res, err := e.s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != origin || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("cross-origin listen: status %d, Allow-Origin %q, Content-Type %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"), res.Header.Get("Content-Type"))
	}
	// "*" allows any origin, still echoed (credentials rule out *).
	setOrigins(e.admin, e.botID, "*")
	if got := preflight("https://anywhere.example", e.base+"/messages", "POST", "content-type").Header.Get("Access-Control-Allow-Origin"); got != "https://anywhere.example" {
		t.Errorf("with *: Allow-Origin %q, want the origin echoed", got)
	}
	// Without an Origin, no CORS headers.
	if r := e.call(http.MethodGet, "/users/me", u.Key, nil); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request without Origin got Allow-Origin %q", r.Header.Get("Access-Control-Allow-Origin"))
	}
}
