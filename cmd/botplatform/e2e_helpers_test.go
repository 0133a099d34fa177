package main

// Helpers of the end-to-end tests: they start the real server through run()
// on 127.0.0.1:0 with a temporary data directory (and, for the postgres
// backend, a fresh PostgreSQL schema), and talk to it over HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// withoutOKRequests drops the access log's lines of 2xx answers from a
// server's stderr: a failing test that polled leaves little else in a tail.
func withoutOKRequests(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.Contains(line, " msg=request ") && strings.Contains(line, " status=2") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// storage returns the storage flags' values of a backend: a data directory,
// and for postgres a fresh schema URL (the test is skipped without one).
func storage(t *testing.T, backend string) (dataDir, databaseURL string) {
	t.Helper()
	dir := t.TempDir()
	switch backend {
	case "sqlite":
		return dir, ""
	case "postgres":
		return dir, storetest.PostgresURL(t)
	}
	t.Fatalf("unknown backend %q", backend)
	return "", ""
}

func storageArgs(dataDir, databaseURL string) []string {
	args := []string{"--data", dataDir}
	if databaseURL != "" {
		args = append(args, "--database-url", databaseURL)
	}
	return args
}

// testServer is one running `botplatform serve`.
type testServer struct {
	URL         string // http://127.0.0.1:PORT, from the "listening on" line
	DataDir     string
	DatabaseURL string
	Stdout      *syncbuf.Buffer
	Stderr      *syncbuf.Buffer
	Boot        bootstrapFile // DATA/bootstrap.json as it is after start
	http        *http.Client
	done        chan error // run's result
	stop        func() error
}

type bootstrapFile struct {
	Token       string `json:"token"`
	WorkspaceID string `json:"workspaceId"`
	APIURL      string `json:"apiUrl"`
	ChatURL     string `json:"chatUrl"`
}

var listeningRe = regexp.MustCompile(`(?m)^botplatform (\S+) listening on (http://127\.0\.0\.1:\d+)$`)

// scenario is one named end-to-end check against a running server.
type scenario struct {
	name string
	run  func(*testing.T, *testServer)
}

// runScenarios starts one real server per backend (with extra serve flags)
// and runs every scenario against it in parallel; each scenario works in
// its own workspace.
func runScenarios(t *testing.T, scenarios []scenario, extra ...string) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackendWith(t, backend, extra...)
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, s)
				})
			}
		})
	}
}

// startBackend starts a server on fresh storage of the backend.
func startBackend(t *testing.T, backend string) *testServer {
	t.Helper()
	return startBackendWith(t, backend)
}

// startBackendWith is startBackend with extra serve flags.
func startBackendWith(t *testing.T, backend string, extra ...string) *testServer {
	t.Helper()
	dir, dbURL := storage(t, backend)
	return startServer(t, dir, dbURL, extra...)
}

// startServer runs serve in a goroutine and waits for its "listening on"
// line. The server is stopped by cancelling its context when the test ends
// (or earlier through stopServer); run must then return nil.
func startServer(t *testing.T, dataDir, databaseURL string, extra ...string) *testServer {
	t.Helper()
	s := launchServer(t, dataDir, databaseURL, extra...)
	s.waitListening(t)
	s.readBootstrap(t)
	return s
}

// launchServer starts serve, with extra flags, without waiting for it.
func launchServer(t *testing.T, dataDir, databaseURL string, extra ...string) *testServer {
	t.Helper()
	s := &testServer{DataDir: dataDir, DatabaseURL: databaseURL, Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{},
		http: &http.Client{Timeout: 60 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, storageArgs(dataDir, databaseURL)...)
	args = append(args, extra...)
	go func() { s.done <- run(ctx, args, s.Stdout, s.Stderr) }()

	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() {
			s.http.CloseIdleConnections()
			cancel()
			select {
			case stopErr = <-s.done:
			case <-time.After(stopTimeout):
				stopErr = fmt.Errorf("run did not return within %s of cancelling its context", stopTimeout)
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("serve did not shut down gracefully: %v", err)
		}
		if t.Failed() {
			t.Logf("server stdout:\n%s\nserver stderr, but the requests answered 2xx (tail):\n%s", s.Stdout, tail(withoutOKRequests(s.Stderr.String()), 6000))
		}
	})
	return s
}

// startTimeout is a hang guard on a server's start: migrating a fresh
// PostgreSQL schema takes seconds on a busy machine.
const startTimeout = 2 * time.Minute

// waitListening polls stdout for the "listening on" line.
func (s *testServer) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		if m := listeningRe.FindStringSubmatch(s.Stdout.String()); m != nil {
			s.URL = m[2]
			return
		}
		select {
		case err := <-s.done:
			s.done <- nil // reported here, not again by stop
			t.Fatalf("serve returned before listening: %v\nstderr:\n%s", err, s.Stderr)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"listening on\" line within %s; stdout:\n%s\nstderr:\n%s", startTimeout, s.Stdout, s.Stderr)
		}
	}
}

func (s *testServer) readBootstrap(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatalf("read bootstrap.json: %v", err)
	}
	if err := json.Unmarshal(b, &s.Boot); err != nil {
		t.Fatalf("bootstrap.json: %v\n%s", err, b)
	}
}

// stopServer stops s now and requires a graceful shutdown.
func stopServer(t *testing.T, s *testServer) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("serve did not shut down gracefully: %v", err)
	}
}

var emailSeq atomic.Int64

// uniqueEmail returns an email address no other test uses.
func uniqueEmail(prefix string) string {
	return fmt.Sprintf("%s-%d@example.com", prefix, emailSeq.Add(1))
}

// issueToken runs `botplatform token` on the server's database: it prints a
// new PAT for the account with that email, creating the account if needed.
func (s *testServer) issueToken(t *testing.T, email string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut syncbuf.Buffer
	args := append([]string{"token", "--email", email}, storageArgs(s.DataDir, s.DatabaseURL)...)
	if err := run(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("botplatform token --email %s: %v\n%s", email, err, errOut.String())
	}
	tok := strings.TrimSpace(out.String())
	if !strings.HasPrefix(tok, "bp_pat_") || strings.ContainsAny(tok, " \n") {
		t.Fatalf("botplatform token printed %q, want one bp_pat_ token", out.String())
	}
	return tok
}

// client makes Admin API calls as one token in one workspace (ws may be empty).
type client struct {
	t     *testing.T
	s     *testServer
	token string
	ws    string
}

func (s *testServer) as(t *testing.T, token, ws string) client { return client{t, s, token, ws} }

// owner is the bootstrap owner in the bootstrap workspace.
func (s *testServer) owner(t *testing.T) client { return s.as(t, s.Boot.Token, s.Boot.WorkspaceID) }

// in returns the same caller in another workspace.
func (c client) in(ws string) client { c.ws = ws; return c }

// sizedReader is a streamed body whose length is known: it is sent with a
// Content-Length instead of chunked.
type sizedReader struct {
	io.Reader
	size int64
}

// response is a complete HTTP response.
type response struct {
	t      *testing.T
	what   string
	Status int
	Header http.Header
	Body   []byte
}

// raw sends a request. body is nil (none), a string or []byte (sent as is),
// an io.Reader (streamed) or anything else (sent as JSON). hdr holds extra
// header name/value pairs. Every response must carry an x-request-id.
func (c client) raw(method, path string, body any, hdr ...string) *response {
	c.t.Helper()
	var rd io.Reader
	length := int64(-1)
	switch b := body.(type) {
	case nil:
	case string:
		rd, length = strings.NewReader(b), int64(len(b))
	case []byte:
		rd, length = bytes.NewReader(b), int64(len(b))
	case sizedReader:
		rd, length = b, b.size
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatalf("marshal body: %v", err)
		}
		rd, length = bytes.NewReader(j), int64(len(j))
	}
	req, err := http.NewRequest(method, c.s.URL+path, rd)
	if err != nil {
		c.t.Fatalf("new request: %v", err)
	}
	if length >= 0 {
		req.ContentLength = length
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.ws != "" {
		req.Header.Set("x-workspace-id", c.ws)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.s.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading the response: %v", method, path, err)
	}
	r := &response{t: c.t, what: method + " " + path, Status: res.StatusCode, Header: res.Header, Body: b}
	if res.Header.Get("x-request-id") == "" {
		c.t.Errorf("%s: response has no x-request-id header", r.what)
	}
	return r
}

func (c client) get(path string) *response { c.t.Helper(); return c.raw(http.MethodGet, path, nil) }

func (c client) post(path string, body any) *response {
	c.t.Helper()
	return c.raw(http.MethodPost, path, body)
}

func (c client) put(path string, body any) *response {
	c.t.Helper()
	return c.raw(http.MethodPut, path, body)
}

// del sends {} like the official client does for bodiless DELETEs.
func (c client) del(path string) *response {
	c.t.Helper()
	return c.raw(http.MethodDelete, path, "{}")
}

// ok requires 200 and returns the JSON object of the body.
func (r *response) ok() map[string]any {
	r.t.Helper()
	if r.Status != http.StatusOK {
		r.t.Fatalf("%s: status %d, want 200; body: %s", r.what, r.Status, tail(string(r.Body), 2000))
	}
	return r.object()
}

func (r *response) object() map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		r.t.Fatalf("%s: body is not a JSON object: %v; body: %s", r.what, err, tail(string(r.Body), 2000))
	}
	return m
}

// decode requires 200 and decodes the body into v.
func (r *response) decode(v any) {
	r.t.Helper()
	r.ok()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.t.Fatalf("%s: %v; body: %s", r.what, err, r.Body)
	}
}

var errorIDRe = regexp.MustCompile(`^err_(\d{14})x[0-9A-F]{8}$`)

// fail requires an error response of that status and type whose message
// mentions each of mentions, in the body shape the official clients parse
// (compat-notes §0). It returns the message.
func (r *response) fail(status int, typ string, mentions ...string) string {
	r.t.Helper()
	if r.Status != status {
		r.t.Fatalf("%s: status %d, want %d (%s); body: %s", r.what, r.Status, status, typ, tail(string(r.Body), 2000))
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		r.t.Errorf("%s: error Content-Type %q, want application/json", r.what, ct)
	}
	var e struct {
		ID        *string  `json:"id"`
		Code      *float64 `json:"code"`
		Type      *string  `json:"type"`
		Message   *string  `json:"message"`
		RequestID string   `json:"requestId"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.ID == nil || e.Code == nil || e.Type == nil || e.Message == nil {
		r.t.Fatalf("%s: error body lacks id/code/type/message (%v): %s", r.what, err, r.Body)
	}
	if want := r.Header.Get("x-request-id"); e.RequestID != want || want == "" {
		r.t.Errorf("%s: error requestId %q, want the response's x-request-id %q", r.what, e.RequestID, want)
	}
	if m := errorIDRe.FindStringSubmatch(*e.ID); m == nil {
		r.t.Errorf("%s: error id %q does not match %s", r.what, *e.ID, errorIDRe)
	} else if at, err := time.Parse("20060102150405", m[1]); err != nil || time.Since(at).Abs() > 5*time.Minute {
		r.t.Errorf("%s: error id %q does not carry the current UTC time", r.what, *e.ID)
	}
	if int(*e.Code) != status {
		r.t.Errorf("%s: error code %v, want %d", r.what, *e.Code, status)
	}
	if *e.Type != typ {
		r.t.Errorf("%s: error type %q, want %q; message: %s", r.what, *e.Type, typ, *e.Message)
	}
	if *e.Message == "" {
		r.t.Errorf("%s: empty error message", r.what)
	}
	for _, want := range mentions {
		if !strings.Contains(*e.Message, want) {
			r.t.Errorf("%s: error message %q does not mention %q", r.what, *e.Message, want)
		}
	}
	return *e.Message
}

// field digs a value out of decoded JSON: field(m, "bot", "integrations", "chat").
func field(t *testing.T, v any, path ...string) any {
	t.Helper()
	for i, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object: %v", strings.Join(path[:i], "."), v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%s: missing in %v", strings.Join(path[:i+1], "."), m)
		}
	}
	return v
}

// str is field that must be a non-empty string.
func str(t *testing.T, v any, path ...string) string {
	t.Helper()
	s, ok := field(t, v, path...).(string)
	if !ok || s == "" {
		t.Fatalf("%s: want a non-empty string, got %#v", strings.Join(path, "."), field(t, v, path...))
	}
	return s
}

// newWorkspace creates a workspace owned by the bootstrap owner and returns
// the owner acting in it.
func (s *testServer) newWorkspace(t *testing.T, name string) client {
	t.Helper()
	ws := s.owner(t).post("/v1/admin/workspaces", map[string]any{"name": name}).ok()
	return s.owner(t).in(str(t, ws, "id"))
}

// addMember adds a new account to c's workspace with that role and returns
// a client acting as it there, and its member id.
func (c client) addMember(role string) (client, string) {
	c.t.Helper()
	email := uniqueEmail(role)
	m := c.post("/v1/admin/workspace-members", map[string]any{"email": email, "role": role}).ok()
	if got := m["role"]; got != role {
		c.t.Fatalf("added member has role %v, want %s", got, role)
	}
	return c.s.as(c.t, c.s.issueToken(c.t, email), c.ws), str(c.t, m, "id")
}

// createBot creates a bot and returns the "bot" object of the response.
func (c client) createBot(body map[string]any) map[string]any {
	c.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	b, ok := c.post("/v1/admin/bots", body).ok()["bot"].(map[string]any)
	if !ok {
		c.t.Fatalf("createBot: no bot object in the response")
	}
	return b
}
