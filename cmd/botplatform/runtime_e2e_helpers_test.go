package main

// Helpers of the bot runtime end-to-end tests: deploying code to a chat
// env's bot, waiting (with a deadline, never a fixed sleep) for what the
// bot's code sends and logs, calling actions, and running the server as a
// separate process that can be killed.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// runtimeStateLimit is the --bot-state-limit of the runtime test servers:
// small, so that going over it is cheap.
const runtimeStateLimit = 1000

// testBotTimeout is the --bot-timeout of the runtime test servers: a
// deadline no busy machine reaches. An event stopped at its deadline after
// its reply went out drops its state and its remaining logs, which a test
// would see as a wrong count or a missing line; tests of deadlines set the
// bot's maxExecutionTime.
const testBotTimeout = "60s"

// runtimeFlags are the serve flags of the runtime test servers. The
// ceiling on maxExecutionTime is high so that bots whose outcome must not
// depend on the machine's speed (unlimited) can have a deadline no busy
// machine reaches.
var runtimeFlags = []string{"--bot-timeout", testBotTimeout, "--bot-timeout-max", "120s", "--bot-state-limit", fmt.Sprint(runtimeStateLimit)}

// unlimited is the spec of a bot whose handlers do little but must never
// fail at their deadline, however busy the machine: a failed event drops
// its state, and the test would see it as a wrong answer.
var unlimited = map[string]any{"maxExecutionTime": 120}

// sayJS defines say(client, conversationId, text), which sends a text
// message; bot code in these tests starts with it.
const sayJS = `const say = (client, conversationId, text) =>
  client.createMessage({ conversationId, payload: { type: 'text', text: String(text) } })
`

// deploy sets the bot's code (and any other updateBot fields) and requires
// the update to succeed.
func (e *chatEnv) deploy(code string, extra map[string]any) {
	e.t.Helper()
	body := map[string]any{"code": code}
	for k, v := range extra {
		body[k] = v
	}
	e.admin.put("/v1/admin/bots/"+e.botID, body).ok()
}

// newBotEnv is a chat env whose bot runs code.
func newBotEnv(t *testing.T, s *testServer, code string, extra map[string]any) *chatEnv {
	t.Helper()
	e := newChatEnv(t, s)
	e.deploy(code, extra)
	return e
}

// eventually polls cond until it holds, failing the test after
// signalTimeout with what was awaited.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyExplained(t, what, cond, nil)
}

// eventuallyExplained is eventually whose failure also says what explain
// finds then.
func eventuallyExplained(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(signalTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			why := ""
			if explain != nil {
				why = "\n" + explain()
			}
			t.Fatalf("%s: not within %s%s", what, signalTimeout, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// messages lists the whole conversation as u sees it, oldest first.
func (e *chatEnv) messages(u chatUser, conv string) []map[string]any {
	e.t.Helper()
	_, newest, _ := e.pages(e.t, "/conversations/"+url.PathEscape(conv)+"/messages", u.Key, "messages", 100)
	out := make([]map[string]any, len(newest))
	for i, m := range newest {
		out[len(newest)-1-i] = m
	}
	return out
}

// fromBot keeps the messages the bot sent.
func (e *chatEnv) fromBot(ms []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range ms {
		if m["userId"] == e.botID {
			out = append(out, m)
		}
	}
	return out
}

// waitReplies waits until the bot has sent n messages in the conversation
// and returns them, oldest first. More than n is a failure.
func (e *chatEnv) waitReplies(u chatUser, conv string, n int) []map[string]any {
	e.t.Helper()
	var got []map[string]any
	eventually(e.t, fmt.Sprintf("%d bot messages in %s", n, conv), func() bool {
		got = e.fromBot(e.messages(u, conv))
		return len(got) >= n
	})
	if len(got) > n {
		e.t.Fatalf("%s: %d bot messages, want %d: %v", conv, len(got), n, texts(got))
	}
	return got
}

// ask sends text and waits for the bot's next message in the conversation
// (the k-th, counting the ones before), which it returns.
func (e *chatEnv) ask(u chatUser, conv, text string) map[string]any {
	e.t.Helper()
	before := len(e.fromBot(e.messages(u, conv)))
	e.send(u, conv, text)
	return e.waitReplies(u, conv, before+1)[before]
}

// textOf is a message's payload text.
func textOf(m map[string]any) string {
	p, _ := m["payload"].(map[string]any)
	s, _ := p["text"].(string)
	return s
}

func texts(ms []map[string]any) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, textOf(m))
	}
	return out
}

// msTime parses a createdAt of the API.
func msTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("date %#v: %v", v, err)
	}
	return at
}

// decodeJSON parses JSON text the bot's code produced.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, s)
	}
	return m
}

// logLine is one line of getBotLogs.
type logLine struct {
	Timestamp      string `json:"timestamp"`
	Level          string `json:"level"`
	Message        string `json:"message"`
	WorkflowID     string `json:"workflowId"`
	UserID         string `json:"userId"`
	ConversationID string `json:"conversationId"`
}

// logs returns the bot's logs (every page) with extra query parameters
// ("level=error&conversationId=…"), oldest first.
func (e *chatEnv) logs(query string) []logLine {
	e.t.Helper()
	var all []logLine
	token := ""
	for page := 0; ; page++ {
		if page > 50 {
			e.t.Fatalf("getBotLogs: more than 50 pages")
		}
		p := "/v1/admin/bots/" + e.botID + "/logs?timeStart=2020-01-01T00:00:00Z"
		if query != "" {
			p += "&" + query
		}
		if token != "" {
			p += "&nextToken=" + url.QueryEscape(token)
		}
		var r struct {
			Logs      []logLine `json:"logs"`
			NextToken string    `json:"nextToken"`
		}
		e.admin.get(p).decode(&r)
		all = append(all, r.Logs...)
		if r.NextToken == "" {
			return all
		}
		token = r.NextToken
	}
}

// waitLog waits for a log line (matching query) whose message contains
// each of parts, and returns it.
func (e *chatEnv) waitLog(query string, parts ...string) logLine {
	e.t.Helper()
	var found logLine
	eventuallyExplained(e.t, fmt.Sprintf("a log line (%s) containing %q", query, parts), func() bool {
		for _, l := range e.logs(query) {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l.Message, p)
			}
			if ok {
				found = l
				return true
			}
		}
		return false
	}, e.errorLogs)
	return found
}

// errorLogs lists the bot's error lines (why an event it waits for may
// never end as expected).
func (e *chatEnv) errorLogs() string {
	var b strings.Builder
	b.WriteString("the bot's error lines:")
	for _, l := range e.logs("level=error") {
		fmt.Fprintf(&b, "\n  %s %s (conversation %s)", l.Timestamp, l.Message, l.ConversationID)
	}
	return b.String()
}

// callAction calls POST /v1/chat/actions as c for the env's bot.
func (e *chatEnv) callAction(c client, body any) *response {
	e.t.Helper()
	return c.raw(http.MethodPost, "/v1/chat/actions", body, "x-bot-id", e.botID)
}

// trySend is send for other goroutines: it reports failures instead of
// failing the test.
func (e *chatEnv) trySend(u chatUser, conv, text string) error {
	body, _ := json.Marshal(map[string]any{"conversationId": conv, "payload": map[string]any{"type": "text", "text": text}})
	req, err := http.NewRequest(http.MethodPost, e.s.URL+e.base+"/messages", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-user-key", u.Key)
	res, err := e.s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return fmt.Errorf("send %q: status %d: %s", text, res.StatusCode, b.String())
	}
	return nil
}

// ---- the server as a process of its own ----

// serveArgsEnv, when set, makes the test binary run `botplatform` with the
// JSON array of arguments it holds instead of running tests: the crash
// test runs the server it kills that way, as the same code main() runs.
const serveArgsEnv = "BOTPLATFORM_E2E_SERVE_ARGS"

// mainEnv makes the test binary run main() with its arguments: the CLI as
// a user runs it, with its exit status, in a terminal or a pipe.
const mainEnv = "BOTPLATFORM_E2E_MAIN"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bot-vm" { // the server's bot processes
		if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "botplatform:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(mainEnv) == "1" { // the binary itself, for tests of exit codes and terminals
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
		stop()
		os.Exit(code)
	}
	if raw := os.Getenv(serveArgsEnv); raw != "" {
		os.Exit(serveProcess(raw))
	}
	os.Exit(runTests(m))
}

// runTests runs the tests with the test gateway's credentials in the
// process's environment, where serve (in this process or a child) reads
// them for an s3:// --blob-url, the secret through its _FILE variable: set
// once for every test, so that the tests on object storage run in
// parallel with the others.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "botplatform-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	secret := filepath.Join(dir, "s3-secret")
	if err := os.WriteFile(secret, []byte(s3test.SecretKey+"\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": s3test.AccessKey, "AWS_SECRET_ACCESS_KEY": "", "AWS_SECRET_ACCESS_KEY_FILE": secret} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// serveProcess is main() for the server process of the crash test.
func serveProcess(raw string) int {
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, serveArgsEnv+":", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, args, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "botplatform:", err)
		return 1
	}
	return 0
}

// processServer is a server running as a child process.
type processServer struct {
	*testServer
	kill func() // SIGKILL, and wait for the process to be gone
}

// startProcess runs `botplatform serve` in a child process on the data
// directory (SQLite) and waits for it to listen. It is stopped with SIGTERM
// when the test ends, unless killed before.
func startProcess(t *testing.T, dataDir string, extra ...string) *processServer {
	t.Helper()
	p := launchProcess(t, dataDir, extra...)
	p.readBootstrap(t)
	return p
}

// launchProcess is startProcess without reading bootstrap.json: for a
// process joining a database another one set up.
func launchProcess(t *testing.T, dataDir string, extra ...string) *processServer {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir}, extra...)
	raw, _ := json.Marshal(args)
	s := &testServer{DataDir: dataDir, Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{},
		http: &http.Client{Timeout: 60 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		done: make(chan error, 1)}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveArgsEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the server process: %v", err)
	}
	go func() { s.done <- cmd.Wait() }()
	var once sync.Once
	var stopErr error
	end := func(sig os.Signal) error {
		once.Do(func() {
			s.http.CloseIdleConnections()
			_ = cmd.Process.Signal(sig)
			select {
			case err := <-s.done:
				if sig != os.Kill {
					stopErr = err
				}
			case <-time.After(stopTimeout):
				_ = cmd.Process.Kill()
				<-s.done
				stopErr = fmt.Errorf("the server process did not exit within %s of %v", stopTimeout, sig)
			}
		})
		return stopErr
	}
	s.stop = func() error { return end(syscall.SIGTERM) }
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("server process %d: %v", cmd.Process.Pid, err)
		}
		if t.Failed() {
			t.Logf("server process %d stdout:\n%s\nstderr (tail):\n%s", cmd.Process.Pid, s.Stdout, tail(s.Stderr.String(), 3000))
		}
	})
	s.waitListening(t)
	return &processServer{testServer: s, kill: func() { _ = end(os.Kill) }}
}
