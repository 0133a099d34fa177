package main

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
)

// Scenarios of TestAdminAPI on accounts, tokens, workspaces and members.

// listMembers returns every member of c's workspace, following nextToken.
func listMembers(t *testing.T, c client) []map[string]any {
	t.Helper()
	var out []map[string]any
	next := ""
	for i := 0; ; i++ {
		var page struct {
			Members []map[string]any `json:"members"`
			Meta    *struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		c.get("/v1/admin/workspace-members?pageSize=3&nextToken=" + url.QueryEscape(next)).decode(&page)
		if page.Meta == nil {
			t.Fatal("listMembers: no meta")
		}
		out = append(out, page.Members...)
		if next = page.Meta.NextToken; next == "" {
			return out
		}
		if i > 50 {
			t.Fatal("listMembers: nextToken never ends")
		}
	}
}

func testAccountPATs(t *testing.T, s *testServer) {
	email := uniqueEmail("account")
	c := s.as(t, s.issueToken(t, email), "")
	acc := c.get("/v1/admin/account/me").ok()
	if str(t, acc, "account", "email") != email || !strings.HasPrefix(str(t, acc, "account", "id"), "acc_") {
		t.Errorf("account/me: %v, want email %s", acc, email)
	}
	if _, err := time.Parse(time.RFC3339, str(t, acc, "account", "createdAt")); err != nil {
		t.Errorf("account createdAt: %v", err)
	}
	if me := s.owner(t).in("").get("/v1/admin/account/me").ok(); str(t, me, "account", "email") != "owner@localhost" {
		t.Errorf("bootstrap owner's email: %v", me)
	}

	created := c.post("/v1/admin/account/pats", map[string]any{"note": "ci"}).ok()
	pat, _ := created["pat"].(map[string]any)
	if keys := sortedKeys(pat); !reflect.DeepEqual(keys, []string{"createdAt", "id", "note", "value"}) {
		t.Fatalf("createPAT returned %v, want {pat:{id,createdAt,note,value}}", created)
	}
	id, value := str(t, pat, "id"), str(t, pat, "value")
	if pat["note"] != "ci" || !strings.HasPrefix(value, "bp_pat_") {
		t.Errorf("createPAT: %v", pat)
	}
	if got := s.as(t, value, "").get("/v1/admin/account/me").ok(); str(t, got, "account", "id") != str(t, acc, "account", "id") {
		t.Errorf("the new PAT authenticates another account: %v", got)
	}

	pats := listPATs(t, c)
	if len(pats) != 2 {
		t.Fatalf("listPATs: %d tokens, want 2 (issued + created): %v", len(pats), pats)
	}
	if strings.Contains(string(c.get("/v1/admin/account/pats").Body), "bp_pat_") {
		t.Error("listPATs shows a token value")
	}
	var firstID string
	for _, p := range pats {
		if _, ok := p["value"]; ok {
			t.Errorf("listPATs shows a token value: %v", p)
		}
		if p["id"] == id && p["note"] != "ci" {
			t.Errorf("listed PAT %v, want note ci", p)
		}
		if p["id"] != id {
			firstID = p["id"].(string)
		}
	}

	// Another account cannot delete this account's token.
	other := s.as(t, s.issueToken(t, uniqueEmail("other")), "")
	other.del("/v1/admin/account/pats/"+id).fail(404, "ResourceNotFound")

	if m := c.del("/v1/admin/account/pats/" + id).ok(); len(m) != 0 {
		t.Errorf("deletePAT returned %v, want {}", m)
	}
	s.as(t, value, "").get("/v1/admin/account/me").fail(401, "Unauthorized")
	if pats := listPATs(t, c); len(pats) != 1 || pats[0]["id"] != firstID {
		t.Errorf("after delete: %v", pats)
	}
	c.del("/v1/admin/account/pats/"+id).fail(404, "ResourceNotFound")
	c.post("/v1/admin/account/pats", map[string]any{}).fail(400, "InvalidPayload", "note")
	c.post("/v1/admin/account/pats", map[string]any{"note": "  "}).fail(400, "InvalidPayload", "note")
	c.post("/v1/admin/account/pats", map[string]any{"note": 3}).fail(400, "InvalidPayload", "note")
}

func listPATs(t *testing.T, c client) []map[string]any {
	t.Helper()
	var r struct {
		Pats []map[string]any `json:"pats"`
	}
	c.get("/v1/admin/account/pats").decode(&r)
	if r.Pats == nil {
		t.Fatal("listPATs: no pats array")
	}
	return r.Pats
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func testWorkspaces(t *testing.T, s *testServer) {
	c := s.as(t, s.issueToken(t, uniqueEmail("ws-owner")), "")
	me := str(t, c.get("/v1/admin/account/me").ok(), "account", "id")

	ws := c.post("/v1/admin/workspaces", map[string]any{"name": "First"}).ok()
	id := str(t, ws, "id")
	want := map[string]any{"name": "First", "ownerId": me, "plan": "community", "billingVersion": "v4",
		"botCount": float64(0), "blocked": false, "activeTrialId": nil}
	for k, v := range want {
		if got, ok := ws[k]; !ok || got != v {
			t.Errorf("createWorkspace %s = %#v, want %#v (body %v)", k, got, v, ws)
		}
	}
	if _, ok := ws["spendingLimit"].(float64); !ok {
		t.Errorf("createWorkspace spendingLimit = %#v, want a number", ws["spendingLimit"])
	}
	if !strings.HasPrefix(id, "wkspace_") || ws["workspace"] != nil {
		t.Errorf("createWorkspace must return a flat workspace: %v", ws)
	}
	str(t, ws, "createdAt")
	str(t, ws, "updatedAt")
	if got := c.get("/v1/admin/workspaces/" + id).ok(); !reflect.DeepEqual(got, ws) {
		t.Errorf("getWorkspace = %v\nwant %v", got, ws)
	}
	c.post("/v1/admin/workspaces", map[string]any{}).fail(400, "InvalidPayload", "name")
	c.post("/v1/admin/workspaces", map[string]any{"name": ""}).fail(400, "InvalidPayload", "name")
	c.post("/v1/admin/workspaces", map[string]any{"name": "x", "billingVersion": "v1"}).fail(400, "InvalidPayload", "billingVersion")
	c.get("/v1/admin/workspaces/wkspace_nope").fail(404, "ResourceNotFound")

	// listWorkspaces pages through exactly this account's workspaces.
	all := map[string]bool{id: true}
	for _, name := range []string{"Second", "Third", "Fourth", "Fifth"} {
		all[str(t, c.post("/v1/admin/workspaces", map[string]any{"name": name}).ok(), "id")] = true
	}
	seen := map[string]int{}
	next, pages := "", 0
	for {
		var page struct {
			Workspaces []map[string]any `json:"workspaces"`
			Meta       *struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		c.get("/v1/admin/workspaces?pageSize=2&nextToken=" + url.QueryEscape(next)).decode(&page)
		pages++
		if page.Meta == nil || len(page.Workspaces) > 2 {
			t.Fatalf("listWorkspaces page %d: %d workspaces, meta %v", pages, len(page.Workspaces), page.Meta)
		}
		for _, w := range page.Workspaces {
			seen[w["id"].(string)]++
			if w["ownerId"] != me || w["plan"] != "community" {
				t.Errorf("listed workspace %v", w)
			}
		}
		if next = page.Meta.NextToken; next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("listWorkspaces: nextToken never ends")
		}
	}
	if pages != 3 || len(seen) != len(all) {
		t.Errorf("listWorkspaces: %d pages, %d workspaces, want 3 pages of 5 workspaces: %v", pages, len(seen), seen)
	}
	for wid := range all {
		if seen[wid] != 1 {
			t.Errorf("workspace %s listed %d times, want once", wid, seen[wid])
		}
	}

	// updateWorkspace: administrator or above.
	adm, _ := c.in(id).addMember("administrator")
	mgr, _ := c.in(id).addMember("manager")
	handle := "team-" + strings.TrimSuffix(uniqueEmail("h"), "@example.com")
	upd := adm.put("/v1/admin/workspaces/"+id, map[string]any{"name": "Renamed", "handle": handle, "about": "we test", "spendingLimit": 5}).ok()
	if upd["name"] != "Renamed" || upd["handle"] != handle || upd["about"] != "we test" || upd["spendingLimit"] != float64(5) || upd["id"] != id {
		t.Errorf("updateWorkspace: %v", upd)
	}
	if got := c.get("/v1/admin/workspaces/" + id).ok(); got["name"] != "Renamed" || got["handle"] != handle {
		t.Errorf("after update: %v", got)
	}
	mgr.put("/v1/admin/workspaces/"+id, map[string]any{"name": "Manager's"}).fail(403, "Forbidden")
	c.put("/v1/admin/workspaces/"+id, map[string]any{"handle": "Bad Handle!"}).fail(400, "InvalidPayload", "handle")
	c.put("/v1/admin/workspaces/"+id, map[string]any{"handle": "-ab"}).fail(400, "InvalidPayload", "handle")
	c.put("/v1/admin/workspaces/"+id, map[string]any{"spendingLimit": "lots"}).fail(400, "InvalidPayload", "spendingLimit")
	c.put("/v1/admin/workspaces/"+id, map[string]any{"bogus": 1}).fail(400, "InvalidPayload", "bogus")
	var other string
	for wid := range all {
		if wid != id {
			other = wid
			break
		}
	}
	c.put("/v1/admin/workspaces/"+other, map[string]any{"handle": handle}).fail(409, "AlreadyExists", "handle")
	if got := c.get("/v1/admin/workspaces/" + other).ok(); got["handle"] != nil {
		t.Errorf("a refused handle was stored: %v", got)
	}
	var byHandle struct {
		Workspaces []map[string]any `json:"workspaces"`
	}
	c.get("/v1/admin/workspaces?handle=" + url.QueryEscape(handle)).decode(&byHandle)
	if len(byHandle.Workspaces) != 1 || byHandle.Workspaces[0]["id"] != id {
		t.Errorf("listWorkspaces?handle=%s: %v", handle, byHandle.Workspaces)
	}

	// Someone who is not a member sees nothing.
	stranger := s.as(t, s.issueToken(t, uniqueEmail("ws-stranger")), "")
	stranger.get("/v1/admin/workspaces/"+id).fail(404, "ResourceNotFound")
	stranger.put("/v1/admin/workspaces/"+id, map[string]any{"name": "mine"}).fail(404, "ResourceNotFound")
	stranger.del("/v1/admin/workspaces/"+id).fail(404, "ResourceNotFound")
}

func testDeleteWorkspace(t *testing.T, s *testServer) {
	c := s.as(t, s.issueToken(t, uniqueEmail("ws-deleter")), "")
	keep := str(t, c.post("/v1/admin/workspaces", map[string]any{"name": "Keep"}).ok(), "id")
	id := str(t, c.post("/v1/admin/workspaces", map[string]any{"name": "Doomed"}).ok(), "id")
	in := c.in(id)
	bot := str(t, in.createBot(map[string]any{"name": "doomed-bot"}), "id")
	in.post("/v1/admin/bots/baks", map[string]any{"botId": bot}).ok()
	if n := c.get("/v1/admin/workspaces/" + id).ok()["botCount"]; n != float64(1) {
		t.Errorf("botCount = %v, want 1", n)
	}
	adm, _ := in.addMember("administrator")
	adm.in("").del("/v1/admin/workspaces/"+id).fail(403, "Forbidden")
	c.get("/v1/admin/workspaces/" + id).ok()

	if m := c.del("/v1/admin/workspaces/" + id).ok(); len(m) != 0 {
		t.Errorf("deleteWorkspace returned %v, want {}", m)
	}
	c.get("/v1/admin/workspaces/"+id).fail(404, "ResourceNotFound")
	c.del("/v1/admin/workspaces/"+id).fail(404, "ResourceNotFound")
	in.get("/v1/admin/bots").fail(401, "Unauthorized")
	in.get("/v1/admin/bots/"+bot).fail(401, "Unauthorized")
	adm.get("/v1/admin/workspace-members/me").fail(401, "Unauthorized")
	var list struct {
		Workspaces []map[string]any `json:"workspaces"`
	}
	c.get("/v1/admin/workspaces").decode(&list)
	if len(list.Workspaces) != 1 || list.Workspaces[0]["id"] != keep {
		t.Errorf("after delete, listWorkspaces = %v, want only %s", list.Workspaces, keep)
	}

	// The bot is gone from the database, not merely unreachable.
	ctx := context.Background()
	st, err := openStore(ctx, config.Config{DataDir: s.DataDir, DatabaseURL: s.DatabaseURL})
	if err != nil {
		t.Fatalf("open the server's store: %v", err)
	}
	defer st.Close()
	if _, err := st.GetBot(ctx, id, bot); !errors.Is(err, platform.ErrNotFound) {
		t.Errorf("bot of the deleted workspace: GetBot err = %v, want ErrNotFound", err)
	}
	if keys, err := st.ListBotKeys(ctx, id, bot); err != nil || len(keys) != 0 {
		t.Errorf("bot keys of the deleted workspace: %v, %v", keys, err)
	}
}

func testMembers(t *testing.T, s *testServer) {
	own := s.newWorkspace(t, "members")
	ownerAcc := str(t, own.in("").get("/v1/admin/account/me").ok(), "account", "id")
	ms := listMembers(t, own)
	if len(ms) != 1 || ms[0]["role"] != "owner" || ms[0]["email"] != "owner@localhost" || ms[0]["userId"] != ownerAcc {
		t.Fatalf("members of a new workspace: %v, want the owner alone", ms)
	}
	me := own.get("/v1/admin/workspace-members/me").ok()
	if me["role"] != "owner" || me["id"] != ms[0]["id"] {
		t.Errorf("workspace-members/me = %v, want the owner %v", me, ms[0])
	}

	v, vid := own.addMember("viewer")
	if me := v.get("/v1/admin/workspace-members/me").ok(); me["role"] != "viewer" || me["id"] != vid {
		t.Errorf("viewer's workspace-members/me = %v", me)
	}
	for _, role := range []string{"developer", "manager", "administrator"} {
		own.addMember(role)
	}
	ms = listMembers(t, own) // pageSize 3: two full pages
	roles := map[string]int{}
	ids := map[string]bool{}
	for _, m := range ms {
		roles[m["role"].(string)]++
		ids[m["id"].(string)] = true
	}
	if len(ms) != 5 || len(ids) != 5 || roles["owner"] != 1 || roles["viewer"] != 1 {
		t.Errorf("members: %v", ms)
	}

	email := uniqueEmail("dup")
	own.post("/v1/admin/workspace-members", map[string]any{"email": email, "role": "viewer"}).ok()
	own.post("/v1/admin/workspace-members", map[string]any{"email": email, "role": "developer"}).fail(409, "AlreadyExists")
	own.post("/v1/admin/workspace-members", map[string]any{"email": "not-an-email", "role": "viewer"}).fail(400, "InvalidPayload", "email")
	own.post("/v1/admin/workspace-members", map[string]any{"email": uniqueEmail("x")}).fail(400, "InvalidPayload", "role")

	if m := own.put("/v1/admin/workspace-members/"+vid, map[string]any{"role": "developer"}).ok(); m["role"] != "developer" {
		t.Errorf("updateMember: %v", m)
	}
	if me := v.get("/v1/admin/workspace-members/me").ok(); me["role"] != "developer" {
		t.Errorf("after promotion, me = %v", me)
	}
	v.createBot(map[string]any{"name": "now allowed"})
	own.del("/v1/admin/workspace-members/" + vid).ok()
	v.get("/v1/admin/workspace-members/me").fail(401, "Unauthorized")
	own.del("/v1/admin/workspace-members/"+vid).fail(404, "ResourceNotFound")
}
