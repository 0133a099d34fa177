package sqlstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestMessageCountMigration: migration 0029 counts the messages conversations
// already have, and the triggers it adds count from there.
func TestMessageCountMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 28)
			st := sqlstore.New(db, db, d)
			conversation, message := chatFixture(t, st)
			var convs []string
			for n := range 3 {
				c := conversation()
				for range n * 2 {
					message(c)
				}
				convs = append(convs, c)
			}
			d.Migrations = full
			applied, err := sqlstore.New(db, db, d).Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0029_message_count.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			message(convs[0])
			for i, want := range []int64{1, 2, 4} {
				n, err := st.CountMessages(ctx, convs[i])
				if err != nil || n != want {
					t.Errorf("conversation %d after migration 0029: %d messages, %v; want %d", i, n, err, want)
				}
			}
		})
	}
}
