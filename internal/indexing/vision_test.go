package indexing

import (
	"bytes"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/indexing/pdf/pdftest"
	"github.com/botplatform/botplatform/internal/platform"
)

// newVisionFixture is a fixture on a Team workspace whose model server
// answers transcription requests with transcribe and the others with
// describe.
func newVisionFixture(tb testing.TB, backend string, transcribe, describe func(aitest.Recorded) string) (*fixture, *aitest.Server) {
	tb.Helper()
	f := newFixture(tb, backend, 1)
	setPlan(tb, f, "team", 100)
	srv := aitest.New(tb)
	srv.Respond(func(r aitest.Recorded) aitest.Reply {
		if strings.HasPrefix(r.System, "You transcribe") {
			return aitest.Reply{Text: transcribe(r)}
		}
		return aitest.Reply{Text: describe(r)}
	})
	f.withModel(tb, srv, nil)
	return f, srv
}

// scanJPEG is a small gray JPEG, the page of a scanned PDF.
func scanJPEG(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewGray(image.Rect(0, 0, 85, 110))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	var buf bytes.Buffer
	must(tb, jpeg.Encode(&buf, img, nil))
	return buf.Bytes()
}

// TestVisionScannedPDF: a PDF made only of a scanned page (a JPEG, no
// text) is indexed through the model with transcribePages or indexPages;
// without vision (or with vision on pages it lacks) it fails with the
// OCR advice and the model is not called.
func TestVisionScannedPDF(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f, srv := newVisionFixture(t, backend, func(aitest.Recorded) string { return "# Scanned invoice\n\nTotal due: 42 quokkas." },
				func(aitest.Recorded) string { return "A scanned invoice for 42 quokkas." })
			scan := scanJPEG(t)
			pdf := pdftest.Scan(scan, 85, 110)
			f.uploadConf(t, "transcribe.pdf", "application/pdf", pdf, conf(map[string]any{"vision": map[string]any{"transcribePages": true}}))
			f.uploadConf(t, "index.pdf", "application/pdf", pdf, conf(map[string]any{"vision": map[string]any{"indexPages": true}}))
			f.uploadConf(t, "plain.pdf", "application/pdf", pdf, conf(nil))
			f.uploadConf(t, "page5.pdf", "application/pdf", pdf, conf(map[string]any{"vision": map[string]any{"transcribePages": []any{5}}}))
			got := f.settle(t)
			for _, key := range []string{"transcribe.pdf", "index.pdf"} {
				if got[key].Status != platform.FileIndexCompleted {
					t.Errorf("%s: %s %q", key, got[key].Status, got[key].FailedReason)
				}
			}
			// Without vision, or with vision on pages the file does not
			// have, nothing reads the scan.
			for _, key := range []string{"plain.pdf", "page5.pdf"} {
				if p := got[key]; p.Status != platform.FileIndexFailed || !strings.Contains(p.FailedReason, "run it through OCR") {
					t.Errorf("%s: %s %q, want the OCR advice", key, p.Status, p.FailedReason)
				}
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2 (one page transcribed, one described)", len(reqs))
			}
			for _, r := range reqs {
				if len(r.Images) != 1 || r.Images[0].MIME != "image/jpeg" || !bytes.Equal(r.Images[0].Data, scan) {
					t.Errorf("model call: %d images, want the scan's JPEG unchanged", len(r.Images))
				}
			}
			chunks, _ := f.contentsOf(t, "transcribe.pdf")
			if strings.Join(chunks, "|") != "Scanned invoice\n\nTotal due: 42 quokkas." {
				t.Errorf("transcribe.pdf passages: %q", chunks)
			}
			var images int
			for _, p := range f.passages(t) {
				if p.FileID != got["index.pdf"].ID {
					continue
				}
				if p.Type != platform.PassageImage || p.Subtype != "page" || p.PageNumber != 1 || p.Content != "A scanned invoice for 42 quokkas." {
					t.Errorf("index.pdf passage: %s/%s page %d %q", p.Type, p.Subtype, p.PageNumber, p.Content)
					continue
				}
				typ, img, err := f.st.PassageImage(f.ctx, p.FileID, p.ID)
				must(t, err)
				if typ != "image/jpeg" || !bytes.Equal(img, scan) {
					t.Errorf("index.pdf page image: %s, %d bytes", typ, len(img))
				}
				images++
			}
			if images != 1 {
				t.Errorf("index.pdf: %d image passages, want 1", images)
			}
			// The passages answer a search.
			res, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: "quokkas invoice", Limit: 10})
			must(t, err)
			if len(res) < 2 {
				t.Errorf("search found %d passages, want the transcription and the description", len(res))
			}
		})
	}
}
