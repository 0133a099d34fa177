package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/tables"
)

// failing fails the last step of a bot's creation or update: the creation of
// a table named Broken…, or the saving of a bot's new version.
type failing struct {
	store.Store
	versions bool
}

var errInjected = errors.New("injected failure")

func (f *failing) CreateTable(ctx context.Context, t platform.Table) error {
	if strings.HasPrefix(t.Name, "Broken") {
		return errInjected
	}
	return f.Store.CreateTable(ctx, t)
}

func (f *failing) SaveBotVersion(ctx context.Context, ws string, v platform.BotVersion, keep int, update *platform.Bot) (platform.BotVersion, error) {
	if f.versions {
		return platform.BotVersion{}, errInjected
	}
	return f.Store.SaveBotVersion(ctx, ws, v, keep, update)
}

// TestBotWritesAreWhole: creating a bot (the bot, its first version, its
// tables) and updating one (its tables, then the bot and its version) write
// everything or nothing.
func TestBotWritesAreWhole(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := &failing{Store: storetest.Open(t, backend)}
			svc := admin.New(st, platform.SystemClock{}, admin.Config{ChatURL: "http://127.0.0.1/chat", Tables: tables.New(st, nil, platform.SystemClock{})})
			boot, err := svc.Bootstrap(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			a, err := svc.Authenticate(ctx, boot.Token, boot.WorkspaceID)
			if err != nil {
				t.Fatal(err)
			}
			schema := json.RawMessage(`{"schema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
			name := "whole"
			audited := func() int {
				recs, _, err := st.ListAuditRecords(ctx, boot.WorkspaceID, store.Page{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, r := range recs {
					if r.Action == audit.CreateBot || r.Action == audit.DeleteBot || r.Action == audit.UpdateBot {
						n++
					}
				}
				return n
			}

			// Creation: its last step, the second table, fails.
			_, err = svc.CreateBot(ctx, a, admin.BotInput{Name: &name, Tables: map[string]json.RawMessage{"AaaTable": schema, "BrokenTable": schema}})
			if !errors.Is(err, errInjected) {
				t.Fatalf("CreateBot whose second table fails: %v, want the injected failure", err)
			}
			bots, _, err := st.ListBots(ctx, boot.WorkspaceID, store.BotFilter{})
			if err != nil || len(bots) != 0 {
				t.Fatalf("bots after a failed creation: %v, %v; want none", bots, err)
			}
			if n := audited(); n != 0 {
				t.Errorf("%d audit records of bots after a failed creation, want none", n)
			}

			// Update: its last step, the new version, fails.
			b, err := svc.CreateBot(ctx, a, admin.BotInput{Name: &name, Tables: map[string]json.RawMessage{"AaaTable": schema}})
			if err != nil {
				t.Fatal(err)
			}
			before, err := st.ListBotVersions(ctx, boot.WorkspaceID, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			st.versions = true
			renamed := "renamed"
			_, err = svc.UpdateBot(ctx, a, b.ID, admin.BotInput{Name: &renamed, Tables: map[string]json.RawMessage{"OtherTable": schema}})
			if !errors.Is(err, errInjected) {
				t.Fatalf("UpdateBot whose version fails: %v, want the injected failure", err)
			}
			got, err := st.GetBot(ctx, boot.WorkspaceID, b.ID)
			if err != nil || got.Name != name {
				t.Errorf("the bot after a failed update: %q, %v; want it unchanged", got.Name, err)
			}
			ts, err := st.ListTables(ctx, b.ID, nil)
			var names []string
			for _, tb := range ts {
				names = append(names, tb.Name)
			}
			if err != nil || len(names) != 1 || names[0] != "AaaTable" {
				t.Errorf("tables after a failed update: %v, %v; want AaaTable alone", names, err)
			}
			after, err := st.ListBotVersions(ctx, boot.WorkspaceID, b.ID)
			if err != nil || len(after) != len(before) {
				t.Errorf("versions after a failed update: %d, %v; want %d", len(after), err, len(before))
			}
			if n := audited(); n != 1 {
				t.Errorf("%d audit records of bots after a creation and a failed update, want 1", n)
			}
		})
	}
}
