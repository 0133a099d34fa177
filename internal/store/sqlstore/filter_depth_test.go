package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/sqlite"
	"github.com/botplatform/botplatform/internal/tables"
)

// TestFilterDepth: a filter of the most terms a table query takes is
// written as a balanced tree of conditions, far shallower than the 1000
// levels SQLite parses, not as a chain as deep as the filter is long.
func TestFilterDepth(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, op := range []string{"or", "and"} {
		terms := make([]store.Cond, tables.MaxFilterTerms)
		for i := range terms {
			terms[i] = store.Cond{Column: "id", Op: "eq", Value: float64(i)}
		}
		c := store.Cond{Or: terms}
		if op == "and" {
			c = store.Cond{And: terms}
		}
		sql, err := s.CondSQL(platform.Table{ID: "t"}, c)
		if err != nil {
			t.Fatal(err)
		}
		depth, deepest := 0, 0
		for _, r := range sql {
			switch r {
			case '(':
				depth++
				deepest = max(deepest, depth)
			case ')':
				depth--
			}
		}
		if depth != 0 || deepest > 20 {
			t.Errorf("$%s of %d terms: parentheses %d deep (unbalanced by %d)", op, len(terms), deepest, depth)
		}
	}
}
