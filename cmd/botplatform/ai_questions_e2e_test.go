package main

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestAIIndexQuestions: with --ai-index-questions, the questions the model
// writes for a passage find it when the question's words are not the
// document's; they are AI Spend of the bot's workspace and never appear in
// the API's passages; a failing model or a workspace without AI Spend
// left still gets its file indexed, without them.
func TestAIIndexQuestions(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s, model := startWithModel(t, backend, func(r aitest.Recorded) aitest.Reply {
				if !strings.HasPrefix(r.System, "You read one passage") {
					return aitest.Reply{Text: "unexpected"}
				}
				if strings.Contains(r.Prompt, "End membership") {
					return aitest.Reply{Text: "1. How do I stop paying for Plus?\n2. Can I get out of my yearly deal?\n"}
				}
				return aitest.Reply{Text: "- When will my order arrive?"}
			}, "--ai-index-questions")
			membership := []byte("# Membership\n\nTo end your Plus membership, open Account settings and choose End membership. " +
				"Payments stop at the end of the period you paid for.\n")
			shipping := []byte("# Shipping\n\nOrders ship within two working days. Tracking numbers arrive by email once the parcel leaves.\n")
			const question = "out of my yearly deal"

			e := newFilesEnv(t, s, "questions")
			f := e.f
			f.index(s, "membership.md", membership, nil)
			f.index(s, "shipping.md", shipping, nil)
			hits := f.search(question)
			if len(hits) == 0 || !strings.Contains(hits[0].Content, "End membership") {
				t.Fatalf("search %q: hits %v; want the membership passage first", question, hits)
			}
			calls := 0
			for _, r := range model.Requests() {
				if strings.HasPrefix(r.System, "You read one passage") {
					calls++
				}
			}
			if calls != 2 { // one a text passage; the headings get none
				t.Errorf("%d question calls, want 2", calls)
			}
			if raw := string(f.passagesRaw("membership.md", "").Body); strings.Contains(raw, "yearly deal") {
				t.Errorf("listFilePassages shows the generated questions: %s", raw)
			}
			if r := f.searchRaw("query", question); strings.Contains(string(r.Body), "yearly deal?") {
				t.Errorf("searchFiles shows the generated questions: %s", r.Body)
			}
			ws := "/v1/admin/workspaces/" + e.ws.ws
			us, _ := e.ws.get(ws + "/usages?type=ai_spend").ok()["usages"].([]any)
			if len(us) != 1 || us[0].(map[string]any)["value"].(float64) <= 0 {
				t.Errorf("ai_spend after indexing with questions: %v", us)
			}

			// A failing model: the files are indexed all the same, without
			// questions: the membership passage ranks by its vector alone,
			// below where its questions put it.
			other := newFilesEnv(t, s, "questions-failing")
			model.Fail(100, 503)
			other.f.index(s, "membership.md", membership, nil)
			other.f.index(s, "shipping.md", shipping, nil)
			score := func(hits []searchHit) float64 {
				for _, h := range hits {
					if strings.Contains(h.Content, "End membership") {
						return h.Score
					}
				}
				return 0
			}
			if with, without := score(hits), score(other.f.search(question)); without >= with {
				t.Errorf("search %q: the membership passage scores %v without questions, %v with them", question, without, with)
			}
			if hits := other.f.search("end membership"); len(hits) == 0 || !strings.Contains(hits[0].Content, "End membership") {
				t.Errorf("search of the document's words after a failing model: %v", hits)
			}
			model.Fail(0, 0)

			// No AI Spend left: no call, the file is indexed.
			e.ws.put(ws, map[string]any{"spendingLimit": 0}).ok()
			before := len(model.Requests())
			f.index(s, "shipping-2.md", shipping, nil)
			if n := len(model.Requests()) - before; n != 0 {
				t.Errorf("%d model calls with no AI Spend left", n)
			}
		})
	}
}
