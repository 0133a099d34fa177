package main

// End-to-end tests of the rate limits (docs/limits.md#request-rates): one
// server per kind of limit, set to a few requests an hour so that no
// bucket refills while a test runs, whatever the machine's speed.

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// rateHeaders requires the RateLimit-* headers of a limit of that size,
// with that many requests left and a reset in whole seconds within the
// limit's hour (0 only when the bucket is full).
func (r *response) rateHeaders(limit, remaining int) {
	r.t.Helper()
	num := func(name string) int {
		v, err := strconv.Atoi(r.Header.Get(name))
		if err != nil {
			r.t.Fatalf("%s: %s %q, want a whole number", r.what, name, r.Header.Get(name))
		}
		return v
	}
	if got := num("RateLimit-Limit"); got != limit {
		r.t.Errorf("%s: RateLimit-Limit %d, want %d", r.what, got, limit)
	}
	if got := num("RateLimit-Remaining"); got != remaining {
		r.t.Errorf("%s: RateLimit-Remaining %d, want %d", r.what, got, remaining)
	}
	if reset := num("RateLimit-Reset"); reset < 0 || reset > 3600 || (reset == 0) != (remaining == limit) {
		r.t.Errorf("%s: RateLimit-Reset %d with %d of %d left, want 1 to 3600 seconds (0 when full)", r.what, reset, remaining, limit)
	}
}

// counted requires a successful answer counted by a limit of that size,
// leaving that many requests.
func (r *response) counted(limit, remaining int) {
	r.t.Helper()
	if r.Status/100 != 2 {
		r.t.Fatalf("%s: status %d, want 2xx; body: %s", r.what, r.Status, tail(string(r.Body), 2000))
	}
	r.rateHeaders(limit, remaining)
}

// noRateHeaders requires an answer that no limit counted.
func (r *response) noRateHeaders() {
	r.t.Helper()
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"} {
		if v := r.Header.Get(h); v != "" {
			r.t.Errorf("%s: %s: %s, want none (no limit applies)", r.what, h, v)
		}
	}
}

// limited requires a 429 RateLimited of the limit of that kind (of limit
// requests an hour): the standard error body naming the limit, and a
// Retry-After of whole seconds, at least 1 and at most an hour's share of
// one request.
func (r *response) limited(kind string, limit int) {
	r.t.Helper()
	noun := map[string]string{"chat_user": "chat user"}[kind]
	if noun == "" {
		noun = kind
	}
	r.fail(http.StatusTooManyRequests, "RateLimited", "too many requests for this "+noun, "per hour", "retry in")
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 3600/limit {
		r.t.Errorf("%s: Retry-After %q, want whole seconds from 1 to %d", r.what, r.Header.Get("Retry-After"), 3600/limit)
	}
	r.rateHeaders(limit, 0)
	var body struct{ Metadata map[string]any }
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Metadata["limit"] != kind {
		r.t.Errorf("%s: metadata %v, want limit %q", r.what, body.Metadata, kind)
	}
}

// refusals requires the counter of refusals by each limit: a missing
// limit must have no series (it is not set).
func refusals(t *testing.T, s *testServer, want map[string]float64) {
	t.Helper()
	_, mfs := scrape(t, s, "")
	for _, kind := range []string{"token", "bot", "chat_user", "address"} {
		v, ok := sample(mfs, "botplatform_rate_limited_total", map[string]string{"limit": kind})
		if w, set := want[kind]; ok != set || v != w {
			t.Errorf("botplatform_rate_limited_total{limit=%q} = %v (present %v), want %v (present %v)", kind, v, ok, w, set)
		}
	}
}

// /healthz, /readyz and /metrics are never limited.
func checkUnlimited(t *testing.T, s *testServer) {
	t.Helper()
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		r := s.as(t, "", "").get(path)
		if r.Status != http.StatusOK {
			t.Errorf("%s: status %d, want 200", path, r.Status)
		}
		r.noRateHeaders()
	}
}

// A token's requests are counted together on every API; other tokens keep
// their own.
func TestRateLimitToken(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"token", func(t *testing.T, s *testServer) {
		owner := s.owner(t)
		bot := owner.createBot(nil)
		owner.get("/v1/admin/account/me").counted(3, 1)
		owner.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", str(t, bot, "id")).counted(3, 0)
		owner.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", str(t, bot, "id")).limited("token", 3)
		owner.get("/v1/admin/account/me").limited("token", 3)

		other := s.as(t, s.issueToken(t, uniqueEmail("rate")), "")
		other.get("/v1/admin/account/me").counted(3, 2)
		checkUnlimited(t, s)
		refusals(t, s, map[string]float64{"token": 2})
	}}}, "--rate-limit-token", "3/h")
}

// A bot's requests are counted together whoever sends them (two tokens,
// the Files, Tables and Chat APIs, its own code); other bots and the Admin
// API calls about the bot are not.
func TestRateLimitBot(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"bot", func(t *testing.T, s *testServer) {
		owner := s.newWorkspace(t, "rate bot")
		botA, botB := owner.createBot(nil), owner.createBot(nil)
		a, b := str(t, botA, "id"), str(t, botB, "id")
		dev, _ := owner.addMember("developer")

		owner.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", a).counted(4, 3)
		dev.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", a).counted(4, 2)
		owner.raw(http.MethodGet, "/v1/tables", nil, "x-bot-id", a).counted(4, 1)
		chat := chatEnvOf(t, s, owner, botA)
		chat.call(http.MethodGet, "/hello/", "", nil).counted(4, 0)
		dev.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", a).limited("bot", 4)
		chat.call(http.MethodPost, "/users", "", nil).limited("bot", 4)

		r := owner.get("/v1/admin/bots/" + a)
		r.ok()
		r.noRateHeaders()
		owner.raw(http.MethodGet, "/v1/files", nil, "x-bot-id", b).counted(4, 3)

		// The bot's own code counts too: the action call, then its calls.
		e := newBotEnv(t, s, `bot.action('probe', async ({ client }) => {
			const out = []
			for (let i = 0; i < 5; i++) {
				try { await client.listConversations({}); out.push('ok') } catch (err) { out.push(String(err.type)) }
			}
			return { out }
		})`, unlimited)
		var probe struct{ Output struct{ Out []string } }
		e.callAction(e.admin, map[string]any{"type": "probe", "input": map[string]any{}}).decode(&probe)
		if got := strings.Join(probe.Output.Out, " "); got != "ok ok ok RateLimited RateLimited" {
			t.Errorf("the bot code's calls: %s, want 3 ok then RateLimited", got)
		}
		e.callAction(e.admin, map[string]any{"type": "probe", "input": map[string]any{}}).limited("bot", 4)
		refusals(t, s, map[string]float64{"bot": 5})
	}}}, append([]string{"--rate-limit-bot", "4/h"}, runtimeFlags...)...)
}

// A chat user's requests are counted together, event streams included;
// other users keep their own, and createUser (no key) is not counted.
func TestRateLimitChatUser(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"chat_user", func(t *testing.T, s *testServer) {
		e := newChatEnv(t, s)
		u1, u2 := e.createUser(nil), e.createUser(nil)
		e.call(http.MethodPost, "/users", "", nil).noRateHeaders()
		for left := 2; left >= 0; left-- {
			e.call(http.MethodGet, "/users/me", u1.Key, nil).counted(3, left)
		}
		e.call(http.MethodGet, "/users/me", u1.Key, nil).limited("chat_user", 3)
		listen := e.s.as(t, "", "").raw(http.MethodGet, e.base+"/conversations/any/listen", nil,
			"x-user-key", u1.Key, "Accept", "text/event-stream")
		listen.limited("chat_user", 3)

		e.call(http.MethodGet, "/users/me", u2.Key, nil).counted(3, 2)
		e.call(http.MethodGet, "/users/me", "not-a-key", nil).fail(http.StatusUnauthorized, "Unauthorized")
		refusals(t, s, map[string]float64{"chat_user": 2})
	}}}, "--rate-limit-chat-user", "3/h")
}

// Chat API calls without a valid user key are counted by client address:
// createUser, the hello probe and wrong keys; users' own calls and other
// addresses are not.
func TestRateLimitAddress(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{"address", func(t *testing.T, s *testServer) {
		e := newChatEnv(t, s)
		e.call(http.MethodGet, "/hello/", "", nil).counted(3, 2)
		u := e.createUser(nil)
		e.call(http.MethodGet, "/users/me", "not-a-key", nil).fail(http.StatusUnauthorized, "Unauthorized")
		e.call(http.MethodPost, "/users", "", nil).limited("address", 3)
		e.call(http.MethodGet, "/users/me", "not-a-key", nil).limited("address", 3)
		r := e.call(http.MethodGet, "/users/me", u.Key, nil)
		r.ok()
		r.noRateHeaders()

		// Another address: 127.0.0.2 is this machine too (Linux routes
		// all of 127.0.0.0/8 to the loopback interface).
		tr := s.http.Transport.(*http.Transport).Clone()
		tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext
		elsewhere := *s
		elsewhere.http = &http.Client{Timeout: s.http.Timeout, Transport: tr}
		probe, err := elsewhere.http.Get(s.URL + "/healthz")
		if err == nil {
			probe.Body.Close()
		}
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Logf("no second loopback address here (%v): other addresses not checked", err)
		} else {
			elsewhere.as(t, "", "").raw(http.MethodPost, e.base+"/users", map[string]any{}).counted(3, 2)
		}
		refusals(t, s, map[string]float64{"address": 2})
	}}}, "--rate-limit-address", "3/h")
}
