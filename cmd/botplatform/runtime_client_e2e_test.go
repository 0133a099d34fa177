package main

// Bot runtime end-to-end: the client bot code calls, and its errors.

import (
	"net/http"
	"strings"
	"testing"
)

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
  if (message.payload.text.startsWith('delete:')) {
    // Writes to the event's own conversation, once it is deleted (its
    // logs go with it: the report goes to the conversation named).
    await attempt('deleteConversation', () => client.deleteConversation({ id: conv }))
    await attempt('gone', () => client.createMessage({ conversationId: conv, payload: { type: 'text', text: 'x' } }))
    await attempt('goneEvent', () => client.createEvent({ conversationId: conv, payload: { x: 1 } }))
    await say(client, message.payload.text.slice('delete:'.length), 'report ' + JSON.stringify(out))
    return
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
	// A deadline a busy machine cannot reach: the caps handler makes 115
	// calls, and a loaded two-core machine once took over 60 s for them.
	e := newBotEnv(t, s, clientErrorsJS, map[string]any{"maxExecutionTime": 600})
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

	// The event's conversation deleted by its handler: what the handler
	// then sends to it is refused as missing.
	c3, c4 := e.conversation(u, ""), e.conversation(u, "")
	e.send(u, c3, "delete:"+c4)
	gone := decodeJSON(t, strings.TrimPrefix(textOf(e.waitReplies(u, c4, 1)[0]), "report "))
	if gone["deleteConversation"] != "ok" {
		t.Fatalf("deleteConversation: %v", gone["deleteConversation"])
	}
	check(gone, map[string]string{"gone": "ResourceNotFound", "goneEvent": "ResourceNotFound"})

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
