package main

import (
	"io"
	"net/url"
	"strings"
	"testing"
)

// TestAdminAPI runs every Admin API scenario against one real server per
// backend. Scenarios run in parallel, each in its own workspace.
func TestAdminAPI(t *testing.T) {
	t.Parallel()
	scenarios := []scenario{
		{"health", testHealth},
		{"errors", testErrors},
		{"payload_too_large", testPayloadTooLarge},
		{"query_errors", testQueryErrors},
		{"auth", testAuth},
		{"roles", testRoles},
		{"account_pats", testAccountPATs},
		{"workspaces", testWorkspaces},
		{"delete_workspace", testDeleteWorkspace},
		{"members", testMembers},
		{"bots", testBots},
		{"list_bots_pagination", testListBotsPagination},
		{"list_bots_sort", testListBotsSort},
		{"list_bots_filters", testListBotsFilters},
		{"cross_workspace_bots", testCrossWorkspaceBots},
		{"bot_keys", testBotKeys},
		{"bot_logs", testBotLogs},
	}
	runScenarios(t, scenarios)
}

func testHealth(t *testing.T, s *testServer) {
	anon := s.as(t, "", "")
	r := anon.get("/healthz")
	if m := r.ok(); m["status"] != "ok" {
		t.Errorf("healthz: %v, want status ok", m)
	}
	first := r.Header.Get("x-request-id")
	if second := anon.get("/healthz").Header.Get("x-request-id"); second == first {
		t.Errorf("two requests got the same generated x-request-id %q", first)
	}
	const sane = "trace-42.abc:DEF_9"
	if got := anon.raw("GET", "/healthz", nil, "x-request-id", sane).Header.Get("x-request-id"); got != sane {
		t.Errorf("x-request-id %q was not echoed: got %q", sane, got)
	}
	for _, insane := range []string{"has spaces in it", strings.Repeat("a", 129), "semi;colon"} {
		got := anon.raw("GET", "/healthz", nil, "x-request-id", insane).Header.Get("x-request-id")
		if got == insane || got == "" {
			t.Errorf("x-request-id %q: got %q, want a fresh id", insane, got)
		}
	}
	// Error responses carry one too (raw checks every response).
	anon.raw("GET", "/nope", nil, "x-request-id", sane).fail(404, "ResourceNotFound")
}

func testErrors(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "errors")
	c.post("/v1/admin/bots", `{"name":`).fail(400, "InvalidPayload", "JSON")
	c.post("/v1/admin/bots", `not json`).fail(400, "InvalidPayload", "JSON")
	c.post("/v1/admin/bots", `[]`).fail(400, "InvalidPayload")
	c.post("/v1/admin/bots", map[string]any{"name": 5}).fail(400, "InvalidPayload", "name")
	c.post("/v1/admin/bots", map[string]any{"name": "ok", "nmae": "typo"}).fail(400, "InvalidPayload", "nmae")
	c.post("/v1/admin/bots", map[string]any{"states": map[string]any{"s": map[string]any{"type": "bad", "schema": map[string]any{}}}}).
		fail(400, "InvalidPayload", "states.s.type")
	c.post("/v1/admin/bots", map[string]any{"tags": map[string]any{"k": 1}}).fail(400, "InvalidPayload", "tags.k")
	c.post("/v1/admin/account/pats", map[string]any{"note": "x", "extra": true}).fail(400, "InvalidPayload", "extra")

	c.get("/v1/nope").fail(404, "ResourceNotFound")
	c.get("/v1/admin/nope").fail(404, "ResourceNotFound")
	s.as(t, "", "").get("/v1/admin/nope").fail(404, "ResourceNotFound")
	r := c.raw("PATCH", "/v1/admin/bots", "{}")
	r.fail(405, "MethodNotFound", "PATCH")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("405 Allow header %q, want GET and POST", allow)
	}
	c.raw("POST", "/healthz", "{}").fail(405, "MethodNotFound")
	c.raw("DELETE", "/v1/admin/account/me", "{}").fail(405, "MethodNotFound")

	// None of the failed calls created anything.
	var list listBotsResponse
	c.get("/v1/admin/bots").decode(&list)
	if len(list.Bots) != 0 {
		t.Errorf("failed createBot calls left bots behind: %+v", list.Bots)
	}
}

// fillReader yields n spaces without holding them in memory.
type fillReader struct{ n int64 }

var spaces = []byte(strings.Repeat(" ", 32<<10))

func (f *fillReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	n := copy(p, spaces)
	f.n -= int64(n)
	return n, nil
}

// bigBody returns a body of exactly size bytes: head, then spaces, then "}",
// streamed with a Content-Length or chunked.
func bigBody(head string, size int64, chunked bool) io.Reader {
	r := io.MultiReader(strings.NewReader(head), &fillReader{size - int64(len(head)) - 1}, strings.NewReader("}"))
	if chunked {
		return r
	}
	return sizedReader{r, size}
}

func testPayloadTooLarge(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "too-large")
	// The Admin API takes 50 MB (spec section 8). A body of 50,000,000 bytes
	// is within the limit whichever way "MB" is read: it is read to the end
	// and refused for its content (a malformed one is cheap to refuse), not
	// for its size. 50 MiB + 1 bytes are over it either way.
	c.raw("POST", "/v1/admin/bots", bigBody(`x`, 50_000_000, false)).fail(400, "InvalidPayload")
	for _, chunked := range []bool{false, true} {
		c.raw("POST", "/v1/admin/bots", bigBody(`{"name":"big"`, 50<<20+1, chunked)).fail(413, "PayloadTooLarge")
	}
	if n := len(c.listBots("").Bots); n != 0 {
		t.Errorf("refused bodies created %d bots", n)
	}
}

func testQueryErrors(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "query-errors")
	for _, tc := range []struct{ path, param string }{
		{"/v1/admin/bots?pageSize=0", "pageSize"},
		{"/v1/admin/bots?pageSize=abc", "pageSize"},
		{"/v1/admin/bots?pageSize=101", "pageSize"},
		{"/v1/admin/bots?sortField=name", "sortField"},
		{"/v1/admin/bots?sortDirection=up", "sortDirection"},
		{"/v1/admin/bots?dev=maybe", "dev"},
		{"/v1/admin/bots?dev=1", "dev"},
		{"/v1/admin/bots?nextToken=garbage", "nextToken"},
		{"/v1/admin/bots?nextToken=" + url.QueryEscape("e30"), "nextToken"},
		{"/v1/admin/bots?tags=notjson", "tags"},
		{"/v1/admin/workspaces?pageSize=0", "pageSize"},
		{"/v1/admin/workspaces?nextToken=garbage", "nextToken"},
		{"/v1/admin/workspace-members?pageSize=-1", "pageSize"},
		{"/v1/admin/workspace-members?nextToken=garbage", "nextToken"},
	} {
		c.get(tc.path).fail(400, "InvalidQuery", tc.param)
	}
}

func testAuth(t *testing.T, s *testServer) {
	own := s.newWorkspace(t, "auth")
	for _, tc := range []struct {
		name string
		c    client
		path string
	}{
		{"no token", s.as(t, "", own.ws), "/v1/admin/bots"},
		{"no token, account route", s.as(t, "", ""), "/v1/admin/account/me"},
		{"unknown token", s.as(t, "bp_pat_"+strings.Repeat("x", 40), own.ws), "/v1/admin/bots"},
		{"garbage token", s.as(t, "garbage", own.ws), "/v1/admin/bots"},
		{"no x-workspace-id", own.in(""), "/v1/admin/bots"},
		{"no x-workspace-id, members", own.in(""), "/v1/admin/workspace-members/me"},
		{"unknown x-workspace-id", own.in("wkspace_doesnotexist"), "/v1/admin/bots"},
		{"unknown x-workspace-id, account route", own.in("wkspace_doesnotexist"), "/v1/admin/account/me"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.t = t
			tc.c.get(tc.path).fail(401, "Unauthorized")
		})
	}
	own.raw("GET", "/v1/admin/bots", nil, "Authorization", "Basic "+own.token).fail(401, "Unauthorized")
	own.in("").get("/v1/admin/account/me").ok() // account routes need no workspace

	// A valid token of an account that is not a member of the workspace.
	stranger := s.as(t, s.issueToken(t, uniqueEmail("stranger")), own.ws)
	stranger.in("").get("/v1/admin/account/me").ok()
	stranger.get("/v1/admin/bots").fail(401, "Unauthorized")
	stranger.post("/v1/admin/bots", map[string]any{"name": "intruder"}).fail(401, "Unauthorized")
	stranger.get("/v1/admin/workspace-members").fail(401, "Unauthorized")
	stranger.in("").get("/v1/admin/workspaces/"+own.ws).fail(404, "ResourceNotFound")

	// A deleted PAT no longer authenticates.
	pat := own.in("").post("/v1/admin/account/pats", map[string]any{"note": "short-lived"}).ok()
	value, id := str(t, pat, "pat", "value"), str(t, pat, "pat", "id")
	s.as(t, value, own.ws).get("/v1/admin/bots").ok()
	own.in("").del("/v1/admin/account/pats/" + id).ok()
	s.as(t, value, own.ws).get("/v1/admin/bots").fail(401, "Unauthorized")
	s.as(t, value, "").get("/v1/admin/account/me").fail(401, "Unauthorized")
	own.get("/v1/admin/bots").ok() // the bootstrap token still works
}

// failOwnerProtected requires that changing the owner's membership failed
// with 400 or 403, in the standard error shape.
func failOwnerProtected(t *testing.T, r *response) {
	t.Helper()
	switch r.Status {
	case 400:
		r.fail(400, "InvalidPayload")
	case 403:
		r.fail(403, "Forbidden")
	default:
		t.Errorf("%s on the owner: status %d, want 400 or 403; body %s", r.what, r.Status, r.Body)
	}
}

func testRoles(t *testing.T, s *testServer) {
	own := s.newWorkspace(t, "roles")
	viewer, _ := own.addMember("viewer")
	dev, devID := own.addMember("developer")
	mgr, _ := own.addMember("manager")
	adm, admID := own.addMember("administrator")
	member := func(role string) map[string]any { return map[string]any{"email": uniqueEmail("added"), "role": role} }

	// viewer: reads only
	viewer.get("/v1/admin/bots").ok()
	viewer.post("/v1/admin/bots", map[string]any{"name": "nope"}).fail(403, "Forbidden")
	if role := viewer.get("/v1/admin/workspace-members/me").ok()["role"]; role != "viewer" {
		t.Errorf("viewer's workspace-members/me role = %v", role)
	}

	// developer: bots, not members
	bot := dev.createBot(map[string]any{"name": "dev-bot"})
	id := str(t, bot, "id")
	viewer.put("/v1/admin/bots/"+id, map[string]any{"name": "viewer-edit"}).fail(403, "Forbidden")
	viewer.del("/v1/admin/bots/"+id).fail(403, "Forbidden")
	viewer.post("/v1/admin/bots/"+id+"/signing-secrets/rotate", "{}").fail(403, "Forbidden")
	if name := dev.put("/v1/admin/bots/"+id, map[string]any{"name": "renamed"}).ok()["bot"].(map[string]any)["name"]; name != "renamed" {
		t.Errorf("developer's update: name %v", name)
	}
	dev.del("/v1/admin/bots/" + id).ok()
	dev.get("/v1/admin/bots/"+id).fail(404, "ResourceNotFound")
	dev.post("/v1/admin/workspace-members", member("viewer")).fail(403, "Forbidden")
	dev.put("/v1/admin/workspace-members/"+devID, map[string]any{"role": "manager"}).fail(403, "Forbidden")

	// manager: up to manager, never administrator or owner
	for _, role := range []string{"viewer", "developer", "manager"} {
		mgr.post("/v1/admin/workspace-members", member(role)).ok()
	}
	mgr.post("/v1/admin/workspace-members", member("administrator")).fail(403, "Forbidden")
	mgr.post("/v1/admin/workspace-members", member("owner")).fail(400, "InvalidPayload", "owner")
	mgr.put("/v1/admin/workspace-members/"+devID, map[string]any{"role": "administrator"}).fail(403, "Forbidden")
	mgr.del("/v1/admin/workspace-members/"+admID).fail(403, "Forbidden")
	mgr.put("/v1/admin/workspace-members/"+devID, map[string]any{"role": "manager"}).ok()

	// administrator may grant administrator; nobody grants owner
	adm.post("/v1/admin/workspace-members", member("administrator")).ok()
	adm.post("/v1/admin/workspace-members", member("owner")).fail(400, "InvalidPayload", "owner")
	own.post("/v1/admin/workspace-members", member("owner")).fail(400, "InvalidPayload", "owner")
	own.post("/v1/admin/workspace-members", member("superuser")).fail(400, "InvalidPayload", "role")

	// Nobody removes or demotes the owner, the owner included.
	var ownerID string
	for _, m := range listMembers(t, own) {
		if m["role"] == "owner" {
			ownerID = m["id"].(string)
		}
	}
	if ownerID == "" {
		t.Fatal("no owner in the member list")
	}
	for _, c := range []client{own, adm, mgr, dev} {
		failOwnerProtected(t, c.del("/v1/admin/workspace-members/"+ownerID))
		failOwnerProtected(t, c.put("/v1/admin/workspace-members/"+ownerID, map[string]any{"role": "viewer"}))
		failOwnerProtected(t, c.put("/v1/admin/workspace-members/"+ownerID, map[string]any{"role": "administrator"}))
	}
	owners := 0
	for _, m := range listMembers(t, own) {
		if m["role"] == "owner" {
			owners++
			if m["id"] != ownerID {
				t.Errorf("owner changed: %v", m)
			}
		}
	}
	if owners != 1 {
		t.Errorf("%d owners after the attempts, want 1", owners)
	}
	if role := own.get("/v1/admin/workspace-members/me").ok()["role"]; role != "owner" {
		t.Errorf("owner's role is now %v", role)
	}
}
