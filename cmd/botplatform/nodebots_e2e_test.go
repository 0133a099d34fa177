package main

// Bots deployed as Node bundles (what `bp build` emits), run by the Node bot
// host. The bundles here are written by hand in CommonJS with the SDK's
// handler signature; the compatibility suite deploys a real SDK bot with
// the real CLI.

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// bundleAPI is api(path, body), a bundle's POST to the Runtime API with
// the key and address the host gives it.
const bundleAPI = `
const api = (path, body) => fetch(process.env.BP_API_URL + path, { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': process.env.BP_BOT_ID, 'content-type': 'application/json' },
  body: JSON.stringify(body) }).then(async (r) => { if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + await r.text()); return r.json() })
`

// nodeEchoBundle answers messages through the Runtime API with fetch, as
// @botpress/client does, and logs the SDK's way (BP_LOG_FORMAT=json).
const nodeEchoBundle = bundleAPI + `
const log = (msg, options) => console.info(JSON.stringify({ msg, options }))
module.exports = { default: { handler: async (req) => {
  const op = req.headers['x-bp-operation']
  const body = JSON.parse(req.body || '{}')
  if (op === 'action_triggered') return { status: 200, body: JSON.stringify({ output: { secret: process.env.SECRET_COLOR, n: body.input.n * 3 } }) }
  if (req.headers['x-bp-type'] !== 'message_created') return
  const m = body.event.payload.message
  log('got ' + m.payload.text, { conversationId: m.conversationId, userId: m.userId })
  if (m.payload.text === 'crash') process.exit(7)
  if (m.payload.text === 'throw') throw new Error('the handler threw')
  await api('/v1/chat/messages', { conversationId: m.conversationId, userId: process.env.BP_BOT_ID, type: 'text', tags: {}, payload: { text: 'node: ' + m.payload.text } })
} } }
`

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: Node bundles cannot run here")
	}
}

func TestNodeBundleBots(t *testing.T) {
	t.Parallel()
	needNode(t)
	runScenarios(t, []scenario{
		{"a Node bundle answers users, logs with their ids, and survives a crash", testNodeBundleEcho},
		{"a Node bundle's actions see its secrets", testNodeBundleAction},
		{"a Node bundle's key is not derived from the signing secret", testNodeBundleKey},
		{"a Node bundle that does not load is refused at deploy", testNodeBundleRefused},
		{"tables declared at deploy are created, then migrated", testDeployTables},
	}, runtimeFlags...)
}

func testNodeBundleEcho(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	e.deploy(nodeEchoBundle, nil)
	u := e.createUser(nil)
	conv := e.conversation(u, "")
	if got := textOf(e.ask(u, conv, "hello")); got != "node: hello" {
		t.Fatalf("reply = %q", got)
	}
	line := e.waitLog("level=info", "got hello")
	if line.ConversationID != conv || line.UserID != u.ID {
		t.Fatalf("the bot's log line has conversation %q and user %q, want %q and %q", line.ConversationID, line.UserID, conv, u.ID)
	}
	e.waitLog("level=info", "delivered message", "(message_created) to node: 200 in")

	e.send(u, conv, "crash")
	e.waitLog("level=error", "delivering message", "failed", "status 7")
	e.send(u, conv, "throw")
	e.waitLog("level=error", "the handler threw")
	if got := textOf(e.ask(u, conv, "again")); got != "node: again" {
		t.Fatalf("reply after a crash = %q", got)
	}
}

func testNodeBundleAction(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	e.deploy(nodeEchoBundle, map[string]any{"secrets": map[string]any{"COLOR": "teal"}})
	out := e.callAction(e.admin, map[string]any{"type": "triple", "input": map[string]any{"n": 5}}).ok()
	if field(t, out, "output", "n") != 15.0 || field(t, out, "output", "secret") != "teal" {
		t.Fatalf("callAction = %v", out)
	}
	// The host's key is listed with the bot's keys.
	keys := e.admin.get("/v1/admin/bots/baks?botId=" + e.botID).ok()
	if !strings.Contains(fmt.Sprint(keys), "the bot host's key") {
		t.Fatalf("the bot's keys do not show the host's: %v", keys)
	}
}

func testNodeBundleKey(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	e.deploy(nodeEchoBundle, nil)
	u := e.createUser(nil)
	// The bundle answers with the key the host gave it: that key works.
	if got := textOf(e.ask(u, e.conversation(u, ""), "hello")); got != "node: hello" {
		t.Fatalf("reply = %q", got)
	}
	signing := str(t, e.admin.get("/v1/admin/bots/"+e.botID).ok(), "bot", "signingSecret")
	status, body := e.runtimeCall(legacyHostKey(signing, e.botID), "POST", "/v1/chat/states/bot/"+e.botID+"/taken", map[string]any{"payload": map[string]any{}})
	if status != 401 {
		t.Fatalf("setState with a key derived from the signing secret: %d %v, want 401", status, body)
	}
}

func testNodeBundleRefused(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	e.deploy(nodeEchoBundle, nil)
	for _, code := range []string{
		"module.exports = { default: { handler: async () => { } }\n", // syntax error
		"module.exports = {}\n", // no handler
		"throw new Error('broken at load'); module.exports = {}\n",
	} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"code": code}).fail(400, "InvalidPayload", "code")
	}
	u := e.createUser(nil)
	if got := textOf(e.ask(u, e.conversation(u, ""), "still")); got != "node: still" {
		t.Fatalf("after refused deploys the bot answers %q: a refused bundle replaced the one deployed before", got)
	}
	// A bundle that assigns a property of module.exports is a bundle too.
	code := strings.Replace(nodeEchoBundle, "module.exports = { default: { handler:", "module.exports.default = { handler:", 1)
	code = strings.TrimSuffix(strings.TrimSpace(code), "}") + "\n"
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"code": code}).ok()
	if got := textOf(e.ask(u, e.conversation(u, ""), "property")); got != "node: property" {
		t.Fatalf("a bundle assigning module.exports.default answers %q", got)
	}
}

func testDeployTables(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	schema := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, name := range props {
			p[name] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"tables": map[string]any{
		"notesTable": map[string]any{"schema": schema("note", "author")}}}).ok()
	key := e.botKey()
	status, _ := e.runtimeCall(key, "POST", "/v1/tables/notesTable/rows", map[string]any{"rows": []any{map[string]any{"note": "kept", "author": "ann"}}})
	if status/100 != 2 {
		t.Fatalf("createTableRows = %d", status)
	}
	// Redeployed without author and with a new column: author stays, rows and all.
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"tables": map[string]any{
		"notesTable": map[string]any{"schema": schema("note", "mood")}, "gone": nil}}).ok()
	_, table := e.runtimeCall(key, "GET", "/v1/tables/notesTable", nil)
	props := field(t, table, "table", "schema", "properties").(map[string]any)
	for _, col := range []string{"note", "author", "mood"} {
		if props[col] == nil {
			t.Fatalf("after the redeploy, column %q is missing: %v", col, props)
		}
	}
	_, rows := e.runtimeCall(key, "POST", "/v1/tables/notesTable/rows/find", map[string]any{})
	if !strings.Contains(fmt.Sprint(rows), "ann") {
		t.Fatalf("the row written before the redeploy is gone: %v", rows)
	}
	// A bad declaration is refused, naming the table.
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"tables": map[string]any{
		"notesTable": map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "number"}}}}}}).
		fail(400, "InvalidPayload", "tables.notesTable.schema")
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"tables": map[string]any{"bad": map[string]any{"nope": 1}}}).fail(400, "InvalidPayload", "tables.bad")
}
