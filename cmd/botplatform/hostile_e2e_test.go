package main

// A hostile tenant, through the server's own entry points: a developer of
// workspace B deploys a Node bundle that attacks the machine, and acts
// beyond workspace B; a viewer of workspace A tries to act as A's bot.
// Every attack fails, nothing of A changes, and A's bot answers after each
// (docs/security.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileBundle runs the attack a message names and answers with what
// happened: {"ok": true, "detail": …} when the attack worked.
const hostileBundle = bundleAPI + `
const fs = require('fs')
const cp = require('child_process')
const attempt = async (f) => { try { return { ok: true, detail: String(await f()) } } catch (e) { return { ok: false, detail: String(e && (e.cause && e.cause.code || e.message) || e) } } }
const get = async (url) => { const r = await fetch(url, { signal: AbortSignal.timeout(4000) }); return r.status + ' ' + (await r.text()).slice(0, 200) }
const dir = process.env.SECRET_DATA_DIR
const attacks = {
  'read-data': () => fs.readFileSync(dir + '/bootstrap.json', 'utf8'),
  'list-data': () => fs.readdirSync(dir).join(','),
  'write-data': () => fs.writeFileSync(dir + '/planted', 'x'),
  'write-root': () => fs.writeFileSync('/planted', 'x'),
  'write-bundle': () => fs.writeFileSync(__filename, 'x'),
  'write-tmp': () => { fs.writeFileSync('/tmp/mine', 'x'); return fs.readFileSync('/tmp/mine', 'utf8') },
  'postgres': () => get('http://127.0.0.1:5432/'),
  'server-loopback': () => get('http://127.0.0.1:' + process.env.SECRET_OTHER_PORT + '/'),
  'private': () => get('http://10.1.2.3/'),
  'metadata': () => get('http://169.254.169.254/latest/meta-data/'),
  'processes': () => fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d)).join(','),
  'exec': () => cp.execSync('id').toString(),
  'fork-bomb': () => { let n = 0; for (let i = 0; i < 500; i++) { try { cp.spawn('/bin/sh', ['-c', 'sleep 60']); n++ } catch (e) { throw new Error('after ' + n + ': ' + e.message) } } return n },
  'fds': () => { const fds = []; try { for (;;) { fds.push(fs.openSync('/dev/null', 'r')); if (fds.length > 100000) return 'unbounded' } } finally { fds.forEach((fd) => fs.closeSync(fd)) } },
  'capabilities': () => fs.readFileSync('/proc/self/status', 'utf8').split('\n').filter((l) => /^CapEff:/.test(l)).join(''),
  'memory': () => { const hog = []; for (;;) hog.push(Buffer.alloc(64 << 20, 1)) },
  'hang': () => new Promise(() => {}),
}
module.exports = { default: { handler: async (req) => {
  if (req.headers['x-bp-type'] !== 'message_created') return
  const m = JSON.parse(req.body).event.payload.message
  const f = attacks[m.payload.text]
  const out = f ? await attempt(f) : { ok: false, detail: 'no such attack' }
  await api('/v1/chat/messages', { conversationId: m.conversationId, userId: process.env.BP_BOT_ID, type: 'text', tags: {}, payload: { text: JSON.stringify(out) } })
} } }
`

func TestHostileTenant(t *testing.T) {
	t.Parallel()
	needNode(t)
	runScenarios(t, []scenario{
		{"a developer's Node bundle cannot touch the server or another workspace's bot", testHostileBundle},
		{"members act only within their role and their workspace", testHostileMembers},
	}, runtimeFlags...)
}

// victim is workspace A: its owner's bot, a Node bundle that echoes, and a
// user talking to it.
type victim struct {
	*chatEnv
	user chatUser
	conv string
	bot  json.RawMessage // getBot as the owner saw it before the attacks
}

func newVictim(t *testing.T, s *testServer) *victim {
	a := &victim{chatEnv: newChatEnv(t, s)}
	a.deploy(nodeEchoBundle, nil)
	a.user = a.createUser(nil)
	a.conv = a.conversation(a.user, "")
	a.answers("before")
	a.bot = a.admin.get("/v1/admin/bots/" + a.botID).Body
	return a
}

// answers checks that A's bot still answers its user.
func (a *victim) answers(step string) {
	a.t.Helper()
	if got := textOf(a.ask(a.user, a.conv, step)); got != "node: "+step {
		a.t.Fatalf("after %s, A's bot answers %q", step, got)
	}
}

// unchanged checks that nothing of A's bot changed: its definition, and
// its conversation holds only what A's user and bot said.
func (a *victim) unchanged() {
	a.t.Helper()
	if got := a.admin.get("/v1/admin/bots/" + a.botID).Body; string(got) != string(a.bot) {
		a.t.Errorf("A's bot changed:\nbefore %s\nafter  %s", a.bot, got)
	}
	for _, m := range a.messages(a.user, a.conv) {
		text := textOf(m)
		if !strings.HasPrefix(text, "node: ") && str(a.t, m, "userId") != a.user.ID {
			a.t.Errorf("a message in A's conversation that neither A's user nor A's bot wrote: %v", m)
		}
	}
}

func testHostileBundle(t *testing.T, s *testServer) {
	a := newVictim(t, s)
	ownerB := s.newWorkspace(t, "hostile B")
	devB, _ := ownerB.addMember("developer")
	b := chatEnvOf(t, s, devB, devB.createBot(map[string]any{"name": "hostile"}))
	// The attacker is told what it would have to guess: the data directory and
	// the port of a service on the host's loopback.
	b.deploy(hostileBundle, map[string]any{"maxExecutionTime": 10, "secrets": map[string]any{
		"DATA_DIR": s.DataDir, "OTHER_PORT": hostService(t)}})
	ub := b.createUser(nil)
	conv := b.conversation(ub, "")
	attack := func(name string) (bool, string) {
		t.Helper()
		var out struct {
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		}
		reply := textOf(b.ask(ub, conv, name))
		if err := json.Unmarshal([]byte(reply), &out); err != nil {
			t.Fatalf("%s: the bundle answered %q", name, reply)
		}
		t.Logf("%s: ok=%v %s", name, out.OK, out.Detail)
		return out.OK, out.Detail
	}
	for _, tc := range []struct {
		name   string
		worked bool
		detail string // in the outcome's detail
	}{
		{"read-data", false, "no such file"},
		{"list-data", false, "no such file"},
		{"write-data", false, ""},
		{"write-root", false, "read-only"},
		{"write-bundle", false, "read-only"},
		{"write-tmp", true, "x"}, // its own temporary directory
		{"postgres", false, ""},
		{"server-loopback", false, ""},
		{"private", false, ""},
		{"metadata", false, ""},
		{"processes", true, ""},
		{"exec", false, ""},
		{"fork-bomb", false, "after 0"},
		{"fds", false, "EMFILE"},
		{"capabilities", true, "0000000000000000"},
	} {
		worked, detail := attack(tc.name)
		if worked != tc.worked || !strings.Contains(detail, tc.detail) {
			t.Errorf("%s: worked=%v (%s), want worked=%v with %q", tc.name, worked, detail, tc.worked, tc.detail)
		}
		if tc.name == "processes" && detail != "1" {
			t.Errorf("the bundle sees other processes: %s", detail)
		}
		a.answers(tc.name)
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bundle wrote into the data directory: %v", err)
	}

	// A bundle that eats all memory dies alone; one that never answers is
	// cut at its deadline. Each time A's bot answers, and B's answers again.
	// (Past its memory limit, an allocation fails in the bundle, or the
	// process is killed: either way the server and A go on.)
	before := len(b.fromBot(b.messages(ub, conv)))
	b.send(ub, conv, "memory")
	eventually(t, "the memory hog to fail or be killed", func() bool {
		if replies := b.fromBot(b.messages(ub, conv)); len(replies) > before {
			if reply := textOf(replies[len(replies)-1]); !strings.Contains(reply, `"ok":false`) {
				t.Fatalf("the memory hog: %s", reply)
			}
			return true
		}
		return len(b.logs("level=error")) > 0
	})
	a.answers("memory")
	b.send(ub, conv, "hang")
	b.waitLog("level=error", "did not answer within its deadline")
	a.answers("hang")
	if worked, _ := attack("write-tmp"); !worked {
		t.Errorf("B's bot does not answer after its own crash")
	}
	a.unchanged()
}

// hostService is a service on the host's loopback, as PostgreSQL or an
// operator's dashboard would be; its port.
func hostService(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the host's loopback service was reached: %s %s", r.Method, r.URL)
		fmt.Fprint(w, "host secret")
	}))
	t.Cleanup(srv.Close)
	return srv.URL[strings.LastIndex(srv.URL, ":")+1:]
}

func testHostileMembers(t *testing.T, s *testServer) {
	a := newVictim(t, s)
	botA := "/v1/admin/bots/" + a.botID
	viewerA, _ := a.admin.addMember("viewer")
	ownerB := s.newWorkspace(t, "hostile B")
	devB, _ := ownerB.addMember("developer")
	b := chatEnvOf(t, s, devB, devB.createBot(map[string]any{"name": "hostile"}))
	keyB := b.botKey()

	// A viewer of A reads A's bot without a credential that acts as it, and
	// cannot change it.
	vb := viewerA.get(botA).ok()
	if field(t, vb, "bot", "signingSecret") != "" {
		t.Fatalf("a viewer reads the signing secret")
	}
	if status, _ := a.runtimeCall(legacyHostKey("", a.botID), "POST", "/v1/chat/users", map[string]any{"tags": map[string]any{}}); status != http.StatusUnauthorized {
		t.Errorf("a key derived from what a viewer reads: %d, want 401", status)
	}
	viewerA.put(botA, map[string]any{"description": "mine"}).fail(http.StatusForbidden, "Forbidden")
	viewerA.post("/v1/admin/bots/baks", map[string]any{"botId": a.botID, "note": "mine"}).fail(http.StatusForbidden, "Forbidden")
	viewerA.post(botA+"/export?secrets=true", nil).fail(http.StatusForbidden, "Forbidden")
	viewerA.put(botA, map[string]any{"code": hostileBundle}).fail(http.StatusForbidden, "Forbidden")

	// A developer of B reaches nothing of A: not through A's workspace, nor
	// through B's with A's ids, nor with B's bot key.
	devB.in(a.admin.ws).get(botA).fail(http.StatusUnauthorized, "Unauthorized", "not a member")
	for _, r := range []*response{
		devB.get(botA),
		devB.put(botA, map[string]any{"code": hostileBundle}),
		devB.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "x", "input": map[string]any{}}, "x-bot-id", a.botID),
	} {
		if r.Status/100 == 2 {
			t.Errorf("%s: %d, want a refusal", r.what, r.Status)
		}
	}
	if status, _ := a.runtimeCall(keyB, "POST", "/v1/chat/users", map[string]any{"tags": map[string]any{}}); status/100 == 2 {
		t.Errorf("B's bot key with A's bot id: %d, want a refusal", status)
	}
	// B's url may not aim at the server or the machine's private services.
	for _, u := range []string{s.URL + "/v1/admin/bots", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1:5432/"} {
		devB.put("/v1/admin/bots/"+b.botID, map[string]any{"url": u}).fail(http.StatusBadRequest, "InvalidPayload", "url")
	}
	// Text that is not Unicode is refused, not stored.
	r := devB.raw(http.MethodPut, "/v1/admin/bots/"+b.botID, "{\"name\":\"\xff\xfe\"}")
	r.fail(http.StatusBadRequest, "InvalidPayload", "name")
	a.answers("members")
	a.unchanged()
}
