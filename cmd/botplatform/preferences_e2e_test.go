package main

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestPreferences drives set/getAccountPreference and
// set/getWorkspacePreference against one real server per backend.
func TestPreferences(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"account", testAccountPreferences},
		{"workspace", testWorkspacePreferences},
	})
}

func prefPath(scope, key string) string {
	return "/v1/admin/" + scope + "/preferences/" + url.PathEscape(key)
}

func testAccountPreferences(t *testing.T, s *testServer) {
	c := s.as(t, s.issueToken(t, uniqueEmail("prefs")), "")
	other := s.as(t, s.issueToken(t, uniqueEmail("prefs-other")), "")
	p := func(k string) string { return prefPath("account", k) }

	if got := c.post(p("theme"), map[string]any{"value": map[string]any{"mode": "dark", "size": 3}}).ok(); len(got) != 0 {
		t.Fatalf("setAccountPreference answered %v, want {}", got)
	}
	want := map[string]any{"mode": "dark", "size": float64(3)}
	if got := c.get(p("theme")).ok()["value"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("getAccountPreference = %#v, want %#v", got, want)
	}
	c.post(p("theme"), map[string]any{"value": "light"}).ok() // replaces
	if got := c.get(p("theme")).ok()["value"]; got != "light" {
		t.Fatalf("after replacing: %#v, want light", got)
	}
	// An absent value is null; a key may hold any character but NUL.
	c.post(p("a key/with ünïcode"), map[string]any{}).ok()
	if got := c.get(p("a key/with ünïcode")).ok(); got["value"] != nil || len(got) != 1 {
		t.Fatalf("a preference set without value = %v, want {value: null}", got)
	}

	// Another account does not see it; an unset key is 404 naming it.
	other.get(p("theme")).fail(404, "ResourceNotFound", `"theme"`)
	c.get(p("never-set")).fail(404, "ResourceNotFound", "never-set")

	// Bad input names the field.
	c.post(p("theme"), map[string]any{"value": 1, "extra": true}).fail(400, "InvalidPayload", "extra")
	long := strings.Repeat("k", 201)
	c.post(p(long), map[string]any{"value": 1}).fail(400, "InvalidPayload", "key")
	c.get(p(long)).fail(400, "InvalidPayload", "key")
	c.post(p("big"), map[string]any{"value": strings.Repeat("x", 64<<10)}).fail(400, "InvalidPayload", "value")
	c.post(p("nul"), map[string]any{"value": "a\x00b"}).fail(400, "InvalidPayload", "value")
	s.as(t, "bp_pat_wrong", "").get(p("theme")).fail(401, "Unauthorized")
}

func testWorkspacePreferences(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "Preferences")
	admin, _ := owner.addMember("administrator")
	manager, _ := owner.addMember("manager")
	viewer, _ := owner.addMember("viewer")
	p := func(k string) string { return prefPath("workspaces", k) }

	owner.post(p("locale"), map[string]any{"value": "fr"}).ok()
	admin.post(p("flags"), map[string]any{"value": []any{1, true, nil}}).ok()
	manager.post(p("locale"), map[string]any{"value": "de"}).fail(403, "Forbidden", "administrator")
	viewer.post(p("locale"), map[string]any{"value": "de"}).fail(403, "Forbidden")
	for _, c := range []client{owner, admin, manager, viewer} {
		if got := c.get(p("locale")).ok()["value"]; got != "fr" {
			t.Fatalf("getWorkspacePreference = %#v, want fr", got)
		}
	}
	if got := viewer.get(p("flags")).ok()["value"]; !reflect.DeepEqual(got, []any{float64(1), true, nil}) {
		t.Fatalf("flags = %#v", got)
	}
	// Keys named like the workspace's other routes are preferences here too.
	for _, k := range []string{"quotas", "quota", "usages", "audit-records"} {
		admin.post(p(k), map[string]any{"value": k}).ok()
		if got := viewer.get(p(k)).ok()["value"]; got != k {
			t.Fatalf("preference %q = %#v", k, got)
		}
	}
	// The audit log records the change.
	recs, _ := auditRecords(t, owner, 100)
	found := false
	for _, r := range recs {
		if r["action"] == "UPDATE_WORKSPACE" && strings.Contains(r["value"].(string), "locale") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no UPDATE_WORKSPACE record of the preference in %v", recs)
	}

	// Per workspace: another one does not have it; an unset key is 404.
	elsewhere := s.newWorkspace(t, "Elsewhere")
	elsewhere.get(p("locale")).fail(404, "ResourceNotFound", "locale")
	owner.get(p("unset")).fail(404, "ResourceNotFound", "unset")
	// x-workspace-id is required.
	owner.in("").get(p("locale")).fail(401, "Unauthorized", "x-workspace-id")
	owner.post(p("locale"), map[string]any{"value": 1, "other": 2}).fail(400, "InvalidPayload", "other")
	owner.post(p(strings.Repeat("k", 201)), map[string]any{"value": 1}).fail(400, "InvalidPayload", "key")

	// Deleting the workspace deletes its preferences: a new workspace
	// never sees them, and the old one is gone.
	owner.del("/v1/admin/workspaces/" + owner.ws).ok()
	owner.get(p("locale")).fail(401, "Unauthorized")
}
