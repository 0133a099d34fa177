package main

// End-to-end tests of the bot runtime (docs/bot-code.md): bot code deployed
// through the Admin API runs for Chat API messages and events, recurring and
// scheduled events, and actions; the tests watch what it does over HTTP
// only (the Chat API, getBotLogs, the Runtime API). This file has the
// scenario table, echo, handlers and hooks, state, deploys, ordering,
// actions and the bot user; runtime_events, runtime_limits, runtime_client
// and runtime_recovery_e2e_test.go have the other topics.

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRuntime runs every bot runtime scenario against one real server per
// backend. Scenarios run in parallel, each with its own workspace and bots.
func TestRuntime(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"echo", testRuntimeEcho},
		{"event_message", testRuntimeEventMessage},
		{"event_previews", testRuntimeEventPreviews},
		{"event_custom", testRuntimeEventCustom},
		{"event_outgoing", testRuntimeEventOutgoing},
		{"event_recurring", testRuntimeEventRecurring},
		{"event_scheduled", testRuntimeEventScheduled},
		{"handlers_and_hooks", testRuntimeHandlersAndHooks},
		{"state", testRuntimeState},
		{"deadline", testRuntimeDeadline},
		{"top_level_loop", testRuntimeTopLevelLoop},
		{"failures_and_logs", testRuntimeFailuresAndLogs},
		{"log_caps", testRuntimeLogCaps},
		{"recursion", testRuntimeRecursion},
		{"client", testRuntimeClient},
		{"client_errors", testRuntimeClientErrors},
		{"deploy", testRuntimeDeploy},
		{"order_one_conversation", testRuntimeOrderOneConversation},
		{"order_many_conversations", testRuntimeOrderManyConversations},
		{"actions", testRuntimeActions},
		{"bot_user", testRuntimeBotUser},
	}, runtimeFlags...)
}

const echoJS = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})
`

func testRuntimeEcho(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, echoJS, nil)
	u := e.user("echo-user")
	c := e.conversation(u, "echo-conv")
	st := e.listenTo(u, c)
	payload := map[string]any{"type": "text", "text": "hello"}
	m := field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": payload}).status(201), "message").(map[string]any)

	mine := st.expect(t, "message_created")
	if mine["id"] != m["id"] || mine["isBot"] != false {
		t.Fatalf("first signal %v, want the user's message with isBot false", mine)
	}
	reply := st.expect(t, "message_created")
	wantKeys(t, reply, "the reply's message_created", "id", "createdAt", "payload", "userId", "conversationId", "isBot")
	if reply["isBot"] != true {
		t.Errorf("the reply's isBot = %v, want true", reply["isBot"])
	}
	if reply["userId"] != e.botID || !strings.HasPrefix(e.botID, "bot_") {
		t.Errorf("the reply's userId = %v, want the bot's id %s", reply["userId"], e.botID)
	}
	if reply["conversationId"] != c {
		t.Errorf("the reply's conversationId = %v, want %s", reply["conversationId"], c)
	}
	wantEqual(t, reply["payload"], payload, "the echoed payload")
	wantDate(t, reply["createdAt"], "reply createdAt")
	if at, q := msTime(t, reply["createdAt"]), msTime(t, m["createdAt"]); !at.After(q) {
		t.Errorf("the reply is dated %s, not after the message it answers (%s)", reply["createdAt"], m["createdAt"])
	}

	// listMessages shows the same reply, from the bot, after the message.
	ms := e.messages(u, c)
	if len(ms) != 2 || ms[0]["id"] != m["id"] {
		t.Fatalf("conversation %v, want the message then the reply", ms)
	}
	listed := map[string]any{}
	for k, v := range reply {
		if k != "isBot" {
			listed[k] = v
		}
	}
	wantEqual(t, ms[1], listed, "the reply in listMessages vs its signal")

	// Every payload type is echoed as is, each reply after its message.
	for _, p := range []map[string]any{
		{"type": "markdown", "markdown": "**hi**"},
		{"type": "image", "imageUrl": "https://example.com/a.png"},
		{"type": "choice", "text": "pick", "options": []any{map[string]any{"label": "A", "value": "a"}}},
	} {
		m := field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": p}).status(201), "message").(map[string]any)
		if got := st.expect(t, "message_created"); got["id"] != m["id"] {
			t.Fatalf("signal %v, want the user's message %v", got, m["id"])
		}
		r := st.expect(t, "message_created")
		if r["isBot"] != true || r["userId"] != e.botID {
			t.Fatalf("reply signal %v, want one from the bot", r)
		}
		wantEqual(t, r["payload"], p, "the echoed %s payload", p["type"])
		if !msTime(t, r["createdAt"]).After(msTime(t, m["createdAt"])) {
			t.Errorf("%s: reply dated %s, not after its message (%s)", p["type"], r["createdAt"], m["createdAt"])
		}
	}
}

const handlersJS = sayJS + `bot.hook.beforeIncomingEvent('message', ({ data }) => {
  if (data.payload.type === 'text' && data.payload.text === 'drop-me') return { stop: true }
})
bot.hook.beforeIncomingEvent('custom', ({ data }) => {
  if (data.payload.drop) return { stop: true }
  if (data.payload.rewrite) return { data: Object.assign({}, data, { payload: { rewritten: true } }) }
})
bot.hook.beforeOutgoingMessage('text', ({ data }) => {
  if (data.payload.text === 'secret') return { stop: true }
  if (data.payload.text.startsWith('sign:')) {
    return { data: Object.assign({}, data, { payload: Object.assign({}, data.payload, { text: data.payload.text + ' (signed)' }) }) }
  }
  if (data.payload.text.startsWith('shout:')) data.payload.text = data.payload.text.toUpperCase() // in place
})
bot.hook.beforeOutgoingMessage('image', ({ data }) => { data.payload.title = 'hooked' })
bot.on.message('text', async ({ message, client }) => {
  const t = message.payload.text
  if (t === 'secret') {
    const r = await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'secret' } })
    await say(client, message.conversationId, 'dropped:' + (r.message === undefined))
    return
  }
  if (t.startsWith('sign:') || t.startsWith('shout:')) {
    const r = await say(client, message.conversationId, t)
    await say(client, message.conversationId, 'returned:' + r.message.payload.text)
    return
  }
  await say(client, message.conversationId, 'text-handler:' + t)
})
bot.on.message('image', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'image', imageUrl: message.payload.imageUrl } })
})
bot.on.message(async ({ message, client }) => { await say(client, message.conversationId, 'star-handler:' + message.payload.type) })
bot.on.event('custom', async ({ event, client }) => { await say(client, event.conversationId, 'custom-handler:' + JSON.stringify(event.payload)) })
bot.on.event('*', async ({ event, client }) => { await say(client, event.conversationId, 'star-event:' + event.type) })
bot.on.event('other', async ({ event, client }) => { await say(client, event.conversationId, 'never') })
`

func testRuntimeHandlersAndHooks(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, handlersJS, nil)
	u := e.user("hooks-user")
	c := e.conversation(u, "hooks-conv")
	sendEvent := func(p map[string]any) {
		t.Helper()
		e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": p}).status(201)
	}
	n := 0
	expect := func(want ...string) {
		t.Helper()
		n += len(want)
		got := texts(e.waitReplies(u, c, n))
		if !reflect.DeepEqual(got[n-len(want):], want) {
			t.Fatalf("the bot's latest messages %q, want %q (all: %q)", got[n-len(want):], want, got)
		}
	}
	// Handlers by payload type, then '*', in the order registered.
	e.send(u, c, "hello")
	expect("text-handler:hello", "star-handler:text")
	e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{"type": "image", "imageUrl": "https://example.com/i.png"}}).status(201)
	expect("", "star-handler:image")
	img := e.fromBot(e.messages(u, c))[2]
	wantEqual(t, img["payload"], map[string]any{"type": "image", "imageUrl": "https://example.com/i.png", "title": "hooked"}, "an image changed in place by a hook")
	e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": map[string]any{"type": "markdown", "markdown": "m"}}).status(201)
	expect("star-handler:markdown")
	// Event handlers by type, then '*'.
	sendEvent(map[string]any{"x": 1})
	expect(`custom-handler:{"x":1}`, "star-event:custom")

	// beforeIncomingEvent: {stop: true} drops the event: no handler runs
	// (the next message's replies come right after the previous ones).
	e.send(u, c, "drop-me")
	sendEvent(map[string]any{"drop": true})
	e.send(u, c, "after")
	expect("text-handler:after", "star-handler:text")
	// {data} replaces the event.
	sendEvent(map[string]any{"rewrite": true})
	expect(`custom-handler:{"rewritten":true}`, "star-event:custom")

	// beforeOutgoingMessage: a replacement is what is stored (and what
	// createMessage returns); an in-place change too; {stop: true} stores
	// nothing and createMessage returns no message.
	e.send(u, c, "sign:me")
	expect("sign:me (signed)", "returned:sign:me (signed)", "star-handler:text")
	e.send(u, c, "shout:me")
	expect("SHOUT:ME", "returned:SHOUT:ME", "star-handler:text")
	e.send(u, c, "secret")
	expect("dropped:true", "star-handler:text")
	for _, m := range e.fromBot(e.messages(u, c)) {
		if textOf(m) == "secret" || textOf(m) == "never" {
			t.Fatalf("a dropped message or a handler of another type got through: %v", m)
		}
	}
}

const stateJS = sayJS + `bot.on.message('text', async ({ message, state, client }) => {
  state.conversation.count = (state.conversation.count || 0) + 1
  state.user.count = (state.user.count || 0) + 1
  state.bot.count = (state.bot.count || 0) + 1
  if (message.payload.text === 'big') state.conversation.big = 'x'.repeat(2000)
  await say(client, message.conversationId, 'c=' + state.conversation.count + ' u=' + state.user.count + ' b=' + state.bot.count)
  console.log('counted b=' + state.bot.count)
})
`

func testRuntimeState(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, stateJS, nil)
	a, b := e.user("state-a"), e.user("state-b")
	a1, a2, b1 := e.conversation(a, "state-a1"), e.conversation(a, "state-a2"), e.conversation(b, "state-b1")
	for _, step := range []struct {
		u    chatUser
		conv string
		want string
	}{
		{a, a1, "c=1 u=1 b=1"},
		{a, a1, "c=2 u=2 b=2"},
		{a, a1, "c=3 u=3 b=3"},
		{b, b1, "c=1 u=1 b=4"}, // another user: its own user state, the bot's shared
		{a, a2, "c=1 u=4 b=5"}, // another conversation of a: user state follows a
	} {
		if got := textOf(e.ask(step.u, step.conv, "count")); got != step.want {
			t.Fatalf("%s: reply %q, want %q", step.conv, got, step.want)
		}
		// The reply is sent before the event ends; its state is saved
		// with its logs when it ends. Events of other conversations run
		// in parallel: the next step waits for this one's state.
		e.waitLog("conversationId="+step.conv, "counted "+step.want[strings.LastIndex(step.want, "b="):])
	}
	// Past --bot-state-limit, the event fails and none of its state (the
	// user's and the bot's included) is saved. What it sent stays sent.
	big := e.send(a, a1, "big")
	if got := textOf(e.waitReplies(a, a1, 4)[3]); got != "c=4 u=5 b=6" {
		t.Fatalf("reply to big: %q", got)
	}
	l := e.waitLog("level=error&conversationId=state-a1", "failed")
	for _, want := range []string{"message " + big["id"].(string) + " failed", "event.state.conversation", fmt.Sprintf("limit is %d", runtimeStateLimit)} {
		if !strings.Contains(l.Message, want) {
			t.Errorf("state limit failure logged as %q, want it to mention %q", l.Message, want)
		}
	}
	if l.UserID != "state-a" {
		t.Errorf("the failure's log line has userId %q, want state-a", l.UserID)
	}
	if got := textOf(e.ask(a, a1, "count")); got != "c=4 u=5 b=6" {
		t.Fatalf("after the failed event: %q, want the state from before it (c=4 u=5 b=6)", got)
	}
	// Its state is saved when it ends, after its reply (the failed event
	// logged the same line).
	eventually(t, "the state of the event after the failure", func() bool {
		return len(e.logs("conversationId=state-a1&messageContains=counted+b%3D6")) == 2
	})
	if got := textOf(e.ask(b, b1, "count")); got != "c=2 u=2 b=7" {
		t.Fatalf("user b after the failed event: %q, want c=2 u=2 b=7", got)
	}
}

func testRuntimeDeploy(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "deploy")
	before := len(adm.listBots("").ids())
	// A syntax error is refused at deploy time, naming line and column.
	bad := "bot.on.message('*', async () => {\n  const x = ;\n})\n"
	adm.post("/v1/admin/bots", map[string]any{"name": "broken", "code": bad}).fail(400, "InvalidPayload", "code", "syntax error", "line 2, column 13")
	if n := len(adm.listBots("").ids()); n != before {
		t.Fatalf("a bot with a syntax error was created (%d bots, %d before)", n, before)
	}
	// createBot with code: the code runs from the first message.
	v1 := sayJS + "bot.on.message('text', async ({ message, client }) => { await say(client, message.conversationId, 'v1:' + message.payload.text) })\n"
	e := chatEnvOf(t, s, adm, adm.createBot(map[string]any{"name": "deployed", "code": v1}))
	u := e.user("deploy-user")
	c := e.conversation(u, "")
	if got := textOf(e.ask(u, c, "a")); got != "v1:a" {
		t.Fatalf("first code: %q", got)
	}
	path := "/v1/admin/bots/" + e.botID
	deployed := field(t, adm.get(path).ok(), "bot").(map[string]any)
	// A failed update leaves the code deployed before in place and running.
	adm.put(path, map[string]any{"code": "bot.on.message(() => {\n\n  return )\n})", "name": "renamed"}).fail(400, "InvalidPayload", "code", "line 3, column")
	wantEqual(t, field(t, adm.get(path).ok(), "bot"), deployed, "the bot after a refused update")
	if got := textOf(e.ask(u, c, "b")); got != "v1:b" {
		t.Fatalf("after a refused update: %q, want the previous code's answer", got)
	}
	// New code takes effect from the next event.
	e.deploy(strings.ReplaceAll(v1, "'v1:'", "'v2:'"), nil)
	if got := textOf(e.ask(u, c, "c")); got != "v2:c" {
		t.Fatalf("after updateBot: %q, want the new code's answer", got)
	}
	// Recurring events whose schedule or type is invalid are refused,
	// naming the field; nothing changes.
	adm.put(path, map[string]any{"recurringEvents": map[string]any{"nightly": map[string]any{"type": "cleanup", "payload": map[string]any{}, "schedule": map[string]any{"cron": "not a cron"}}}}).
		fail(400, "InvalidPayload", "recurringEvents.nightly.schedule.cron")
	adm.put(path, map[string]any{"recurringEvents": map[string]any{"nightly": map[string]any{"type": "cleanup", "payload": map[string]any{}, "schedule": map[string]any{"cron": "61 * * * *"}}}}).
		fail(400, "InvalidPayload", "recurringEvents.nightly.schedule.cron")
	adm.put(path, map[string]any{"recurringEvents": map[string]any{"nightly": map[string]any{"type": "", "payload": map[string]any{}, "schedule": map[string]any{"cron": "0 3 * * *"}}}}).
		fail(400, "InvalidPayload", "recurringEvents.nightly.type")
	adm.post("/v1/admin/bots", map[string]any{"name": "bad cron", "recurringEvents": map[string]any{"r": map[string]any{"type": "x", "payload": map[string]any{}, "schedule": map[string]any{"cron": "@sometimes"}}}}).
		fail(400, "InvalidPayload", "recurringEvents.r.schedule.cron")
	if re := field(t, adm.get(path).ok(), "bot").(map[string]any)["recurringEvents"]; re != nil && !reflect.DeepEqual(re, map[string]any{}) {
		t.Errorf("refused recurring events were stored: %v", re)
	}
	adm.put(path, map[string]any{"recurringEvents": map[string]any{"nightly": map[string]any{"type": "cleanup", "payload": map[string]any{"keepDays": 30}, "schedule": map[string]any{"cron": "0 3 * * *"}}}}).ok()
	if got := textOf(e.ask(u, c, "d")); got != "v2:d" {
		t.Fatalf("after adding a recurring event: %q", got)
	}
}

// orderJS answers "<how many messages this conversation had>:<text>",
// after 20 ms of work, so that messages queue up while one is handled.
const orderJS = sayJS + `bot.on.message('text', async ({ message, state, client }) => {
  state.conversation.n = (state.conversation.n || 0) + 1
  const end = Date.now() + 20
  while (Date.now() < end) {}
  await say(client, message.conversationId, state.conversation.n + ':' + message.payload.text)
})
`

func testRuntimeOrderOneConversation(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, orderJS, unlimited)
	u := e.user("order-user")
	c := e.conversation(u, "")
	const n = 20
	var sent []map[string]any
	for i := range n {
		sent = append(sent, e.send(u, c, fmt.Sprintf("m%02d", i)))
	}
	replies := e.waitReplies(u, c, n)
	for i, r := range replies {
		if textOf(r) != fmt.Sprintf("%d:m%02d", i+1, i) {
			t.Fatalf("replies %q, want 1:m00, 2:m01 … %d:m%02d: one at a time, in order", texts(replies), n, n-1)
		}
		if !msTime(t, r["createdAt"]).After(msTime(t, sent[i]["createdAt"])) {
			t.Errorf("reply %d dated %s, not after its message (%s)", i, r["createdAt"], sent[i]["createdAt"])
		}
		if i > 0 && msTime(t, r["createdAt"]).Before(msTime(t, replies[i-1]["createdAt"])) {
			t.Errorf("reply %d dated before reply %d", i, i-1)
		}
	}
}

func testRuntimeOrderManyConversations(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, orderJS, unlimited)
	const convs, each = 50, 4
	u := e.user("many-user")
	ids := make([]string, convs)
	for i := range ids {
		ids[i] = e.conversation(u, fmt.Sprintf("many-%02d", i))
	}
	errs := make(chan error, convs)
	var wg sync.WaitGroup
	for _, c := range ids {
		wg.Go(func() {
			for j := range each {
				if err := e.trySend(u, c, fmt.Sprintf("%s/%d", c, j)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, c := range ids {
		got := texts(e.waitReplies(u, c, each))
		var want []string
		for j := range each {
			want = append(want, fmt.Sprintf("%d:%s/%d", j+1, c, j))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: replies %q, want %q; the bot's error logs: %v", c, got, want, e.logs("level=error"))
		}
	}
}

const actionsJS = sayJS + `bot.action('add', async ({ type, input, ctx, client, logger }) => {
  logger.info('adding', input)
  return { sum: input.a + input.b, type, botId: ctx.botId, hasClient: typeof client.createMessage === 'function' }
})
bot.action('empty', () => undefined)
bot.action('boom', () => { throw new Error('action exploded') })
bot.action('spin', () => { while (true) {} })
bot.action('number', () => 42)
bot.on.message('text', async ({ message, client }) => {
  const { output } = await client.callAction({ type: 'add', input: { a: 2, b: 3 } })
  let err = ''
  try { await client.callAction({ type: 'boom', input: {} }) } catch (e) { err = e.message }
  await say(client, message.conversationId, 'sum=' + output.sum + ' err=' + err)
})
`

func testRuntimeActions(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, actionsJS, map[string]any{"maxExecutionTime": 1})
	own := e.admin
	r := e.callAction(own, map[string]any{"type": "add", "input": map[string]any{"a": 1, "b": 2}}).ok()
	wantEqual(t, r, map[string]any{"output": map[string]any{"sum": 3, "type": "add", "botId": e.botID, "hasClient": true}, "meta": map[string]any{"cached": false}}, "callAction add")
	e.waitLog("", `adding {"a":1,"b":2}`)
	wantEqual(t, e.callAction(own, map[string]any{"type": "empty"}).ok(), map[string]any{"output": map[string]any{}, "meta": map[string]any{"cached": false}}, "an action returning nothing")

	e.callAction(own, map[string]any{"type": "nope", "input": map[string]any{}}).fail(404, "ResourceNotFound", "nope")
	e.callAction(own, map[string]any{"type": "boom", "input": map[string]any{}}).fail(400, "Runtime", "action exploded", "bot.js:")
	e.callAction(own, map[string]any{"type": "number"}).fail(400, "Runtime", "must return an object")
	start := time.Now()
	e.callAction(own, map[string]any{"type": "spin"}).fail(504, "OperationTimeout", "stopped after 1s")
	if d := time.Since(start); d < time.Second {
		t.Errorf("a looping action answered after %s, before its 1s deadline", d)
	}
	e.waitLog("level=error", "action boom failed", "action exploded")
	e.waitLog("level=error", "action spin failed", "stopped after 1s")
	// The action still works after a VM was stopped.
	e.callAction(own, map[string]any{"type": "add", "input": map[string]any{"a": 5, "b": 5}}).ok()

	// Bad requests.
	e.callAction(own, map[string]any{"input": map[string]any{}}).fail(400, "InvalidPayload", "type")
	e.callAction(own, map[string]any{"type": "add", "input": "x"}).fail(400, "InvalidPayload", "input")
	own.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "add"}).fail(400, "InvalidPayload", "x-bot-id")
	own.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "add"}, "x-bot-id", "bot_nope").fail(404, "ResourceNotFound")
	s.as(t, "", "").raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "add"}, "x-bot-id", e.botID).fail(401, "Unauthorized")

	// Roles: a viewer may not call actions; a developer and a bot API key may.
	viewer, _ := own.addMember("viewer")
	e.callAction(viewer, map[string]any{"type": "add", "input": map[string]any{"a": 1, "b": 1}}).fail(403, "Forbidden")
	dev, _ := own.addMember("developer")
	if out := e.callAction(dev, map[string]any{"type": "add", "input": map[string]any{"a": 1, "b": 1}}).ok(); field(t, out, "output", "sum") != 2.0 {
		t.Errorf("developer's callAction: %v", out)
	}
	key := str(t, own.post("/v1/admin/bots/baks", map[string]any{"botId": e.botID}).ok(), "value")
	if out := e.callAction(s.as(t, key, ""), map[string]any{"type": "add", "input": map[string]any{"a": 2, "b": 2}}).ok(); field(t, out, "output", "sum") != 4.0 {
		t.Errorf("bot API key's callAction: %v", out)
	}
	// A bot without code has no actions.
	plain := str(t, own.createBot(map[string]any{"name": "no code"}), "id")
	own.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "add"}, "x-bot-id", plain).fail(404, "ResourceNotFound")

	// client.callAction from a handler.
	u := e.user("actions-user")
	c := e.conversation(u, "")
	if got := textOf(e.ask(u, c, "go")); got != "sum=5 err=action exploded" {
		t.Errorf("callAction from a handler: %q", got)
	}
}

func testRuntimeBotUser(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, echoJS, nil)
	// User ids starting with bot_ are the bots'.
	for _, id := range []string{"bot_something", e.botID} {
		e.call(http.MethodPost, "/users", "", map[string]any{"id": id}).fail(400, "InvalidPayload", "id")
		e.call(http.MethodPost, "/users/get-or-create", e.selfKey(id), map[string]any{}).fail(400, "InvalidPayload", "id")
	}
	u := e.user("human")
	c := e.conversation(u, "")
	if r := e.ask(u, c, "hi"); r["userId"] != e.botID {
		t.Fatalf("reply from %v", r["userId"])
	}
	// Now that the bot's user exists, a key naming it does not authenticate.
	e.call(http.MethodGet, "/users/me", e.selfKey(e.botID), nil).fail(401, "Unauthorized")
	e.call(http.MethodPost, "/users/get-or-create", e.selfKey(e.botID), map[string]any{}).fail(401, "Unauthorized")
	e.call(http.MethodPost, "/users", "", map[string]any{"id": e.botID}).fail(400, "InvalidPayload", "id")
	// The user reads the bot's reply like any message of the conversation.
	rid := e.fromBot(e.messages(u, c))[0]["id"].(string)
	if got := field(t, e.call(http.MethodGet, "/messages/"+rid, u.Key, nil).ok(), "message", "userId"); got != e.botID {
		t.Errorf("getMessage of the reply: userId %v", got)
	}
}
