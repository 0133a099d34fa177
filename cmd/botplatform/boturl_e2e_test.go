package main

// What a bot's url may reach (docs/sdk-bots.md#where-a-bots-url-may-point):
// the address rule of bot code's fetch, applied after DNS on every
// connection, with the operator's ranges, loopback on a developer's own
// server, and never the server's own ports but for its tunnels.

import (
	"net"
	"strings"
	"testing"
)

// notDevMachine makes a server listening on loopback stand for one that is
// not a developer's own: behind a proxy, it has a public URL of its own.
var notDevMachine = []string{"--public-url", "https://bots.example.test"}

func TestBotURLAddresses(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"loopback, private and link-local addresses are refused at create and update", testBotURLLiterals},
		{"a name that resolves to loopback is refused when dialed", testBotURLName},
	}, notDevMachine...)
}

// TestBotURLOperatorRanges: --bot-url-private lets bots' urls reach the
// ranges it lists, and never the server's own port.
func TestBotURLOperatorRanges(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"an allowed range is reached, the server's own port is not", testBotURLAllowedRange},
	}, append(notDevMachine, "--bot-url-private", "127.0.0.0/8,::1")...)
}

// urlEnv is a bot of a workspace of its own, for urls: the Chat API's
// webhook url names the public URL, which the test does not reach.
func urlEnv(t *testing.T, s *testServer) *chatEnv {
	adm := s.newWorkspace(t, "urls "+t.Name())
	return &chatEnv{t: t, s: s, admin: adm, botID: str(t, adm.createBot(nil), "id"), db: &chatDB{owner: t}}
}

// ownPort is the port the test server listens on.
func ownPort(t *testing.T, s *testServer) string {
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func testBotURLLiterals(t *testing.T, s *testServer) {
	e := urlEnv(t, s)
	target := newFakeSDKBot(t, func(sdkRequest) (int, string) { return 200, `{"output":{}}` })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(target.srv.URL, "http://"))
	for _, u := range []string{
		target.srv.URL, "http://[::1]:" + port + "/", "http://[::ffff:127.0.0.1]:" + port, "http://0.0.0.0:" + port,
		"http://169.254.169.254/latest/meta-data/", "http://10.0.0.7:5432/", "http://192.168.1.1/", "http://[fd00::1]/",
	} {
		e.admin.post("/v1/admin/bots", map[string]any{"url": u}).fail(400, "InvalidPayload", "url: address", "loopback, private or link-local", "--bot-url-private")
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url: address", "--bot-url-private")
	}
	// The server's own urls: a `bp dev` tunnel's only.
	own := ownPort(t, s)
	for _, u := range []string{s.URL + "/v1/admin/bots", "http://localhost:" + own + "/v1/admin/bots", s.URL, "https://bots.example.test/v1/admin/bots"} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url", "this server itself")
	}
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": s.URL + "/0f8e3c4e-6a53-4c62-9a4e-1b2c3d4e5f60"}).ok()
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": "https://bots.example.test/0f8e3c4e-6a53-4c62-9a4e-1b2c3d4e5f61"}).ok()
	if v := str(t, e.admin.get("/v1/admin/bots/"+e.botID).ok(), "bot", "url"); !strings.HasSuffix(v, "5f61") {
		t.Fatalf("url %q, want the last tunnel's (no refused url stored)", v)
	}
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the bot on loopback got %d requests", n)
	}
}

func testBotURLName(t *testing.T, s *testServer) {
	e := urlEnv(t, s)
	target := newFakeSDKBot(t, func(sdkRequest) (int, string) { return 200, `{"output":{"reached":true}}` })
	// localhost is a name: it passes updateBot, and is refused on each
	// address it resolves to.
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": strings.Replace(target.srv.URL, "127.0.0.1", "localhost", 1)}).ok()
	msg := e.callAction(e.admin, map[string]any{"type": "ping", "input": map[string]any{}}).fail(400, "Runtime", "the bot cannot be reached at its url")
	if strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "::1") || strings.Contains(msg, "refused") {
		t.Errorf("callAction's error %q tells what the network said", msg)
	}
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the bot on loopback got %d requests: its name was dialed", n)
	}
	e.waitLog("level=error", "action ping", "failed after", "the bot cannot be reached at its url")
	eventually(t, "the refusal in the server's log", func() bool {
		return strings.Contains(s.Stderr.String(), "is loopback, private or link-local (an operator allows them with --bot-url-private)")
	})
}

func testBotURLAllowedRange(t *testing.T, s *testServer) {
	e := urlEnv(t, s)
	target := newFakeSDKBot(t, func(sdkRequest) (int, string) { return 200, `{"output":{"reached":true}}` })
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": target.srv.URL}).ok()
	if out := e.callAction(e.admin, map[string]any{"type": "ping", "input": map[string]any{}}).ok(); field(t, out, "output", "reached") != true {
		t.Fatalf("callAction = %v", out)
	}
	own := ownPort(t, s)
	for _, u := range []string{s.URL + "/v1/admin/bots", "http://127.0.0.2:" + own + "/v1/admin/bots", "http://[::1]:" + own + "/"} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url", "this server itself")
	}
}
