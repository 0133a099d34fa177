package sqlstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestAISpendDaysMigration: migration 0030 totals the calls already
// recorded by day, failed ones left out, and the triggers it adds count
// from there.
func TestAISpendDaysMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 29)
			st := sqlstore.New(db, db, d)
			w := storetest.Workspace(t, st, time.Now().UTC())
			day := time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)
			record := func(st *sqlstore.Store, cost int64, at time.Time, failed bool) {
				t.Helper()
				u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: w.ID, BotID: "bot_x", Purpose: "cognitive", Model: "m", Cost: cost, Failed: failed, CreatedAt: at}
				if err := st.RecordAIUsage(ctx, u); err != nil {
					t.Fatal(err)
				}
			}
			record(st, 1, day.Add(-30*time.Hour), false)
			record(st, 10, day.Add(-20*time.Hour), false)
			record(st, 500, day.Add(-20*time.Hour), true)
			record(st, 100, day.Add(2*time.Hour), false)
			d.Migrations = full
			applied, err := sqlstore.New(db, db, d).Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0030_ai_spend_days.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			record(st, 1000, day.Add(3*time.Hour), false)
			for since, want := range map[time.Time]int64{day.Add(-48 * time.Hour): 1111, day.Add(-24 * time.Hour): 1110, day: 1100} {
				total, _, err := st.AISpend(ctx, w.ID, since)
				if err != nil || total != want {
					t.Errorf("AISpend since %s after migration 0030: %d, %v; want %d", since, total, err, want)
				}
			}
		})
	}
}
