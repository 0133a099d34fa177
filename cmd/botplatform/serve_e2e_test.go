package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// runCLI runs one command to completion. A command that should fail but
// starts serving instead is stopped by the timeout (a hang guard, generous
// for a busy machine) and then returns nil, which the callers report.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut syncbuf.Buffer
	err = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestVersionAndUnknownCommands(t *testing.T) {
	t.Parallel()
	out, _, err := runCLI(t, "version")
	if err != nil || out != "botplatform dev\n" {
		t.Errorf("version: %q, %v; want \"botplatform dev\\n\"", out, err)
	}
	if out, _, err := runCLI(t, "licenses"); err != nil || !strings.Contains(out, "WordNet 3.0 Copyright 2006 by Princeton University") {
		t.Errorf("licenses: %q, %v; want WordNet's notice", out, err)
	}
	if _, _, err := runCLI(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("unknown command: err = %v, want one naming it", err)
	}
	if _, _, err := runCLI(t); err == nil {
		t.Error("no command: want an error")
	}
}

// TestBuiltVersion: the binary `make build` makes (BOTPLATFORM_BIN, as
// `make test` runs the tests) prints the checkout's version, not "dev".
func TestBuiltVersion(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("BOTPLATFORM_BIN")
	if bin == "" {
		t.Skip("BOTPLATFORM_BIN is not set (make test sets it to the binary make build stamps)")
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^botplatform (v[0-9][^\s]*|[0-9a-f]{7,}(-dirty)?)\n$`).Match(out) {
		t.Errorf("%s version: %q, want the checkout's git describe", bin, out)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []string{"--addr", "127.0.0.1:0", "--data", dir}
	for _, tc := range []struct {
		args []string
		want string // the flag the error must name
	}{
		{[]string{"serve", "--log-format", "xml"}, "log-format"},
		{[]string{"serve", "--log-level", "loud"}, "log-level"},
		{[]string{"serve", "--database-url", "mysql://x"}, "database-url"},
		{[]string{"serve", "--public-url", "ftp://example.com"}, "public-url"},
		{[]string{"serve", "--chat-url", "not a url"}, "chat-url"},
		{[]string{"serve", "--shutdown-timeout", "soon"}, "shutdown-timeout"},
		{[]string{"serve", "--data", ""}, "data"},
		{[]string{"serve", "--rate-limit-token", "lots"}, "rate-limit-token"},
		{[]string{"serve", "--rate-limit-chat-user", "10/s,burst=0"}, "rate-limit-chat-user"},
		{[]string{"serve", "--backup-cron", "every day"}, "backup-cron"},
		{[]string{"serve", "--backup-cron", "@daily", "--database-url", "postgres://127.0.0.1:1/x"}, "backup-cron"},
		{[]string{"serve", "--backup-keep", "0"}, "backup-keep"},
		{[]string{"serve", "--bot-versions-keep", "0"}, "bot-versions-keep"},
		{[]string{"serve", "--ai-search-rewrite"}, "ai-search-rewrite"},
		{[]string{"serve", "--blob-url", "file:///srv/blobs"}, "blob-url"},
		{[]string{"serve", "--blob-url", "s3:///prefix"}, "blob-url"},
		// No credentials, or (where the environment has some) no bucket there.
		{[]string{"serve", "--blob-url", "s3://bucket?endpoint=http://127.0.0.1:1"}, "blob-url"},
		{[]string{"serve", "--bogus"}, "bogus"},
		{[]string{"serve", "stray"}, "stray"},
		{[]string{"migrate", "--log-format", "xml"}, "log-format"},
		{[]string{"migrate", "--database-url", "mysql://x"}, "database-url"},
		{[]string{"token", "--email", "x@example.com", "--log-format", "xml"}, "log-format"},
		{[]string{"token"}, "email"},
		{[]string{"token", "--email", "not-an-email"}, "email"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append(append([]string{tc.args[0]}, base...), tc.args[1:]...)
			_, _, err := runCLI(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("botplatform %s: err = %v, want an error naming %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bootstrap.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused command bootstrapped the data directory: %v", err)
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir, dbURL := storage(t, backend)
			for range 2 { // idempotent
				out, errOut, err := runCLI(t, append([]string{"migrate"}, storageArgs(dir, dbURL)...)...)
				if err != nil || out != backend+" database is up to date\n" {
					t.Fatalf("migrate: %q, %v\n%s", out, err, errOut)
				}
			}
			// A migrated but empty database still gets its first-start bootstrap.
			s := startServer(t, dir, dbURL)
			if !strings.Contains(s.Stdout.String(), "First start") {
				t.Errorf("serve after migrate did not bootstrap: %s", s.Stdout)
			}
			s.owner(t).get("/v1/admin/account/me").ok()
		})
	}
}

func workspaceIDs(t *testing.T, c client) []string {
	t.Helper()
	var r struct {
		Workspaces []struct {
			ID string `json:"id"`
		} `json:"workspaces"`
	}
	c.get("/v1/admin/workspaces?pageSize=100").decode(&r)
	ids := []string{}
	for _, w := range r.Workspaces {
		ids = append(ids, w.ID)
	}
	return ids
}

func TestBootstrapAndRestart(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir, dbURL := storage(t, backend)
			s := startServer(t, dir, dbURL)
			path := filepath.Join(dir, "bootstrap.json")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("bootstrap.json mode %o, want 600", perm)
			}
			raw, _ := os.ReadFile(path)
			var fields map[string]any
			if err := json.Unmarshal(raw, &fields); err != nil || len(fields) != 4 {
				t.Errorf("bootstrap.json = %s, want exactly token, workspaceId, apiUrl, chatUrl", raw)
			}
			b := s.Boot
			if !strings.HasPrefix(b.Token, "bp_pat_") || !strings.HasPrefix(b.WorkspaceID, "wkspace_") || b.APIURL != s.URL || b.ChatURL != s.URL+"/chat" {
				t.Errorf("bootstrap.json: %+v (server at %s)", b, s.URL)
			}
			out := s.Stdout.String()
			if !strings.Contains(out, "First start") || !strings.Contains(out, b.Token) || !strings.Contains(out, b.WorkspaceID) {
				t.Errorf("first start output:\n%s", out)
			}
			owner := s.owner(t)
			acc := str(t, owner.in("").get("/v1/admin/account/me").ok(), "account", "id")
			wss := workspaceIDs(t, owner)
			if !reflect.DeepEqual(wss, []string{b.WorkspaceID}) {
				t.Errorf("workspaces after first start: %v, want [%s]", wss, b.WorkspaceID)
			}
			if ms := listMembers(t, owner); len(ms) != 1 || ms[0]["role"] != "owner" {
				t.Errorf("members of the bootstrap workspace: %v", ms)
			}
			stopServer(t, s)
			if res, err := http.Get(s.URL + "/healthz"); err == nil {
				res.Body.Close()
				t.Errorf("the server still answers after shutdown: %s", res.Status)
			}

			// Restart on the same storage: nothing new is created.
			s2 := startServer(t, dir, dbURL)
			if out := s2.Stdout.String(); strings.Contains(out, "First start") || strings.Contains(out, b.Token) {
				t.Errorf("restart printed bootstrap output:\n%s", out)
			}
			// Its credentials stay, its addresses are the new start's (another
			// port here), so that the client commands reach the server.
			s2.readBootstrap(t)
			if b2 := s2.Boot; b2.Token != b.Token || b2.WorkspaceID != b.WorkspaceID || b2.APIURL != s2.URL || b2.ChatURL != s2.URL+"/chat" {
				t.Errorf("bootstrap.json after a restart at %s: %+v, was %+v", s2.URL, b2, b)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("bootstrap.json after a restart: %v, %v", fi.Mode(), err)
			}
			// A second server on the same address says how to choose another.
			var stderr bytes.Buffer
			err = run(context.Background(), append([]string{"serve", "--addr", strings.TrimPrefix(s2.URL, "http://")}, storageArgs(t.TempDir(), "")...), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "--addr") {
				t.Errorf("serve on an address in use: %v", err)
			}
			owner2 := s2.as(t, b.Token, b.WorkspaceID)
			if got := str(t, owner2.in("").get("/v1/admin/account/me").ok(), "account", "id"); got != acc {
				t.Errorf("after restart the token belongs to %s, want %s", got, acc)
			}
			if got := workspaceIDs(t, owner2); !reflect.DeepEqual(got, wss) {
				t.Errorf("workspaces after restart: %v, want %v", got, wss)
			}
			if ms := listMembers(t, owner2); len(ms) != 1 {
				t.Errorf("members after restart: %v", ms)
			}
		})
	}
}

// TestStartupOutputBehindProxy: with a --public-url of its own (a proxy in
// front), the start-up output says where the process really listens, the
// URL clients use, and (in the log) the database and the file storage, so
// that an operator sees a setting that did not take.
func TestStartupOutputBehindProxy(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir, dbURL := storage(t, backend)
			s := startServer(t, dir, dbURL, "--public-url", "https://bots.example.test")
			out := s.Stdout.String()
			if !strings.Contains(out, "listening on "+s.URL+"\n") || !strings.Contains(out, "  public URL: https://bots.example.test\n") {
				t.Errorf("start-up output:\n%s\nwant the address listened on (%s) and the public URL", out, s.URL)
			}
			if s.Boot.APIURL != "https://bots.example.test" {
				t.Errorf("bootstrap.json apiUrl %q, want the public URL", s.Boot.APIURL)
			}
			blobs, _ := filepath.Abs(filepath.Join(dir, "blobs"))
			logged := s.Stderr.String()
			for _, want := range []string{"addr=" + strings.TrimPrefix(s.URL, "http://"), "api_url=https://bots.example.test",
				"database=" + backend, "files=" + blobs} {
				if !strings.Contains(logged, want) {
					t.Errorf("the start-up log lacks %q:\n%s", want, logged)
				}
			}
		})
	}
}

// TestAdminTokenEnv sets process environment, so it and its subtests do not
// run in parallel with anything.
func TestAdminTokenEnv(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			fixed := "bp_pat_" + strings.Repeat("Fx9", 10)
			t.Setenv("BOTPLATFORM_ADMIN_TOKEN", fixed)
			dir, dbURL := storage(t, backend)
			s := startServer(t, dir, dbURL)
			if s.Boot.Token != fixed {
				t.Errorf("bootstrap token %q, want BOTPLATFORM_ADMIN_TOKEN %q", s.Boot.Token, fixed)
			}
			s.as(t, fixed, "").get("/v1/admin/account/me").ok()
			s.as(t, fixed, s.Boot.WorkspaceID).get("/v1/admin/bots").ok()
			stopServer(t, s)

			long := strings.Repeat("x", 30)
			// A value that could never authenticate (trailing space, non-ASCII)
			// is as malformed as a wrong prefix.
			for _, bad := range []string{"not-a-token", "bp_pat_short", "bp_bak_" + long, "bp_pat_" + long + " ", "bp_pat_" + long + "é"} {
				t.Setenv("BOTPLATFORM_ADMIN_TOKEN", bad)
				dir2, dbURL2 := storage(t, backend)
				out, _, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, storageArgs(dir2, dbURL2)...)...)
				if err == nil || !strings.Contains(err.Error(), "BOTPLATFORM_ADMIN_TOKEN") {
					t.Errorf("BOTPLATFORM_ADMIN_TOKEN=%q: serve err = %v, want an error naming the variable", bad, err)
				}
				if strings.Contains(out, "listening on") || strings.Contains(out, "First start") {
					t.Errorf("BOTPLATFORM_ADMIN_TOKEN=%q: serve printed %q", bad, out)
				}
				if _, err := os.Stat(filepath.Join(dir2, "bootstrap.json")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("BOTPLATFORM_ADMIN_TOKEN=%q: bootstrap.json written (%v)", bad, err)
				}
				if bad != "not-a-token" {
					continue
				}
				// The refused start left nothing behind: the next start bootstraps.
				t.Setenv("BOTPLATFORM_ADMIN_TOKEN", "")
				s3 := startServer(t, dir2, dbURL2)
				if !strings.Contains(s3.Stdout.String(), "First start") || s3.Boot.Token == bad {
					t.Errorf("start after a refused start: %s", s3.Stdout)
				}
				s3.owner(t).get("/v1/admin/bots").ok()
				stopServer(t, s3)
			}
		})
	}
}

// TestShutdownDrainsRequests cancels the server's context while a request
// is in the middle of its body: the request still completes, and run
// returns nil once it has.
func TestShutdownDrainsRequests(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackend(t, backend)
			addr := strings.TrimPrefix(s.URL, "http://")
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			body := `{"note":"in flight"}`
			fmt.Fprintf(conn, "POST /v1/admin/account/pats HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addr, s.Boot.Token, len(body))
			// The server answers 100 Continue when the handler starts reading
			// the body: from then on the request is in flight.
			br := bufio.NewReader(conn)
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
				t.Fatalf("want 100 Continue, got %q, %v", line, err)
			}
			if line, err := br.ReadString('\n'); err != nil || line != "\r\n" {
				t.Fatalf("after 100 Continue: %q, %v", line, err)
			}

			stopped := make(chan error, 1)
			go func() { stopped <- s.stop() }()
			deadline := time.Now().Add(10 * time.Second)
			for { // shutdown has begun once the listener refuses connections
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break
				}
				c.Close()
				if time.Now().After(deadline) {
					t.Fatal("the listener still accepts connections 10s after cancel")
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case err := <-stopped:
				t.Fatalf("run returned (%v) while a request was in flight", err)
			default:
			}

			if _, err := io.WriteString(conn, body); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the in-flight request got no response: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(b), `"note":"in flight"`) {
				t.Errorf("in-flight request: %d %s", res.StatusCode, b)
			}
			select {
			case err := <-stopped:
				if err != nil {
					t.Errorf("run returned %v, want nil", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("run did not return after the in-flight request completed")
			}
		})
	}
}

// TestConcurrentFirstStart starts two servers at once on one empty
// PostgreSQL database (the scale-out set-up): exactly one bootstraps, and
// both serve the same owner. SQLite is one process per data directory.
func TestConcurrentFirstStart(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir, dbURL := storage(t, backend)
			a, b := launchServer(t, dir, dbURL), launchServer(t, dir, dbURL)
			a.waitListening(t)
			b.waitListening(t)
			a.readBootstrap(t)
			b.Boot = a.Boot
			if n := strings.Count(a.Stdout.String()+b.Stdout.String(), "First start"); n != 1 {
				t.Errorf("%d first starts, want 1:\n%s\n%s", n, a.Stdout, b.Stdout)
			}
			for _, s := range []*testServer{a, b} {
				if got := workspaceIDs(t, s.owner(t)); !reflect.DeepEqual(got, []string{a.Boot.WorkspaceID}) {
					t.Errorf("%s: workspaces %v, want [%s]", s.URL, got, a.Boot.WorkspaceID)
				}
			}
		})
	}
}

// TestDebugEndpoints: --debug-addr serves the process's figures and the
// profiles on a loopback listener of its own, never on the API's.
func TestDebugEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "", "--debug-addr", "127.0.0.1:0")
	line := regexp.MustCompile(`(?m)^debug endpoints on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(s.Stdout.String())
	if line == nil {
		t.Fatalf("no \"debug endpoints on\" line; stdout:\n%s", s.Stdout)
	}
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(line[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, tail(string(b), 300))
		}
		return b
	}
	var fig struct {
		Goroutines     int   `json:"goroutines"`
		HeapAllocBytes int64 `json:"heapAllocBytes"`
	}
	if err := json.Unmarshal(get("/debug/runtime"), &fig); err != nil || fig.Goroutines < 2 || fig.HeapAllocBytes <= 0 {
		t.Fatalf("/debug/runtime: %+v %v", fig, err)
	}
	if b := get("/debug/pprof/goroutine?debug=1"); !strings.Contains(string(b), "goroutine profile") {
		t.Fatalf("/debug/pprof/goroutine: %s", tail(string(b), 300))
	}
	s.as(t, "", "").raw(http.MethodGet, "/debug/runtime", nil).fail(404, "ResourceNotFound")
}
