package indexing

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/platform"
)

// TestAgentParsing: the model's Markdown replaces the extracted structure;
// without a model server the file fails with the reason.
func TestAgentParsing(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			f.uploadConf(t, "none.txt", "text/plain", []byte("raw text"), conf(map[string]any{"parsing": map[string]any{"mode": "agent"}}))
			if got := f.settle(t)["none.txt"]; got.Status != platform.FileIndexFailed || !strings.Contains(got.FailedReason, "model server") {
				t.Errorf("agent parsing without a model: %s %q", got.Status, got.FailedReason)
			}
			srv := aitest.New(t)
			srv.Respond(func(r aitest.Recorded) aitest.Reply {
				return aitest.Reply{Text: "# Restructured\n\n- " + strings.ToUpper(r.Prompt)}
			})
			f.withModel(t, srv, nil)
			f.files = nil
			f.uploadConf(t, "agent.txt", "text/plain", []byte("raw text"), conf(map[string]any{"parsing": map[string]any{"mode": "agent"}}))
			f.uploadConf(t, "standard.txt", "text/plain", []byte("raw text"), legacy)
			f.settle(t)
			if got, _ := f.contentsOf(t, "agent.txt"); !slicesEqual(got, []string{"Restructured", "- RAW TEXT"}) {
				t.Errorf("agent parsing: %q", got)
			}
			if got, _ := f.contentsOf(t, "standard.txt"); !slicesEqual(got, []string{"raw text"}) {
				t.Errorf("standard parsing: %q", got)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Model != "medium-1" || reqs[0].Prompt != "raw text" {
				t.Errorf("requests: %+v", reqs)
			}
		})
	}
}
