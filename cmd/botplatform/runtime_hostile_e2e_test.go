package main

// Hostile bots (docs/bot-code.md, "Isolation"): code that loops, allocates
// without bound, recurses, throws hostile values, logs megabytes or sends
// without end never hurts the server or other bots. Each time the event
// fails with a clear reason in the bot's logs, once (it is not retried),
// another bot deployed alongside keeps answering, and the bot's next event
// runs normally.

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// hostileMemory is the --bot-memory of the hostile bots' server, in MiB.
const hostileMemory = "64"

const hostileJS = sayJS + `globalThis.keep = []
bot.on.message('text', async ({ message, client, state }) => {
  const t = message.payload.text
  if (t === 'loop') for (;;) {}
  if (t === 'double') { let s = 'x'; for (;;) s += s }
  if (t === 'buffers') { const a = []; for (let i = 0; i < 16; i++) a.push(new ArrayBuffer(1 << 30)) }
  if (t === 'keep') keep.push(new Array(2e5).fill(1.5))
  if (t === 'recurse') { const f = (n) => f(n + 1) + 1; f(0) }
  if (t === 'throw-getter') throw { get stack() { for (;;) {} } }
  if (t === 'throw-object') throw { a: 1 }
  if (t === 'reject-object') return Promise.reject({ a: 1 })
  if (t === 'state-loop') state.conversation.toJSON = () => { for (;;) {} }
  if (t === 'log-mb') { const mb = 'x'.repeat(1 << 20); for (let i = 0; i < 200; i++) console.log(mb) }
  if (t === 'spam') { for (let i = 0; i < 10000; i++) await say(client, message.conversationId, 'spam ' + i) }
  if (t.startsWith('regex:')) /^(?=\S)(\w+\s?)*$/.test(t.slice(6))
  if (t === 'deep') { let o = {}; for (let i = 0; i < 3000000; i++) o = { a: o }; JSON.stringify(o) }
  await say(client, message.conversationId, 'ok:' + t)
})
`

func TestRuntimeHostileBots(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", append(runtimeFlags, "--bot-memory", hostileMemory)...)
	memory := "stopped: the bot used more than " + hostileMemory + " MiB of memory"
	deadline := "stopped after 2s: the bot's maxExecutionTime was reached"
	for _, tc := range []struct {
		name, text string
		want       []string // in the failure's log line; none: the event succeeds
	}{
		{"loop", "loop", []string{deadline}},
		{"string_doubling", "double", []string{memory}},
		{"huge_buffers", "buffers", []string{memory}},
		{"recursion", "recurse", []string{"RangeError: Maximum call stack size exceeded"}},
		{"throw_getter", "throw-getter", []string{deadline}},
		{"throw_object", "throw-object", []string{`failed: {"a":1}`}},
		{"reject_object", "reject-object", []string{`failed: {"a":1}`}},
		{"state_export", "state-loop", []string{deadline}},
		{"regex", "regex:" + strings.Repeat("a", 34) + "!", []string{deadline}},
		// The memory limit or, on a slow machine, the deadline.
		{"json_deep", "deep", []string{"stopped"}},
		{"send_10000", "spam", []string{"at most 100 messages and events per invocation"}},
		{"log_megabytes", "log-mb", nil},
	} {
		// One at a time: most of them keep a core busy until stopped.
		t.Run(tc.name, func(t *testing.T) {
			// The bots stop at 2 s, but for the one sending 10,000
			// messages: the cap must stop it before its first 100 take
			// that long on a busy machine.
			seconds := 2
			if tc.name == "send_10000" {
				seconds = 60
			}
			e, u, c := hostileBot(t, s, seconds)
			m := e.send(u, c, tc.text)
			otherBotAnswers(t, s)
			if tc.want == nil {
				return
			}
			id := m["id"].(string)
			l := e.waitLog("level=error", append([]string{"message " + id + " failed: "}, tc.want...)...)
			if l.ConversationID != c {
				t.Errorf("failure logged as %+v, want it in conversation %s", l, c)
			}
			// The next event of the conversation runs (in a fresh process
			// if the last one died) once the hostile one is over.
			if got := textOf(e.ask(u, c, "ping")); got != "ok:ping" {
				t.Fatalf("after %s: %q", tc.name, got)
			}
			if n := len(e.logs("level=error&messageContains=" + url.QueryEscape(id))); n != 1 {
				t.Errorf("%d failures logged for the message, want 1: it ran again", n)
			}
		})
	}

	// A megabyte line is cut to 4 KiB; past 100 lines they are counted.
	t.Run("log_megabytes_capped", func(t *testing.T) {
		t.Parallel()
		// A long deadline: 200 lines of a megabyte take a while on a busy machine.
		e, u, c := hostileBot(t, s, 30)
		if got := textOf(e.ask(u, c, "log-mb")); got != "ok:log-mb" {
			t.Fatalf("reply %q", got)
		}
		var ls []logLine
		eventually(t, "the log lines", func() bool { ls = e.logs("conversationId=" + c); return len(ls) >= 101 })
		if len(ls) != 101 || len(ls[0].Message) > 5000 || !strings.Contains(ls[100].Message, "100 more log lines dropped") {
			t.Errorf("%d lines, the first of %d bytes, the last %.100q; want 100 cut lines and a count of the 100 dropped", len(ls), len(ls[0].Message), ls[len(ls)-1].Message)
		}
	})

	// Globals kept across messages reach the limit: the event that passes
	// it fails, the next one gets a fresh process (with empty globals).
	t.Run("globals_across_messages", func(t *testing.T) {
		t.Parallel()
		// A long deadline: the collector works hard near the limit.
		e, u, c := hostileBot(t, s, 10)
		var failed string
		for i := 0; i < 60 && failed == ""; i++ {
			m := e.send(u, c, "keep")
			e.waitEventDone(u, c, m["id"].(string))
			for _, l := range e.logs("level=error") {
				if strings.Contains(l.Message, m["id"].(string)) {
					failed = l.Message
				}
			}
		}
		if !strings.Contains(failed, memory) {
			t.Fatalf("60 messages each keeping 200,000 numbers: no memory failure logged (last: %q)", failed)
		}
		otherBotAnswers(t, s)
		if got := textOf(e.ask(u, c, "keep")); got != "ok:keep" {
			t.Fatalf("after the memory failure: %q", got)
		}
	})
}

// hostileBot deploys hostileJS (deadline in seconds) and opens a
// conversation.
func hostileBot(t *testing.T, s *testServer, deadline int) (*chatEnv, chatUser, string) {
	t.Helper()
	e := newBotEnv(t, s, hostileJS, map[string]any{"maxExecutionTime": deadline})
	u := e.user("hostile-user")
	return e, u, e.conversation(u, "")
}

// otherBotAnswers checks that a bot deployed alongside answers.
func otherBotAnswers(t *testing.T, s *testServer) {
	t.Helper()
	other := newBotEnv(t, s, echoJS, nil)
	u := other.user("bystander")
	c := other.conversation(u, "")
	if got := textOf(other.ask(u, c, "still there?")); got != "still there?" {
		t.Fatalf("another bot answered %q", got)
	}
}

// waitEventDone waits until the message's event is over: answered by the
// bot, or its failure logged.
func (e *chatEnv) waitEventDone(u chatUser, conv, msgID string) {
	e.t.Helper()
	eventually(e.t, "message "+msgID+" handled", func() bool {
		ms := e.messages(u, conv)
		for i, m := range ms {
			if m["id"] == msgID && i+1 < len(ms) && ms[i+1]["userId"] == e.botID {
				return true
			}
		}
		return len(e.logs("level=error&messageContains="+url.QueryEscape(msgID))) > 0
	})
}

// TestRuntimeBigCode deploys code whose compilation costs more memory than
// a bot process may use: it is refused (400) without the server paying for
// it, and the code deployed before keeps running.
func TestRuntimeBigCode(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", append(runtimeFlags, "--bot-memory", hostileMemory)...)
	e := newBotEnv(t, s, hostileJS, nil)
	big := "const data = [" + strings.Repeat("1.5,", 2<<20) + "]\n" + echoJS
	// "compiling it needs more than 64 MiB of memory", or, should a slow
	// (race) build reach the time bound first, "it was not compiled
	// within 20s".
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"code": big}).fail(400, "InvalidPayload", "code: too costly to compile: ")
	u := e.user("big-user")
	if got := textOf(e.ask(u, e.conversation(u, ""), "hi")); got != "ok:hi" {
		t.Fatalf("after a refused deploy: %q, want the previous code's answer", got)
	}
}

// TestRuntimeShutdownStopsBots stops (SIGTERM) a server while a bot runs
// code its VM cannot interrupt, under a long deadline: the server exits
// within --shutdown-timeout, its bot processes killed.
func TestRuntimeShutdownStopsBots(t *testing.T) {
	t.Parallel()
	p := startProcess(t, t.TempDir(), "--bot-timeout-max", "60s", "--shutdown-timeout", "2s")
	e := newBotEnv(t, p.testServer, sayJS+`bot.on.message('text', async ({ message, client }) => {
  await say(client, message.conversationId, 'started')
  ;/^(?=\S)(\w+\s?)*$/.test(message.payload.text)
})
`, map[string]any{"maxExecutionTime": 60})
	u := e.user("shutdown-user")
	c := e.conversation(u, "")
	e.send(u, c, strings.Repeat("a", 40)+"!")
	e.waitReplies(u, c, 1) // the regex runs
	if err := p.stop(); err != nil {
		t.Fatalf("stopping the server while a bot runs a backtracking regex: %v", err)
	}
}

// TestRuntimeGivesUpOnCrashingEvents: an event whose runs ended the server
// process (it was claimed again and again without finishing) is not run
// again: it is finished with the reason in the bot's logs.
func TestRuntimeGivesUpOnCrashingEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p1 := startProcess(t, dir, "--bot-timeout", "30s")
	e := newBotEnv(t, p1.testServer, sayJS+`bot.on.message('text', async ({ message, state, client }) => {
  state.conversation.n = (state.conversation.n || 0) + 1
  await say(client, message.conversationId, 'started ' + message.payload.text)
  if (message.payload.text === 'crash') { const end = Date.now() + 20000; while (Date.now() < end) {} }
})
`, nil)
	u := e.user("giveup-user")
	c := e.conversation(u, "")
	m := e.send(u, c, "crash")
	e.waitReplies(u, c, 1)
	p1.kill() // while the handler runs: the event stays claimed
	// As if the server had died while running it, maxAttempts times.
	db, err := sql.Open("sqlite", filepath.Join(dir, "botplatform.db"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE jobs SET attempts = 10 WHERE status = 'running'`)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("marking the running event: %v (%d rows)", err, n)
	}
	db.Close()

	p2 := startProcess(t, dir, "--bot-timeout", "30s")
	e2 := *e
	e2.s = p2.testServer
	e2.admin = p2.as(t, e.admin.token, e.admin.ws)
	l := e2.waitLog("level=error", "message "+m["id"].(string)+" failed: gave up: it was started 10 times without finishing")
	if l.ConversationID != c {
		t.Errorf("logged as %+v, want conversation %s", l, c)
	}
	// The conversation goes on; the event given up did not run (its state
	// change is not kept: n counts the next message only).
	if got := texts(e2.fromBot(e2.messages(u, c))); len(got) != 1 {
		t.Fatalf("bot messages %q, want only the first run's", got)
	}
	if got := textOf(e2.ask(u, c, "next")); got != "started next" {
		t.Fatalf("after giving up: %q", got)
	}
}
