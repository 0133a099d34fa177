package main

// Scale-out end-to-end: three `serve` processes on one PostgreSQL database
// and one bucket of an S3-compatible gateway, each with its own empty data
// directory, and every call pointed at a node other than the one that
// wrote what it reads (docs/deploy.md, "Several nodes").

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob/blobtest"
	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// multiNodeLease is the nodes' --job-lease: short, so that a killed
// node's jobs are taken over within seconds; renewed every third of it.
const multiNodeLease = 4 * time.Second

// authCacheTTL is the nodes' --auth-cache-ttl (the default).
const authCacheTTL = 5 * time.Second

// waitJS waits, on a message "wait", until a message "go" is in the
// conversation, then answers once; "ping" is answered "pong".
const waitJS = sayJS + `bot.on.message('*', async ({ message, client }) => {
  const text = message.payload.text
  if (text === 'wait') {
    for (let i = 0; i < 1000000; i++) {
      const { messages } = await client.listMessages({ conversationId: message.conversationId })
      if (messages.some((m) => m.payload.text === 'go')) break
    }
    await say(client, message.conversationId, 'finished')
    return
  }
  if (text === 'ping') await say(client, message.conversationId, 'pong')
})
`

// tickJS logs each firing of the recurring event: its id and due time.
const tickJS = `bot.on.event('tick', ({ event, logger }) => { logger.info('tick', event.id, event.createdOn) })
`

// recurringPeriod is the recurring event's period: longer than a second,
// so that nodes which loaded the schedule at different times must still
// agree on its due times.
const recurringPeriod = 3 * time.Second

// TestMultiNode: the nodes inherit the bucket's credentials from the
// process's environment (TestMain).
func TestMultiNode(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	gw := s3test.Start(t)

	// The smallest pool allowed: nothing may need more connections at once
	// than a node has.
	flags := func(id string) []string {
		return append([]string{"--database-url", dbURL, "--database-connections", "4", "--blob-url", gw.URL("multi/"), "--node-id", id,
			"--job-lease", multiNodeLease.String(), "--bot-poll", "250ms", "--auth-cache-ttl", authCacheTTL.String()}, runtimeFlags...)
	}
	nodes := []*processServer{launchProcess(t, t.TempDir(), flags("node-1")...)}
	nodes[0].readBootstrap(t)
	for _, id := range []string{"node-2", "node-3"} {
		n := launchProcess(t, t.TempDir(), flags(id)...)
		n.Boot = nodes[0].Boot
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		n.DatabaseURL = dbURL
	}
	n1, n2, n3 := nodes[0].testServer, nodes[1].testServer, nodes[2].testServer
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// The recurring event fires while the other checks run; counted last.
	ticks := newBotEnv(t, n2, tickJS, map[string]any{"maxExecutionTime": 120, "recurringEvents": map[string]any{
		"tick": map[string]any{"type": "tick", "payload": map[string]any{}, "schedule": map[string]any{"cron": "@every " + recurringPeriod.String()}}}})
	ticksFrom := time.Now()

	t.Run("upload_on_2_download_on_1", func(t *testing.T) {
		e := newFilesEnv(t, n2, "multinode upload")
		content := blobtest.GenBytes(11, 3<<20+7)
		file := e.f.create(n2, "across.bin", content, nil)
		on1 := n1.files(t, e.ws.token, e.bot).getFile(file.ID)
		if !strings.HasPrefix(on1.URL, n1.URL+"/") {
			t.Fatalf("node 1 gave the url %s, not its own", on1.URL)
		}
		got := n1.fetch(t, on1.URL)
		if got.Status != 200 || sha256.Sum256(got.Body) != sha256.Sum256(content) {
			t.Fatalf("download from node 1: status %d, %d bytes; want the %d uploaded through node 2", got.Status, len(got.Body), len(content))
		}
	})

	t.Run("message_on_1_signals_on_3", func(t *testing.T) {
		e1 := newBotEnv(t, n1, echoJS, nil)
		e3 := *e1
		e3.s = n3
		u := e1.user("multinode-user")
		c := e1.conversation(u, "multinode-conv")
		st := e3.listenTo(u, c)
		for _, text := range []string{"one", "two", "three"} {
			sent := e1.send(u, c, text)
			if got := st.expect(t, "message_created"); got["id"] != sent["id"] || got["isBot"] != false {
				t.Fatalf("node 3's stream: %v, want the user's message %v first", got, sent["id"])
			}
			reply := st.expect(t, "message_created")
			if reply["isBot"] != true || textOf(reply) != text {
				t.Fatalf("node 3's stream: %v, want the bot's reply %q next", reply, text)
			}
		}
	})

	t.Run("indexed_on_1_searchable_on_all", func(t *testing.T) {
		e := newFilesEnv(t, n1, "multinode search")
		clients := []filesClient{n1.files(t, e.ws.token, e.bot), n2.files(t, e.ws.token, e.bot), n3.files(t, e.ws.token, e.bot)}
		first := clients[0].index(n1, "first.txt", []byte("The lighthouse keeper logs every passing ship in a leather notebook."), nil)
		// Every node searches first, so that each holds the bot's vectors
		// and has counted the second file's words (none yet) before that
		// file is indexed elsewhere.
		for i, f := range clients {
			eventually(t, fmt.Sprintf("node %d to find the first file", i+1), func() bool { return hitFiles(f.search("lighthouse keeper notebook"))[first.ID] })
			f.search("glaciers carving fjords")
		}
		second := clients[1].index(n2, "second.txt", []byte("Glaciers carve fjords slowly over many thousands of years."), nil)
		for i, f := range clients {
			eventually(t, fmt.Sprintf("node %d to find the file indexed on node 2", i+1), func() bool {
				hits := f.search("glaciers carving fjords")
				return len(hits) > 0 && hits[0].File.ID == second.ID
			})
		}
	})

	// refusedWithin polls node 3 with c until it answers 401, which it must
	// within the auth cache's TTL and slack for a loaded machine
	// (docs/deploy.md, "Bounds").
	refusedWithin := func(t *testing.T, what string, c client, path string) {
		t.Helper()
		changed := time.Now()
		bound := authCacheTTL + 10*time.Second
		for {
			r := c.get(path)
			if r.Status == 401 {
				t.Logf("node 3 refused %s %s after the change on node 1 (bound %s)", what, time.Since(changed).Round(time.Millisecond), bound)
				return
			}
			if r.Status != 200 {
				t.Fatalf("node 3 answered %d: %s", r.Status, r.Body)
			}
			if time.Since(changed) > bound {
				t.Fatalf("node 3 still accepts %s %s after the change on node 1", what, time.Since(changed))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	t.Run("token_deleted_on_1_refused_on_3", func(t *testing.T) {
		owner1 := n1.owner(t)
		pat := field(t, owner1.post("/v1/admin/account/pats", map[string]any{"note": "multinode"}).ok(), "pat").(map[string]any)
		on3 := n3.as(t, str(t, pat, "value"), n1.Boot.WorkspaceID)
		on3.get("/v1/admin/account/me").ok() // now in node 3's cache
		owner1.del("/v1/admin/account/pats/" + str(t, pat, "id")).ok()
		refusedWithin(t, "the deleted token", on3, "/v1/admin/account/me")
	})

	t.Run("member_removed_on_1_refused_on_3", func(t *testing.T) {
		ws := n1.newWorkspace(t, "multinode members")
		member, memberID := ws.addMember("developer")
		on3 := n3.as(t, member.token, ws.ws)
		on3.get("/v1/admin/bots").ok() // the membership is now in node 3's cache
		ws.del("/v1/admin/workspace-members/" + memberID).ok()
		refusedWithin(t, "the removed member", on3, "/v1/admin/bots")
		// The account and its token remain: only the workspace refuses it.
		on3.in("").get("/v1/admin/account/me").ok()
	})

	t.Run("recurring_fires_once", func(t *testing.T) {
		// Every node reads the schedules again within 10 s: from then on
		// all three fire it.
		window := 10*time.Second + 3*recurringPeriod
		eventually(t, "the recurring event's window", func() bool { return time.Since(ticksFrom) > window })
		lines := ticks.logs("messageContains=tick+evt_")
		ticks.admin.put("/v1/admin/bots/"+ticks.botID, map[string]any{"recurringEvents": map[string]any{"tick": nil}}).ok()
		times := ticksOnce(t, lines)
		if len(times) < 3 {
			t.Fatalf("%d firings in %s: %q", len(times), window, lines)
		}
		for i := 1; i < len(times); i++ {
			if d := times[i].Sub(times[i-1]); d%recurringPeriod != 0 {
				t.Errorf("firings due at %s and %s, %s apart: the nodes disagree on the schedule of @every %s", times[i-1].Format(time.StampMilli),
					times[i].Format(time.StampMilli), d, recurringPeriod)
			}
		}
	})

	// From here on nodes die: first the one running a bot event.
	alive := map[string]*processServer{"node-1": nodes[0], "node-2": nodes[1], "node-3": nodes[2]}
	// killRunner kills the node that runs the job of kind about subject.
	killRunner := func(t *testing.T, kind, subject string) string {
		t.Helper()
		var node string
		eventually(t, "a node to claim the "+kind+" job", func() bool {
			err := db.QueryRow(`SELECT node_id FROM jobs WHERE kind = $1 AND subject = $2 AND status = 'running'`, kind, subject).Scan(&node)
			return err == nil
		})
		p := alive[node]
		if p == nil {
			t.Fatalf("the %s job is held by %q, not a live node", kind, node)
		}
		p.kill()
		delete(alive, node)
		t.Logf("killed %s while it ran the %s job", node, kind)
		return node
	}
	anyAlive := func() *testServer {
		for _, id := range []string{"node-1", "node-2", "node-3"} {
			if p := alive[id]; p != nil {
				return p.testServer
			}
		}
		return nil
	}

	t.Run("kill_during_bot_event", func(t *testing.T) {
		e := newBotEnv(t, n1, waitJS, map[string]any{"maxExecutionTime": 120})
		u := e.user("kill-user")
		c := e.conversation(u, "kill-conv")
		e.send(u, c, "wait")
		killRunner(t, platform.JobBotEvent, e.internalConv(c))
		on := *e
		on.s = anyAlive()
		on.admin = on.s.as(t, e.admin.token, e.admin.ws)
		on.send(u, c, "go")
		on.send(u, c, "ping") // handled after the others: nothing more comes
		replies := on.waitReplies(u, c, 2)
		if got := strings.Join(texts(replies), ","); got != "finished,pong" {
			t.Fatalf("replies %s, want finished,pong: the event the killed node ran handled once, by another node", got)
		}
	})

	t.Run("kill_during_indexing", func(t *testing.T) {
		s := anyAlive()
		e := newFilesEnv(t, s, "multinode kill indexing")
		f := s.files(t, e.ws.token, e.bot)
		content := longText(2 << 20)
		ref := f.index(s, "reference.txt", content, nil)
		want := contents(f.allPassages(ref.ID))
		file := f.startIndexed(s, "killed.txt", content, nil)
		killRunner(t, platform.JobIndexFile, file.ID)
		s = anyAlive()
		f = s.files(t, e.ws.token, e.bot)
		got := f.mustIndexed(file.ID)
		if got.Status != "indexing_completed" {
			t.Fatalf("status %s", got.Status)
		}
		if ps := contents(f.allPassages(file.ID)); !slices.Equal(ps, want) {
			t.Fatalf("the file indexed after its node died has %d passages, want the %d of the same content indexed once", len(ps), len(want))
		}
		var left int
		if err := db.QueryRow(`SELECT COUNT(*) FROM jobs WHERE kind = $1`, platform.JobIndexFile).Scan(&left); err != nil || left != 0 {
			t.Fatalf("indexing jobs left: %d (%v)", left, err)
		}
	})
}

// longText is about n bytes of sentences, slow enough to index that a node
// can be killed while it does.
func longText(n int) []byte {
	words := strings.Fields("harbor lantern quarry meadow orchard falcon copper thistle glacier prairie cobalt " +
		"willow ember saddle granite beacon marsh cinder juniper tundra velvet anchor ridge hollow")
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		for i := 0; i < 12; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteString(".\n")
		if r.IntN(8) == 0 {
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}
