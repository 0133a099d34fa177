package indexing

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/indexing/pdf/pdftest"
	"github.com/botplatform/botplatform/internal/platform"
)

// withModel gives the fixture's service a model server (nil: none) and
// prices.
func (f *fixture) withModel(tb testing.TB, srv *aitest.Server, prices map[string]ai.Price) {
	tb.Helper()
	cfg := ai.Config{Prices: prices}
	var m ai.Model
	if srv != nil {
		cfg.URL = srv.URL()
		cfg.Models = map[string]string{ai.Inexpensive: "small-1", ai.Balanced: "medium-1", ai.Accurate: "large-1"}
		o, err := ai.New(cfg, nil)
		must(tb, err)
		o.Backoff = time.Millisecond
		m = o
	}
	f.svc = New(f.st, f.blobs, platform.SystemClock{}, Config{Workers: 1, Poll: 20 * time.Millisecond, Log: f.svc.log, Model: m, AI: cfg})
}

// uploadConf is upload with an indexing configuration.
func (f *fixture) uploadConf(tb testing.TB, key, contentType string, content []byte, conf map[string]any) platform.File {
	tb.Helper()
	return f.uploadMeta(tb, key, contentType, content, map[string]any{IndexingMetadataKey: map[string]any{"configuration": conf}})
}

// settle runs the workers until no file is indexing_pending, and returns
// the files as they ended.
func (f *fixture) settle(tb testing.TB) map[string]platform.File {
	tb.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { f.svc.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for {
		out := map[string]platform.File{}
		pending := false
		for _, file := range f.files {
			g, err := f.st.GetFile(f.ctx, "", file.ID)
			must(tb, err)
			out[g.Key] = g
			pending = pending || g.Status == platform.FileIndexPending
		}
		if !pending {
			return out
		}
		if time.Now().After(deadline) {
			tb.Fatalf("files still indexing_pending after 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settleCompleted is settle, failing unless every file was indexed.
func (f *fixture) settleCompleted(tb testing.TB) {
	tb.Helper()
	for key, file := range f.settle(tb) {
		if file.Status != platform.FileIndexCompleted {
			tb.Fatalf("%s: %s %s", key, file.Status, file.FailedReason)
		}
	}
}

// contents returns the passages' contents of the file with key, by type.
func (f *fixture) contentsOf(tb testing.TB, key string) (chunks, sums []string) {
	tb.Helper()
	for _, p := range f.passages(tb) {
		var file platform.File
		for _, x := range f.files {
			if x.ID == p.FileID {
				file = x
			}
		}
		if file.Key != key {
			continue
		}
		if p.Type == platform.PassageSummary {
			sums = append(sums, p.Content)
		} else {
			chunks = append(chunks, p.Content)
		}
	}
	return chunks, sums
}

// legacy: one passage per block, so that block changes show.
var legacy = map[string]any{"stack": "legacy"}

func conf(extra map[string]any) map[string]any {
	out := map[string]any{"stack": "legacy"}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func setPlan(tb testing.TB, f *fixture, plan string, limit int64) {
	tb.Helper()
	w, err := f.st.GetWorkspace(f.ctx, f.bot.WorkspaceID)
	must(tb, err)
	w.Plan, w.SpendingLimit = plan, limit
	must(tb, f.st.UpdateWorkspace(f.ctx, w))
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

func summaryDoc() []byte {
	long := strings.Repeat("Refunds are issued within five business days after the returned item reaches the warehouse. ", 8) +
		strings.Repeat("Customers who paid by card see the refund on their statement within two cycles. ", 6)
	return []byte("# Handbook\n\n## Refunds\n\n" + long + "\n\n## Contact\n\nWrite to us.\n")
}

// TestSummarization: summaries of the sections long enough, as passages of
// type summary; generateMasterSummary adds the whole file's; the built-in
// summarizer without a model server, the model of modelType with one,
// bounded by outputTokenLimit.
func TestSummarization(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			setPlan(t, f, "team", 100)
			sum := func(extra map[string]any) map[string]any {
				m := map[string]any{"enable": true}
				for k, v := range extra {
					m[k] = v
				}
				return map[string]any{"summarization": m}
			}
			f.uploadConf(t, "off.md", "text/markdown", summaryDoc(), map[string]any{})
			f.uploadConf(t, "on.md", "text/markdown", summaryDoc(), sum(nil))
			f.uploadConf(t, "master.md", "text/markdown", summaryDoc(), sum(map[string]any{"generateMasterSummary": true}))
			f.uploadConf(t, "min.md", "text/markdown", summaryDoc(), sum(map[string]any{"minimumInputLength": 5000}))
			f.settleCompleted(t)
			if _, s := f.contentsOf(t, "off.md"); len(s) != 0 {
				t.Errorf("summaries without summarization: %q", s)
			}
			_, on := f.contentsOf(t, "on.md")
			// The Handbook section holds the Refunds one: both are long.
			if len(on) != 2 || !strings.Contains(on[0], "Refunds are issued") || len(on[0]) > 4*defaultOutputTokenLimit {
				t.Errorf("built-in summaries: %q", on)
			}
			if _, m := f.contentsOf(t, "master.md"); len(m) != 3 {
				t.Errorf("with a master summary: %d summaries, want 3", len(m))
			}
			if _, m := f.contentsOf(t, "min.md"); len(m) != 0 {
				t.Errorf("minimumInputLength 5000: %q", m)
			}
			vs, err := f.st.PassageVectors(f.ctx, f.bot.ID, 0, math.MaxInt64)
			must(t, err)
			dims := map[int64]int{}
			for _, v := range vs {
				dims[v.Seq] = len(v.Vector)
			}
			for _, p := range f.passages(t) {
				if p.Type == platform.PassageSummary && dims[p.Seq] == 0 {
					t.Errorf("summary passage without a vector")
				}
			}

			// With a model server.
			srv := aitest.New(t)
			srv.Respond(func(r aitest.Recorded) aitest.Reply { return aitest.Reply{Text: "Model summary."} })
			f.withModel(t, srv, nil)
			f.files = nil
			f.uploadConf(t, "model.md", "text/markdown", summaryDoc(), sum(map[string]any{"modelType": "accurate", "outputTokenLimit": 1500, "generateMasterSummary": true}))
			f.settleCompleted(t)
			if _, m := f.contentsOf(t, "model.md"); len(m) != 3 || m[0] != "Model summary." {
				t.Errorf("model summaries: %q", m)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model calls, want 3 (two sections, the file)", len(reqs))
			}
			for _, r := range reqs {
				if r.Model != "large-1" || r.MaxTokens != 1500 || !strings.Contains(r.Prompt, "Refunds are issued") {
					t.Errorf("summary request: model %q max_tokens %d prompt %.60q", r.Model, r.MaxTokens, r.Prompt)
				}
			}
		})
	}
}

// TestCheckUpsert: the plan, model-server and applicability rules at
// upsert.
func TestCheckUpsert(t *testing.T) {
	f := newFixture(t, "sqlite", 1)
	check := func(ct, key, cfg string) error {
		return f.svc.CheckUpsert(f.ctx, f.bot.WorkspaceID, ct, key, []byte(`{"configuration":`+cfg+`}`))
	}
	typeOf := func(err error) platform.ErrorType {
		if e, ok := err.(*platform.Error); ok {
			return e.Type
		}
		if err != nil {
			return "other: " + platform.ErrorType(err.Error())
		}
		return ""
	}
	cases := []struct {
		plan, ct, key, cfg string
		model              bool
		want               platform.ErrorType
		field              string
	}{
		{"community", "text/markdown", "a.md", `{"chunking":{"maximumChunkLength":500}}`, false, "", ""},
		{"community", "text/markdown", "a.md", `{"summarization":{"enable":true}}`, false, platform.TypePaymentRequired, "summarization.enable"},
		{"team", "text/markdown", "a.md", `{"summarization":{"enable":true}}`, false, "", ""},
		{"community", "application/pdf", "a.pdf", `{"parsing":{"smartCleanup":true}}`, false, platform.TypePaymentRequired, "parsing.smartCleanup"},
		{"community", "text/markdown", "a.md", `{"parsing":{"smartCleanup":true}}`, false, "", ""}, // ignored: not a PDF
		{"enterprise", "application/pdf", "a.pdf", `{"parsing":{"smartCleanup":true}}`, false, "", ""},
		{"community", "text/plain", "a.txt", `{"parsing":{"mode":"agent"}}`, false, platform.TypeInvalidPayload, "parsing.mode"},
		{"community", "text/plain", "a.txt", `{"parsing":{"mode":"agent"}}`, true, "", ""},
		{"community", "application/pdf", "a.pdf", `{"vision":{"transcribePages":true}}`, true, platform.TypePaymentRequired, "vision.transcribePages"},
		{"team", "application/pdf", "a.pdf", `{"vision":{"indexPages":[1,2]}}`, true, "", ""},
		{"team", "application/pdf", "a.pdf", `{"vision":{"transcribePages":[1]}}`, false, platform.TypeInvalidPayload, "vision.transcribePages"},
		{"community", "text/plain", "a.txt", `{"vision":{"indexPages":true}}`, false, "", ""}, // ignored: not a PDF
	}
	srv := aitest.New(t)
	for _, c := range cases {
		setPlan(t, f, c.plan, 100)
		if c.model {
			f.withModel(t, srv, nil)
		} else {
			f.withModel(t, nil, nil)
		}
		err := check(c.ct, c.key, c.cfg)
		if typeOf(err) != c.want || (c.field != "" && !strings.Contains(err.Error(), "indexing.configuration."+c.field)) {
			t.Errorf("%s %s %s (model %v): %v, want %s naming %s", c.plan, c.key, c.cfg, c.model, err, c.want, c.field)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("CheckUpsert called the model %d times", n)
	}
}

// TestVision: transcribePages replaces the pages' text with the model's
// transcription; indexPages adds a passage of type image per page with
// the page's image kept (counted as File Storage); the pages sent, the
// model and the images are checked, and at most 100 pages are covered.
func TestVision(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f, srv := newVisionFixture(t, backend, func(r aitest.Recorded) string { return "# Transcribed\n\n" + r.Prompt },
				func(r aitest.Recorded) string { return "A chart of quokka sightings. " + r.Prompt })
			pdf := pdftest.TextPages([]string{"Alpha page one."}, []string{"Beta page two."}, []string{"Gamma page three."})
			file := f.uploadConf(t, "v.pdf", "application/pdf", pdf, conf(map[string]any{"vision": map[string]any{
				"transcribePages": []any{2, 9}, "indexPages": []any{3, 1, 3}}}))
			before, err := f.st.GetStorage(f.ctx, f.bot.WorkspaceID)
			must(t, err)
			if got := f.settle(t)["v.pdf"]; got.Status != platform.FileIndexCompleted {
				t.Fatalf("%s %s", got.Status, got.FailedReason)
			}
			ps := f.passages(t)
			var got []string
			for _, p := range ps {
				got = append(got, fmt.Sprintf("%d %s/%s %s", p.PageNumber, p.Type, p.Subtype, p.Content))
			}
			want := []string{
				"1 chunk/paragraph Alpha page one.",
				"1 image/page A chart of quokka sightings. Page 1 of v.pdf.",
				"2 chunk/page Transcribed\n\nPage 2 of v.pdf.",
				"3 chunk/paragraph Gamma page three.",
				"3 image/page A chart of quokka sightings. Page 3 of v.pdf.",
			}
			if !slicesEqual(got, want) {
				t.Errorf("passages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model calls, want 3 (page 2 transcribed; pages 1 and 3 described)", len(reqs))
			}
			var imageBytes int64
			for _, p := range ps {
				if p.Type != platform.PassageImage {
					continue
				}
				typ, img, err := f.st.PassageImage(f.ctx, file.ID, p.ID)
				must(t, err)
				if typ != "image/png" || len(img) < 100 {
					t.Errorf("page %d image: %s, %d bytes", p.PageNumber, typ, len(img))
				}
				imageBytes += int64(len(img))
			}
			for _, r := range reqs {
				if r.Model != "large-1" || len(r.Images) != 1 || r.Images[0].MIME != "image/png" {
					t.Errorf("vision request: model %s, %d images", r.Model, len(r.Images))
				}
			}
			after, err := f.st.GetStorage(f.ctx, f.bot.WorkspaceID)
			must(t, err)
			if after.FileBytes-before.FileBytes != imageBytes {
				t.Errorf("File Storage grew by %d, want the images' %d bytes", after.FileBytes-before.FileBytes, imageBytes)
			}
			// Indexing again (the same images) counts them once; failing
			// gives them back.
			must(t, f.st.FailIndexing(f.ctx, file.ID, file.Generation, "test", time.Now()))
			if st, _ := f.st.GetStorage(f.ctx, f.bot.WorkspaceID); st.FileBytes != before.FileBytes {
				t.Errorf("File Storage after the passages went: %d, want %d", st.FileBytes, before.FileBytes)
			}

			// Page images over the File Storage room fail the indexing.
			f.svc.cfg.StorageRoom = func(context.Context, string) (int64, error) { return 10, nil }
			f.files = nil
			f.uploadConf(t, "full.pdf", "application/pdf", pdf, conf(map[string]any{"vision": map[string]any{"indexPages": true}}))
			if got := f.settle(t)["full.pdf"]; got.Status != platform.FileIndexFailed || !strings.Contains(got.FailedReason, "File Storage") {
				t.Errorf("over File Storage: %s %q", got.Status, got.FailedReason)
			}
		})
	}
}

// TestVisionPageLimit: true covers the first 100 pages; the rest is
// indexed as text.
func TestVisionPageLimit(t *testing.T) {
	f := newFixture(t, "sqlite", 1)
	setPlan(t, f, "enterprise", 100)
	srv := aitest.New(t)
	srv.Respond(func(r aitest.Recorded) aitest.Reply { return aitest.Reply{Text: "T " + r.Prompt} })
	f.withModel(t, srv, nil)
	var pages [][]string
	for i := 1; i <= 103; i++ {
		pages = append(pages, []string{fmt.Sprintf("Text of page %d.", i)})
	}
	f.uploadConf(t, "long.pdf", "application/pdf", pdftest.TextPagesIn("[0 0 100 100]", pages...), conf(map[string]any{"vision": map[string]any{"transcribePages": true}}))
	if got := f.settle(t)["long.pdf"]; got.Status != platform.FileIndexCompleted {
		t.Fatalf("%s %s", got.Status, got.FailedReason)
	}
	if n := len(srv.Requests()); n != maxVisionPages {
		t.Errorf("%d pages sent, want %d", n, maxVisionPages)
	}
	chunks, _ := f.contentsOf(t, "long.pdf")
	if len(chunks) != 103 || chunks[99] != "T Page 100 of long.pdf." || chunks[100] != "Text of page 101." {
		t.Errorf("passages 100-101: %q", chunks[99:min(len(chunks), 101)])
	}
}

// TestLongIndexingKeepsItsJob: a worker busy longer than the lease (slow
// model calls) extends it, so no other worker takes the job over and the
// model is called once per part, not once per worker.
func TestLongIndexingKeepsItsJob(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			srv := aitest.New(t)
			// The answer takes about 2.5 leases; the worker extends its lease every
			// third of it (3 s), so only a worker stalled for 6 s would lose
			// it (a 2 s lease was lost under a loaded CI run).
			srv.Respond(func(r aitest.Recorded) aitest.Reply {
				time.Sleep(22 * time.Second)
				return aitest.Reply{Text: "Slow answer."}
			})
			f.withModel(t, srv, nil)
			f.svc.cfg.Workers, f.svc.cfg.Lease = 3, 9*time.Second
			f.uploadConf(t, "slow.txt", "text/plain", []byte("text"), conf(map[string]any{"parsing": map[string]any{"mode": "agent"}}))
			f.settleCompleted(t)
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model calls, want 1 (the job was taken over)", n)
			}
		})
	}
}
