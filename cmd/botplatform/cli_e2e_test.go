package main

// End-to-end tests of the client commands (bots, files, chat) against a
// real server: in-process through cli.Run where the output is checked,
// and as the binary itself where the exit status or a terminal matters.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// cliEchoJS answers every text with "echo: " and the text, and logs it.
const cliEchoJS = `bot.on.message('*', async ({ message, client, logger }) => {
  logger.info('heard ' + message.payload.text)
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'echo: ' + message.payload.text } })
})`

// cliRun runs a client command in-process as c, with stdin, and returns
// its stdout, its stderr and its error.
func (c client) cliRun(ctx context.Context, stdin string, args ...string) (string, string, error) {
	var out, errOut syncbuf.Buffer
	err := c.cliRunTo(ctx, stdin, &out, &errOut, args...)
	return out.String(), errOut.String(), err
}

func (c client) cliRunTo(ctx context.Context, stdin string, out, errOut *syncbuf.Buffer, args ...string) error {
	args = append(args, "--url", c.s.URL, "--token", c.token, "--workspace", c.ws, "--data", c.t.TempDir())
	return cli.Run(ctx, args, cli.IO{In: strings.NewReader(stdin), Out: out, Err: errOut, Getenv: func(string) string { return "" }})
}

// cliOK runs a client command that must succeed.
func (c client) cliOK(args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, errOut, err := c.cliRun(ctx, "", args...)
	if err != nil {
		c.t.Fatalf("botplatform %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// noEscapes fails when output meant for a pipe holds terminal control
// characters (a progress bar's or a spinner's).
func noEscapes(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\r\x1b") {
		t.Errorf("%s holds terminal control characters:\n%q", what, s)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"bots", testCLIBots},
		{"files", testCLIFiles},
		{"chat and logs", testCLIChat},
		{"errors", testCLIErrors},
	}, runtimeFlags...)
}

func testCLIBots(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "cli bots")
	code := filepath.Join(t.TempDir(), "echo.js")
	if err := os.WriteFile(code, []byte(cliEchoJS), 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.cliOK("bots", "create", "helper", "--code", code)
	if !strings.Contains(out, "created bot helper (bot_") || !strings.Contains(out, "chat: "+s.URL+"/chat/") {
		t.Errorf("bots create: %q", out)
	}
	var list struct{ Bots []struct{ ID, Name string } }
	if err := json.Unmarshal([]byte(c.cliOK("bots", "ls", "--json")), &list); err != nil || len(list.Bots) != 1 || list.Bots[0].Name != "helper" {
		t.Fatalf("bots ls --json: %+v, %v", list, err)
	}
	id := list.Bots[0].ID
	if out := c.cliOK("bots", "ls"); !strings.Contains(out, id) || !strings.Contains(out, "helper") {
		t.Errorf("bots ls: %q", out)
	}
	// Deployed code is the bot's, by name or by id.
	other := filepath.Join(t.TempDir(), "other.js")
	if err := os.WriteFile(other, []byte(strings.Replace(cliEchoJS, "echo: ", "other: ", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := c.cliOK("bots", "deploy", id, other); !strings.Contains(out, "deployed "+other) {
		t.Errorf("bots deploy: %q", out)
	}
	if out := c.cliOK("chat", "helper"); out != "" {
		t.Errorf("chat with no input printed %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, errOut, err := c.cliRun(ctx, "hi\n", "chat", "helper"); err != nil || out != "other: hi\n" {
		t.Errorf("chat after deploy: %q, %v\n%s", out, err, errOut)
	}
	// Code that does not compile is refused, and the bot keeps its code.
	bad := filepath.Join(t.TempDir(), "bad.js")
	if err := os.WriteFile(bad, []byte("bot.on.message('*', async () => {\n  let x = ;\n})"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.cliRun(ctx, "", "bots", "deploy", "helper", bad)
	var apiErr *cli.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Error(), "line 2") {
		t.Errorf("deploying code with a syntax error: %v, want a 400 naming line 2", err)
	}
	if out, _, err := c.cliRun(ctx, "again\n", "chat", id); err != nil || out != "other: again\n" {
		t.Errorf("chat after a refused deploy: %q, %v", out, err)
	}
	// Versions: listed, saved under a name, rolled back to by name.
	if out := c.cliOK("bots", "versions", "helper"); !regexp.MustCompile(`(?m)^botver_\S+ +v2 .*\n^botver_\S+ +v1 .*\n$`).MatchString(out) {
		t.Errorf("bots versions after create and one deploy: %q; want v2 then v1", out)
	}
	if out := c.cliOK("bots", "save", "helper", "known-good", "--description", "answers other"); !strings.Contains(out, "as version known-good (botver_") {
		t.Errorf("bots save: %q", out)
	}
	if out := c.cliOK("bots", "rollback", "helper", "v1"); !strings.Contains(out, "now runs version v1") {
		t.Errorf("bots rollback: %q", out)
	}
	if out, _, err := c.cliRun(ctx, "hi\n", "chat", "helper"); err != nil || out != "echo: hi\n" {
		t.Errorf("chat after rolling back to v1: %q, %v", out, err)
	}
	c.cliOK("bots", "rollback", "helper", "known-good")
	if out, _, err := c.cliRun(ctx, "hi\n", "chat", "helper"); err != nil || out != "other: hi\n" {
		t.Errorf("chat after rolling forward to known-good: %q, %v", out, err)
	}
	if _, _, err := c.cliRun(ctx, "", "bots", "rollback", "helper", "nope"); err == nil || !strings.Contains(err.Error(), `no version with the id or the name "nope"`) {
		t.Errorf("rollback to an unknown version: %v", err)
	}
	var vs struct {
		Versions []struct{ Name, Description string }
	}
	if err := json.Unmarshal([]byte(c.cliOK("bots", "versions", id, "--json")), &vs); err != nil || len(vs.Versions) != 3 ||
		vs.Versions[0].Name != "known-good" || vs.Versions[0].Description != "answers other" {
		t.Errorf("bots versions --json: %+v, %v", vs, err)
	}
	// The audit log shows the rollbacks, newest first.
	if out := c.cliOK("audit", "--limit", "2"); !regexp.MustCompile(`(?m)^WHEN .*\n^\S+ +\S+ +DEPLOY_BOT +helper +version rollback to known-good .*\n^\S+ +\S+ +DEPLOY_BOT +helper +version rollback to v1 .*\n$`).MatchString(out) {
		t.Errorf("audit --limit 2: %q", out)
	}
	var recs struct {
		Records []struct{ Action, Value string }
	}
	if err := json.Unmarshal([]byte(c.cliOK("audit", "--json", "--limit", "1000")), &recs); err != nil || len(recs.Records) < 5 {
		t.Errorf("audit --json: %+v, %v", recs, err)
	}
	if _, _, err := c.cliRun(ctx, "", "audit", "--limit", "0"); err == nil || !strings.Contains(err.Error(), "--limit") {
		t.Errorf("audit --limit 0: %v", err)
	}
	if out := c.cliOK("bots", "rm", "helper"); !strings.Contains(out, "deleted bot helper") {
		t.Errorf("bots rm: %q", out)
	}
	if out := c.cliOK("bots", "ls", "--json"); !strings.Contains(out, `"bots": []`) && !strings.Contains(out, `"bots": null`) {
		t.Errorf("bots ls after rm: %q", out)
	}
}

func testCLIFiles(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "cli files")
	c.createBot(map[string]any{"name": "kb"})
	dir := filepath.Join(t.TempDir(), "docs")
	for name, body := range map[string]string{
		"returns.md":          "# Returns\n\nYou can return any item within 30 days of delivery for a full refund.\n",
		"shipping/times.txt":  "Standard shipping takes 3 to 5 business days. Express shipping arrives the next day.\n",
		".hidden/secret.txt":  "not uploaded",
		"shipping/.notes.txt": "not uploaded either",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, errOut, err := c.cliRun(ctx, "", "files", "put", "kb", dir, "--index", "--tag", "team=support", "--wait", "--json")
	if err != nil {
		t.Fatalf("files put: %v\n%s", err, errOut)
	}
	noEscapes(t, "files put's stderr", errOut)
	noEscapes(t, "files put's stdout", out)
	if !strings.Contains(errOut, "uploaded docs/returns.md (") {
		t.Errorf("files put's stderr: %q", errOut)
	}
	var put struct {
		Files []struct {
			Key, Status string
			Tags        map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &put); err != nil {
		t.Fatalf("files put --json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, f := range put.Files {
		got[f.Key] = f.Status
		if f.Tags["team"] != "support" {
			t.Errorf("%s: tags %v", f.Key, f.Tags)
		}
	}
	want := map[string]string{"docs/returns.md": "indexing_completed", "docs/shipping/times.txt": "indexing_completed"}
	if len(got) != len(want) || got["docs/returns.md"] != want["docs/returns.md"] || got["docs/shipping/times.txt"] != want["docs/shipping/times.txt"] {
		t.Errorf("files put --wait: %v, want %v", got, want)
	}

	// A single file, elsewhere in the key space, without the tag.
	single := filepath.Join(t.TempDir(), "hello.txt")
	if err := os.WriteFile(single, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := c.cliOK("files", "put", "kb", single, "--prefix", "misc"); !strings.Contains(out, "misc/hello.txt") || !strings.Contains(out, "upload_completed") {
		t.Errorf("files put one file: %q", out)
	}
	// A directory given through a symbolic link: its files, under the link's name.
	link := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(filepath.Join(dir, "shipping"), link); err != nil {
		t.Fatal(err)
	}
	if out := c.cliOK("files", "put", "kb", link); !strings.Contains(out, "linked/times.txt") {
		t.Errorf("files put of a linked directory: %q", out)
	}
	c.cliOK("files", "rm", "kb", "linked/times.txt")
	if out := c.cliOK("files", "ls", "kb", "--tag", "team=support"); !strings.Contains(out, "docs/returns.md") || strings.Contains(out, "misc/hello.txt") {
		t.Errorf("files ls --tag: %q", out)
	}
	if out := c.cliOK("files", "ls", "kb"); strings.Count(out, "\n") != 4 {
		t.Errorf("files ls: want a header and 3 files:\n%s", out)
	}
	var found struct {
		Passages []struct {
			Content string
			File    struct{ Key string }
		}
	}
	if err := json.Unmarshal([]byte(c.cliOK("files", "search", "kb", "how many days do I have to return an item", "--limit", "1", "--json")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Passages) != 1 || found.Passages[0].File.Key != "docs/returns.md" {
		t.Errorf("files search --json: %+v", found)
	}
	if out := c.cliOK("files", "search", "kb", "express shipping"); !strings.HasPrefix(out, "1. docs/shipping/times.txt (match 100% of the best)") {
		t.Errorf("files search: %q", out)
	}
	if out := c.cliOK("files", "get", "kb", "misc/hello.txt"); out != "hello" {
		t.Errorf("files get to stdout: %q", out)
	}
	dst := filepath.Join(t.TempDir(), "returns.md")
	c.cliOK("files", "get", "kb", "docs/returns.md", "-o", dst)
	if b, err := os.ReadFile(dst); err != nil || !strings.HasPrefix(string(b), "# Returns") {
		t.Errorf("files get -o: %q, %v", b, err)
	}
	if out := c.cliOK("files", "rm", "kb", "misc/hello.txt"); !strings.Contains(out, "deleted misc/hello.txt") {
		t.Errorf("files rm: %q", out)
	}
	if _, _, err := c.cliRun(ctx, "", "files", "get", "kb", "misc/hello.txt"); err == nil || !strings.Contains(err.Error(), `no file with the key "misc/hello.txt"`) {
		t.Errorf("files get of a deleted file: %v", err)
	}
}

func testCLIChat(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "cli chat")
	c.createBot(map[string]any{"name": "echo", "code": cliEchoJS, "maxExecutionTime": 120})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Following the logs from before the chat: its lines appear as the
	// bot logs them, and interrupting the follow is no error.
	follow, stopFollow := context.WithCancel(ctx)
	var logs, logErr syncbuf.Buffer
	followed := make(chan error, 1)
	go func() { followed <- c.cliRunTo(follow, "", &logs, &logErr, "bots", "logs", "echo", "-f") }()

	out, errOut, err := c.cliRun(ctx, "hello\n\nsecond line\n", "chat", "echo")
	if err != nil || out != "echo: hello\necho: second line\n" {
		t.Fatalf("chat from a pipe: %q, %v\n%s", out, err, errOut)
	}
	eventually(t, "bots logs -f to print both lines", func() bool {
		return strings.Contains(logs.String(), "INFO") && strings.Contains(logs.String(), "heard hello") && strings.Contains(logs.String(), "heard second line")
	})
	stopFollow()
	if err := <-followed; err != nil {
		t.Errorf("bots logs -f, interrupted: %v\n%s", err, logErr.String())
	}
	if n := strings.Count(logs.String(), "heard hello"); n != 1 {
		t.Errorf("bots logs -f printed a line %d times:\n%s", n, logs.String())
	}
	if out := c.cliOK("bots", "logs", "echo", "--json"); strings.Count(out, `"level": "info"`) < 2 {
		t.Errorf("bots logs --json: %q", out)
	}
	// A bot that does not answer: the pipe's wait ends with an error.
	c.createBot(map[string]any{"name": "mute", "code": `bot.on.message('*', async () => {})`})
	if _, _, err := c.cliRun(ctx, "anyone?\n", "chat", "mute", "--timeout", "1s"); err == nil || !strings.Contains(err.Error(), "no reply from the bot within 1s") ||
		!strings.Contains(err.Error(), "bots logs") {
		t.Errorf("chat with a bot that does not answer: %v", err)
	}
	// A bot without code, and one whose handler throws, say why no reply
	// comes: the first at once, the second as soon as its error is logged.
	c.createBot(map[string]any{"name": "empty"})
	_, errOut, err = c.cliRun(ctx, "anyone?\n", "chat", "empty", "--timeout", "1s")
	if err == nil || !strings.Contains(errOut, "note: bot empty has no code") || !strings.Contains(err.Error(), "has no code") {
		t.Errorf("chat with a bot without code: %v\n%s", err, errOut)
	}
	c.createBot(map[string]any{"name": "throws", "code": `bot.on.message('*', async () => { throw new Error('the handler broke') })`})
	if _, _, err := c.cliRun(ctx, "anyone?\n", "chat", "throws", "--timeout", "50s"); err == nil || !strings.Contains(err.Error(), "the bot failed:") ||
		!strings.Contains(err.Error(), "the handler broke") {
		t.Errorf("chat with a bot that throws: %v", err)
	}
}

func testCLIErrors(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "cli errors")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var usage *cli.UsageError
	for _, args := range [][]string{
		{"bots"}, {"bots", "launch"}, {"bots", "create"}, {"files", "put", "kb"}, {"files", "ls", "kb", "--tag", "novalue"},
		{"bots", "logs", "kb", "--since", "yesterday"}, {"chat"}, {"bots", "ls", "--bogus"},
	} {
		if _, _, err := c.cliRun(ctx, "", args...); !errors.As(err, &usage) {
			t.Errorf("botplatform %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	if _, _, err := c.cliRun(ctx, "", "files", "ls", "nosuchbot"); err == nil || !strings.Contains(err.Error(), `no bot has the id or the name "nosuchbot"`) {
		t.Errorf("files ls of an unknown bot: %v", err)
	}
	var apiErr *cli.APIError
	bad := s.as(t, "bp_pat_notatokenatallnotatokenatall", c.ws)
	if _, _, err := bad.cliRun(ctx, "", "bots", "ls"); !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Type != "Unauthorized" {
		t.Errorf("a bad token: %v, want the server's 401 Unauthorized", err)
	}
	// Two bots of one name: the id is asked for.
	c.createBot(map[string]any{"name": "twin"})
	c.createBot(map[string]any{"name": "twin"})
	if _, _, err := c.cliRun(ctx, "", "files", "ls", "twin"); err == nil || !strings.Contains(err.Error(), `2 bots are named "twin"`) {
		t.Errorf("an ambiguous name: %v", err)
	}
}

// mainCommand is the binary's command line, run as main() runs it.
func mainCommand(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "BOTPLATFORM_URL=", "BOTPLATFORM_TOKEN=")
	cmd.Dir = t.TempDir()
	return cmd
}

// TestCLIExitStatus: 0, 1 for an error (with the server's error type and
// message), 2 for a command line that cannot run; credentials from
// bootstrap.json by default.
func TestCLIExitStatus(t *testing.T) {
	t.Parallel()
	s := startBackend(t, "sqlite")
	for _, tc := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"bots", "ls", "--data", s.DataDir}, 0, ""},
		{[]string{"files", "ls", "nosuchbot", "--data", s.DataDir}, 1, `no bot has the id or the name "nosuchbot"`},
		{[]string{"bots", "ls", "--data", s.DataDir, "--token", "bp_pat_notatokenatallnotatokenatall"}, 1, "botplatform: Unauthorized: "},
		{[]string{"bots", "create", "--data", s.DataDir}, 2, "usage: botplatform bots create NAME"},
		{[]string{"bots", "ls", "--data", t.TempDir()}, 2, "no access token"},
		{[]string{"nosuchcommand"}, 2, `unknown command "nosuchcommand"`},
		{[]string{"bots", "ls", "-h"}, 0, "-json"},
		{[]string{"bots", "--help"}, 0, "botplatform bots create NAME [--code FILE.js]\n      creates a bot"},
		{[]string{"files", "help"}, 0, "botplatform files search BOT QUERY"},
		{[]string{"users", "-h"}, 0, "erases a chat user"},
		{[]string{"users", "nope"}, 2, `unknown command "users nope"`},
		{[]string{"bots", "create", "--help"}, 0, "usage: botplatform bots create NAME [--code FILE.js]\n\ncreates a bot"},
		{[]string{"token", "--help"}, 0, "usage: botplatform token --email EMAIL"},
	} {
		cmd := mainCommand(t, tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		status := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != tc.status || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("botplatform %s: status %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), status, stderr.String(), tc.status, tc.stderr)
		}
	}
}

// TestCLITerminal drives the client in a pseudo-terminal: the upload's
// progress bar is drawn there, and the chat is interactive (the bot's
// replies appear while the next line is typed; Ctrl-D ends it).
func TestCLITerminal(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", runtimeFlags...)
	c := s.owner(t)
	c.createBot(map[string]any{"name": "echo", "code": cliEchoJS, "maxExecutionTime": 120})
	doc := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(doc, bytes.Repeat([]byte("A line of text about returns and refunds.\n"), 50000), 0o600); err != nil {
		t.Fatal(err)
	}

	out, status := inTerminal(t, nil, "files", "put", "echo", doc, "--data", s.DataDir)
	if status != 0 || !strings.Contains(out, "big.txt") || !strings.Contains(out, "100%") || !strings.Contains(out, "upload_completed") {
		t.Errorf("files put in a terminal: status %d, output:\n%q", status, out)
	}

	out, status = inTerminal(t, func(tty *os.File, out *syncbuf.Buffer) {
		eventually(t, "the chat's prompt", func() bool { return strings.Contains(out.String(), "you> ") })
		tty.Write([]byte("hello there\r"))
		eventually(t, "the bot's reply", func() bool { return strings.Contains(out.String(), "echo: echo: hello there") })
		tty.Write([]byte("and again\r"))
		eventually(t, "the second reply", func() bool { return strings.Contains(out.String(), "echo: echo: and again") })
		tty.Write([]byte{4}) // Ctrl-D
	}, "chat", "echo", "--data", s.DataDir)
	if status != 0 || !strings.Contains(out, "Chatting with echo") {
		t.Errorf("chat in a terminal: status %d, output:\n%q", status, out)
	}
}

// inTerminal runs the binary with a pseudo-terminal as its stdin, stdout
// and stderr, lets drive type into it, and returns what it wrote and its
// exit status.
func inTerminal(t *testing.T, drive func(tty *os.File, out *syncbuf.Buffer), args ...string) (string, int) {
	t.Helper()
	cmd := mainCommand(t, args...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out syncbuf.Buffer
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(&out, tty) }()
	if drive != nil {
		drive(tty, &out)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("botplatform %s did not end; output:\n%q", strings.Join(args, " "), out.String())
	}
	<-copied // the terminal's output ends (EIO) once the process is gone
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		return out.String(), exit.ExitCode()
	}
	if werr != nil {
		t.Fatal(werr)
	}
	return out.String(), 0
}

// TestCLIRateLimited: a call refused by a rate limit is retried after the
// server's Retry-After when it is idempotent (and said so on stderr); a
// POST is not retried, and fails with the server's RateLimited.
func TestCLIRateLimited(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", "--rate-limit-token", "1/4s")
	c := s.owner(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// exhaust spends the token's bucket: its last request was refused.
	exhaust := func() {
		t.Helper()
		for i := 0; ; i++ {
			if r := c.raw("GET", "/v1/admin/bots", nil); r.Status == 429 {
				return
			}
			if i > 20 {
				t.Fatal("no 429 from a limit of 1 request per 4 s")
			}
		}
	}
	// A stall of the machine past the bucket's refill lets a call through
	// unrefused: then the check is run again.
	retried := false
	for try := 0; try < 3 && !retried; try++ {
		exhaust()
		out, errOut, err := c.cliRun(ctx, "", "bots", "ls", "--json")
		if err != nil || !strings.Contains(out, `"bots"`) {
			t.Fatalf("bots ls through a rate limit: %v\n%s\n%s", err, out, errOut)
		}
		retried = strings.Contains(errOut, "RateLimited: too many requests for this token") && strings.Contains(errOut, "retrying in ")
	}
	if !retried {
		t.Error("bots ls was never refused, so never retried")
	}
	var apiErr *cli.APIError
	for try := 0; try < 3; try++ {
		exhaust()
		_, errOut, err := c.cliRun(ctx, "", "bots", "create", "again")
		if err == nil {
			continue // let through after a stall
		}
		if !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.Type != "RateLimited" || strings.Contains(errOut, "retrying") {
			t.Errorf("bots create (a POST) past the limit: %v, stderr %q; want the 429, not retried", err, errOut)
		}
		return
	}
	t.Error("bots create was never refused")
}
