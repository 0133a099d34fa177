package sqlstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestPassageHeadingsMigration: passages stored before migration 0019
// (which made the heading path a full-text field) are found by the words of
// their headings after it, and still by the words of their content.
func TestPassageHeadingsMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 18)
			if backend == "postgres" {
				// The passages' file is left out: no foreign-key checks in
				// this session.
				if _, err := db.ExecContext(ctx, `SET session_replication_role = replica`); err != nil {
					t.Fatal(err)
				}
			}
			insert := `INSERT INTO passages (id, file_id, bot_id, position, content, meta, breadcrumb, vector) VALUES (?, 'file_1', 'bot_1', ?, ?, '{}', ?, ?)`
			if d.Numbered {
				insert = numbered(insert)
			}
			for i, p := range []struct{ id, content, crumbs string }{
				{"psg_1", "Bought at a reduced price? Exchange it within 14 days.", `["Returns","Sale items"]`},
				{"psg_2", "Send it back within 30 days for a refund.", `["Returns","Full-price items"]`},
			} {
				if _, err := db.ExecContext(ctx, insert, p.id, i, p.content, p.crumbs, []byte{}); err != nil {
					t.Fatalf("storing %s: %v", p.id, err)
				}
			}
			d.Migrations = full
			applied, err := sqlstore.New(db, db, d).Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0019_passage_headings.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			match := `SELECT p.id FROM passages p WHERE p.seq IN (` + d.FullText.Matching + `) ORDER BY p.id`
			if d.Numbered {
				match = numbered(match)
			}
			for _, c := range []struct {
				word string
				want []string
			}{{"sale", []string{"psg_1"}}, {"returns", []string{"psg_1", "psg_2"}}, {"refund", []string{"psg_2"}}} {
				rows, err := db.QueryContext(ctx, match, d.FullText.Query([]string{c.word}, false))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for rows.Next() {
					var id string
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					got = append(got, id)
				}
				rows.Close()
				if !slices.Equal(got, c.want) {
					t.Errorf("passages matching %q after migration 0019: %v, want %v", c.word, got, c.want)
				}
			}
		})
	}
}
