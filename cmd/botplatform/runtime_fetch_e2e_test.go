package main

// Bot code's fetch: on by allowlist only, never to private addresses unless
// the operator allows them, checked on redirects, bounded, logged.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBotFetch runs on servers that let fetch reach private addresses, so
// that a local server can stand for the internet.
func TestBotFetch(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"allowlisted", testFetchAllowlisted}}, "--bot-fetch-private")
}

// fetchTarget is a local HTTP server standing for the internet.
func fetchTarget(t *testing.T) (base string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"header":%q,"body":%q}`, r.Method, r.Header.Get("x-test"), body)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://not-allowed.invalid/x", http.StatusFound)
	})
	mux.HandleFunc("/to-ip", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/hello", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 2<<20)))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

func fetchJS(base string) string {
	return fmt.Sprintf(`const BASE = %q
bot.on.message('text', async ({ message, client }) => {
  const t = message.payload.text
  let out
  try {
    if (t === 'many') {
      for (let i = 0; i < 25; i++) await fetch(BASE + '/hello')
      out = 'no limit'
    } else {
      const r = await fetch(t.replace('BASE', BASE), { method: 'POST', headers: { 'x-test': 'yes' }, body: 'ping' })
      out = r.status + ' ' + r.headers.get('content-type') + ' ' + JSON.stringify(await r.json())
    }
  } catch (e) { out = 'error ' + e.type + ': ' + e.message }
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: out } })
})`, base)
}

func testFetchAllowlisted(t *testing.T, s *testServer) {
	base := fetchTarget(t)
	e := newBotEnv(t, s, fetchJS(base), nil)
	u := e.user("fetcher")
	conv := e.conversation(u, "")
	if got := textOf(e.ask(u, conv, "BASE/hello")); !strings.Contains(got, "error Forbidden: fetch: fetch is off") {
		t.Errorf("fetch without an allowlist: %q", got)
	}
	hosts := e.admin.put("/v1/admin/bots/"+e.botID+"/fetch", map[string]any{"hosts": []string{"LOCALHOST", "*.example.org", "localhost"}}).ok()
	wantEqual(t, hosts, map[string]any{"hosts": []any{"localhost", "*.example.org"}}, "setFetchHosts")
	wantEqual(t, e.admin.get("/v1/admin/bots/"+e.botID+"/fetch").ok(), hosts, "getFetchHosts")
	if got := textOf(e.ask(u, conv, "BASE/hello")); got != `200 application/json {"method":"POST","header":"yes","body":"ping"}` {
		t.Errorf("fetch of an allowlisted host: %q", got)
	}
	for path, want := range map[string]string{
		"BASE/away":             "error Forbidden: fetch: redirected to not-allowed.invalid, which is not on the bot's fetch allowlist",
		"BASE/to-ip":            "error Forbidden: fetch: redirected to 127.0.0.1, which is not on the bot's fetch allowlist",
		"BASE/big":              "error LimitExceeded: fetch: the answer passed 1048576 bytes",
		"http://other.invalid/": "error Forbidden: fetch: other.invalid is not on the bot's fetch allowlist",
		"ftp://localhost/":      "error InvalidPayload: url: must be an absolute http or https URL",
		"many":                  "error LimitExceeded: fetch: at most 20 calls per run of the bot's code",
		// The server itself is never reached, whatever --bot-fetch-private says.
		strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + "/v1/admin/workspaces": "error Forbidden: fetch: address 127.0.0.1:" +
			s.URL[strings.LastIndex(s.URL, ":")+1:] + " is this server itself",
	} {
		if got := textOf(e.ask(u, conv, path)); got != want {
			t.Errorf("fetch %s: %q, want %q", path, got, want)
		}
	}
	line := e.waitLog("level=info", "fetch POST "+base+"/hello: 200")
	if line.ConversationID != conv {
		t.Errorf("the fetch log line is filed under %q, want %s", line.ConversationID, conv)
	}
	e.waitLog("level=warn", "fetch http://other.invalid/: refused")
	e.admin.put("/v1/admin/bots/"+e.botID+"/fetch", map[string]any{"hosts": []string{"not a host"}}).fail(400, "InvalidPayload", "hosts[0]")
}

// testFetchPrivateRefused: on a server that does not allow private
// addresses, an allowlisted name that resolves to one is refused.
func testFetchPrivateRefused(t *testing.T, s *testServer) {
	base := fetchTarget(t)
	e := newBotEnv(t, s, fetchJS(base), nil)
	e.admin.put("/v1/admin/bots/"+e.botID+"/fetch", map[string]any{"hosts": []string{"localhost"}}).ok()
	u := e.user("fetcher")
	conv := e.conversation(u, "")
	got := textOf(e.ask(u, conv, "BASE/hello"))
	if !strings.HasPrefix(got, "error Forbidden: fetch: address 127.0.0.1 is loopback, private or link-local") &&
		!strings.HasPrefix(got, "error Forbidden: fetch: address ::1 is loopback") {
		t.Errorf("fetch of a private address: %q", got)
	}
}
