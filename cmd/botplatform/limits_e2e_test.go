package main

// End-to-end tests of the limits on what users send: JSON nesting on every
// surface, NUL characters, Content-Type, and signal streams.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestInputLimits(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"nesting_files", testNestingFiles},
		{"nesting_chat", testNestingChat},
		{"nesting_admin", testNestingAdmin},
		{"nesting_bot_code", testNestingBotCode},
		{"content_type", testContentType},
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
	if got := textOf(e.ask(u, c, "go")); got != "done" {
		t.Fatalf("reply %q", got)
	}
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
