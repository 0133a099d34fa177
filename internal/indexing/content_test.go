package indexing

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

// TestIndexingDropsNUL: NUL characters in a file's text (a raw NUL in a
// text file, "\u0000" in a JSON string) are dropped, so the file is
// indexed on PostgreSQL too, which refuses NUL in text, instead of failing
// its attempts one after another.
func TestIndexingDropsNUL(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			f.upload(t, "nul.txt", "text/plain", []byte("Hello\x00 world, a text with a NUL."))
			f.upload(t, "nul.json", "application/json", []byte(`{"greeting": "Hel\u0000lo"}`))
			for key, file := range f.settle(t) {
				if file.Status != platform.FileIndexCompleted {
					t.Errorf("%s: %s %q", key, file.Status, file.FailedReason)
				}
			}
			var got []string
			for _, p := range f.passages(t) {
				got = append(got, p.Content)
			}
			if all := strings.Join(got, "|"); strings.ContainsRune(all, 0) || !strings.Contains(all, "Hello world") || !strings.Contains(all, "greeting: Hello") {
				t.Errorf("passages %q", got)
			}
		})
	}
}
