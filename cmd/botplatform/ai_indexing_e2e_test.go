package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/indexing/pdf/pdftest"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestAIIndexing runs the AI-assisted indexing options through the binary
// with a model server (a local OpenAI-compatible test server): the plan
// rule at upsert, the workspace plan set by its administrator, summaries
// and agent parsing written by the model and searchable, AI Spend read
// through the Admin API and its limit; and, on a server without a model,
// the 400 naming the missing setting.
func TestAIIndexing(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s, model := startWithModel(t, backend, func(r aitest.Recorded) aitest.Reply {
				if strings.HasPrefix(r.System, "You summarize") {
					return aitest.Reply{Text: "The zebra herd summary."}
				}
				if strings.HasPrefix(r.System, "You describe") && len(r.Images) == 1 {
					return aitest.Reply{Text: "A chart of capybara sightings."}
				}
				return aitest.Reply{Text: "# Restructured\n\nThe ocelot paragraph."}
			})
			e := newFilesEnv(t, s, "ai")
			f := e.f
			long := "# Zebras\n\n" + strings.Repeat("Zebras live in herds on the savanna and migrate with the rains. ", 20) + "\n"
			summarize := indexConf(map[string]any{"summarization": map[string]any{"enable": true}})

			// Community plan: summaries are Team/Enterprise only.
			f.upsert(map[string]any{"key": "z.md", "size": len(long), "index": true, "indexing": summarize["indexing"]}).
				fail(402, "PaymentRequired", "summarization.enable", "Team")
			// A developer cannot change the plan; the owner can.
			ws := "/v1/admin/workspaces/" + e.ws.ws
			e.ws.put(ws, map[string]any{"plan": "gold"}).fail(400, "InvalidPayload", "plan")
			e.ws.put(ws, map[string]any{"plan": "team"}).ok()

			got := f.index(s, "z.md", []byte(long), summarize)
			if got.Status != "indexing_completed" {
				t.Fatalf("summarized file: %s %s", got.Status, deref(got.FailedStatusReason))
			}
			var sums []string
			for _, p := range f.allPassages(got.ID) {
				if p.Meta.Type == "summary" {
					sums = append(sums, p.Content)
				}
			}
			if len(sums) != 1 || sums[0] != "The zebra herd summary." {
				t.Errorf("summary passages: %q", sums)
			}
			found := false
			for _, h := range f.search("zebra herd summary") {
				found = found || h.Meta.Type == "summary" && h.Content == sums[0]
			}
			if !found {
				t.Errorf("search does not find the summary")
			}

			agent := indexConf(map[string]any{"parsing": map[string]any{"mode": "agent"}})
			got = f.index(s, "raw.txt", []byte("raw ocelot text"), agent)
			if ps := contents(f.allPassages(got.ID)); len(ps) != 2 || ps[0] != "Restructured" || ps[1] != "The ocelot paragraph." {
				t.Errorf("agent-parsed passages: %q", ps)
			}

			// A PDF page indexed as an image: found by the model's
			// description, its image linked and counted as File Storage.
			storageBefore := storageUsage(t, e.ws, "file_storage_bytes")
			pdf := pdftest.TextPages([]string{"Sightings by month."})
			got = f.index(s, "chart.pdf", pdf, indexConf(map[string]any{"vision": map[string]any{"indexPages": true}}))
			var img *searchHit
			for _, h := range f.search("capybara sightings") {
				if h.Meta.Type == "image" {
					img = &h
					break
				}
			}
			if img == nil || img.Meta.Subtype != "page" || img.Content != "A chart of capybara sightings." || img.Meta.SourceURL == "" {
				t.Fatalf("image passage: %+v", img)
			}
			resp, err := http.Get(img.Meta.SourceURL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(body, []byte("\x89PNG")) {
				t.Errorf("sourceUrl: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
			}
			// The passage named in the URL is signed as the passage: moved
			// into another parameter, the URL opens nothing (it used to open
			// the whole PDF).
			// (A NUL character is refused before any signature is read.)
			for _, forged := range movedPassage(t, img.Meta.SourceURL) {
				if strings.Contains(forged, "%00") {
					s.fetch(t, forged).fail(400, "InvalidQuery", "NUL")
					continue
				}
				s.fetch(t, forged).fail(403, "Forbidden", "invalid")
			}
			if grew := storageUsage(t, e.ws, "file_storage_bytes") - storageBefore; grew != int64(len(pdf)+len(body)) {
				t.Errorf("File Storage grew by %d, want the PDF's %d + the image's %d bytes", grew, len(pdf), len(body))
			}
			f.del(got.ID).ok()
			if after := storageUsage(t, e.ws, "file_storage_bytes"); after != storageBefore {
				t.Errorf("File Storage after deleting the PDF: %d, want %d", after, storageBefore)
			}
			if resp, err := http.Get(img.Meta.SourceURL); err != nil || resp.StatusCode == 200 {
				t.Errorf("the image of a deleted file is still served: %v", err)
			} else {
				resp.Body.Close()
			}

			// Three model calls, charged: readable as AI Spend.
			if n := len(model.Requests()); n != 3 {
				t.Errorf("%d model calls, want 3", n)
			}
			usage := e.ws.get(ws + "/usages?type=ai_spend").ok()
			us, _ := usage["usages"].([]any)
			if len(us) != 1 {
				t.Fatalf("ai_spend usages: %v", usage)
			}
			if v, _ := us[0].(map[string]any)["value"].(float64); v <= 0 {
				t.Errorf("ai_spend value %v after two calls", us[0])
			}

			// A spending limit of 0 stops further AI work at upsert.
			e.ws.put(ws, map[string]any{"spendingLimit": 0}).ok()
			f.upsert(map[string]any{"key": "more.txt", "size": 4, "index": true, "indexing": agent["indexing"]}).
				fail(403, "QuotaExceeded", "AI Spend")

			// Without a model server, agent parsing is refused at upsert.
			plain := startBackend(t, backend)
			pe := newFilesEnv(t, plain, "no-ai")
			pe.f.upsert(map[string]any{"key": "raw.txt", "size": 4, "index": true, "indexing": agent["indexing"]}).
				fail(400, "InvalidPayload", "parsing.mode", "--ai-url")
		})
	}
}

// startWithModel starts a server of backend whose model server (model
// m-1, priced) is a local test server answering with respond.
func startWithModel(t *testing.T, backend string, respond func(aitest.Recorded) aitest.Reply, extra ...string) (*testServer, *aitest.Server) {
	t.Helper()
	model := aitest.New(t)
	model.Respond(respond)
	args := append([]string{"--ai-url", model.URL(), "--ai-model", "m-1", "--ai-prices", `{"m-1":{"input":1,"output":1}}`}, extra...)
	return startBackendWith(t, backend, args...), model
}

// movedPassage returns variants of a passage image's sourceUrl, raw query
// strings as an attacker would write them, with the passage moved out of
// its own parameter.
func movedPassage(t *testing.T, sourceURL string) []string {
	t.Helper()
	base, query, _ := strings.Cut(sourceURL, "?")
	var kept []string
	passage := ""
	for _, kv := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(kv, "passage="); ok {
			passage = v
			continue
		}
		kept = append(kept, kv)
	}
	if passage == "" {
		t.Fatalf("sourceUrl %q names no passage", sourceURL)
	}
	rest := strings.Join(kept, "&")
	return []string{
		base + "?" + rest + "&tagging=passage%3D" + passage,
		base + "?" + rest + "&tagging=passage%3D" + passage + "&passage=",
		base + "?" + rest + "&tagging=%00passage%3D" + passage,
	}
}
