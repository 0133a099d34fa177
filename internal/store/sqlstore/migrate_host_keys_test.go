package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestHostKeysMigration: migration 0027 deletes the Node host's keys that
// earlier builds derived from a bot's signing secret (ids bak_host…), and
// no other bot API key.
func TestHostKeysMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 25)
			st := sqlstore.New(db, db, d)
			now := time.Now()
			b := storetest.Bot(storetest.Workspace(t, st, now), "", now)
			if err := st.CreateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			suffix := strings.TrimPrefix(b.ID, platform.PrefixBot)
			keys := map[string]bool{ // id: kept
				platform.PrefixBotKey + "host" + suffix: false,
				platform.PrefixBotKey + "node" + suffix: true,
				platform.NewID(platform.PrefixBotKey):   true,
			}
			for id := range keys {
				if err := st.CreateBotKey(ctx, b.WorkspaceID, platform.Token{ID: id, OwnerID: b.ID, Note: "n", Hash: []byte(id), CreatedAt: now}); err != nil {
					t.Fatalf("key %s: %v", id, err)
				}
			}
			d.Migrations = full
			applied, err := sqlstore.New(db, db, d).Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0027_host_keys.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			for id, kept := range keys {
				_, _, err := st.GetBotKeyByHash(ctx, []byte(id))
				if kept && err != nil || !kept && !errors.Is(err, platform.ErrNotFound) {
					t.Errorf("key %s after migration 0027: %v, want kept %v", id, err, kept)
				}
			}
		})
	}
}
