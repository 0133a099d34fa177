package indexing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/indexing/pdf/pdftest"
)

// TestSmartCleanupBuiltin: without a model server, smartCleanup cleans a
// PDF by rules (a running header on two pages, letter spacing, a hyphen
// left in a line, a paragraph cut by a page break), within the first 30
// pages; other files are left alone.
func TestSmartCleanupBuiltin(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			twoPages := pdftest.TextPages(
				[]string{"ACME report, page 1", "Quarterly S U M M A R Y", "The report covers the exam- ple of growth in"},
				[]string{"ACME report, page 2", "all regions over the last quarter.", "Closing remarks."})
			f.uploadConf(t, "plain.pdf", "application/pdf", twoPages, legacy)
			f.uploadConf(t, "clean.pdf", "application/pdf", twoPages, conf(map[string]any{"parsing": map[string]any{"smartCleanup": true}}))
			var many [][]string
			for i := 1; i <= 32; i++ {
				many = append(many, []string{fmt.Sprintf("Page %d of the S U M M A R Y section.", i)})
			}
			f.uploadConf(t, "long.pdf", "application/pdf", pdftest.TextPages(many...), conf(map[string]any{"parsing": map[string]any{"smartCleanup": true}}))
			f.uploadConf(t, "notes.md", "text/markdown", []byte("Quarterly S U M M A R Y\n"), conf(map[string]any{"parsing": map[string]any{"smartCleanup": true}}))
			f.settleCompleted(t)
			plain, _ := f.contentsOf(t, "plain.pdf")
			want := []string{"ACME report, page 1", "Quarterly S U M M A R Y", "The report covers the exam- ple of growth in",
				"ACME report, page 2", "all regions over the last quarter.", "Closing remarks."}
			if !slicesEqual(plain, want) {
				t.Errorf("without smartCleanup: %q", plain)
			}
			clean, _ := f.contentsOf(t, "clean.pdf")
			want = []string{"Quarterly SUMMARY", "The report covers the example of growth in all regions over the last quarter.", "Closing remarks."}
			if !slicesEqual(clean, want) {
				t.Errorf("with smartCleanup: %q, want %q", clean, want)
			}
			long, _ := f.contentsOf(t, "long.pdf")
			for i, c := range long {
				cleaned := strings.Contains(c, "SUMMARY")
				if cleaned != (i < cleanupMaxPages) {
					t.Errorf("page %d: %q (pages after %d must stay as they are)", i+1, c, cleanupMaxPages)
				}
			}
			if md, _ := f.contentsOf(t, "notes.md"); len(md) != 1 || md[0] != "Quarterly S U M M A R Y" {
				t.Errorf("smartCleanup changed a Markdown file: %q", md)
			}
		})
	}
}

// TestSmartCleanupModel: with a model server, the first 30 pages or 20 KB
// of text (whichever comes first) go to the inexpensive model page by
// page; its answers replace them, and each call is charged.
func TestSmartCleanupModel(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			setPlan(t, f, "team", 100)
			srv := aitest.New(t)
			srv.Respond(func(r aitest.Recorded) aitest.Reply {
				return aitest.Reply{Text: "Cleaned: " + strings.SplitN(r.Prompt, " ", 3)[1]}
			})
			f.withModel(t, srv, map[string]ai.Price{"small-1": {Input: 1, Output: 2}})
			var pages [][]string
			for i := 1; i <= 40; i++ {
				pages = append(pages, []string{fmt.Sprintf("Page %d text.", i)})
			}
			f.uploadConf(t, "pages.pdf", "application/pdf", pdftest.TextPages(pages...), conf(map[string]any{"parsing": map[string]any{"smartCleanup": true}}))
			// 1 KB a page: 20 KB ends the cleanup before page 30.
			var big [][]string
			filler := strings.Repeat("word ", 200)
			for i := 1; i <= 30; i++ {
				big = append(big, []string{fmt.Sprintf("Big %d %s", i, filler)})
			}
			f.uploadConf(t, "big.pdf", "application/pdf", pdftest.TextPages(big...), conf(map[string]any{"parsing": map[string]any{"smartCleanup": true}}))
			f.settleCompleted(t)
			reqs := srv.Requests()
			var pageReqs, bigReqs, bigBytes int
			for _, r := range reqs {
				if r.Model != "small-1" {
					t.Errorf("smartCleanup used model %q, want the inexpensive one", r.Model)
				}
				if strings.HasPrefix(r.Prompt, "Page ") {
					pageReqs++
				} else {
					bigReqs++
					bigBytes += len(r.Prompt)
				}
			}
			if pageReqs != cleanupMaxPages {
				t.Errorf("%d calls for a 40-page PDF, want %d (one per page, 30 pages)", pageReqs, cleanupMaxPages)
			}
			if bigBytes > cleanupMaxBytes || bigReqs < 15 || bigReqs >= 30 {
				t.Errorf("big PDF: %d calls with %d bytes of text; want the pages within 20 KB only", bigReqs, bigBytes)
			}
			got, _ := f.contentsOf(t, "pages.pdf")
			if len(got) != 40 || got[0] != "Cleaned: 1" || got[29] != "Cleaned: 30" || got[30] != "Page 31 text." {
				t.Errorf("passages: %q", got)
			}
			total, byBot, err := f.st.AISpend(f.ctx, f.bot.WorkspaceID, time.Now().Add(-time.Hour))
			must(t, err)
			var want int64 // nanodollars: $1 per million input tokens, $2 per million output tokens
			for _, r := range reqs {
				answer := "Cleaned: " + strings.SplitN(r.Prompt, " ", 3)[1]
				want += aitest.PromptTokens(r)*1000 + aitest.CompletionTokens(answer)*2000
			}
			if total != want || byBot[f.bot.ID] != want {
				t.Errorf("AI Spend: total %d, by bot %v; want %d", total, byBot, want)
			}
		})
	}
}

// handbook2 has one long section (over 1,000 characters) and a short one.
