package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/store"
)

// TestNil: a nil *Metrics records nothing and does not fail.
func TestNil(t *testing.T) {
	var m *Metrics
	m.Request("/x", "GET", 200, time.Millisecond, false)
	m.StreamOpened()()
	m.BotEvent("message", OutcomeOK, time.Millisecond)
	m.Indexed("text/plain", 10, time.Millisecond, true)
	m.WatchDB("main", nil)
	m.WatchJobs(nil)
	m.RateLimits("token")
	m.RateLimited("token")
}

// TestRateLimited: the limits set show at 0, refusals count by limit.
func TestRateLimited(t *testing.T) {
	m := New()
	m.RateLimits("token", "chat_user")
	m.RateLimited("chat_user")
	m.RateLimited("chat_user")
	_, body := get(t, m.Handler(""), "")
	for _, want := range []string{`botplatform_rate_limited_total{limit="token"} 0`, `botplatform_rate_limited_total{limit="chat_user"} 2`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if strings.Contains(body, `limit="bot"`) {
		t.Errorf("a limit not set shows:\n%s", body)
	}
}

func get(t *testing.T, h http.Handler, auth string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestHandlerToken: with a token only "Bearer TOKEN" is answered.
func TestHandlerToken(t *testing.T) {
	m := New()
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer nope", 401}, {"secret", 401}, {"Bearer secret", 200}} {
		if code, _ := get(t, m.Handler("secret"), c.auth); code != c.want {
			t.Errorf("Authorization %q: %d, want %d", c.auth, code, c.want)
		}
	}
	if code, _ := get(t, m.Handler(""), ""); code != 200 {
		t.Errorf("no token set: %d, want 200", code)
	}
}

// TestJobs: the queues are read at each scrape; a failed read says so.
func TestJobs(t *testing.T) {
	m := New()
	fail := false
	m.WatchJobs(func(ctx context.Context, now time.Time) ([]store.JobQueue, error) {
		if fail {
			return nil, errors.New("database down")
		}
		return []store.JobQueue{{Kind: "bot_event", Due: 3, Scheduled: 1, Running: 2, OldestDue: now.Add(-90 * time.Second)}}, nil
	})
	_, body := get(t, m.Handler(""), "")
	for _, want := range []string{
		`botplatform_jobs{kind="bot_event",state="due"} 3`,
		`botplatform_jobs{kind="bot_event",state="running"} 2`,
		`botplatform_jobs{kind="bot_event",state="scheduled"} 1`,
		`botplatform_jobs_oldest_due_age_seconds{kind="bot_event"} 90`,
		`botplatform_jobs_scrape_ok 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	fail = true
	if _, body = get(t, m.Handler(""), ""); !strings.Contains(body, "botplatform_jobs_scrape_ok 0") || strings.Contains(body, "botplatform_jobs{") {
		t.Errorf("after a failed read:\n%s", body)
	}
}

// TestUpstream: answers are counted by status, failures as error.
func TestUpstream(t *testing.T) {
	m := New()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	defer ok.Close()
	c := &http.Client{Transport: m.Upstream("model", nil)}
	resp, err := c.Get(ok.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ok.Close()
	if _, err := c.Get(ok.URL); err == nil {
		t.Fatal("a closed server answered")
	}
	_, body := get(t, m.Handler(""), "")
	for _, want := range []string{
		`botplatform_upstream_requests_total{code="418",service="model"} 1`,
		`botplatform_upstream_requests_total{code="error",service="model"} 1`,
		`botplatform_upstream_request_duration_seconds_count{service="model"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if (*Metrics)(nil).Upstream("model", nil) != http.DefaultTransport {
		t.Error("a nil Metrics wraps the transport")
	}
}
