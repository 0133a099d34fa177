package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

// scrape reads GET /metrics with token ("" sends none) and parses it with
// the exposition-format parser; it returns the status and, on 200, the
// metric families.
func scrape(t *testing.T, s *testServer, token string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return resp.StatusCode, mfs
}

// sample is the value of the series of family name whose labels include
// want (a counter's, gauge's or histogram's count), and whether there is
// one.
func sample(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetrics: GET /metrics answers only with --metrics-token's bearer
// token, parses as the Prometheus text format, and moves with the traffic:
// requests by route pattern (never the raw path), the open event streams,
// bot events, indexing, the job queues and the database pools.
func TestMetrics(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			const token = "scrape-secret"
			// A limit set: its series exist. The connections setting is
			// PostgreSQL's only (the SQLite pools are the store's own).
			s := startBackendWith(t, backend, "--metrics-token", token, "--rate-limit-bot", "100000/s", "--database-connections", "6")
			for _, bad := range []string{"", "wrong"} {
				if code, _ := scrape(t, s, bad); code != http.StatusUnauthorized {
					t.Fatalf("/metrics with token %q: %d, want 401", bad, code)
				}
			}
			code, mfs := scrape(t, s, token)
			if code != http.StatusOK {
				t.Fatalf("/metrics with the token: %d", code)
			}
			for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "botplatform_jobs_scrape_ok"} {
				if _, ok := sample(mfs, name, nil); !ok {
					t.Errorf("no %s at the first scrape", name)
				}
			}
			if v, _ := sample(mfs, "botplatform_jobs_scrape_ok", nil); v != 1 {
				t.Errorf("botplatform_jobs_scrape_ok = %v, want 1", v)
			}
			pools := map[string][]string{"sqlite": {"write", "read"}, "postgres": {"main"}}[backend]
			for _, pool := range pools {
				if _, ok := sample(mfs, "go_sql_open_connections", map[string]string{"db_name": pool}); !ok {
					t.Errorf("no go_sql_open_connections of pool %q", pool)
				}
			}
			if backend == "postgres" {
				if v, _ := sample(mfs, "go_sql_max_open_connections", map[string]string{"db_name": "main"}); v != 6 {
					t.Errorf("go_sql_max_open_connections = %v with --database-connections 6", v)
				}
			}

			e := newBotEnv(t, s, `bot.on.message('*', async ({ message, client }) => {
				await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
			})`, nil)
			u := e.createUser(nil)
			conv := e.conversation(u, "")
			stream := e.listenTo(u, conv)
			_, mfs = scrape(t, s, token)
			if v, _ := sample(mfs, "botplatform_event_streams_open", nil); v != 1 {
				t.Errorf("botplatform_event_streams_open = %v with one stream open, want 1", v)
			}
			if got := textOf(e.ask(u, conv, "hello")); got != "hello" {
				t.Fatalf("the bot answered %q", got)
			}
			f := s.files(t, e.admin.token, e.botID)
			doc := []byte("# Returns\n\nSend it back within 30 days for a refund.\n")
			f.index(s, "returns.md", doc, nil)
			e.s.as(t, "", "").raw(http.MethodGet, "/v1/no-such-route/"+e.botID, nil).fail(404, "ResourceNotFound")
			stream.close()

			// The event's job ends after its reply is sent, the stream after
			// the client went away, and the indexing job is counted after
			// the file's status changed: wait for all three.
			eventually(t, "the metrics after the traffic", func() bool {
				_, mfs = scrape(t, s, token)
				ev, _ := sample(mfs, "botplatform_bot_events_total", map[string]string{"type": "message", "outcome": "ok"})
				open, _ := sample(mfs, "botplatform_event_streams_open", nil)
				// The stream's request is counted once its handler returned.
				listens, _ := sample(mfs, "botplatform_http_requests_total", map[string]string{"route": "/chat/{webhook}/conversations/{id}/listen"})
				indexed, _ := sample(mfs, "botplatform_indexing_duration_seconds", map[string]string{"format": "text/markdown"})
				return ev == 1 && open == 0 && listens == 1 && indexed == 1
			})
			for _, c := range []struct {
				name   string
				labels map[string]string
				min    float64
			}{
				{"botplatform_http_requests_total", map[string]string{"route": "/v1/admin/bots/{id}", "method": "PUT", "code": "200"}, 1},
				{"botplatform_http_requests_total", map[string]string{"route": "/chat/{webhook}/messages", "method": "POST", "code": "201"}, 1},
				{"botplatform_http_requests_total", map[string]string{"route": "/chat/{webhook}/conversations/{id}/listen", "method": "GET", "code": "200"}, 1},
				{"botplatform_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "code": "404"}, 1},
				{"botplatform_http_request_duration_seconds", map[string]string{"route": "/chat/{webhook}/messages", "method": "POST"}, 1},
				{"botplatform_bot_handler_duration_seconds", map[string]string{"type": "message"}, 1},
				{"botplatform_indexing_files_total", map[string]string{"format": "text/markdown", "outcome": "ok"}, 1},
				{"botplatform_indexing_bytes_total", map[string]string{"format": "text/markdown"}, float64(len(doc))},
				{"botplatform_indexing_duration_seconds", map[string]string{"format": "text/markdown"}, 1},
			} {
				if v, ok := sample(mfs, c.name, c.labels); !ok || v < c.min {
					t.Errorf("%s%v = %v (present %v), want at least %v", c.name, c.labels, v, ok, c.min)
				}
			}
			if _, ok := sample(mfs, "botplatform_http_request_duration_seconds", map[string]string{"route": "/chat/{webhook}/conversations/{id}/listen"}); ok {
				t.Error("an event stream's life was timed as a request")
			}
			// No series names a bot, a webhook or a path as it was sent.
			for name, mf := range mfs {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if v := l.GetValue(); strings.Contains(v, e.botID) || strings.Contains(v, e.webhookID) || strings.Contains(v, conv) {
							t.Errorf("%s has label %s=%q, which names an id", name, l.GetName(), v)
						}
					}
				}
			}
			// The sample dashboard reads only metrics the server has (the job
			// gauges have series only while jobs are unfinished, the
			// upstream ones once an embeddings or model server was called:
			// TestUpstreamMetrics).
			dash, err := os.ReadFile("../../docs/grafana-dashboard.json")
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range regexp.MustCompile(`\b(?:botplatform|go|process)_[a-z_]+`).FindAllString(string(dash), -1) {
				name = strings.TrimSuffix(name, "_bucket")
				if _, ok := mfs[name]; !ok && !strings.HasPrefix(name, "botplatform_jobs") && !strings.HasPrefix(name, "botplatform_upstream_") {
					t.Errorf("docs/grafana-dashboard.json reads %s, which the server does not have", name)
				}
			}
			if v, ok := sample(mfs, "botplatform_jobs", map[string]string{"kind": "bot_event", "state": "running"}); ok && v != 0 {
				t.Errorf("%v bot events still running once all were handled", v)
			}
		})
	}
}

// TestAccessLog: one JSON line per request with its request id (the one
// the response carries), route pattern, status, bytes, duration and the
// caller's workspace and bot, never the token or the user key.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "", "--log-format", "json")
	e := newBotEnv(t, s, `bot.on.message('*', async ({ message, client }) => {
		await client.listConversations({}) // served in-process by the API's handler
		await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
	})`, nil)
	u := e.createUser(nil)
	e.ask(u, e.conversation(u, ""), "hi")
	f := s.files(t, e.admin.token, e.botID)
	f.c.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", e.botID).ok()
	e.admin.get("/v1/admin/bots/" + e.botID).ok()
	e.call(http.MethodGet, "/users/me", u.Key, nil).status(200)

	type line struct {
		Msg, Method, Path, Route, RequestID, Workspace, Bot string
		Status, Bytes                                       int
		DurationMS                                          *float64 `json:"duration_ms"`
	}
	want := map[string]line{
		"GET /v1/chat/conversations":   {Workspace: e.admin.ws, Bot: e.botID},
		"GET /v1/files":                {Workspace: e.admin.ws, Bot: e.botID},
		"GET /v1/admin/bots/{id}":      {Workspace: e.admin.ws},
		"GET /chat/{webhook}/users/me": {Bot: e.botID},
	}
	var lines []line
	// A line is written once its response is: the bot's own call may end
	// after its reply is visible.
	eventually(t, "an access log line for each request", func() bool {
		lines = lines[:0]
		have := map[string]bool{}
		for _, raw := range strings.Split(s.Stderr.String(), "\n") {
			var l line
			if json.Unmarshal([]byte(raw), &l) == nil && l.Msg == "request" {
				var ids struct {
					RequestID string `json:"request_id"`
				}
				_ = json.Unmarshal([]byte(raw), &ids)
				l.RequestID = ids.RequestID
				lines = append(lines, l)
				have[l.Method+" "+l.Route] = true
			}
		}
		for k := range want {
			if !have[k] {
				return false
			}
		}
		return true
	})
	seen := map[string]bool{}
	for _, l := range lines {
		key := l.Method + " " + l.Route
		w, ok := want[key]
		if !ok {
			continue
		}
		seen[key] = true
		if l.Status/100 != 2 || l.Bytes <= 0 || l.DurationMS == nil || !strings.HasPrefix(l.RequestID, "req_") {
			t.Errorf("%s: %+v", key, l)
		}
		if l.Workspace != w.Workspace || l.Bot != w.Bot {
			t.Errorf("%s: caller workspace %q bot %q, want %q %q", key, l.Workspace, l.Bot, w.Workspace, w.Bot)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("access log lines for %v, want one for each of %v", seen, want)
	}
	for _, secret := range []string{e.admin.token, u.Key} {
		if strings.Contains(s.Stderr.String(), secret) {
			t.Error("the log holds a token or a user key")
		}
	}
}

// TestUpstreamMetrics: requests to the embeddings server are counted by
// status code, and timed.
func TestUpstreamMetrics(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i := range req.Input {
			out.Data = append(out.Data, item{Embedding: []float32{1, float32(i), 0, 0.5}, Index: i})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer fake.Close()
	s := startServer(t, t.TempDir(), "", "--embeddings-url", fake.URL+"/v1", "--embeddings-model", "test")
	f := s.files(t, s.Boot.Token, str(t, s.owner(t).createBot(map[string]any{"name": "upstream"}), "id"))
	f.index(s, "doc.md", []byte("# Doc\n\nSome words to embed.\n"), nil)
	_, mfs := scrape(t, s, "")
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"botplatform_upstream_requests_total", map[string]string{"service": "embeddings", "code": "503"}},
		{"botplatform_upstream_requests_total", map[string]string{"service": "embeddings", "code": "200"}},
		{"botplatform_upstream_request_duration_seconds", map[string]string{"service": "embeddings"}},
	} {
		if v, ok := sample(mfs, c.name, c.labels); !ok || v < 1 {
			t.Errorf("%s%v = %v (present %v), want at least 1", c.name, c.labels, v, ok)
		}
	}
}
