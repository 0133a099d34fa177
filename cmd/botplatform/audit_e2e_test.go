package main

import (
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/syncbuf"
)

// TestAuditLog drives getAuditRecords against one real server per backend:
// every admin action lands in the workspace's log, newest first, by whoever
// acted, with no secret in it; only administrators read it.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"actions", testAuditActions},
		{"access", testAuditAccess},
	})
}

// TestAuditBackup has a server of its own: a backup's record goes to every
// workspace, which would land amid another scenario's expected records.
func TestAuditBackup(t *testing.T) {
	t.Parallel()
	testAuditBackup(t, startBackend(t, "sqlite"))
}

// auditRecords returns every record of c's workspace, following nextToken
// with pageSize records a page, and the raw bodies of the pages.
func auditRecords(t *testing.T, c client, pageSize int) ([]map[string]any, string) {
	t.Helper()
	var out []map[string]any
	var raw strings.Builder
	next := ""
	for i := 0; ; i++ {
		var page struct {
			Records []map[string]any `json:"records"`
			Meta    *struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		r := c.get("/v1/admin/workspaces/" + url.PathEscape(c.ws) + "/audit-records?pageSize=" + strconv.Itoa(pageSize) + "&nextToken=" + url.QueryEscape(next))
		r.decode(&page)
		raw.Write(r.Body)
		if page.Meta == nil || len(page.Records) > pageSize {
			t.Fatalf("getAuditRecords: %d records for pageSize %d, meta %v", len(page.Records), pageSize, page.Meta)
		}
		out = append(out, page.Records...)
		if next = page.Meta.NextToken; next == "" {
			return out, raw.String()
		}
		if i > 100 {
			t.Fatal("getAuditRecords: nextToken never ends")
		}
	}
}

func testAuditActions(t *testing.T, s *testServer) {
	// An account of its own, so that its token's records land only here.
	email := uniqueEmail("auditor")
	acc := s.as(t, s.issueToken(t, email), "")
	accountID := str(t, acc.get("/v1/admin/account/me").ok(), "account", "id")
	ws := str(t, acc.post("/v1/admin/workspaces", map[string]any{"name": "Audited"}).ok(), "id")
	c := acc.in(ws)
	secrets := []string{}
	var want []string // actions, oldest first; UNKNOWN ones as UNKNOWN:NAME

	want = append(want, "CREATE_WORKSPACE")
	_, memberID := c.addMember("developer")
	// The member's token is issued by the operator (botplatform token).
	issuedAt := len(want) + 1
	want = append(want, "ADD_WORKSPACE_MEMBER", "UNKNOWN:CREATE_PERSONAL_ACCESS_TOKEN")
	c.put("/v1/admin/workspace-members/"+memberID, map[string]any{"role": "manager"}).ok()
	want = append(want, "UPDATE_WORKSPACE_MEMBER")
	pat := c.post("/v1/admin/account/pats", map[string]any{"note": "audit"}).ok()
	patID, patValue := str(t, pat, "pat", "id"), str(t, pat, "pat", "value")
	secrets = append(secrets, patValue)
	want = append(want, "UNKNOWN:CREATE_PERSONAL_ACCESS_TOKEN")

	const secret1, secret2 = "s3cr3t-VALUE-one-7f1d", "s3cr3t-VALUE-two-92ab"
	secrets = append(secrets, secret1, secret2)
	bot := c.createBot(map[string]any{"name": "audited", "secrets": map[string]any{"API_KEY": secret1}})
	botID := str(t, bot, "id")
	secrets = append(secrets, str(t, bot, "signingSecret"))
	want = append(want, "CREATE_BOT")
	c.put("/v1/admin/bots/"+botID, map[string]any{"description": "watched"}).ok()
	want = append(want, "UPDATE_BOT")
	c.put("/v1/admin/bots/"+botID, map[string]any{"code": "bot.on.message('*', async () => {})"}).ok()
	want = append(want, "DEPLOY_BOT")
	secretsAt := len(want)
	c.put("/v1/admin/bots/"+botID, map[string]any{"secrets": map[string]any{"API_KEY": secret2}}).ok()
	want = append(want, "UPDATE_BOT_CONFIG")
	c.put("/v1/admin/bots/"+botID+"/fetch", map[string]any{"hosts": []string{"example.com"}}).ok()
	want = append(want, "UPDATE_BOT_CONFIG")
	rotated := c.post("/v1/admin/bots/"+botID+"/signing-secrets/rotate", map[string]any{}).ok()
	secrets = append(secrets, str(t, rotated, "newSigningSecret"))
	want = append(want, "UNKNOWN:ROTATE_BOT_SIGNING_SECRET")
	key := c.post("/v1/admin/bots/baks", map[string]any{"botId": botID, "note": "ci"}).ok()
	keyID, keyValue := str(t, key, "id"), str(t, key, "value")
	secrets = append(secrets, keyValue)
	want = append(want, "UNKNOWN:CREATE_BOT_API_KEY")

	byAccount := s.files(t, c.token, botID)
	f1 := byAccount.mustUpsert(map[string]any{"key": "a.txt", "size": 1})
	byAccount.del(f1.ID).ok()
	want = append(want, "UNKNOWN:DELETE_FILE")
	keyDeleteAt := len(want)
	byKey := s.files(t, keyValue, botID)
	f2 := byKey.mustUpsert(map[string]any{"key": "b.txt", "size": 1})
	byKey.del(f2.ID).ok()
	want = append(want, "UNKNOWN:DELETE_FILE")
	c.del("/v1/admin/bots/baks/" + keyID).ok()
	want = append(want, "UNKNOWN:DELETE_BOT_API_KEY")

	c.put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": 7}).ok()
	want = append(want, "SET_AI_SPENDING_LIMIT")
	c.put("/v1/admin/workspaces/"+ws, map[string]any{"name": "Audited 2"}).ok()
	want = append(want, "UPDATE_WORKSPACE")
	c.put("/v1/admin/workspaces/"+ws+"/quotas", map[string]any{"file_storage_bytes": 1 << 20}).ok()
	want = append(want, "UPDATE_WORKSPACE")
	c.del("/v1/admin/account/pats/" + patID).ok()
	want = append(want, "UNKNOWN:DELETE_PERSONAL_ACCESS_TOKEN")
	c.del("/v1/admin/workspace-members/" + memberID).ok()
	want = append(want, "REMOVE_WORKSPACE_MEMBER")
	c.del("/v1/admin/bots/" + botID).ok()
	want = append(want, "DELETE_BOT")
	// Refused changes leave no record.
	c.put("/v1/admin/workspace-members/"+memberID, map[string]any{"role": "viewer"}).fail(404, "ResourceNotFound")
	c.del("/v1/admin/bots/"+botID).fail(404, "ResourceNotFound")

	recs, raw := auditRecords(t, c, 4)
	var got []string
	for _, r := range recs {
		a := r["action"].(string)
		if a == "UNKNOWN" {
			name, _, _ := strings.Cut(str(t, r, "value"), ":")
			a += ":" + name
		}
		got = append(got, a)
	}
	slices.Reverse(want)
	newest := func(oldest int) int { return len(want) - 1 - oldest }
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit records, newest first:\n got %v\nwant %v", got, want)
	}
	for i, r := range recs {
		wantUser, wantEmail := any(accountID), any(email)
		switch i {
		case newest(keyDeleteAt): // the file deleted with the bot API key
			wantUser, wantEmail = keyID, nil
		case newest(issuedAt): // the server, for its operator
			wantUser, wantEmail = nil, nil
		}
		if r["userId"] != wantUser || r["userEmail"] != wantEmail {
			t.Errorf("record %d (%v): userId %v userEmail %v, want %v %v", i, r["action"], r["userId"], r["userEmail"], wantUser, wantEmail)
		}
		if at := str(t, r, "recordedAt"); !strings.HasSuffix(at, "Z") || !strings.HasPrefix(str(t, r, "id"), "audit_") {
			t.Errorf("record %d: id %v recordedAt %v", i, r["id"], at)
		}
		if keys := sortedKeys(r); !reflect.DeepEqual(keys, []string{"action", "id", "recordedAt", "resourceId", "resourceName", "userEmail", "userId", "value"}) {
			t.Errorf("record %d has fields %v", i, keys)
		}
	}
	if r := recs[0]; r["resourceId"] != botID || r["resourceName"] != "audited" {
		t.Errorf("DELETE_BOT record names %v %v, want the bot", r["resourceId"], r["resourceName"])
	}
	if v := str(t, recs[newest(secretsAt)], "value"); !strings.Contains(v, "secrets (API_KEY)") {
		t.Errorf("the secrets' update record says %q, want the secret's name", v)
	}
	for _, secret := range secrets {
		if strings.Contains(raw, secret) {
			t.Fatalf("the audit log holds a secret value (%.12s…)", secret)
		}
	}
}

func testAuditAccess(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "Audit access")
	path := "/v1/admin/workspaces/" + url.PathEscape(c.ws) + "/audit-records"
	for _, role := range []string{"viewer", "developer", "manager"} {
		m, _ := c.addMember(role)
		m.get(path).fail(403, "Forbidden", "administrator")
	}
	admin, adminID := c.addMember("administrator")
	recs, _ := auditRecords(t, admin, 100)
	if len(recs) < 8 || recs[1]["action"] != "ADD_WORKSPACE_MEMBER" || recs[1]["resourceId"] != adminID {
		t.Errorf("an administrator reads %d records: %v; want the workspace's, the administrator's addition second newest", len(recs), recs)
	}
	outsider := s.as(t, s.issueToken(t, uniqueEmail("outsider")), "")
	outsider.get(path).fail(404, "ResourceNotFound")
	for _, q := range []string{"pageSize=0", "pageSize=1001", "pageSize=abc", "pageSize=-1"} {
		c.get(path+"?"+q).fail(400, "InvalidQuery", "pageSize")
	}
	c.get(path+"?nextToken=garbage").fail(400, "InvalidQuery", "nextToken")
	if recs, _ := auditRecords(t, c, 1000); len(recs) < 5 {
		t.Errorf("pageSize=1000: %d records", len(recs))
	}
}

// testAuditBackup: botplatform backup, run beside the server, records the
// backup in every workspace, as the server itself.
func testAuditBackup(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "Audit backup")
	to := filepath.Join(t.TempDir(), "backup")
	var out, errOut syncbuf.Buffer
	if err := run(t.Context(), []string{"backup", "--data", s.DataDir, "--to", to}, &out, &errOut); err != nil {
		t.Fatalf("botplatform backup: %v\n%s", err, errOut.String())
	}
	if errOut.String() != "" {
		t.Errorf("botplatform backup warned: %s", errOut.String())
	}
	recs, _ := auditRecords(t, c, 100)
	if r := recs[0]; r["action"] != "UNKNOWN" || !strings.HasPrefix(str(t, r, "value"), "BACKUP_CREATED: botplatform backup to "+to+":") ||
		r["userId"] != nil || r["resourceName"] != "backup" {
		t.Errorf("newest record %v, want the backup's, by the server", r)
	}
}
