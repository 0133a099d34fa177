package main

// Bot runtime end-to-end: deadlines, failures and the bot's logs, runaway
// recursion, log caps, the timeout flags and the scheduled-events cap.

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

const loopJS = sayJS + `bot.on.message('text', async ({ message, client }) => {
  if (message.payload.text === 'ping') { await say(client, message.conversationId, 'pong'); return }
  while (true) {}
})
`

func testRuntimeDeadline(t *testing.T, s *testServer) {
	// The loop's deadline is what the other conversation and the other bot
	// have to answer in while it loops: long enough for a busy machine (two
	// cores running the whole suite took more than 10 s).
	e := newBotEnv(t, s, loopJS, map[string]any{"maxExecutionTime": 40})
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
	l := e.waitLog("level=error", "stopped after 40s")
	want := "message " + loop["id"].(string) + " failed: stopped after 40s: the bot's maxExecutionTime was reached (its state changes were dropped; messages it sent stay sent)"
	if l.Message != want || l.ConversationID != c1 || l.UserID != "loop-user" {
		t.Errorf("deadline failure logged as %+v, want %q in loop-1 for loop-user", l, want)
	}
	stoppedAt := msTime(t, l.Timestamp)
	for _, r := range []map[string]any{otherReply, sameBot} {
		if at := msTime(t, r["createdAt"]); !at.Before(stoppedAt) {
			t.Errorf("reply %q dated %s, not before the loop was stopped (%s): it waited for the loop", textOf(r), r["createdAt"], l.Timestamp)
		}
	}
	if d := stoppedAt.Sub(msTime(t, loop["createdAt"])); d < 40*time.Second {
		t.Errorf("the loop was stopped %s after its message, before its 40s deadline", d)
	}
	// The conversation goes on: the message queued behind the loop, on a
	// path of the same code that returns early, is answered.
	if got := texts(e.waitReplies(u, c1, 1)); got[0] != "pong" {
		t.Fatalf("after the loop: %q, want pong", got)
	}
	// A second loop, under a deadline the bot's update shortened (each
	// loop keeps a core busy until it is stopped), is stopped too, and a
	// fresh VM serves the next message.
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"maxExecutionTime": 2}).ok()
	e.send(u, c1, "loop again")
	if got := textOf(e.ask(u, c1, "ping")); got != "pong" {
		t.Fatalf("after the second loop: %q", got)
	}
	for _, d := range []string{"40s", "2s"} {
		if n := len(e.logs("level=error&messageContains=stopped+after+" + d)); n != 1 {
			t.Errorf("%d failures logged stopped after %s, want 1", n, d)
		}
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

	// The sandbox: no require, timers or process; network only through
	// fetch, which is off without an allowlist (runtime_fetch_e2e_test.go).
	if got := textOf(e.ask(a, ca, "sandbox")); got != `["undefined","undefined","undefined","undefined","function","object","object"]` {
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

	// A bot's first event also makes its VM, which on a busy machine can
	// take longer than the 500 ms deadline by itself: warm the default bot
	// in a conversation of its own, asking again until it answers.
	wc := dflt.conversation(du, "")
	for i := 0; len(dflt.fromBot(dflt.messages(du, wc))) == 0; i++ {
		if i == 20 {
			t.Fatal("the bot never answered a ping")
		}
		dflt.send(du, wc, "ping")
		for k := 0; k < 30 && len(dflt.fromBot(dflt.messages(du, wc))) == 0; k++ {
			time.Sleep(100 * time.Millisecond)
		}
	}

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
	// The line must be the loop's: on a busy machine the capped bot's first
	// event (its process starting) may pass 1 s too, after its reply.
	loop := capped.send(cu, cc, "loop")
	capped.waitLog("level=error", "message "+loop["id"].(string)+" failed: stopped after 1s: the bot's maxExecutionTime was reached")
	if got := textOf(capped.ask(cu, cc, "ping")); got != "pong" {
		t.Fatalf("after the capped loop: %q", got)
	}
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
