package main

// End-to-end tests of the limits on what users send: JSON nesting on every
// surface, NUL characters, text that is not Unicode, Content-Type, and
// signal streams.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestInputLimits(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"nesting_files", testNestingFiles},
		{"nesting_chat", testNestingChat},
		{"nesting_admin", testNestingAdmin},
		{"nesting_bot_code", testNestingBotCode},
		{"content_type", testContentType},
		{"nul_refused", testNULRefused},
		{"nul_stored", testNULStored},
		{"nul_bot_logs", testNULBotLogs},
		{"invalid_unicode", testInvalidUnicode},
	}, runtimeFlags...)
}

// deepJSON is {"a":{"a":…1…}} with n objects.
func deepJSON(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// deepBody is body (JSON) with `"field": <deepJSON(5000)>` added.
func deepBody(body, field string) string {
	sep := ","
	if body == "{}" {
		sep = ""
	}
	return strings.TrimSuffix(body, "}") + sep + `"` + field + `":` + deepJSON(5000) + "}"
}

func testNestingFiles(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "nesting files")
	e.f.upsert(map[string]any{"key": "shallow.txt", "size": 1, "metadata": map[string]any{"a": map[string]any{"b": 1}}}).file()
	for _, tc := range []struct{ name, body, field string }{
		{"metadata", deepBody(`{"key":"deep.txt","size":1}`, "metadata"), "metadata.a.a.a"},
		{"tags", `{"key":"deep.txt","size":1,"tags":{"k":` + deepJSON(5000) + `}}`, "tags.k.a.a"},
		{"indexing", deepBody(`{"key":"deep.txt","size":1}`, "indexing"), "indexing.a.a"},
	} {
		e.f.do(http.MethodPut, "/v1/files", tc.body).fail(400, "InvalidPayload", tc.field, "nested deeper than 64 levels")
	}
	// One level under the limit passes the scan (and meets the schema).
	under := `{"key":"deep.txt","size":1,"metadata":` + deepJSON(62) + `}`
	f := e.f.do(http.MethodPut, "/v1/files", under).file()
	e.f.do(http.MethodPut, "/v1/files/"+f.ID, deepBody("{}", "metadata")).fail(400, "InvalidPayload", "metadata.a.a", "nested deeper")
	e.f.do(http.MethodPut, "/v1/files/"+f.ID, `{"metadata":`+deepJSON(64)+`}`).fail(400, "InvalidPayload", "metadata.a.a", "nested deeper")
	// A tag filter in JSON form is refused the same way.
	e.f.do(http.MethodGet, "/v1/files?tags="+url.QueryEscape(`{"k":`+deepJSON(5000)+`}`), nil).fail(400, "InvalidQuery", "tags")
	if got := e.f.list("").Files; len(got) != 2 {
		t.Fatalf("%d files after refused upserts, want 2", len(got))
	}
}

func testNestingChat(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	u := e.user("nesting-user")
	c := e.conversation(u, "")
	for _, tc := range []struct{ path, body, field string }{
		{"/messages", `{"conversationId":"` + c + `","payload":{"type":"text","text":"x","deep":` + deepJSON(5000) + `}}`, "payload.deep.a.a"},
		{"/messages", `{"conversationId":"` + c + `","payload":{"type":"text","text":"x"},"metadata":` + deepJSON(5000) + `}`, "metadata.a.a"},
		{"/events", `{"conversationId":"` + c + `","payload":` + deepJSON(5000) + `}`, "payload.a.a"},
		{"/users/get-or-create", `{"name":"n","x":` + deepJSON(5000) + `}`, "x.a.a"},
	} {
		e.call(http.MethodPost, tc.path, u.Key, tc.body).fail(400, "InvalidPayload", tc.field, "nested deeper than 64 levels")
	}
	if ms := e.messages(u, c); len(ms) != 0 {
		t.Fatalf("refused messages were stored: %v", ms)
	}
}

func testNestingAdmin(t *testing.T, s *testServer) {
	ws := s.newWorkspace(t, "nesting admin")
	states := `{"name":"b","states":{"s":{"type":"bot","schema":` + deepJSON(5000) + `}}}`
	ws.post("/v1/admin/bots", states).fail(400, "InvalidPayload", "states.s.schema.a.a", "nested deeper than 64 levels")
	ws.post("/v1/admin/bots", `{"name":"b","configuration":{"data":`+deepJSON(5000)+`}}`).fail(400, "InvalidPayload", "configuration.data.a.a")
	bot := str(t, ws.createBot(map[string]any{"name": "nesting"}), "id")
	ws.put("/v1/admin/bots/"+bot, `{"configuration":{"data":`+deepJSON(5000)+`}}`).fail(400, "InvalidPayload", "configuration.data.a.a")
	ws.put("/v1/admin/bots/"+bot, `{"recurringEvents":{"r":{"schedule":{"cron":"* * * * *"},"type":"t","payload":`+deepJSON(5000)+`}}}`).
		fail(400, "InvalidPayload", "recurringEvents.r.payload.a.a")
	ws.post("/v1/admin/workspaces", `{"name":"w","x":`+deepJSON(5000)+`}`).fail(400, "InvalidPayload", "x.a.a")
	// The Runtime API's action input.
	ws.raw(http.MethodPost, "/v1/chat/actions", `{"type":"t","input":`+deepJSON(5000)+`}`, "x-bot-id", bot).
		fail(400, "InvalidPayload", "input.a.a", "nested deeper than 64 levels")
}

// nestingJS sends a message whose payload bot code nested too deeply and
// reports what the client threw.
const nestingJS = `bot.on.message('*', async ({ message, client, logger }) => {
  let deep = 1
  for (let i = 0; i < 100; i++) deep = { a: deep }
  try {
    await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'x', deep } })
    logger.info('sent')
  } catch (e) {
    logger.info('refused ' + e.message)
  }
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'done' } })
})
`

func testNestingBotCode(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, nestingJS, nil)
	u := e.user("nesting-bot-user")
	c := e.conversation(u, "")
	e.askWant(u, c, "go", "done")
	e.waitLog("", "refused", "args.payload.deep.a.a", "nested deeper than 64 levels")
}

// testContentType: JSON routes answer 415 to a body announced as something
// else (curl -d sends a form type), and read a body without a type as JSON.
func testContentType(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "content type")
	body := `{"key":"typed.txt","size":1}`
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "not a type"} {
		e.f.with("Content-Type", ct).do(http.MethodPut, "/v1/files", body).fail(415, "UnsupportedMediaType", "Content-Type", "application/json")
	}
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
		e.f.with("Content-Type", ct).do(http.MethodPut, "/v1/files", body).file()
	}
	ch := newChatEnv(t, s)
	u := ch.user("typed-user")
	c := ch.conversation(u, "")
	ch.s.as(t, "", "").raw(http.MethodPost, ch.base+"/messages", `{"conversationId":"`+c+`","payload":{"type":"text","text":"x"}}`,
		"x-user-key", u.Key, "Content-Type", "text/plain;charset=UTF-8").fail(415, "UnsupportedMediaType")
	e.ws.raw(http.MethodPost, "/v1/admin/bots", `{"name":"b"}`, "Content-Type", "application/x-www-form-urlencoded").fail(415, "UnsupportedMediaType")
	// A bodiless request's type does not matter.
	e.ws.raw(http.MethodDelete, "/v1/admin/bots/"+e.bot, "", "Content-Type", "text/plain").ok()
}

// streamHangGuard bounds waits that only a hang would exceed.
const streamHangGuard = 2 * time.Minute

func TestChatStreamLimits(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"per_user_and_conversation", testStreamLimits},
		{"stalled_listener", testStalledListener},
	}, "--streams-per-user", "3", "--streams-per-conversation", "5", "--sse-write-timeout", "500ms")
}

// refusedStream requires a 429 RateLimited with Retry-After naming why.
func refusedStream(t *testing.T, r *response, why string) {
	t.Helper()
	if r == nil {
		t.Fatalf("the stream opened, want 429 (%s)", why)
	}
	r.fail(429, "RateLimited", why, "open streams")
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s <= 0 {
		t.Errorf("Retry-After %q, want a number of seconds", r.Header.Get("Retry-After"))
	}
}

// openWhenFree opens a stream once a slot is free: the server frees a
// closed stream's slot when it notices the disconnection.
func (e *chatEnv) openWhenFree(key, path string) *sseStream {
	e.t.Helper()
	deadline := time.Now().Add(streamHangGuard)
	for {
		st, refused := e.tryListen(key, path)
		if refused == nil {
			return st
		}
		if refused.Status != 429 || time.Now().After(deadline) {
			e.t.Fatalf("GET %s: status %d after %s; body: %s", path, refused.Status, streamHangGuard, refused.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testStreamLimits(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	u := e.user("streams-user")
	c1, c2 := e.conversation(u, ""), e.conversation(u, "")
	path := func(c string) string { return "/conversations/" + c + "/listen" }
	// Three streams per user, whichever conversations.
	first := e.listenPath(u.Key, path(c1))
	e.listenPath(u.Key, path(c1))
	e.listenPath(u.Key, path(c2))
	_, refused := e.tryListen(u.Key, path(c2))
	refusedStream(t, refused, "this user already has 3")
	// Closing one frees its slot, and the new stream hears the conversation.
	first.close()
	st := e.openWhenFree(u.Key, path(c1))
	e.send(u, c1, "after")
	if m := st.skipTo(t, "message_created"); textOf(m) != "after" {
		t.Fatalf("the new stream got %v", m)
	}
	// Five streams per conversation, whichever users.
	others := make([]chatUser, 2)
	for i := range others {
		others[i] = e.user(fmt.Sprint("streams-other-", i))
		e.addParticipant(u, c1, others[i])
	}
	e.listenPath(others[0].Key, path(c1)) // c1: 3 (u: 2, others[0]: 1)
	e.listenPath(others[1].Key, path(c1))
	e.listenPath(others[1].Key, path(c1)) // c1: 5
	_, refused = e.tryListen(others[0].Key, path(c1))
	refusedStream(t, refused, "this conversation already has 5")
	// Other conversations are not affected by c1's count.
	e.listenPath(others[0].Key, path(e.conversation(others[0], "")))
}

// testStalledListener: a client that stops reading while signals keep
// coming is disconnected (its writes time out) and its slot is freed.
func testStalledListener(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	u := e.user("stalled-user")
	c := e.conversation(u, "")
	path := "/conversations/" + c + "/listen"
	e.listenPath(u.Key, path)
	e.listenPath(u.Key, path)
	// The third stream reads nothing, with a small receive buffer so that
	// a few megabytes of signals fill the connection.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nx-user-key: %s\r\n\r\n", e.base+path, u.Key)
	// Read the answer's head, byte by byte so as to read nothing more.
	_ = conn.SetReadDeadline(time.Now().Add(streamHangGuard))
	var head []byte
	for !strings.HasSuffix(string(head), "\r\n\r\n") {
		b := make([]byte, 1)
		if _, err := conn.Read(b); err != nil {
			t.Fatalf("reading the stream's head: %v (%q)", err, head)
		}
		head = append(head, b[0])
	}
	if !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		t.Fatalf("the stalled stream did not open: %q", head)
	}
	_, refused := e.tryListen(u.Key, path)
	refusedStream(t, refused, "this user already has 3")
	text := strings.Repeat("x", 600_000)
	for range 10 {
		e.send(u, c, text)
	}
	// The server gives up on the stalled stream: its slot frees up, and
	// the client, reading at last, finds the connection ended.
	e.openWhenFree(u.Key, path)
	_ = conn.SetReadDeadline(time.Now().Add(streamHangGuard))
	n, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the stalled stream is still open after %s (%d bytes read)", streamHangGuard, n)
	}
	if n >= 10*600_000 {
		t.Fatalf("the stalled stream received all %d bytes; it should have been cut", n)
	}
}

// nul is a NUL character as JSON escapes it.
const nul = `\u0000`

// testNULRefused: identifiers, names, keys, tags and filters holding NUL
// are refused on both databases (PostgreSQL text cannot hold it).
func testNULRefused(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "nul refused")
	e.f.do(http.MethodPut, "/v1/files", `{"key":"a`+nul+`b","size":1}`).fail(400, "InvalidPayload", "key: contains a NUL character")
	e.f.do(http.MethodPut, "/v1/files", `{"key":"k","size":1,"tags":{"t":"v`+nul+`"}}`).fail(400, "InvalidPayload", "tags.t: contains a NUL")
	e.f.do(http.MethodPut, "/v1/files", `{"key":"k","size":1,"tags":{"t`+nul+`":"v"}}`).fail(400, "InvalidPayload", `tags.t\u0000: contains a NUL`)
	e.f.do(http.MethodGet, "/v1/files?tags.t=%00", nil).fail(400, "InvalidQuery", "tags.t: contains a NUL")
	e.f.do(http.MethodGet, "/v1/files?tags="+url.QueryEscape(`{"t":"`+nul+`"}`), nil).fail(400, "InvalidQuery", "tags")
	e.f.do(http.MethodGet, "/v1/files/a%00b", nil).fail(400, "InvalidPayload", "path: contains a NUL")
	e.ws.post("/v1/admin/bots", `{"name":"b`+nul+`"}`).fail(400, "InvalidPayload", "name: contains a NUL")
	e.ws.post("/v1/admin/bots", `{"name":"b","tags":{"t":"`+nul+`"}}`).fail(400, "InvalidPayload", "tags.t: contains a NUL")
	e.ws.put("/v1/admin/bots/"+e.bot, `{"description":"`+nul+`"}`).fail(400, "InvalidPayload", "description: contains a NUL")
	ch := newChatEnv(t, s)
	ch.call(http.MethodPost, "/users", "", `{"name":"n`+nul+`"}`).fail(400, "InvalidPayload", "name: contains a NUL")
	u := ch.user("nul-user")
	ch.call(http.MethodPost, "/conversations/get-or-create", u.Key, `{"id":"c`+nul+`"}`).fail(400, "InvalidPayload", "id: contains a NUL")
	ch.call(http.MethodPut, "/users/me", u.Key, `{"name":"`+nul+`"}`).fail(400, "InvalidPayload", "name: contains a NUL")
}

// testNULStored: text inside JSON documents (payloads, metadata) keeps its
// NUL characters on both databases.
func testNULStored(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "nul stored")
	f := e.f.do(http.MethodPut, "/v1/files", `{"key":"k","size":1,"metadata":{"note":"a`+nul+`b"}}`).file()
	if got := field(t, e.f.get(f.ID).ok(), "file", "metadata", "note"); got != "a\x00b" {
		t.Fatalf("metadata.note %q, want a NUL b", got)
	}
	ch := newChatEnv(t, s)
	u := ch.user("nul-sender")
	c := ch.conversation(u, "")
	ch.send(u, c, "x\x00y")
	if ms := ch.messages(u, c); len(ms) != 1 || textOf(ms[0]) != "x\x00y" {
		t.Fatalf("messages %v, want the text with its NUL", ms)
	}
}

// testInvalidUnicode: text that is not Unicode (invalid UTF-8 bytes, a
// lone surrogate escape, which decoders would silently turn into U+FFFD)
// is refused naming the field on every surface, documents included, and
// nothing is stored; a surrogate pair is one character and is kept.
func testInvalidUnicode(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "invalid unicode")
	bots := func() int { return len(e.ws.get("/v1/admin/bots").ok()["bots"].([]any)) }
	before := bots()
	e.ws.post("/v1/admin/bots", "{\"name\":\"\xff\xfe\"}").fail(400, "InvalidPayload", "name: is not valid UTF-8")
	e.ws.post("/v1/admin/bots", `{"name":"b","tags":{"t":"\ud800"}}`).fail(400, "InvalidPayload", `tags.t: holds a lone UTF-16 surrogate (\ud800)`)
	e.ws.put("/v1/admin/bots/"+e.bot, "{\"configuration\":{\"data\":{\"a\":\"\xc3\"}}}").fail(400, "InvalidPayload", "configuration.data.a: is not valid UTF-8")
	if n := bots(); n != before {
		t.Fatalf("%d bots after refused createBot calls, want %d", n, before)
	}
	e.f.do(http.MethodPut, "/v1/files", `{"key":"a\udc00b","size":1}`).fail(400, "InvalidPayload", `key: holds a lone UTF-16 surrogate (\udc00)`)
	e.f.do(http.MethodPut, "/v1/files", "{\"key\":\"k\",\"size\":1,\"metadata\":{\"n\":\"\x80\"}}").fail(400, "InvalidPayload", "metadata.n: is not valid UTF-8")
	if files := e.f.listAll("", 10); len(files) != 0 {
		t.Fatalf("files after refused upserts: %v", files)
	}
	e.ws.raw(http.MethodPost, "/v1/chat/states/bot/"+e.bot+"/mode", `{"payload":{"mode":"\udfff"}}`, "x-bot-id", e.bot).
		fail(400, "InvalidPayload", `payload.mode: holds a lone UTF-16 surrogate`)
	e.ws.raw(http.MethodPost, "/v1/chat/users", "{\"tags\":{},\"name\":\"\xed\xa0\x80\"}", "x-bot-id", e.bot).
		fail(400, "InvalidPayload", "name: is not valid UTF-8")
	ch := newChatEnv(t, s)
	ch.call(http.MethodPost, "/users", "", "{\"pictureUrl\":\"\xed\xa0\x80\"}").fail(400, "InvalidPayload", "pictureUrl: is not valid UTF-8")
	u := ch.user("unicode-user")
	c := ch.conversation(u, "")
	ch.call(http.MethodPost, "/messages", u.Key, `{"conversationId":"`+c+`","payload":{"type":"text","text":"a\ud83db"}}`).
		fail(400, "InvalidPayload", `payload.text: holds a lone UTF-16 surrogate (\ud83d)`)
	if ms := ch.messages(u, c); len(ms) != 0 {
		t.Fatalf("messages after a refused one: %v", ms)
	}
	// A pair, escaped or as UTF-8, is a character like any other.
	got := str(t, ch.call(http.MethodPut, "/users/me", u.Key, `{"name":"\ud83d\ude00 😀"}`).status(200), "user", "name")
	if got != "😀 😀" {
		t.Fatalf("name %q, want two smileys", got)
	}
}

// nulLogJS logs what the user wrote and echoes it.
const nulLogJS = sayJS + `bot.on.message('*', async ({ message, client }) => {
  console.log('user said ' + message.payload.text)
  await say(client, message.conversationId, 'echo ' + message.payload.text)
})
`

// testNULBotLogs: a bot logging a user's NUL never blocks the
// conversation; the line is stored with NUL replaced by U+FFFD.
func testNULBotLogs(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, nulLogJS, nil)
	u := e.user("nul-logger")
	c := e.conversation(u, "")
	e.askWant(u, c, "a\x00b", "echo a\x00b")
	e.waitLog("", "user said a\uFFFDb")
	// The conversation goes on.
	e.askWant(u, c, "next", "echo next")
}

// askWant sends text and requires the bot's reply to be want.
func (e *chatEnv) askWant(u chatUser, conv, text, want string) {
	e.t.Helper()
	if got := textOf(e.ask(u, conv, text)); got != want {
		e.t.Fatalf("reply to %q: %q, want %q", text, got, want)
	}
}
