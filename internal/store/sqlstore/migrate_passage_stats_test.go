package sqlstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestPassageStatsMigration: migration 0036 counts the passages already
// stored, per bot, and its triggers count from there.
func TestPassageStatsMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 35)
			if backend == "postgres" {
				// The passages' files are left out: no foreign-key checks
				// while they are stored.
				if _, err := db.ExecContext(ctx, `SET session_replication_role = replica`); err != nil {
					t.Fatal(err)
				}
			}
			insert := `INSERT INTO passages (id, file_id, bot_id, position, content, meta, breadcrumb, vector) VALUES (?, 'file_1', ?, ?, 'text', '{}', '[]', ?)`
			if d.Numbered {
				insert = numbered(insert)
			}
			for i, bot := range []string{"bot_1", "bot_1", "bot_1", "bot_2", "bot_2"} {
				if _, err := db.ExecContext(ctx, insert, "psg_"+string(rune('a'+i)), bot, i, []byte{}); err != nil {
					t.Fatal(err)
				}
			}
			if backend == "postgres" {
				if _, err := db.ExecContext(ctx, `SET session_replication_role = origin`); err != nil {
					t.Fatal(err)
				}
			}
			d.Migrations = full
			st := sqlstore.New(db, db, d)
			applied, err := st.Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0036_passage_stats.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			check := func(bot string, want int) int64 {
				t.Helper()
				maxSeq, n, changes, err := st.PassageStats(ctx, bot)
				if err != nil || n != want || (want > 0 && maxSeq == 0) {
					t.Fatalf("PassageStats(%s) after migration 0036: max %d count %d, %v; want count %d", bot, maxSeq, n, err, want)
				}
				return changes
			}
			before := check("bot_1", 3)
			check("bot_2", 2)
			check("bot_3", 0)
			del := `DELETE FROM passages WHERE id = ?`
			if d.Numbered {
				del = numbered(del)
			}
			if _, err := db.ExecContext(ctx, del, "psg_a"); err != nil {
				t.Fatal(err)
			}
			if after := check("bot_1", 2); after <= before {
				t.Fatalf("a deletion after the migration did not count as a change: %d, then %d", before, after)
			}
		})
	}
}
