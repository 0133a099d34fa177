package main

// Bot runtime end-to-end across processes: crash recovery on SQLite and
// PostgreSQL, two servers on one database, and round trips that must never
// wait for the dispatcher's poll.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestRuntimeCrashRecovery kills the server (SIGKILL) while a
// conversation's events are pending, one of them half done (its reply sent,
// its handler still running), and starts it again on the same SQLite data:
// every message gets exactly one reply, and the state reflects each event
// once.
func TestRuntimeCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flags := []string{"--bot-timeout", testBotTimeout, "--log-level", "info"}
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
	ticksOnce(t, ticks)
}

// ticksOnce requires each firing logged by the tick lines ("tick ID DUE")
// to have run once, and returns their due times in order.
func ticksOnce(t *testing.T, ticks []logLine) []time.Time {
	t.Helper()
	ids, due := map[string]int{}, map[string]int{}
	var times []time.Time
	for _, l := range ticks {
		f := strings.Fields(l.Message)
		if len(f) != 3 {
			t.Fatalf("tick line %q", l.Message)
		}
		ids[f[1]]++
		if due[f[2]]++; due[f[2]] == 1 {
			times = append(times, msTime(t, f[2]))
		}
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
	slices.SortFunc(times, time.Time.Compare)
	return times
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
	flags := []string{"--database-url", dbURL, "--bot-timeout", testBotTimeout, "--log-level", "info"}
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
