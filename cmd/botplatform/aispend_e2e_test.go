package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
)

// TestAISpend runs the scenarios of workspace plans and AI Spend against
// one real server per backend.
func TestAISpend(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"plan", testWorkspacePlan},
		{"ai_spend_reads", testAISpendReads},
		{"ai_spend_recorded", testAISpendRecorded},
		{"ai_spend_daily", testAISpendDaily},
	})
}

// aiUsageRecorder stores metered model calls in the server's database, as
// indexing does, with the store opened beside the server.
func aiUsageRecorder(t *testing.T, s *testServer) func(ws, bot, purpose string, cost int64, at time.Time) {
	ctx := context.Background()
	st, err := openStore(ctx, config.Config{DataDir: s.DataDir, DatabaseURL: s.DatabaseURL})
	if err != nil {
		t.Fatalf("open the server's store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return func(ws, bot, purpose string, cost int64, at time.Time) {
		t.Helper()
		u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: ws, BotID: bot, Purpose: purpose,
			Model: "m", InputTokens: 10, OutputTokens: 5, Cost: cost, CreatedAt: at}
		if err := st.RecordAIUsage(ctx, u); err != nil {
			t.Fatalf("RecordAIUsage: %v", err)
		}
	}
}

// quotaValue is getWorkspaceQuota's value for one type.
func quotaValue(t *testing.T, c client, typ string) int64 {
	t.Helper()
	var out struct {
		Quota struct {
			Type   string `json:"type"`
			Value  int64  `json:"value"`
			Period string `json:"period"`
		} `json:"quota"`
	}
	c.in("").get("/v1/admin/workspaces/" + c.ws + "/quota?type=" + typ).decode(&out)
	if out.Quota.Type != typ || out.Quota.Period != time.Now().UTC().Format("2006-01") {
		t.Fatalf("quota?type=%s: %+v", typ, out.Quota)
	}
	return out.Quota.Value
}

type usageOut struct {
	ID     string  `json:"id"`
	Period string  `json:"period"`
	Value  float64 `json:"value"`
	Quota  float64 `json:"quota"`
	Type   string  `json:"type"`
}

// aiSpend is listWorkspaceUsages?type=ai_spend of c's workspace.
func aiSpend(t *testing.T, c client, query string) usageOut {
	t.Helper()
	var out struct {
		Usages []usageOut `json:"usages"`
	}
	c.in("").get("/v1/admin/workspaces/" + c.ws + "/usages?type=ai_spend" + query).decode(&out)
	if len(out.Usages) != 1 || out.Usages[0].Type != "ai_spend" || out.Usages[0].ID != c.ws {
		t.Fatalf("usages?type=ai_spend: %+v", out.Usages)
	}
	return out.Usages[0]
}

// getUsage is getUsage of a workspace or bot id.
func getUsage(t *testing.T, c client, id, query string) usageOut {
	t.Helper()
	var out struct {
		Usage usageOut `json:"usage"`
	}
	c.get("/v1/admin/usages/" + id + "?" + query).decode(&out)
	if out.Usage.ID != id {
		t.Fatalf("getUsage %s: %+v", id, out.Usage)
	}
	return out.Usage
}

func testWorkspacePlan(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "plan")
	path := "/v1/admin/workspaces/" + owner.ws
	adm, _ := owner.addMember("administrator")
	dev, _ := owner.addMember("developer")
	const gib = int64(1) << 30
	if got := owner.get(path).ok()["plan"]; got != "community" {
		t.Fatalf("plan of a new workspace = %v", got)
	}
	if v := quotaValue(t, owner, "file_storage_bytes"); v != 10*gib {
		t.Errorf("community file storage = %d", v)
	}
	// A limit set explicitly stays whatever the plan.
	setQuotas(t, owner, map[string]any{"file_max_size_bytes": 12345})

	if got := adm.in("").put(path, map[string]any{"plan": "team"}).ok(); got["plan"] != "team" || got["id"] != owner.ws {
		t.Errorf("updateWorkspace plan=team: %v", got)
	}
	if got := owner.get(path).ok()["plan"]; got != "team" {
		t.Errorf("getWorkspace after plan=team: plan %v", got)
	}
	for typ, want := range map[string]int64{"file_storage_bytes": 100 * gib, "knowledgebase_vector_storage": 10 * gib, "file_max_size_bytes": 12345} {
		if v := quotaValue(t, owner, typ); v != want {
			t.Errorf("team %s = %d, want %d", typ, v, want)
		}
	}
	owner.put(path, map[string]any{"plan": "enterprise"}).ok()
	if v := quotaValue(t, owner, "file_storage_bytes"); v != 1024*gib {
		t.Errorf("enterprise file storage = %d", v)
	}

	dev.in("").put(path, map[string]any{"plan": "community"}).fail(403, "Forbidden", "administrator")
	dev.in("").put(path, map[string]any{"plan": "gold"}).fail(403, "Forbidden")
	adm.in("").put(path, map[string]any{"plan": "gold"}).fail(400, "InvalidPayload", "plan")
	adm.in("").put(path, map[string]any{"plan": "managed"}).fail(400, "InvalidPayload", "plan")
	adm.in("").put(path, map[string]any{"plan": ""}).fail(400, "InvalidPayload", "plan")
	adm.in("").put(path, map[string]any{"plan": 2}).fail(400, "InvalidPayload", "plan")
	adm.in("").put(path, map[string]any{"plan": "team", "handle": "Bad Handle!"}).fail(400, "InvalidPayload", "handle")
	if got := owner.get(path).ok()["plan"]; got != "enterprise" {
		t.Errorf("refused updates changed the plan to %v", got)
	}

	adm.in("").put(path, map[string]any{"plan": "community"}).ok()
	if v := quotaValue(t, owner, "file_storage_bytes"); v != 10*gib {
		t.Errorf("back on community: file storage = %d", v)
	}
	var list struct {
		Workspaces []map[string]any `json:"workspaces"`
	}
	adm.in("").get("/v1/admin/workspaces").decode(&list)
	if len(list.Workspaces) != 1 || list.Workspaces[0]["plan"] != "community" {
		t.Errorf("listWorkspaces: %v", list.Workspaces)
	}
	s.as(t, s.issueToken(t, uniqueEmail("plan-stranger")), "").put(path, map[string]any{"plan": "team"}).fail(404, "ResourceNotFound")
}

func testAISpendReads(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "spend-reads")
	path := "/v1/admin/workspaces/" + owner.ws
	period := time.Now().UTC().Format("2006-01")
	bot := str(t, owner.createBot(nil), "id")

	u := aiSpend(t, owner, "")
	if u.Value != 0 || u.Quota != 100 || u.Period != period {
		t.Errorf("ai_spend of a fresh workspace: %+v, want 0 of 100 in %s", u, period)
	}
	if q := quotaValue(t, owner, "ai_spend"); q != 100 {
		t.Errorf("ai_spend quota = %d, want the spending limit 100", q)
	}
	var quotas struct {
		Quotas []quotaJSONOut `json:"quotas"`
	}
	owner.in("").get(path + "/quotas").decode(&quotas)
	found := false
	for _, q := range quotas.Quotas {
		if q.Type == "ai_spend" {
			found = q.Value == 100 && q.Period == period
		}
	}
	if !found || len(quotas.Quotas) != 5 {
		t.Errorf("listWorkspaceQuotas: %+v, want the storage quotas, ai_spend 100 and table_row_count", quotas.Quotas)
	}
	if u := getUsage(t, owner.in(""), owner.ws, "type=ai_spend"); u.Value != 0 || u.Quota != 100 || u.Type != "ai_spend" || u.Period != period {
		t.Errorf("getUsage of the workspace: %+v", u)
	}
	if u := getUsage(t, owner.in(""), bot, "type=ai_spend"); u.Value != 0 || u.Quota != 100 {
		t.Errorf("getUsage of a bot: %+v", u)
	}
	if u := getUsage(t, owner.in(""), owner.ws, "type=file_storage_bytes"); u.Value != 0 || u.Quota != 10<<30 || u.Type != "file_storage_bytes" {
		t.Errorf("getUsage of the workspace's storage: %+v", u)
	}

	// The spending limit is the quota; updateWorkspace and changeAISpendQuota set it.
	owner.in("").put(path, map[string]any{"spendingLimit": 7}).ok()
	if u := aiSpend(t, owner, ""); u.Quota != 7 {
		t.Errorf("after spendingLimit 7: %+v", u)
	}
	if m := owner.put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": 25}).ok(); len(m) != 0 {
		t.Errorf("changeAISpendQuota returned %v, want {}", m)
	}
	if q := quotaValue(t, owner, "ai_spend"); q != 25 {
		t.Errorf("after changeAISpendQuota 25: quota %d", q)
	}
	if got := owner.get(path).ok()["spendingLimit"]; got != float64(25) {
		t.Errorf("getWorkspace spendingLimit = %v, want 25", got)
	}
	owner.put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": -1}).fail(400, "InvalidPayload", "monthlySpendingLimit")
	owner.put("/v1/admin/quotas/ai-spend", map[string]any{}).fail(400, "InvalidPayload", "monthlySpendingLimit")
	owner.in("").put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": 1}).fail(401, "Unauthorized")

	// Roles: a viewer reads; only administrators change the limit.
	viewer, _ := owner.addMember("viewer")
	dev, _ := owner.addMember("developer")
	if u := aiSpend(t, viewer, ""); u.Quota != 25 {
		t.Errorf("viewer's read: %+v", u)
	}
	getUsage(t, viewer.in(""), bot, "type=ai_spend")
	dev.put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": 1000}).fail(403, "Forbidden", "administrator")
	viewer.put("/v1/admin/quotas/ai-spend", map[string]any{"monthlySpendingLimit": 1000}).fail(403, "Forbidden")
	if q := quotaValue(t, owner, "ai_spend"); q != 25 {
		t.Errorf("refused changes changed the limit to %d", q)
	}

	// Query errors.
	owner.in("").get("/v1/admin/usages/"+owner.ws).fail(400, "InvalidQuery", "type")
	owner.in("").get("/v1/admin/usages/"+owner.ws+"?type=invocation_calls").fail(400, "InvalidQuery", "type")
	owner.in("").get("/v1/admin/usages/"+bot+"?type=file_storage_bytes").fail(400, "InvalidQuery", "ai_spend")
	owner.in("").get("/v1/admin/usages/"+owner.ws+"?type=ai_spend&period=last-month").fail(400, "InvalidQuery", "period")
	owner.in("").get(path+"/usages/by-bot?type=file_storage_bytes").fail(400, "InvalidQuery", "ai_spend")
	owner.in("").get(path+"/usages?type=ai_spend&period=2025-13").fail(400, "InvalidQuery", "period")

	// Outsiders see neither the workspace nor its bots.
	stranger := s.as(t, s.issueToken(t, uniqueEmail("spend-stranger")), "")
	stranger.get(path+"/usages?type=ai_spend").fail(404, "ResourceNotFound")
	stranger.get(path+"/quota?type=ai_spend").fail(404, "ResourceNotFound")
	stranger.get(path+"/usages/by-bot?type=ai_spend").fail(404, "ResourceNotFound")
	stranger.get("/v1/admin/usages/"+owner.ws+"?type=ai_spend").fail(404, "ResourceNotFound")
	msg := stranger.get("/v1/admin/usages/"+bot+"?type=ai_spend").fail(404, "ResourceNotFound", bot)
	if strings.Contains(msg, owner.ws) {
		t.Errorf("404 of another workspace's bot names its workspace: %s", msg)
	}
	owner.in("").get("/v1/admin/usages/bot_nope?type=ai_spend").fail(404, "ResourceNotFound", "bot_nope")
	owner.in("").get("/v1/admin/usages/wkspace_nope?type=ai_spend").fail(404, "ResourceNotFound")
	owner.in("").get(path + "/usages?type=ai_spend").ok()
	owner.in("").get("/v1/admin/workspaces/"+bot+"/usages?type=ai_spend").fail(404, "ResourceNotFound")
	s.as(t, "", "").get("/v1/admin/usages/"+owner.ws+"?type=ai_spend").fail(401, "Unauthorized")
}

type quotaJSONOut struct {
	Type   string `json:"type"`
	Value  int64  `json:"value"`
	Period string `json:"period"`
}

// testAISpendRecorded records model calls in the server's database and reads
// them back through every usage route.
func testAISpendRecorded(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "spend-recorded")
	other := s.newWorkspace(t, "spend-other")
	b1 := str(t, owner.createBot(map[string]any{"name": "one"}), "id")
	b2 := str(t, owner.createBot(map[string]any{"name": "two"}), "id")
	ob := str(t, other.createBot(nil), "id")

	recordAs := aiUsageRecorder(t, s)
	record := func(ws, bot string, cost int64, at time.Time) {
		t.Helper()
		recordAs(ws, bot, "summarization", cost, at)
	}
	now := time.Now().UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	lastMonth := monthStart.Add(-time.Hour)
	record(owner.ws, b1, 1_250_000_000, monthStart) // $1.25, the first instant of the month
	record(owner.ws, b1, 500_000, now)              // $0.0005
	record(owner.ws, b2, 3_000_000_000_000, now)    // $3000 (over 2^31 nanodollars)
	record(owner.ws, b2, 9_000_000_000, lastMonth)  // $9, last month
	record(other.ws, ob, 42_000_000_000, now)

	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	period := now.Format("2006-01")
	if u := aiSpend(t, owner, ""); !near(u.Value, 3001.2505) || u.Quota != 100 || u.Period != period {
		t.Errorf("ai_spend this month: %+v, want 3001.2505 of 100", u)
	}
	if u := getUsage(t, owner.in(""), owner.ws, "type=ai_spend"); !near(u.Value, 3001.2505) {
		t.Errorf("getUsage of the workspace: %+v", u)
	}
	if u := getUsage(t, owner.in(""), b1, "type=ai_spend"); !near(u.Value, 1.2505) || u.Quota != 100 || u.Period != period {
		t.Errorf("getUsage of bot one: %+v, want 1.2505", u)
	}
	if u := getUsage(t, owner.in(""), b2, "type=ai_spend"); !near(u.Value, 3000) {
		t.Errorf("getUsage of bot two: %+v, want 3000", u)
	}
	if u := aiSpend(t, other, ""); !near(u.Value, 42) {
		t.Errorf("ai_spend of the other workspace: %+v, want 42", u)
	}
	var byBot struct {
		Data []struct {
			BotID string  `json:"botId"`
			Value float64 `json:"value"`
		} `json:"data"`
	}
	owner.in("").get("/v1/admin/workspaces/" + owner.ws + "/usages/by-bot?type=ai_spend").decode(&byBot)
	if len(byBot.Data) != 2 || byBot.Data[0].BotID != b2 || !near(byBot.Data[0].Value, 3000) ||
		byBot.Data[1].BotID != b1 || !near(byBot.Data[1].Value, 1.2505) {
		t.Errorf("usage by bot: %+v", byBot.Data)
	}

	// An earlier month, by period.
	prev := lastMonth.Format("2006-01")
	if u := aiSpend(t, owner, "&period="+prev); !near(u.Value, 9) || u.Period != prev {
		t.Errorf("ai_spend of %s: %+v, want 9", prev, u)
	}
	if u := getUsage(t, owner.in(""), b1, "type=ai_spend&period="+prev); u.Value != 0 {
		t.Errorf("bot one in %s: %+v, want 0", prev, u)
	}
	if u := getUsage(t, owner.in(""), b2, "type=ai_spend&period="+prev); !near(u.Value, 9) {
		t.Errorf("bot two in %s: %+v, want 9", prev, u)
	}

	// A deleted bot's spend still counts for the workspace.
	owner.del("/v1/admin/bots/" + b2).ok()
	if u := aiSpend(t, owner, ""); !near(u.Value, 3001.2505) {
		t.Errorf("ai_spend after deleting a bot: %+v", u)
	}
	owner.in("").get("/v1/admin/usages/"+b2+"?type=ai_spend").fail(404, "ResourceNotFound")
}
