// Package evalset is a hand-written retrieval evaluation set: the customer-service documents of one fictional
// shop (Trailhead Outfitters, outdoor gear) and the questions its customers ask, relevant passages marked.
package evalset

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/indexing/benchdata"
)

//go:embed docs queries.json
var files embed.FS

// Kinds of query, in reporting order. Query.Collection holds the kind, so
// reports that group by collection group by kind.
const (
	KindSameWords      = "same-words"
	KindOtherWords     = "other-words"
	KindNumber         = "number"
	KindNegation       = "negation"
	KindDisambiguation = "disambiguation"
)

// Kinds returns the query kinds in a fixed order.
func Kinds() []string {
	return []string{KindSameWords, KindOtherWords, KindNumber, KindNegation, KindDisambiguation}
}

// Collection is the collection of every document of the set.
const Collection = "evalset"

var contentTypes = map[string]string{
	".md":   "text/markdown",
	".html": "text/html",
	".txt":  "text/plain",
}

// query is an entry of queries.json.
type query struct {
	Text    string   `json:"text"`
	Kind    string   `json:"kind"`
	Needles []string `json:"needles"`
}

// Load returns the documents, sorted by file name, and the queries, in file
// order.
func Load() (benchdata.Corpus, error) {
	var c benchdata.Corpus
	entries, err := fs.ReadDir(files, "docs")
	if err != nil {
		return c, err
	}
	// fs.ReadDir sorts by name already; sorting again keeps the promise
	// independent of that detail.
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return c, fmt.Errorf("evalset: docs/%s: unknown format", name)
		}
		b, err := files.ReadFile("docs/" + name)
		if err != nil {
			return c, err
		}
		c.Docs = append(c.Docs, benchdata.Document{Key: "evalset/" + name, ContentType: ct, Content: b, Collection: Collection})
	}
	b, err := files.ReadFile("queries.json")
	if err != nil {
		return c, err
	}
	var qs []query
	if err := json.Unmarshal(b, &qs); err != nil {
		return c, fmt.Errorf("evalset: queries.json: %w", err)
	}
	for i, q := range qs {
		if !slices.Contains(Kinds(), q.Kind) {
			return c, fmt.Errorf("evalset: queries.json[%d]: unknown kind %q", i, q.Kind)
		}
		if q.Text == "" || len(q.Needles) == 0 {
			return c, fmt.Errorf("evalset: queries.json[%d]: text and needles are required", i)
		}
		c.Queries = append(c.Queries, benchdata.Query{Text: q.Text, Base: q.Text, Needles: q.Needles, Collection: q.Kind})
	}
	return c, nil
}
