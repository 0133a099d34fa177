package main

// End-to-end tests of the bot runtime (docs/bot-code.md): bot code deployed
// through the Admin API runs for Chat API messages and events, recurring and
// scheduled events, and actions; the tests watch what it does over HTTP
// only (the Chat API, getBotLogs, the Runtime API).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
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

// dumpJS makes the code report what a handler receives: the event and the
// other arguments, as JSON.
const dumpJS = sayJS + `const dump = (args) => JSON.stringify({
  event: args.event, message: args.message, conversation: args.conversation, ctx: args.ctx,
  keys: Object.keys(args).filter((k) => args[k] !== undefined).sort(), stateIsEventState: args.state === args.event.state,
  hasClient: typeof args.client.createMessage === 'function', hasLogger: typeof args.logger.info === 'function',
})
bot.on.message('*', async (args) => {
  const { message, client } = args
  const text = message.payload.type === 'text' ? message.payload.text : ''
  if (text === 'schedule') {
    const r = await client.scheduleEvent({ type: 'later', payload: { k: 'v' }, conversationId: message.conversationId, userId: message.userId, delay: 100 })
    const solo = await client.scheduleEvent({ type: 'solo', payload: { alone: true }, delay: 0 })
    const at = new Date(Date.now() + 150).toISOString()
    const dated = await client.scheduleEvent({ type: 'dated', conversationId: message.conversationId, dateTime: at })
    await say(client, message.conversationId, JSON.stringify({ r, solo, at, dated }))
    return
  }
  if (text === 'outgoing') {
    await say(client, message.conversationId, 'outgoing-reply')
    return
  }
  await say(client, message.conversationId, dump(args))
})
bot.on.event('custom', async (args) => { await say(args.client, args.event.conversationId, dump(args)) })
bot.on.event('later', async (args) => { await say(args.client, args.event.conversationId, dump(args)) })
bot.on.event('solo', async (args) => { args.logger.info('solo ' + dump(args)) })
bot.on.event('dated', async (args) => { args.logger.info('dated ' + dump(args)) })
bot.on.event('tick', async (args) => { args.logger.info('tick ' + dump(args)) })
bot.hook.beforeOutgoingMessage('*', ({ data, event, logger }) => {
  if (data.payload.text === 'outgoing-reply') logger.info('outgoing ' + JSON.stringify({ data, event }))
})
`

var dumpConfig = map[string]any{
	"configuration": map[string]any{"data": map[string]any{"greeting": "hi", "n": 3}},
	"secrets":       map[string]any{"API_KEY": "s3cret"},
}

// emptyState and emptyTags are what a first event carries.
var (
	emptyState = map[string]any{"bot": map[string]any{}, "user": map[string]any{}, "conversation": map[string]any{}}
	emptyTags  = map[string]any{"conversation": map[string]any{}, "message": map[string]any{}, "user": map[string]any{}}
)

// checkDump checks what dumpJS reported for a handler and returns the event.
func checkDump(t *testing.T, e *chatEnv, text string, what string) map[string]any {
	t.Helper()
	d := decodeJSON(t, text)
	keys := []string{"client", "conversation", "ctx", "event", "logger", "message", "state"}
	if ev, _ := d["event"].(map[string]any); ev["type"] != "message" {
		keys = []string{"client", "conversation", "ctx", "event", "logger", "state"} // no message
	}
	wantEqual(t, d["keys"], keys, "%s: the handler's argument", what)
	if d["stateIsEventState"] != true || d["hasClient"] != true || d["hasLogger"] != true {
		t.Errorf("%s: state is event.state: %v, client: %v, logger: %v", what, d["stateIsEventState"], d["hasClient"], d["hasLogger"])
	}
	wantEqual(t, d["ctx"], map[string]any{"botId": e.botID, "workspaceId": e.admin.ws,
		"configuration": map[string]any{"greeting": "hi", "n": 3}, "secrets": map[string]any{"API_KEY": "s3cret"}}, "%s: ctx", what)
	if _, ok := d["event"].(map[string]any); !ok {
		t.Fatalf("%s: no event in %s", what, text)
	}
	return d
}

// (a) An incoming text message, from a user and in a conversation with
// foreign ids.
func testRuntimeEventMessage(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, dumpConfig)
	u := e.user("ev-user-fid")
	c := e.conversation(u, "ev-conv-fid")
	m := e.send(u, c, "hello event")
	reply := e.waitReplies(u, c, 1)[0]
	d := checkDump(t, e, textOf(reply), "message")
	wantEqual(t, d["event"], map[string]any{
		"botId": e.botID, "conversationId": "ev-conv-fid", "createdOn": m["createdAt"], "direction": "incoming",
		"id": m["id"], "integration": "chat", "messageId": m["id"], "payload": map[string]any{"type": "text", "text": "hello event"},
		"preview": "hello event", "state": emptyState, "tags": emptyTags, "type": "message", "userId": "ev-user-fid",
	}, "the event of an incoming text message")
	ev := d["event"].(map[string]any)
	if id, _ := ev["id"].(string); !strings.HasPrefix(id, "msg_") {
		t.Errorf("event.id %q, want the message's msg_ id", id)
	}
	wantEqual(t, d["message"], m, "the handler's message vs the createMessage response")
	conv := field(t, e.call(http.MethodGet, "/conversations/"+c, u.Key, nil).ok(), "conversation")
	wantEqual(t, d["conversation"], conv, "the handler's conversation vs getConversation")
}

// (b) The preview of the other message types.
func testRuntimeEventPreviews(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, dumpConfig)
	u := e.user("preview-user")
	c := e.conversation(u, "")
	type obj = map[string]any
	type arr = []any
	for i, tc := range []struct {
		payload obj
		preview string
	}{
		{obj{"type": "image", "imageUrl": "https://example.com/cat.png"}, "[image] https://example.com/cat.png"},
		{obj{"type": "markdown", "markdown": "*bold*"}, "*bold*"},
		{obj{"type": "bloc", "items": arr{
			obj{"type": "text", "text": "first"},
			obj{"type": "image", "imageUrl": "https://example.com/b.png"},
			obj{"type": "location", "latitude": 1.5, "longitude": 2},
		}}, "first\n[image] https://example.com/b.png\n[location] 1.5, 2"},
		{obj{"type": "card", "title": "T", "subtitle": "S", "actions": arr{
			obj{"action": "url", "label": "Open", "value": "https://example.com"}, obj{"action": "postback", "label": "Go", "value": "go"},
		}}, "[card] T — S [Open | Go]"},
		{obj{"type": "choice", "text": "Pick", "options": arr{obj{"label": "A", "value": "a"}, obj{"label": "B", "value": "b"}}}, "Pick\n- A\n- B"},
	} {
		m := field(t, e.call(http.MethodPost, "/messages", u.Key, obj{"conversationId": c, "payload": tc.payload}).status(201), "message").(map[string]any)
		reply := e.waitReplies(u, c, i+1)[i]
		ev := checkDump(t, e, textOf(reply), tc.payload["type"].(string))["event"].(map[string]any)
		if ev["preview"] != tc.preview {
			t.Errorf("%s: preview %q, want %q", tc.payload["type"], ev["preview"], tc.preview)
		}
		wantEqual(t, ev["payload"], tc.payload, "%s: event.payload", tc.payload["type"])
		if ev["type"] != "message" || ev["messageId"] != m["id"] || ev["id"] != m["id"] {
			t.Errorf("%s: event type %v id %v messageId %v, want message %v", tc.payload["type"], ev["type"], ev["id"], ev["messageId"], m["id"])
		}
	}
}

// (c) A custom event sent with the Chat API's createEvent.
func testRuntimeEventCustom(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, dumpConfig)
	u := e.user("custom-user")
	c := e.conversation(u, "custom-conv")
	payload := map[string]any{"kind": "typing", "n": 2}
	ev := field(t, e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": c, "payload": payload}).status(201), "event").(map[string]any)
	d := checkDump(t, e, textOf(e.waitReplies(u, c, 1)[0]), "custom event")
	got := d["event"].(map[string]any)
	preview, _ := got["preview"].(string)
	wantEqual(t, decodeJSON(t, preview), payload, "a custom event's preview (its JSON)")
	wantEqual(t, got, map[string]any{
		"botId": e.botID, "conversationId": c, "createdOn": ev["createdAt"], "direction": "incoming", "id": ev["id"],
		"integration": "chat", "payload": payload, "preview": preview, "state": emptyState, "tags": emptyTags,
		"type": "custom", "userId": "custom-user",
	}, "the event of a Chat API custom event")
	if _, ok := d["message"]; ok {
		t.Errorf("a custom event's handler got a message: %v", d["message"])
	}
	conv := field(t, e.call(http.MethodGet, "/conversations/"+c, u.Key, nil).ok(), "conversation")
	wantEqual(t, d["conversation"], conv, "a custom event's conversation")
}

// (d) The outgoing event beforeOutgoingMessage sees.
func testRuntimeEventOutgoing(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, dumpConfig)
	u := e.user("out-user")
	c := e.conversation(u, "out-conv")
	reply := e.ask(u, c, "outgoing")
	l := e.waitLog("", "outgoing {")
	if l.Level != "info" || l.ConversationID != c || l.UserID != "out-user" {
		t.Errorf("hook log line %+v, want info with the conversation and user", l)
	}
	d := decodeJSON(t, strings.TrimPrefix(l.Message, "outgoing "))
	payload := map[string]any{"type": "text", "text": "outgoing-reply"}
	wantEqual(t, d["data"], map[string]any{"conversationId": c, "payload": payload}, "the hook's data")
	ev := d["event"].(map[string]any)
	wantDate(t, ev["createdOn"], "outgoing event.createdOn")
	wantEqual(t, ev, map[string]any{
		"botId": e.botID, "conversationId": c, "createdOn": ev["createdOn"], "direction": "outgoing", "id": reply["id"],
		"integration": "chat", "messageId": reply["id"], "payload": payload, "preview": "outgoing-reply",
		"state": emptyState, "tags": emptyTags, "type": "message", "userId": "out-user",
	}, "the outgoing event (its id is the stored message's)")
}

// (e) A recurring event declared on the bot.
func testRuntimeEventRecurring(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, map[string]any{
		"configuration":   dumpConfig["configuration"],
		"secrets":         dumpConfig["secrets"],
		"recurringEvents": map[string]any{"tick": map[string]any{"type": "tick", "payload": map[string]any{"n": 1}, "schedule": map[string]any{"cron": "@every 1s"}}},
	})
	l := e.waitLog("", "tick {")
	// Stop the firings.
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"recurringEvents": map[string]any{"tick": nil}}).ok()
	if l.Level != "info" || l.ConversationID != "" || l.UserID != "" {
		t.Errorf("recurring event log line %+v: want info with no conversation or user", l)
	}
	d := decodeJSON(t, strings.TrimPrefix(l.Message, "tick "))
	wantEqual(t, d["keys"], []string{"client", "ctx", "event", "logger", "state"}, "a recurring event handler's argument (no message, no conversation)")
	wantEqual(t, d["ctx"], map[string]any{"botId": e.botID, "workspaceId": e.admin.ws,
		"configuration": map[string]any{"greeting": "hi", "n": 3}, "secrets": map[string]any{"API_KEY": "s3cret"}}, "ctx")
	ev := d["event"].(map[string]any)
	due := wantDate(t, ev["createdOn"], "recurring event.createdOn")
	if at, _ := time.Parse(time.RFC3339Nano, l.Timestamp); at.Before(due) {
		t.Errorf("the recurring event ran at %s, before it was due (%v)", l.Timestamp, ev["createdOn"])
	}
	id, _ := ev["id"].(string)
	if !strings.HasPrefix(id, "evt_") {
		t.Errorf("recurring event.id %q, want a fresh evt_ id", id)
	}
	wantEqual(t, ev, map[string]any{
		"botId": e.botID, "createdOn": ev["createdOn"], "direction": "incoming", "id": id, "payload": map[string]any{"n": 1},
		"preview": `{"n":1}`, "state": map[string]any{"bot": map[string]any{}, "user": nil, "conversation": nil}, "tags": emptyTags,
		"trigger": map[string]any{"flowId": "recurring", "nodeId": "tick", "eventName": "tick"}, "type": "tick",
	}, "the event of a recurring event")
}

// (f) Events the code schedules with client.scheduleEvent, with and without
// a conversation.
func testRuntimeEventScheduled(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, dumpJS, dumpConfig)
	u := e.user("sched-user")
	c := e.conversation(u, "sched-conv")
	m := e.send(u, c, "schedule")
	replies := e.waitReplies(u, c, 2)
	r := decodeJSON(t, textOf(replies[0]))
	sched := field(t, r, "r", "event").(map[string]any)
	wantKeys(t, sched, "scheduleEvent's event", "id", "type", "runAt")
	id := str(t, sched, "id")
	if !strings.HasPrefix(id, "evt_") || sched["type"] != "later" {
		t.Errorf("scheduleEvent returned %v", sched)
	}
	runAt := wantDate(t, sched["runAt"], "runAt")
	if d := runAt.Sub(msTime(t, m["createdAt"])); d < 100*time.Millisecond {
		t.Errorf("runAt %v is %s after the message, want at least the 100 ms delay", sched["runAt"], d)
	}
	if at := msTime(t, replies[1]["createdAt"]); at.Before(runAt) {
		t.Errorf("the scheduled event's reply is dated %s, before its runAt %s", replies[1]["createdAt"], sched["runAt"])
	}
	d := checkDump(t, e, textOf(replies[1]), "scheduled event")
	wantEqual(t, d["event"], map[string]any{
		"botId": e.botID, "conversationId": c, "createdOn": sched["runAt"], "direction": "incoming", "id": id,
		"integration": "chat", "payload": map[string]any{"k": "v"}, "preview": `{"k":"v"}`, "state": emptyState, "tags": emptyTags,
		"trigger": map[string]any{"flowId": "schedule", "nodeId": id, "eventName": "later", "conversationId": c, "userId": "sched-user", "integration": "chat"},
		"type":    "later", "userId": "sched-user",
	}, "the event of a scheduled event tied to a conversation and a user")
	conv := field(t, e.call(http.MethodGet, "/conversations/"+c, u.Key, nil).ok(), "conversation")
	wantEqual(t, d["conversation"], conv, "a scheduled event's conversation")

	// Without a conversation: no integration, no user or conversation state.
	solo := field(t, r, "solo", "event").(map[string]any)
	soloID := str(t, solo, "id")
	l := e.waitLog("", "solo {")
	if l.ConversationID != "" || l.UserID != "" {
		t.Errorf("a bot-level scheduled event's log line %+v carries a conversation or user", l)
	}
	sd := decodeJSON(t, strings.TrimPrefix(l.Message, "solo "))
	wantEqual(t, sd["keys"], []string{"client", "ctx", "event", "logger", "state"}, "a bot-level scheduled event handler's argument")
	wantEqual(t, sd["event"], map[string]any{
		"botId": e.botID, "createdOn": solo["runAt"], "direction": "incoming", "id": soloID, "payload": map[string]any{"alone": true},
		"preview": `{"alone":true}`, "state": map[string]any{"bot": map[string]any{}, "user": nil, "conversation": nil}, "tags": emptyTags,
		"trigger": map[string]any{"flowId": "schedule", "nodeId": soloID, "eventName": "solo"}, "type": "solo",
	}, "the event of a scheduled event without a conversation")

	// At a date: runAt and createdOn are that date; the payload defaults to {}.
	dated := field(t, r, "dated", "event").(map[string]any)
	if dated["runAt"] != r["at"] {
		t.Errorf("scheduleEvent with dateTime %v: runAt %v", r["at"], dated["runAt"])
	}
	l = e.waitLog("", "dated {")
	if at := msTime(t, l.Timestamp); at.Before(msTime(t, r["at"])) {
		t.Errorf("the event scheduled at %v ran at %s", r["at"], l.Timestamp)
	}
	dd := decodeJSON(t, strings.TrimPrefix(l.Message, "dated "))
	dev := dd["event"].(map[string]any)
	if dev["createdOn"] != r["at"] || dev["id"] != dated["id"] || dev["type"] != "dated" || dev["conversationId"] != c || dev["preview"] != "{}" {
		t.Errorf("the event scheduled at a date: %v", dev)
	}
	wantEqual(t, dev["payload"], map[string]any{}, "a scheduled event's default payload")
	wantEqual(t, dev["state"], map[string]any{"bot": map[string]any{}, "user": nil, "conversation": map[string]any{}}, "the state of a scheduled event without a user")
	if _, ok := dev["userId"]; ok {
		t.Errorf("a scheduled event without userId has event.userId %v", dev["userId"])
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

const loopJS = sayJS + `bot.on.message('text', async ({ message, client }) => {
  if (message.payload.text === 'ping') { await say(client, message.conversationId, 'pong'); return }
  while (true) {}
})
`

func testRuntimeDeadline(t *testing.T, s *testServer) {
	// The loop's deadline is what the other conversation and the other bot
	// have to answer in while it loops: long enough for a busy machine.
	e := newBotEnv(t, s, loopJS, map[string]any{"maxExecutionTime": 10})
	other := newBotEnv(t, s, echoJS, nil)
	u := e.user("loop-user")
	c1, c2 := e.conversation(u, "loop-1"), e.conversation(u, "loop-2")
	ou := other.user("other-user")
	oc := other.conversation(ou, "")

	loop := e.send(u, c1, "loop")
	e.send(u, c1, "ping") // queued behind the loop
	// Meanwhile, another conversation of the bot and another bot answer.
	other.send(ou, oc, "still there?")
	otherReply := other.waitReplies(ou, oc, 1)[0]
	sameBot := e.ask(u, c2, "ping")
	if textOf(sameBot) != "pong" || textOf(otherReply) != "still there?" {
		t.Fatalf("replies while a handler loops: %q, %q", textOf(sameBot), textOf(otherReply))
	}

	// The loop is stopped at its deadline; the failure is logged.
	l := e.waitLog("level=error", "stopped after 10s")
	want := "message " + loop["id"].(string) + " failed: stopped after 10s: the bot's maxExecutionTime was reached (its state changes were dropped; messages it sent stay sent)"
	if l.Message != want || l.ConversationID != c1 || l.UserID != "loop-user" {
		t.Errorf("deadline failure logged as %+v, want %q in loop-1 for loop-user", l, want)
	}
	stoppedAt := msTime(t, l.Timestamp)
	for _, r := range []map[string]any{otherReply, sameBot} {
		if at := msTime(t, r["createdAt"]); !at.Before(stoppedAt) {
			t.Errorf("reply %q dated %s, not before the loop was stopped (%s): it waited for the loop", textOf(r), r["createdAt"], l.Timestamp)
		}
	}
	if d := stoppedAt.Sub(msTime(t, loop["createdAt"])); d < 10*time.Second {
		t.Errorf("the loop was stopped %s after its message, before its 10s deadline", d)
	}
	// The conversation goes on: the message queued behind the loop, on a
	// path of the same code that returns early, is answered.
	if got := texts(e.waitReplies(u, c1, 1)); got[0] != "pong" {
		t.Fatalf("after the loop: %q, want pong", got)
	}
	// A second loop is stopped too, and a fresh VM serves the next message.
	e.send(u, c1, "loop again")
	if got := textOf(e.ask(u, c1, "ping")); got != "pong" {
		t.Fatalf("after the second loop: %q", got)
	}
	if n := len(e.logs("level=error&messageContains=stopped+after+10s")); n != 2 {
		t.Errorf("%d deadline failures logged, want 2", n)
	}
}

func testRuntimeTopLevelLoop(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, "bot.on.message(() => {})\nwhile (true) {}\n", map[string]any{"maxExecutionTime": 1})
	u := e.user("top-user")
	c := e.conversation(u, "top-conv")
	m1 := e.send(u, c, "one")
	m2 := e.send(u, c, "two")
	for _, m := range []map[string]any{m1, m2} {
		l := e.waitLog("level=error", "message "+m["id"].(string)+" failed")
		for _, want := range []string{"the bot's code failed while loading", "stopped after 1s"} {
			if !strings.Contains(l.Message, want) {
				t.Errorf("top-level loop failure logged as %q, want it to mention %q", l.Message, want)
			}
		}
		if l.ConversationID != c {
			t.Errorf("failure log line %+v, want conversation %s", l, c)
		}
	}
	// The server is fine: the bot's fixed code answers.
	e.deploy(echoJS, nil)
	if got := textOf(e.ask(u, c, "three")); got != "three" {
		t.Fatalf("after fixing the code: %q", got)
	}
	if n := len(e.fromBot(e.messages(u, c))); n != 1 {
		t.Errorf("%d bot messages, want only the reply to three", n)
	}
}

const failuresJS = sayJS + `bot.on.message('text', async ({ message, client, logger }) => {
  const t = message.payload.text
  if (t === 'throw') {
    console.log('about to throw', { n: 1 }, [2])
    const x = null
    x.boom()
  }
  if (t === 'reject') throw new Error('custom failure')
  if (t === 'sandbox') {
    await say(client, message.conversationId, JSON.stringify([typeof require, typeof setTimeout, typeof setInterval,
      typeof process, typeof fetch, typeof bot, typeof console]))
    return
  }
  if (t === 'hang') await new Promise(() => {})
  if (t === 'levels') {
    console.debug('c-debug'); console.info('c-info'); console.warn('c-warn'); console.error('c-error')
    logger.debug('l-debug'); logger.info('l-info', 42); logger.warn('l-warn'); logger.error('l-error', new Error('an error value'))
  }
  logger.info('handled ' + t)
  await say(client, message.conversationId, 'ok:' + t)
})
`

func testRuntimeFailuresAndLogs(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, failuresJS, nil)
	a, b := e.user("logs-a"), e.user("logs-b")
	ca, cb := e.conversation(a, "logs-conv-a"), e.conversation(b, "logs-conv-b")

	// A throwing handler fails its event alone: the next message is handled.
	thrown := e.send(a, ca, "throw")
	if got := textOf(e.ask(a, ca, "next")); got != "ok:next" {
		t.Fatalf("after a throwing handler: %q", got)
	}
	l := e.waitLog("level=error", "message "+thrown["id"].(string)+" failed: TypeError")
	if !strings.Contains(l.Message, "bot.js:") || !strings.Contains(l.Message, "boom") {
		t.Errorf("failure %q lacks the stack (bot.js:line:column) or the error", l.Message)
	}
	if l.ConversationID != ca || l.UserID != "logs-a" {
		t.Errorf("failure log line %+v, want conversation %s user logs-a", l, ca)
	}
	// What it logged before failing is kept, objects as JSON.
	if got := e.waitLog("conversationId="+ca, "about to throw"); got.Message != `about to throw {"n":1} [2]` || got.Level != "info" {
		t.Errorf("console.log line %+v", got)
	}
	rejected := e.send(a, ca, "reject")
	hung := e.send(a, ca, "hang")
	if got := textOf(e.ask(a, ca, "next2")); got != "ok:next2" {
		t.Fatalf("after a rejecting and a hanging handler: %q", got)
	}
	e.waitLog("", "handled next2")
	l = e.waitLog("level=error", "message "+rejected["id"].(string)+" failed: Error: custom failure")
	if !strings.Contains(l.Message, "bot.js:") {
		t.Errorf("rejection %q lacks its stack", l.Message)
	}
	e.waitLog("level=error", "message "+hung["id"].(string)+" failed", "never settled")

	// The sandbox: no require, timers, process or network.
	if got := textOf(e.ask(a, ca, "sandbox")); got != `["undefined","undefined","undefined","undefined","undefined","object","object"]` {
		t.Errorf("typeof require, setTimeout, setInterval, process, fetch, bot, console: %s", got)
	}
	got := []string{}
	// Levels, and what console and logger write. Logs are saved when the
	// event is done, after its reply was sent.
	e.ask(b, cb, "levels")
	e.waitLog("conversationId="+cb, "handled levels")
	for _, l := range e.logs("conversationId=" + cb) {
		got = append(got, l.Level+" "+l.Message)
		if l.ConversationID != cb || l.UserID != "logs-b" {
			t.Errorf("log line %+v, want conversation %s user logs-b", l, cb)
		}
	}
	want := []string{"debug c-debug", "info c-info", "warn c-warn", "error c-error", "debug l-debug", "info l-info 42", "warn l-warn"}
	if len(got) != 9 || !reflect.DeepEqual(got[:7], want) || !strings.HasPrefix(got[7], "error l-error Error: an error value") ||
		!strings.Contains(got[7], "bot.js:") || got[8] != "info handled levels" {
		t.Errorf("logs of conversation b:\n%s\nwant %q, then l-error with its stack, then handled levels", strings.Join(got, "\n"), want)
	}
	// The filters: user, conversation, level, messageContains.
	for _, l := range e.logs("userId=logs-a") {
		if l.UserID != "logs-a" {
			t.Errorf("userId=logs-a returned %+v", l)
		}
	}
	if n := len(e.logs("userId=logs-b")); n != 9 {
		t.Errorf("userId=logs-b: %d lines, want 9", n)
	}
	if ls := e.logs("level=warn&conversationId=" + cb); len(ls) != 2 || ls[0].Message != "c-warn" || ls[1].Message != "l-warn" {
		t.Errorf("level=warn in b: %+v", ls)
	}
	if ls := e.logs("messageContains=handled+next2"); len(ls) != 1 || ls[0].ConversationID != ca {
		t.Errorf("messageContains=handled next2: %+v", ls)
	}
	if n := len(e.logs("conversationId=nope")); n != 0 {
		t.Errorf("conversationId=nope: %d lines", n)
	}
	for _, l := range e.logs("level=error") {
		if l.Level != "error" {
			t.Errorf("level=error returned %+v", l)
		}
		if strings.Contains(l.Message, "failed") && l.ConversationID != ca {
			t.Errorf("a failure logged outside conversation a: %+v", l)
		}
	}
}

const recursionJS = sayJS + `bot.on.message('text', async ({ message, state, client }) => {
  state.conversation.n = (state.conversation.n || 0) + 1
  if (message.payload.text === 'recurse') {
    let r = 'no error'
    try { const f = (n) => f(n + 1) + 1; f(0) } catch (e) { r = 'caught ' + (e && e.name) }
    await say(client, message.conversationId, r)
    return
  }
  await say(client, message.conversationId, state.conversation.n + ':' + message.payload.text)
})
`

// Runaway recursion is a RangeError; whether or not the code could catch
// it, the bot's next events run normally, their state saved.
func testRuntimeRecursion(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, recursionJS, nil)
	u := e.user("rec-user")
	c := e.conversation(u, "rec-conv")
	if got := textOf(e.ask(u, c, "a")); got != "1:a" {
		t.Fatalf("first reply %q", got)
	}
	rec := e.send(u, c, "recurse")
	b := textOf(e.ask(u, c, "b"))
	var n int
	switch got := texts(e.fromBot(e.messages(u, c))); {
	case len(got) == 3 && got[1] == "caught RangeError" && b == "3:b":
		n = 3 // caught: the event succeeded
	case len(got) == 2 && b == "2:b":
		n = 2 // uncatchable: the event failed, with the reason logged
		e.waitLog("level=error", "message "+rec["id"].(string)+" failed: RangeError: Maximum call stack size exceeded", "bot.js:")
	default:
		t.Fatalf("after runaway recursion the bot's messages are %q, want a caught RangeError then 3:b, or a logged RangeError then 2:b", got)
	}
	// The VMs that serve the next events are sound: their handlers' promises
	// settle and their state is saved.
	for i, text := range []string{"c", "d", "e"} {
		if got, want := textOf(e.ask(u, c, text)), fmt.Sprintf("%d:%s", n+i+1, text); got != want {
			t.Fatalf("after runaway recursion: %q, want %q (errors logged: %+v)", got, want, e.logs("level=error"))
		}
	}
	for _, l := range e.logs("level=error") {
		if !strings.Contains(l.Message, rec["id"].(string)) {
			t.Errorf("an event after the recursion failed: %s", l.Message)
		}
	}
}

const capsJS = sayJS + `bot.on.message('text', async ({ message, client, logger }) => {
  if (message.payload.text === 'spam') for (let i = 0; i < 150; i++) console.log('line ' + i)
  if (message.payload.text === 'long') logger.info('é'.repeat(3000))
  await say(client, message.conversationId, 'ok')
})
`

func testRuntimeLogCaps(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, capsJS, nil)
	u := e.user("caps-user")
	c1, c2 := e.conversation(u, "caps-spam"), e.conversation(u, "caps-long")
	e.ask(u, c1, "spam")
	var ls []logLine
	eventually(t, "the spam's log lines", func() bool { ls = e.logs("conversationId=" + c1); return len(ls) > 0 })
	if len(ls) != 101 {
		t.Fatalf("%d log lines for 150 console.log calls, want 100 and a warn line", len(ls))
	}
	for i, l := range ls[:100] {
		if l.Message != fmt.Sprintf("line %d", i) || l.Level != "info" {
			t.Fatalf("line %d: %+v", i, l)
		}
	}
	if last := ls[100]; last.Level != "warn" || !strings.Contains(last.Message, "50 more log lines dropped") {
		t.Errorf("the last line %+v, want a warn counting the 50 dropped lines", last)
	}
	// A line is at most 4 KiB, cut on a character boundary.
	e.ask(u, c2, "long")
	var long []logLine
	eventually(t, "the long line", func() bool { long = e.logs("conversationId=" + c2); return len(long) > 0 })
	if len(long) != 1 {
		t.Fatalf("%d lines, want 1", len(long))
	}
	msg := long[0].Message
	body := strings.TrimSuffix(msg, " … (truncated)")
	if body == msg || len(body) > 4096 || len(body) < 4090 || strings.Trim(body, "é") != "" {
		t.Errorf("a 6000-byte line logged as %d bytes (%q…), want 4096 bytes of whole characters and a truncation mark", len(msg), tail(msg, 40))
	}
}

const clientJS = sayJS + `bot.on.message('text', async ({ message, client }) => {
  const conv = message.conversationId
  const t = message.payload.text
  if (t.startsWith('probe:')) {
    const [, otherConv, otherMsg] = t.split(':')
    const out = []
    for (const f of [() => client.getConversation({ id: otherConv }), () => client.getMessage({ id: otherMsg }),
        () => client.listMessages({ conversationId: otherConv }), () => say(client, otherConv, 'intrusion')]) {
      try { await f(); out.push('ok') } catch (e) { out.push(e.type) }
    }
    await say(client, conv, JSON.stringify(out))
    return
  }
  const r = {
    conversation: (await client.getConversation({ id: conv })).conversation,
    user: (await client.getUser({ id: message.userId })).user,
    message: (await client.getMessage({ id: message.id })).message,
    messages: await client.listMessages({ conversationId: conv }),
    participants: await client.listParticipants({ conversationId: conv }),
    event: (await client.createEvent({ conversationId: conv, payload: { from: 'bot' } })).event,
  }
  await client.createMessage({ conversationId: conv, payload: { type: 'text', text: JSON.stringify(r) }, metadata: { source: 'bot' } })
})
`

func testRuntimeClient(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, clientJS, nil)
	u := e.user("client-user")
	c := e.conversation(u, "client-conv")
	st := e.listenTo(u, c)
	m := e.send(u, c, "tour")
	st.expect(t, "message_created")
	ev := st.expect(t, "event_created")
	if ev["isBot"] != true || ev["userId"] != e.botID || ev["conversationId"] != c {
		t.Errorf("the bot's event signal %v, want isBot true from %s", ev, e.botID)
	}
	wantEqual(t, ev["payload"], map[string]any{"from": "bot"}, "the bot's event payload")
	reply := st.expect(t, "message_created")
	if reply["isBot"] != true {
		t.Fatalf("reply signal %v", reply)
	}
	wantEqual(t, reply["metadata"], map[string]any{"source": "bot"}, "the metadata of the bot's message")
	r := decodeJSON(t, textOf(reply))
	wantEqual(t, r["conversation"], field(t, e.call(http.MethodGet, "/conversations/"+c, u.Key, nil).ok(), "conversation"), "client.getConversation")
	wantEqual(t, r["user"], field(t, e.call(http.MethodGet, "/users/me", u.Key, nil).ok(), "user"), "client.getUser")
	wantEqual(t, r["message"], m, "client.getMessage")
	wantEqual(t, r["messages"], map[string]any{"messages": []any{m}, "meta": map[string]any{}}, "client.listMessages before the reply")
	wantEqual(t, field(t, r, "participants", "participants"), []any{u.Obj}, "client.listParticipants")
	evSent := r["event"].(map[string]any)
	got := field(t, e.call(http.MethodGet, "/events/"+evSent["id"].(string), u.Key, nil).ok(), "event")
	wantEqual(t, got, evSent, "the bot's event through getEvent")
	// The bot's own event is not handed back to it: its only message is the reply.
	e.send(u, c, "probe:x:y") // and whatever comes next comes in order
	if n := len(e.waitReplies(u, c, 2)); n != 2 {
		t.Fatalf("%d bot messages", n)
	}

	// The client reaches only the bot's own conversations and messages.
	other := newChatEnv(t, s)
	ou := other.user("client-other")
	oc := other.conversation(ou, "") // an internal id
	om := other.send(ou, oc, "private")
	got2 := textOf(e.ask(u, c, "probe:"+oc+":"+om["id"].(string)))
	if got2 != `["ResourceNotFound","ResourceNotFound","ResourceNotFound","ResourceNotFound"]` {
		t.Errorf("another bot's conversation and message through the client: %s, want ResourceNotFound for each", got2)
	}
	if ms := other.messages(ou, oc); len(ms) != 1 {
		t.Errorf("another bot's conversation has %d messages, want 1", len(ms))
	}
}

const clientErrorsJS = sayJS + `bot.on.message('text', async ({ message, client, logger }) => {
  const conv = message.conversationId
  const out = {}
  const attempt = async (name, f) => {
    try { await f(); out[name] = 'ok' } catch (e) { out[name] = (e instanceof Error ? 'Error ' : '') + e.type + ': ' + e.message }
  }
  await attempt('emptyText', () => client.createMessage({ conversationId: conv, payload: { type: 'text', text: '' } }))
  await attempt('unknownType', () => client.createMessage({ conversationId: conv, payload: { type: 'bogus' } }))
  await attempt('noPayload', () => client.createMessage({ conversationId: conv }))
  await attempt('noConversation', () => client.createMessage({ conversationId: 'nope', payload: { type: 'text', text: 'x' } }))
  await attempt('tooLarge', () => client.createMessage({ conversationId: conv, payload: { type: 'text', text: 'x'.repeat(1100000) } }))
  await attempt('badMetadata', () => client.createMessage({ conversationId: conv, payload: { type: 'text', text: 'x' }, metadata: 'm' }))
  await attempt('getConversation', () => client.getConversation({ id: 'nope' }))
  await attempt('getUser', () => client.getUser({ id: 'nope' }))
  await attempt('getMessage', () => client.getMessage({ id: 'msg_nope' }))
  await attempt('eventPayload', () => client.createEvent({ conversationId: conv, payload: 'text' }))
  await attempt('scheduleNoType', () => client.scheduleEvent({ delay: 10 }))
  await attempt('scheduleTooFar', () => client.scheduleEvent({ type: 'x', delay: 91 * 24 * 3600 * 1000 }))
  await attempt('scheduleBadDate', () => client.scheduleEvent({ type: 'x', dateTime: 'tomorrow' }))
  await attempt('scheduleBoth', () => client.scheduleEvent({ type: 'x', delay: 1, dateTime: '2030-01-01T00:00:00Z' }))
  await attempt('unknownAction', () => client.callAction({ type: 'nope' }))
  if (message.payload.text === 'caps') {
    // At most 100 messages, events and scheduled events per invocation.
    let sent = 0
    await attempt('cap', async () => {
      for (let i = 0; i < 101; i++) { await client.createEvent({ conversationId: conv, payload: { i } }); sent++ }
    })
    out.sent = sent
    await attempt('capMessage', () => client.createMessage({ conversationId: conv, payload: { type: 'text', text: 'over the cap' } }))
    await attempt('capSchedule', () => client.scheduleEvent({ type: 'x', delay: 1000 }))
  }
  logger.info('report ' + JSON.stringify(out))
  if (message.payload.text !== 'caps') await say(client, conv, 'done')
})
`

func testRuntimeClientErrors(t *testing.T, s *testServer) {
	// A deadline a busy machine cannot reach: the caps handler sends 100 events.
	e := newBotEnv(t, s, clientErrorsJS, map[string]any{"maxExecutionTime": 60})
	u := e.user("errors-user")
	c := e.conversation(u, "")
	if got := textOf(e.ask(u, c, "go")); got != "done" {
		t.Fatalf("reply %q", got)
	}
	want := map[string]string{
		"emptyText": "InvalidPayload", "unknownType": "InvalidPayload", "noPayload": "InvalidPayload",
		"noConversation": "ResourceNotFound", "tooLarge": "PayloadTooLarge", "badMetadata": "InvalidPayload",
		"getConversation": "ResourceNotFound", "getUser": "ResourceNotFound", "getMessage": "ResourceNotFound",
		"eventPayload": "InvalidPayload", "scheduleNoType": "InvalidPayload", "scheduleTooFar": "InvalidPayload",
		"scheduleBadDate": "InvalidPayload", "scheduleBoth": "InvalidPayload", "unknownAction": "ResourceNotFound",
	}
	check := func(out map[string]any, want map[string]string) {
		t.Helper()
		for name, typ := range want {
			got, _ := out[name].(string)
			if !strings.HasPrefix(got, "Error "+typ+": ") || len(got) == len("Error "+typ+": ") {
				t.Errorf("%s: the client threw %q, want an Error with type %s and a message", name, got, typ)
			}
		}
	}
	out := decodeJSON(t, strings.TrimPrefix(e.waitLog("", "report {").Message, "report "))
	check(out, want)
	if len(out) != len(want) {
		t.Errorf("results %v", out)
	}
	// None of the refused messages was stored.
	if ms := e.messages(u, c); len(ms) != 2 {
		t.Errorf("%d messages in the conversation, want the question and the reply: %v", len(ms), texts(ms))
	}

	// Past 100 messages, events and scheduled events, the client refuses.
	c2 := e.conversation(u, "")
	st := e.listenTo(u, c2)
	e.send(u, c2, "caps")
	st.expect(t, "message_created")
	for i := range 100 {
		if ev := st.expect(t, "event_created"); field(t, ev, "payload", "i") != float64(i) || ev["isBot"] != true {
			t.Fatalf("bot event %d: %v", i, ev)
		}
	}
	var caps map[string]any
	eventually(t, "the caps report", func() bool {
		for _, l := range e.logs("conversationId=" + c2) {
			if strings.HasPrefix(l.Message, "report ") {
				caps = decodeJSON(t, strings.TrimPrefix(l.Message, "report "))
				return true
			}
		}
		return false
	})
	check(caps, map[string]string{"cap": "LimitExceeded", "capMessage": "LimitExceeded", "capSchedule": "LimitExceeded"})
	if caps["sent"] != 100.0 {
		t.Errorf("%v events sent before the cap, want 100", caps["sent"])
	}
	if ms := e.messages(u, c2); len(ms) != 1 {
		t.Errorf("%d messages in the capped conversation, want only the question: %v", len(ms), texts(ms))
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

// TestRuntimeCrashRecovery kills the server (SIGKILL) while a
// conversation's events are pending, one of them half done (its reply sent,
// its handler still running), and starts it again on the same SQLite data:
// every message gets exactly one reply, and the state reflects each event
// once.
func TestRuntimeCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flags := []string{"--bot-timeout", "5s", "--log-level", "info"}
	p1 := startProcess(t, dir, flags...)
	e := newBotEnv(t, p1.testServer, sayJS+`bot.on.message('text', async ({ message, state, client }) => {
  state.conversation.n = (state.conversation.n || 0) + 1
  await client.scheduleEvent({ type: 'side', payload: { text: message.payload.text } })
  await say(client, message.conversationId, 're:' + message.payload.text + ' n=' + state.conversation.n)
  const end = Date.now() + 400
  while (Date.now() < end) {}
})
bot.on.event('side', ({ event, logger }) => { logger.info('side ' + event.payload.text) })
`, nil)
	u := e.user("crash-user")
	c := e.conversation(u, "crash-conv")
	const n = 10
	for i := range n {
		e.send(u, c, fmt.Sprintf("m%d", i))
	}
	var seen int
	eventually(t, "two replies before the crash", func() bool {
		seen = len(e.fromBot(e.messages(u, c)))
		return seen >= 2
	})
	p1.kill()
	if seen >= n {
		t.Fatalf("every message was answered before the kill (%d replies): nothing was pending", seen)
	}
	t.Logf("killed the server with %d of %d messages answered", seen, n)

	p2 := startProcess(t, dir, flags...)
	e2 := *e
	e2.s = p2.testServer
	e2.admin = p2.as(t, e.admin.token, e.admin.ws)
	e2.waitReplies(u, c, n)
	last := e2.ask(u, c, "done") // handled after every earlier event: nothing more can come
	if got := textOf(last); got != fmt.Sprintf("re:done n=%d", n+1) {
		t.Errorf("the last reply %q, want n=%d: each event's state counted once", got, n+1)
	}
	replies := e2.fromBot(e2.messages(u, c))
	count := map[string]int{}
	ids := map[string]bool{}
	for _, r := range replies {
		count[textOf(r)]++
		ids[r["id"].(string)] = true
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("re:m%d n=%d", i, i+1))
	}
	want = append(want, fmt.Sprintf("re:done n=%d", n+1))
	if got := texts(replies); !reflect.DeepEqual(got, want) || len(ids) != len(replies) {
		keys := make([]string, 0, len(count))
		for k := range count {
			keys = append(keys, fmt.Sprintf("%s ×%d", k, count[k]))
		}
		sort.Strings(keys)
		t.Fatalf("replies after the crash %q (%s), want exactly one per message, in order: %q", got, strings.Join(keys, ", "), want)
	}
	// Scheduled events are not scheduled twice either (each logs one line).
	t.Run("scheduled_events_once", func(t *testing.T) {
		e3 := e2
		e3.t, e3.admin.t = t, t
		var side map[string]int
		eventually(t, "a side event per message", func() bool {
			side = map[string]int{}
			for _, l := range e3.logs("messageContains=side+") {
				side[l.Message]++
			}
			return len(side) == n+1
		})
		for k, v := range side {
			if v != 1 {
				t.Errorf("%q logged %d times: the scheduled event ran %d times", k, v, v)
			}
		}
	})
	if strings.Contains(p2.Stderr.String(), "events of the previous run queued again") {
		t.Logf("the restarted server handed back the events the killed one had claimed")
	}
	if os.Getenv("BOTPLATFORM_E2E_VERBOSE") != "" {
		t.Logf("restarted server stderr:\n%s", p2.Stderr)
	}
}

// TestRuntimeFlags runs a server whose --bot-timeout, --bot-timeout-max and
// --bot-workers are small, and checks that they apply.
func TestRuntimeFlags(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"timeouts_and_workers", testRuntimeTimeoutFlags}},
		"--bot-timeout", "500ms", "--bot-timeout-max", "1s", "--bot-workers", "1")
}

const loopOnDemandJS = sayJS + `bot.on.message('text', async ({ message, client }) => {
  if (message.payload.text === 'loop') {
    await say(client, message.conversationId, 'looping')
    while (true) {}
  }
  await say(client, message.conversationId, 'pong')
})
`

func testRuntimeTimeoutFlags(t *testing.T, s *testServer) {
	dflt := newBotEnv(t, s, loopOnDemandJS, nil)                                      // --bot-timeout
	capped := newBotEnv(t, s, loopOnDemandJS, map[string]any{"maxExecutionTime": 30}) // over --bot-timeout-max
	du, cu := dflt.user("flags-d"), capped.user("flags-c")
	dc, cc := dflt.conversation(du, ""), capped.conversation(cu, "")

	// While the one worker runs the loop, nothing else runs.
	if got := textOf(dflt.ask(du, dc, "loop")); got != "looping" {
		t.Fatalf("reply %q", got)
	}
	pong := capped.ask(cu, cc, "ping")
	l := dflt.waitLog("level=error", "failed: stopped after 500ms: the bot's maxExecutionTime was reached")
	if at := msTime(t, pong["createdAt"]); at.Before(msTime(t, l.Timestamp)) {
		t.Errorf("with --bot-workers 1, a reply (%s) was sent while another bot's loop ran (stopped %s)", pong["createdAt"], l.Timestamp)
	}
	// A maxExecutionTime over --bot-timeout-max is capped by it.
	capped.send(cu, cc, "loop")
	capped.waitLog("level=error", "failed: stopped after 1s: the bot's maxExecutionTime was reached")
	if got := textOf(capped.ask(cu, cc, "ping")); got != "pong" {
		t.Fatalf("after the capped loop: %q", got)
	}
}

// TestRuntimeAcrossServers runs two servers on one PostgreSQL database: a
// recurring event fires once per due time although both servers keep the
// schedule, and one conversation's events, sent through both, run one at a
// time in order.
func TestRuntimeAcrossServers(t *testing.T) {
	t.Parallel()
	dir, dbURL := storage(t, "postgres")
	a := startServer(t, dir, dbURL, runtimeFlags...)
	e := newBotEnv(t, a, orderJS+`bot.on.event('tick', ({ event, logger }) => { logger.info('tick', event.id, event.createdOn) })
`, map[string]any{"maxExecutionTime": 120, "recurringEvents": map[string]any{"tick": map[string]any{"type": "tick", "payload": map[string]any{}, "schedule": map[string]any{"cron": "@every 1s"}}}})
	// b starts after the bot exists, so that both servers fire its schedule.
	b := launchServer(t, dir, dbURL, runtimeFlags...) // shared file storage, as scale-out requires
	b.waitListening(t)
	onB := *e
	onB.s = b

	u := e.user("across-user")
	c := e.conversation(u, "across-conv")
	const n = 20
	for i := range n {
		env := e
		if i%2 == 1 {
			env = &onB
		}
		env.send(u, c, fmt.Sprintf("m%02d", i))
	}
	replies := onB.waitReplies(u, c, n)
	for i, r := range replies {
		if textOf(r) != fmt.Sprintf("%d:m%02d", i+1, i) {
			t.Fatalf("replies %q, want 1:m00 … %d:m%02d: one at a time, in order, across servers", texts(replies), n, n-1)
		}
	}

	t.Run("recurring_fires_once", func(t *testing.T) {
		testRecurringOnce(t, e)
	})
}

func testRecurringOnce(t *testing.T, e *chatEnv) {
	var ticks []logLine
	eventually(t, "4 recurring firings", func() bool {
		ticks = e.logs("messageContains=tick+evt_")
		return len(ticks) >= 4
	})
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"recurringEvents": map[string]any{"tick": nil}}).ok()
	ids, due := map[string]int{}, map[string]int{}
	for _, l := range ticks {
		f := strings.Fields(l.Message)
		if len(f) != 3 {
			t.Fatalf("tick line %q", l.Message)
		}
		ids[f[1]]++
		due[f[2]]++
	}
	for k, v := range ids {
		if v != 1 {
			t.Errorf("recurring event %s ran %d times", k, v)
		}
	}
	for k, v := range due {
		if v != 1 {
			t.Errorf("the firing due at %s ran %d times", k, v)
		}
	}
}

// TestRuntimeSequentialRoundTrips: one user, one conversation, the echo
// bot, 500 messages each sent when the reply to the previous one arrived on
// the stream. Every reply must come from the dispatcher being woken, never
// from its poll: the server polls every 30 s, so a lost wake-up is a round
// trip of 30 s, and any round trip near it fails the test. (How fast the
// round trips are is BenchmarkSequentialRoundTrip's business.)
func TestRuntimeSequentialRoundTrips(t *testing.T) {
	t.Parallel()
	const poll, rounds = 30 * time.Second, 500
	const lost = 15 * time.Second // half the poll: no busy machine is this slow
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackendWith(t, backend, append([]string{"--bot-poll", poll.String()}, runtimeFlags...)...)
			e := newBotEnv(t, s, echoJS, nil)
			u := e.user("sequential-user")
			c := e.conversation(u, "sequential")
			st := e.listenTo(u, c)
			// The first message starts the bot's process: it is answered
			// before the measured round trips begin.
			if got := textOf(e.ask(u, c, "warm-up")); got != "warm-up" {
				t.Fatalf("warm-up reply %q", got)
			}
			over100 := 0
			for i := range rounds {
				text := fmt.Sprint("m", i)
				start := time.Now()
				e.send(u, c, text)
				timer := time.NewTimer(lost)
				for replied := false; !replied; {
					select {
					case ev := <-st.events:
						var sig chatSignal
						if ev.Data == "ping" || json.Unmarshal([]byte(ev.Data), &sig) != nil || sig.Type != "message_created" || sig.Data["isBot"] != true {
							continue
						}
						got := textOf(sig.Data)
						if got == "warm-up" {
							continue
						}
						if got != text {
							t.Fatalf("round trip %d: reply %q, want %q", i, got, text)
						}
						replied = true
					case <-timer.C:
						t.Fatalf("round trip %d: no reply after %s: a lost wake-up, the reply waits for the dispatcher's poll (%s)", i, lost, poll)
					}
				}
				timer.Stop()
				if time.Since(start) > 100*time.Millisecond {
					over100++
				}
			}
			t.Logf("%d round trips, %d over 100 ms (a busy machine), none near the poll", rounds, over100)
		})
	}
}

// TestRuntimeCrashRecoveryPostgres: a node of a PostgreSQL deployment is
// killed (SIGKILL) while it runs an event and holds an indexing job; the
// same node, started again, hands both back at once - the event is
// answered and the indexing job runs, without waiting for their leases -
// and leaves alone the jobs another node holds.
func TestRuntimeCrashRecoveryPostgres(t *testing.T) {
	t.Parallel()
	dir, dbURL := storage(t, "postgres")
	flags := []string{"--database-url", dbURL, "--bot-timeout", "5s", "--log-level", "info"}
	p1 := startProcess(t, dir, append([]string{"--index-workers", "0"}, flags...)...)
	p1.DatabaseURL = dbURL // for e.store()
	e := newBotEnv(t, p1.testServer, sayJS+`bot.on.message('text', async ({ message, client }) => {
  if (message.payload.text === 'slow') {
    const end = Date.now() + 3000
    while (Date.now() < end) {}
  }
  await say(client, message.conversationId, 're:' + message.payload.text)
})
`, nil)
	u := e.user("crash-user")
	c := e.conversation(u, "crash-conv")
	ctx := context.Background()
	st := e.store()

	// Node 1 holds an indexing job (it runs no indexing worker, so the job
	// stays as claimed here); another node holds an indexing job and an
	// event, with leases longer than the test.
	node1 := nodeOf(t, dir)
	now := time.Now()
	job := func(kind, subject, payload string, at time.Time) platform.Job {
		return platform.Job{ID: platform.NewID("job_"), Kind: kind, Subject: subject, Payload: []byte(payload), RunAfter: at, CreatedAt: now}
	}
	mine := job(platform.JobIndexFile, "file_crash_mine", `{"fileId":"file_crash_mine","generation":1}`, now)
	theirs := job(platform.JobIndexFile, "file_crash_theirs", `{"fileId":"file_crash_theirs","generation":1}`, now)
	// Due in an hour, so that node 1's dispatcher leaves it alone.
	theirEvent := job(platform.JobBotEvent, "conv_crash_theirs", `{"type":"message","id":"msg_crash_theirs","conversationId":"conv_crash_theirs"}`, now.Add(time.Hour))
	for _, j := range []platform.Job{mine, theirs, theirEvent} {
		if err := st.EnqueueJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, cl := range []struct {
		kind, node string
		at         time.Time
	}{{platform.JobIndexFile, node1, now}, {platform.JobIndexFile, "node_other", now}, {platform.JobBotEvent, "node_other", now.Add(time.Hour)}} {
		js, err := st.ClaimJobs(ctx, cl.kind, cl.node, cl.at, now.Add(2*time.Hour), 1)
		if err != nil || len(js) != 1 {
			t.Fatalf("claim a %s job as %s: %d jobs, %v", cl.kind, cl.node, len(js), err)
		}
	}
	e.send(u, c, "slow")
	eventually(t, "node 1 running the slow event", func() bool {
		js := e.botEventJobs(e.internalConv(c))
		return len(js) == 1 && js[0].Status == platform.JobRunning
	})
	p1.kill()

	p2 := startProcess(t, dir, flags...)
	p2.DatabaseURL = dbURL
	if got := nodeOf(t, dir); got != node1 {
		t.Fatalf("node id after the restart: %s, want %s", got, node1)
	}
	e.s = p2.testServer
	// Answered at once: the lease (95 s) would outlast the hang guard.
	if got := texts(e.waitReplies(u, c, 1)); got[0] != "re:slow" {
		t.Fatalf("after the restart: %q, want re:slow", got)
	}
	eventually(t, "node 1's indexing job handed back and run", func() bool {
		js, err := st.ListJobs(ctx, mine.Subject)
		return err == nil && len(js) == 0
	})
	for _, j := range []platform.Job{theirs, theirEvent} {
		js, err := st.ListJobs(ctx, j.Subject)
		if err != nil || len(js) != 1 || js[0].Status != platform.JobRunning || js[0].Attempts != 1 {
			t.Fatalf("the other node's job %s after the restart: %+v %v, want it still running, claimed once", j.ID, js, err)
		}
	}
}

// nodeOf is the node id a server on the data directory uses (the only one
// kept there).
func nodeOf(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "nodes", "*.lock"))
	if err != nil || len(m) != 1 {
		t.Fatalf("node ids in %s: %v %v, want one", dir, m, err)
	}
	return strings.TrimSuffix(filepath.Base(m[0]), ".lock")
}

// TestRuntimeScheduledCap: a bot's pending scheduled events are capped
// (--bot-max-scheduled): scheduleEvent beyond it throws LimitExceeded to
// the code and the bot's logs say so, even when the code catches it. A bot
// whose scheduled events each schedule more (a flood) stays at the cap,
// and another bot keeps answering meanwhile.
func TestRuntimeScheduledCap(t *testing.T) {
	t.Parallel()
	const limit = 20
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackendWith(t, backend, append([]string{"--bot-max-scheduled", fmt.Sprint(limit)}, runtimeFlags...)...)
			capped := newBotEnv(t, s, sayJS+`bot.on.message('text', async ({ message, client }) => {
  let n = 0, err = ''
  try {
    for (; n < 30; n++) await client.scheduleEvent({ type: 'later', payload: {}, delay: 3600000 })
  } catch (e) { err = e.message }
  await say(client, message.conversationId, 'scheduled ' + n + ': ' + err)
})
bot.on.event('later', () => {})
`, nil)
			u := capped.user("cap-user")
			c := capped.conversation(u, "cap-conv")
			want := fmt.Sprintf("scheduled %d: the bot has %d scheduled events pending; at most %d (--bot-max-scheduled): the event was not scheduled", limit, limit, limit)
			if got := textOf(capped.ask(u, c, "go")); got != want {
				t.Fatalf("reply %q, want %q", got, want)
			}
			capped.waitLog("level=error", "scheduleEvent: the bot has 20 scheduled events pending; at most 20")
			if got := textOf(capped.ask(u, c, "again")); got != "scheduled 0: "+want[len("scheduled 20: "):] {
				t.Fatalf("second reply %q", got)
			}

			// A flood: every event schedules ten more, at once.
			flood := newBotEnv(t, s, sayJS+`bot.on.message('text', async ({ client }) => {
  for (let i = 0; i < 10; i++) await client.scheduleEvent({ type: 'more', payload: {}, delay: 0 })
})
bot.on.event('more', async ({ client }) => {
  for (let i = 0; i < 10; i++) await client.scheduleEvent({ type: 'more', payload: {}, delay: 0 })
})
`, nil)
			fu := flood.user("flood-user")
			flood.send(fu, flood.conversation(fu, "flood"), "start")
			flood.waitLog("level=error", "scheduleEvent: the bot has", "at most 20")
			other := newBotEnv(t, s, echoJS, nil)
			ou := other.user("other-user")
			oc := other.conversation(ou, "")
			for i := range 5 {
				if got := textOf(other.ask(ou, oc, fmt.Sprint("hello ", i))); got != fmt.Sprint("hello ", i) {
					t.Fatalf("the other bot answered %q during the flood", got)
				}
			}
			jobs, err := flood.store().CountOwnedJobs(context.Background(), platform.JobBotEvent, flood.botID)
			if err != nil || jobs > limit {
				t.Fatalf("the flooding bot has %d scheduled events pending (%v), at most %d allowed", jobs, err, limit)
			}
		})
	}
}
