package main

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestAISearchRewrite: with --ai-search-rewrite, the model's search terms
// find a passage the question's own words do not name; the call is AI
// Spend of the bot's workspace; when the model fails or the spending limit
// is reached, the search still answers, on the question alone.
func TestAISearchRewrite(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s, model := startWithModel(t, backend, func(r aitest.Recorded) aitest.Reply {
				if strings.HasPrefix(r.System, "You turn a customer's question") {
					return aitest.Reply{Text: "refund\nreimbursement\nmoney returned"}
				}
				return aitest.Reply{Text: "unexpected"}
			}, "--ai-search-rewrite")
			e := newFilesEnv(t, s, "rewrite")
			f := e.f
			f.index(s, "returns.md", []byte("# Returns\n\nA refund (a reimbursement) is paid to the original payment method within 14 days of receiving the returned item.\n"), nil)
			f.index(s, "shipping.md", []byte("# Shipping\n\nOrders ship within two working days. Tracking numbers arrive by email.\n"), nil)
			f.index(s, "accounts.md", []byte("# Accounts\n\nYou can close your account from the settings page at any time.\n"), nil)

			// "order" is the shipping passage's word; the model's words are the
			// returns passage's.
			const question = "cash back for my order"
			hits := f.search(question)
			if len(hits) == 0 || !strings.Contains(hits[0].Content, "reimbursement) is paid") {
				t.Fatalf("rewritten search %q: top hit %v; want the returns passage", question, hits)
			}
			reqs := model.Requests()
			if len(reqs) != 1 || reqs[0].Prompt != question {
				t.Fatalf("model calls: %+v; want one, with the question", reqs)
			}
			ws := "/v1/admin/workspaces/" + e.ws.ws
			us, _ := e.ws.get(ws + "/usages?type=ai_spend").ok()["usages"].([]any)
			if len(us) != 1 || us[0].(map[string]any)["value"].(float64) <= 0 {
				t.Errorf("ai_spend after a rewritten search: %v", us)
			}

			// A failing model: the search answers on the question's words.
			model.Fail(3, 503)
			if hits := f.search("shipping tracking"); len(hits) == 0 || !strings.Contains(hits[0].Content, "Tracking numbers") {
				t.Errorf("search while the model fails: %v", hits)
			}
			// No spend left: no model call, the search still answers.
			e.ws.put(ws, map[string]any{"spendingLimit": 0}).ok()
			before := len(model.Requests())
			if hits := f.search("close account"); len(hits) == 0 || !strings.Contains(hits[0].Content, "close your account") {
				t.Errorf("search with no AI Spend left: %v", hits)
			}
			if n := len(model.Requests()) - before; n != 0 {
				t.Errorf("%d model calls with no AI Spend left", n)
			}
		})
	}
}
