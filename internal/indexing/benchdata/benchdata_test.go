package benchdata

import (
	"bytes"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/parse"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(1), Generate(1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two corpora of the same seed differ")
	}
	if c := Generate(2); reflect.DeepEqual(a.Queries, c.Queries) {
		t.Fatal("the seed changes nothing")
	}
}

// TestCorpus checks the benchmark's requirements and that every query's
// needle lands in the passages of exactly one document once parsed and
// chunked the way indexing does.
func TestCorpus(t *testing.T) {
	c := Generate(1)
	if len(c.Docs) < 200 || len(c.Queries) < 100 {
		t.Fatalf("%d documents and %d queries; want at least 200 and 100", len(c.Docs), len(c.Queries))
	}
	formats := map[string]int{}
	keys := map[string]bool{}
	var passages [][]string // by document
	for _, d := range c.Docs {
		if keys[d.Key] {
			t.Fatalf("two documents are %s", d.Key)
		}
		keys[d.Key] = true
		formats[path.Ext(d.Key)]++
		doc, err := parse.Parse(d.ContentType, d.Key, d.Content)
		if err != nil {
			t.Fatalf("%s: %v", d.Key, err)
		}
		var ps []string
		for _, p := range chunk.Chunk(doc, chunk.Options{}) {
			ps = append(ps, p.Content)
		}
		passages = append(passages, ps)
	}
	for _, ext := range []string{".html", ".md", ".txt", ".csv", ".json"} {
		if formats[ext] < 15 {
			t.Errorf("%d %s documents", formats[ext], ext)
		}
	}
	t.Logf("formats: %v", formats)
	vars := map[string]int{}
	clean := 0
	for _, q := range c.Queries {
		if docs := q.Documents(passages); docs != 1 {
			t.Errorf("query %q (%s): its needle %q is in %d documents", q.Text, q.Collection, q.Needles[0], docs)
		}
		for _, v := range q.Variations {
			vars[v]++
		}
		if len(q.Variations) == 0 {
			clean++
		}
	}
	t.Logf("%d queries: %d as written, variations %v", len(c.Queries), clean, vars)
	if os.Getenv("BENCHDATA_DUMP") != "" {
		var b bytes.Buffer
		for _, q := range c.Queries {
			b.WriteString(q.Collection + "\t" + strings.Join(q.Variations, ",") + "\t" + q.Text + "\t<- " + q.Base + "\n")
		}
		if err := os.WriteFile(os.Getenv("BENCHDATA_DUMP"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAllNeedles checks every fact, not only those drawn as queries.
func TestAllNeedles(t *testing.T) {
	g := &gen{r: newRand(1)}
	g.products()
	g.recipes()
	g.travel()
	g.software()
	g.policies()
	g.tables()
	g.json()
	var texts []string
	for _, d := range g.docs {
		doc, err := parse.Parse(d.ContentType, d.Key, d.Content)
		if err != nil {
			t.Fatalf("%s: %v", d.Key, err)
		}
		var ps []string
		for _, p := range chunk.Chunk(doc, chunk.Options{}) {
			ps = append(ps, strings.Join(strings.Fields(p.Content), " "))
		}
		texts = append(texts, strings.Join(ps, "\x00"))
	}
	for _, f := range g.facts {
		n := 0
		for _, tx := range texts {
			for _, p := range strings.Split(tx, "\x00") {
				if strings.Contains(p, f.needle) {
					n++
					break
				}
			}
		}
		if n != 1 {
			t.Errorf("%s fact %q is in %d documents", f.collection, f.needle, n)
		}
	}
	t.Logf("%d facts", len(g.facts))
}

func TestLargeKBPeek(t *testing.T) {
	if os.Getenv("BENCHDATA_PEEK") == "" {
		t.Skip()
	}
	kb := LargeKB(1, 1000, 100, 20)
	for _, p := range kb.Files[3][:5] {
		t.Log(p)
	}
	for _, q := range kb.Queries {
		t.Log("Q:", q)
	}
}
