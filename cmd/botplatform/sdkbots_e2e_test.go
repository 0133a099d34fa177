package main

// Bots served at a url (the SDK's HTTP contract): a bot server written here
// in Go plays the part of `bp serve`, checks each request's headers and
// signature, and answers as the SDK does. docs/sdk-bots.md.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/sdkbot"
)

// fakeSDKBot is a bot server that speaks the contract; reply decides the
// answer to each request.
type fakeSDKBot struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	seen   []sdkRequest
	reply  func(r sdkRequest) (int, string)
}

type sdkRequest struct {
	Operation, Type, BotID string
	Configuration          map[string]any
	Body                   map[string]any
	SignatureOK            bool
}

func newFakeSDKBot(t *testing.T, reply func(r sdkRequest) (int, string)) *fakeSDKBot {
	f := &fakeSDKBot{t: t, reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := sdkRequest{Operation: r.Header.Get("x-bp-operation"), Type: r.Header.Get("x-bp-type"), BotID: r.Header.Get("x-bot-id")}
		conf, err := base64.StdEncoding.DecodeString(r.Header.Get("x-bp-configuration"))
		if err == nil {
			_ = json.Unmarshal(conf, &req.Configuration)
		}
		_ = json.Unmarshal(body, &req.Body)
		f.mu.Lock()
		req.SignatureOK = checkSignature(r.Header.Get(sdkbot.SignatureHeader), f.secret, body)
		f.seen = append(f.seen, req)
		f.mu.Unlock()
		status, out := f.reply(req)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// checkSignature verifies the signature header as a bot server would.
func checkSignature(header, secret string, body []byte) bool {
	var ts string
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			ts = v
		}
	}
	var unix int64
	if _, err := fmt.Sscan(ts, &unix); err != nil {
		return false
	}
	return sdkbot.Sign(secret, time.Unix(unix, 0), body) == header
}

func (f *fakeSDKBot) requests() []sdkRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sdkRequest(nil), f.seen...)
}

// urlBotEnv is a chat env whose bot is served by a fakeSDKBot.
func urlBotEnv(t *testing.T, s *testServer, reply func(e *chatEnv, r sdkRequest) (int, string)) (*chatEnv, *fakeSDKBot) {
	e := newChatEnv(t, s)
	f := newFakeSDKBot(t, nil)
	f.reply = func(r sdkRequest) (int, string) { return reply(e, r) }
	bot := e.admin.get("/v1/admin/bots/" + e.botID).ok()
	f.secret = str(t, bot, "bot", "signingSecret")
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": f.srv.URL, "configuration": map[string]any{"data": map[string]any{"greeting": "hi"}}}).ok()
	return e, f
}

// botKey creates a bot API key for the env's bot: what a bot server calls
// the platform with.
func (e *chatEnv) botKey() string {
	e.t.Helper()
	r := e.admin.post("/v1/admin/bots/baks", map[string]any{"botId": e.botID, "note": "sdk bot"}).ok()
	return str(e.t, r, "value")
}

// runtimeCall calls the Runtime API with a bot API key, as @botpress/client
// does for a bot.
func (e *chatEnv) runtimeCall(key, method, path string, body any) (int, map[string]any) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, e.s.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("x-bot-id", e.botID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestSDKBotsOverHTTP(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"an echo bot at a url answers users, in order, signed", testURLBotEcho},
		{"a bot's error, an unreachable bot and a slow bot fail their event; the next is handled", testURLBotFailures},
		{"actions of a bot at a url", testURLBotActions},
		{"bad urls are refused", testURLBotBadURL},
		{"only an answer in the SDK's error format reaches the caller", testURLBotAnswersNotEchoed},
		{"connection failures read the same", testURLBotUniformFailures},
		{"on a developer's machine, loopback is reached and the server's own port is not", testURLBotDevMachine},
	}, runtimeFlags...)
}

func testURLBotEcho(t *testing.T, s *testServer) {
	var key string
	var mu sync.Mutex
	e, f := urlBotEnv(t, s, func(e *chatEnv, r sdkRequest) (int, string) {
		if r.Type != "message_created" {
			return 200, "{}"
		}
		ev, _ := r.Body["event"].(map[string]any)
		p, _ := ev["payload"].(map[string]any)
		msg, _ := p["message"].(map[string]any)
		text, _ := field(t, msg, "payload", "text").(string)
		mu.Lock()
		k := key
		mu.Unlock()
		status, out := e.runtimeCall(k, http.MethodPost, "/v1/chat/messages", map[string]any{
			"conversationId": msg["conversationId"], "userId": e.botID, "type": "text", "tags": map[string]any{},
			"payload": map[string]any{"text": "echo: " + text}})
		if status/100 != 2 {
			return 500, fmt.Sprintf(`{"message":"createMessage: %d %v"}`, status, out)
		}
		return 200, "{}"
	})
	mu.Lock()
	key = e.botKey()
	mu.Unlock()
	u := e.createUser(nil)
	conv := e.conversation(u, "")
	for i := range 3 {
		if got := textOf(e.ask(u, conv, fmt.Sprint("m", i))); got != fmt.Sprint("echo: m", i) {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("the bot got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Operation != "event_received" || r.Type != "message_created" || r.BotID != e.botID || !r.SignatureOK {
			t.Fatalf("request %d: %+v", i, r)
		}
		if r.Configuration["greeting"] != "hi" {
			t.Fatalf("x-bp-configuration = %v", r.Configuration)
		}
		ev := r.Body["event"].(map[string]any)
		wantKeys(t, ev, "event", "id", "type", "payload", "createdAt", "conversationId", "userId", "messageId", "status", "failureReason")
		p := ev["payload"].(map[string]any)
		wantKeys(t, p, "event.payload", "message", "user", "conversation")
		if got := field(t, p, "message", "payload", "text"); got != fmt.Sprint("m", i) {
			t.Fatalf("request %d carries %v: events out of order", i, got)
		}
		if field(t, p, "message", "type") != "text" || field(t, p, "message", "direction") != "incoming" ||
			field(t, p, "conversation", "integration") != "chat" || field(t, p, "user", "id") != u.ID || field(t, p, "conversation", "id") != conv {
			t.Fatalf("request %d payload: %v", i, p)
		}
	}
	e.waitLog("level=info", "delivered message", "message_created", f.srv.URL, ": 200 in")
}

func testURLBotFailures(t *testing.T, s *testServer) {
	unblock := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(unblock) }) })
	e, f := urlBotEnv(t, s, func(e *chatEnv, r sdkRequest) (int, string) {
		text, _ := field(t, r.Body, "event", "payload", "message", "payload", "text").(string)
		switch text {
		case "throw":
			return 400, `{"id":"err_1","code":400,"type":"Runtime","message":"An unexpected error occurred in the bot."}`
		case "hang":
			<-unblock
		}
		return 200, "{}"
	})
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"maxExecutionTime": 1}).ok()
	u := e.createUser(nil)
	conv := e.conversation(u, "")
	e.send(u, conv, "throw")
	e.waitLog("level=error", "answered 400: An unexpected error occurred in the bot.")
	e.send(u, conv, "hang")
	e.waitLog("level=error", "did not answer within its deadline (1s)")
	e.send(u, conv, "fine")
	e.waitLog("level=info", "delivered message", ": 200 in")
	if n := len(f.requests()); n != 3 {
		t.Fatalf("the bot got %d requests, want 3 (no retry of an answered or timed-out event)", n)
	}

	// An unreachable bot: retried with backoff, then failed; the event after is handled.
	release.Do(func() { close(unblock) })
	f.srv.Close()
	e.send(u, conv, "lost")
	e.waitLog("level=warn", "delivering message", "attempt 1 of 8", "the bot cannot be reached at its url")
	e.waitLog("level=warn", "delivering message", "attempt 7 of 8")
	// The give-up says how long the tries lasted (25.4 s of backoff), not the last try's time.
	line := e.waitLog("level=error", "delivering message", "failed after 8 tries over ", "the bot cannot be reached at its url")
	over := strings.TrimSpace(strings.SplitN(strings.SplitN(line.Message, " tries over ", 2)[1], "(", 2)[0])
	if d, err := time.ParseDuration(over); err != nil || d < 25*time.Second {
		t.Fatalf("the give-up says the tries lasted %q: %s", over, line.Message)
	}
}

func testURLBotActions(t *testing.T, s *testServer) {
	e, _ := urlBotEnv(t, s, func(e *chatEnv, r sdkRequest) (int, string) {
		if r.Operation != "action_triggered" {
			return 200, "{}"
		}
		if r.Type == "boom" {
			return 400, `{"code":400,"type":"Runtime","message":"Action boom not found"}`
		}
		in := r.Body["input"].(map[string]any)
		return 200, fmt.Sprintf(`{"output":{"doubled":%v,"type":%q}}`, in["n"].(float64)*2, r.Body["type"])
	})
	out := e.callAction(e.admin, map[string]any{"type": "double", "input": map[string]any{"n": 21}}).ok()
	if field(t, out, "output", "doubled") != 42.0 || field(t, out, "output", "type") != "double" {
		t.Fatalf("callAction = %v", out)
	}
	e.callAction(e.admin, map[string]any{"type": "boom", "input": map[string]any{}}).fail(400, "Runtime", "Action boom not found")
	e.waitLog("level=info", "action double to", ": 200 in")
}

func testURLBotBadURL(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	for _, u := range []string{"ftp://example.com/", "not a url", "http://user:pw@example.com/", "/relative"} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url")
	}
	bot := e.admin.get("/v1/admin/bots/" + e.botID).ok()
	if v, _ := field(t, bot, "bot").(map[string]any)["url"].(string); v != "" {
		t.Fatalf("a refused url was stored: %q", v)
	}
}

// testURLBotAnswersNotEchoed: a bot's url may name a service that is no
// bot; what it answers reaches neither callAction's caller nor the bot's
// logs, unless it is the SDK's error format (a RuntimeError's JSON).
func testURLBotAnswersNotEchoed(t *testing.T, s *testServer) {
	const secret = "INTERNAL-SECRET-4711"
	e, _ := urlBotEnv(t, s, func(e *chatEnv, r sdkRequest) (int, string) {
		switch r.Type {
		case "html":
			return 500, "<html>" + secret + "</html>"
		case "json":
			return 500, `{"message":"` + secret + `"}`
		case "status":
			return 400, `{"code":500,"type":"Runtime","message":"` + secret + `"}`
		case "ok":
			return 200, secret
		}
		return 400, `{"id":"err_1","code":400,"type":"Runtime","message":"the bot's own words"}`
	})
	for name, want := range map[string]string{"html": "the bot answered 500", "json": "the bot answered 500", "status": "the bot answered 400",
		"ok": `the bot's answer is not {"output": {…}}`, "sdk": "the bot answered 400: the bot's own words"} {
		msg := e.callAction(e.admin, map[string]any{"type": name, "input": map[string]any{}}).fail(400, "Runtime", want)
		if strings.Contains(msg, secret) {
			t.Errorf("callAction %s: %q holds what the service answered", name, msg)
		}
	}
	e.waitLog("level=error", "action sdk", "the bot's own words")
	for _, l := range e.logs("") {
		if strings.Contains(l.Message, secret) {
			t.Errorf("the bot's logs hold what the service answered: %s", l.Message)
		}
	}
}

// testURLBotUniformFailures: a port that refuses and one that accepts and
// hangs up read the same to the bot's developer, so that a bot's url is no
// port scanner; the server's log tells them apart.
func testURLBotUniformFailures(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()
	hangUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hangUp.Close() })
	go func() {
		for {
			c, err := hangUp.Accept()
			if err != nil {
				return
			}
			// It reads the whole request, then hangs up: the server reads EOF
			// where an answer should be (closing with the request unread would
			// make it a reset or a broken pipe, by how the close meets the write).
			if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.Copy(io.Discard, req.Body)
			}
			c.Close()
		}
	}()
	var msgs []string
	for _, u := range []string{refused, "http://" + hangUp.Addr().String()} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).ok()
		msgs = append(msgs, e.callAction(e.admin, map[string]any{"type": "probe", "input": map[string]any{}}).fail(400, "Runtime", "the bot cannot be reached at its url"))
	}
	if msgs[0] != msgs[1] {
		t.Errorf("a refused port and a port that hangs up read differently:\n%s\n%s", msgs[0], msgs[1])
	}
	for _, l := range e.logs("level=error") {
		if strings.Contains(l.Message, "refused") || strings.Contains(l.Message, "EOF") {
			t.Errorf("the bot's logs tell what the network said: %s", l.Message)
		}
	}
	eventually(t, "both failures in the server's log", func() bool {
		log := s.Stderr.String()
		return strings.Contains(log, "connection refused") && strings.Contains(log, "url=http://"+hangUp.Addr().String()+" err=EOF")
	})
}

// testURLBotDevMachine: the test server listens on loopback with no public
// URL of its own, a developer's machine: a bot served on loopback is
// reached (the other scenarios' bots are), the server's own port is not,
// but for its tunnels.
func testURLBotDevMachine(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	own := ownPort(t, s)
	for _, u := range []string{s.URL + "/v1/admin/bots", "http://127.0.0.2:" + own + "/x", "http://[::ffff:127.0.0.1]:" + own + "/"} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url", "this server itself")
	}
	for _, u := range []string{"http://10.0.0.7/", "http://169.254.169.254/"} {
		e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": u}).fail(400, "InvalidPayload", "url", "--bot-url-private")
	}
	e.admin.put("/v1/admin/bots/"+e.botID, map[string]any{"url": s.URL + "/0f8e3c4e-6a53-4c62-9a4e-1b2c3d4e5f62"}).ok()
}
