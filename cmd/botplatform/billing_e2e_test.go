package main

import (
	"math"
	"net/http"
	"reflect"
	"testing"
)

// TestBillingAndQuotaCompletion drives the billing operations, which bill
// nothing here, and getAllWorkspaceQuotaCompletion against one real server
// per backend.
func TestBillingAndQuotaCompletion(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"billing", testBilling},
		{"quota_completion", testQuotaCompletion},
	})
}

func testBilling(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "Billing")
	admin, _ := owner.addMember("administrator")
	manager, _ := owner.addMember("manager")
	base := "/v1/admin/workspaces/" + owner.ws + "/billing"
	for _, c := range []client{owner, admin} {
		c = c.in("") // the workspace is in the path
		if got := c.get(base + "/invoices").ok(); !reflect.DeepEqual(got, map[string]any{"invoices": []any{}}) {
			t.Fatalf("listWorkspaceInvoices = %v", got)
		}
		if got := c.get(base + "/upcoming-invoice").ok(); !reflect.DeepEqual(got, map[string]any{"total": 0.0, "lineItems": []any{}}) {
			t.Fatalf("getUpcomingInvoice = %v", got)
		}
		got := c.post(base+"/invoices/charge-unpaid", map[string]any{}).ok()
		if !reflect.DeepEqual(got, map[string]any{"chargedInvoices": []any{}, "failedInvoices": []any{}}) {
			t.Fatalf("chargeWorkspaceUnpaidInvoices = %v", got)
		}
	}
	got := owner.post(base+"/invoices/charge-unpaid", map[string]any{"invoiceIds": []string{"in_1"}}).ok()
	failed, _ := got["failedInvoices"].([]any)
	if len(got["chargedInvoices"].([]any)) != 0 || len(failed) != 1 || field(t, failed[0], "id") != "in_1" || field(t, failed[0], "amount") != 0.0 {
		t.Fatalf("charging an invoice that does not exist: %v", got)
	}

	// Below administrator: 403; not a member: 404; bad input: 400.
	manager.get(base+"/invoices").fail(403, "Forbidden", "administrator")
	manager.get(base+"/upcoming-invoice").fail(403, "Forbidden")
	manager.post(base+"/invoices/charge-unpaid", map[string]any{}).fail(403, "Forbidden")
	stranger := s.as(t, s.issueToken(t, uniqueEmail("stranger")), "")
	stranger.get(base+"/invoices").fail(404, "ResourceNotFound")
	owner.post(base+"/invoices/charge-unpaid", map[string]any{"invoiceIds": []string{}}).fail(400, "InvalidPayload", "invoiceIds")
	owner.post(base+"/invoices/charge-unpaid", map[string]any{"invoiceIds": "in_1"}).fail(400, "InvalidPayload", "invoiceIds")
	owner.post(base+"/invoices/charge-unpaid", map[string]any{"other": 1}).fail(400, "InvalidPayload", "other")
}

func testQuotaCompletion(t *testing.T, s *testServer) {
	const path = "/v1/admin/workspaces/usages/quota-completion"
	// Two table rows are the only usage of the bot's workspace.
	e := newRuntimeEnv(t, s)
	id := e.people("Completion")
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": []any{
		map[string]any{"name": "Ada", "email": "ada@x"}, map[string]any{"name": "Bob", "email": "bob@x"}}}).ok()

	// A viewer of that workspace only gets it alone.
	viewer, _ := e.admin.addMember("viewer")
	other := s.newWorkspace(t, "Unused")
	email := uniqueEmail("viewer-two")
	other.post("/v1/admin/workspace-members", map[string]any{"email": email, "role": "viewer"}).ok()
	got := viewer.in("").get(path).ok()
	if len(got) != 1 {
		t.Fatalf("getAllWorkspaceQuotaCompletion of a member of one workspace: %v", got)
	}
	c := field(t, got, e.admin.ws).(map[string]any)
	rows := quotaValue(t, e.admin, "table_row_count")
	if c["type"] != "table_row_count" || math.Abs(c["completion"].(float64)-2/float64(rows)) > 1e-12 {
		t.Fatalf("completion of the workspace with two rows: %v, want table_row_count at 2/%d", c, rows)
	}

	// A member of several workspaces gets each; an unused one is at 0.
	two := s.as(t, s.issueToken(t, email), "")
	e.admin.post("/v1/admin/workspace-members", map[string]any{"email": email, "role": "viewer"}).ok()
	got = two.get(path).ok()
	if len(got) != 2 || field(t, got, other.ws, "completion") != 0.0 || field(t, got, e.admin.ws, "type") != "table_row_count" {
		t.Fatalf("getAllWorkspaceQuotaCompletion of a member of two workspaces: %v", got)
	}
	// An account in no workspace gets an empty map; a bad token is 401.
	none := s.as(t, s.issueToken(t, uniqueEmail("alone")), "")
	if got := none.get(path).ok(); len(got) != 0 {
		t.Fatalf("an account in no workspace: %v", got)
	}
	s.as(t, "bp_pat_nope", "").get(path).fail(401, "Unauthorized")
}
