package storetest

import "testing"

// keysetWalk pages through a keyset listing, 3 rows a page, while rows are
// inserted and deleted between pages: no row may repeat, rows that exist
// throughout may not be skipped, deleted rows not yet reached never show,
// and inserted rows show exactly when they sort after the last row already
// returned. R is a row of the listing, K its position in it (sort value,
// then id). The listings of bots and of files share it.
type keysetWalk[R, K any] struct {
	what string // the listing, for messages: "ListBots"
	id   func(r R) string
	key  func(r R) K
	// before reports whether x is listed before y.
	before func(x, y K) bool
	// order returns the ids of rows in listing order.
	order func(rows []R) []string
	// list returns the page at token (limit 3) and the next token.
	list func(token string) ([]R, string, error)
	// like creates a row whose sort value is above (dir > 0), at (0) or
	// below (dir < 0) that of r, with the given id ("" for a new one).
	like func(r R, dir int, id string) R
	// del deletes a row.
	del func(id string)
	// check, when set, compares a listed row with the row as created.
	check func(t *testing.T, got, want R)
}

// run walks the listing; initial are the rows that exist before it starts.
func (w keysetWalk[R, K]) run(t *testing.T, initial []R) {
	current := map[string]R{}
	throughout := map[string]bool{}
	for _, r := range initial {
		current[w.id(r)] = r
		throughout[w.id(r)] = true
	}
	del := func(id string) {
		w.del(id)
		delete(current, id)
		delete(throughout, id)
	}
	// unseen returns the rows of throughout after k, in listing order.
	unseen := func(k K) []string {
		var out []string
		all := make([]R, 0, len(current))
		for _, r := range current {
			all = append(all, r)
		}
		for _, id := range w.order(all) {
			if throughout[id] && w.before(k, w.key(current[id])) {
				out = append(out, id)
			}
		}
		return out
	}

	seen := map[string]bool{}
	var got []string
	mustAppear, mustNotAppear := map[string]bool{}, map[string]bool{}
	deletedUnseen := map[string]bool{}
	var last *K
	var lastRow R
	token := ""
	for page := 1; ; page++ {
		if page > 50 {
			t.Fatalf("more than 50 pages")
		}
		rows, next, err := w.list(token)
		must(t, err, "%s page %d", w.what, page)
		for _, r := range rows {
			id := w.id(r)
			if seen[id] {
				t.Fatalf("page %d repeats %s", page, id)
			}
			want, ok := current[id]
			if !ok {
				t.Fatalf("page %d returns %s, which was deleted", page, id)
			}
			if w.check != nil {
				w.check(t, r, want)
			}
			k := w.key(r)
			if last != nil && !w.before(*last, k) {
				t.Fatalf("page %d: %v is listed after %v, out of order", page, k, *last)
			}
			last, lastRow = &k, r
			seen[id] = true
			got = append(got, id)
		}
		if next == "" {
			break
		}
		if len(rows) == 0 {
			t.Fatalf("page %d is empty but has a nextToken", page)
		}
		token = next
		if page > 2 {
			continue
		}
		// Writes between pages.
		rest := unseen(*last)
		if len(rest) < 2 {
			t.Fatalf("page %d: too few rows left to test with", page)
		}
		lastID := w.id(lastRow)
		if page == 1 {
			del(lastID)            // the row the cursor points at
			del(rest[len(rest)-1]) // a row not reached yet
			deletedUnseen[rest[len(rest)-1]] = true
		} else {
			del(got[0])  // a row seen long ago
			del(rest[0]) // the very next row
			deletedUnseen[rest[0]] = true
		}
		for _, r := range []R{
			w.like(lastRow, 1, ""),
			w.like(lastRow, -1, ""),
			w.like(lastRow, 0, lastID+"0"),             // same value, id just above
			w.like(lastRow, 0, lastID[:len(lastID)-1]), // same value, id just below
		} {
			current[w.id(r)] = r
			if w.before(*last, w.key(r)) {
				mustAppear[w.id(r)] = true
			} else {
				mustNotAppear[w.id(r)] = true
			}
		}
	}
	checkWalk(t, seen, throughout, mustAppear, mustNotAppear, deletedUnseen)
}

// checkWalk checks a keyset listing walked while rows were written between
// pages: every row that existed throughout was seen, rows inserted after the
// cursor were seen and rows inserted before it were not (4 of each), and no
// row deleted before being reached was seen.
func checkWalk(t *testing.T, seen, throughout, mustAppear, mustNotAppear, deletedUnseen map[string]bool) {
	t.Helper()
	for id := range throughout {
		if !seen[id] {
			t.Errorf("%s existed throughout but was skipped", id)
		}
	}
	for id := range mustAppear {
		if !seen[id] {
			t.Errorf("%s was inserted after the cursor but not listed", id)
		}
	}
	for id := range mustNotAppear {
		if seen[id] {
			t.Errorf("%s was inserted before the cursor but listed", id)
		}
	}
	for id := range deletedUnseen {
		if seen[id] {
			t.Errorf("%s was deleted before being reached but listed", id)
		}
	}
	if len(mustAppear) != 4 || len(mustNotAppear) != 4 {
		t.Fatalf("inserted %d rows after and %d before the cursor, want 4 and 4", len(mustAppear), len(mustNotAppear))
	}
}
