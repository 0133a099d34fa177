package main

// Bot runtime end-to-end: what a handler receives for each kind of event
// (messages, previews, custom, outgoing, recurring and scheduled events).

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

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
    const at = new Date(Date.now() + 1500).toISOString() // still ahead when the call arrives on a loaded machine
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
