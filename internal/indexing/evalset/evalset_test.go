package evalset

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse"
)

// TestSet checks the set's requirements and that every query's needles
// land in the passages of exactly one document once parsed and chunked the
// way indexing does.
func TestSet(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) < 30 {
		t.Errorf("%d documents; want at least 30", len(c.Docs))
	}
	formats := map[string]int{}
	var passages [][]string // by document
	for i, d := range c.Docs {
		if i > 0 && c.Docs[i-1].Key >= d.Key {
			t.Errorf("documents not sorted by name: %s before %s", c.Docs[i-1].Key, d.Key)
		}
		formats[path.Ext(d.Key)]++
		parsed, err := parse.Parse(d.ContentType, d.Key, d.Content)
		if err != nil {
			t.Fatalf("%s: %v", d.Key, err)
		}
		var ps []string
		words, headings := 0, 0
		for _, p := range chunk.Chunk(parsed, chunk.Options{}) {
			ps = append(ps, p.Content)
			words += len(strings.Fields(p.Content))
		}
		for _, b := range parsed.Blocks {
			if b.Kind == doc.Heading {
				headings++
			}
		}
		if words < 150 || words > 600 {
			t.Errorf("%s: %d words; want 150 to 600", d.Key, words)
		}
		if headings < 3 {
			t.Errorf("%s: %d headings; want a title and sections", d.Key, headings)
		}
		passages = append(passages, ps)
	}
	for _, ext := range []string{".md", ".html", ".txt"} {
		if formats[ext] < 5 {
			t.Errorf("%d %s documents; want at least 5", formats[ext], ext)
		}
	}
	t.Logf("formats: %v", formats)

	kinds := map[string]int{}
	texts := map[string]bool{}
	for _, q := range c.Queries {
		kinds[q.Collection]++
		if texts[q.Text] {
			t.Errorf("query %q appears twice", q.Text)
		}
		texts[q.Text] = true
		for _, n := range q.Needles {
			if l := utf8.RuneCountInString(n); l < 10 || l > 80 {
				t.Errorf("query %q: needle %q is %d characters; want 10 to 80", q.Text, n, l)
			}
		}
		if docs := q.Documents(passages); docs != 1 {
			t.Errorf("query %q (%s): its needles %q are in %d documents", q.Text, q.Collection, q.Needles, docs)
		}
	}
	t.Logf("%d queries: %v", len(c.Queries), kinds)
	want := map[string]int{KindSameWords: 35, KindOtherWords: 40, KindNumber: 10, KindNegation: 10, KindDisambiguation: 5}
	for _, k := range Kinds() {
		if kinds[k] < want[k] {
			t.Errorf("%d %s queries; want at least %d", kinds[k], k, want[k])
		}
	}
	if len(c.Queries) < 100 {
		t.Errorf("%d queries; want at least 100", len(c.Queries))
	}
	if 10*kinds[KindOtherWords] < 4*len(c.Queries) {
		t.Errorf("%d of %d queries are other-words; want at least 40%%", kinds[KindOtherWords], len(c.Queries))
	}
}
