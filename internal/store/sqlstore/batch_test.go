package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestGroupCommit: SQLite's write transactions, whether each runs alone in
// its caller or several share a commit, have the outcome of running one
// after the other: at once from many goroutines, a write that fails (a
// workspace id taken) fails alone, and every other one is stored.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, "sqlite")
	now := time.Now().UTC().Truncate(time.Millisecond)
	a := platform.Account{ID: platform.NewID("acc_"), Email: "owner@example.com", DisplayName: "O", CreatedAt: now}
	if err := st.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	workspace := func(id string) error {
		w := platform.Workspace{ID: id, Name: id, OwnerID: a.ID, Plan: "community", BillingVersion: "v4", CreatedAt: now, UpdatedAt: now}
		m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: id, AccountID: a.ID, Email: a.Email, Role: platform.RoleOwner, CreatedAt: now}
		return st.CreateWorkspace(ctx, w, m)
	}
	if err := workspace("wkspace_taken"); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		const writers = 16
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				id := fmt.Sprintf("wkspace_%d_%d", round, i)
				if i == writers/2 {
					id = "wkspace_taken"
				}
				errs[i] = workspace(id)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if i == writers/2 {
				if !errors.Is(err, platform.ErrConflict) {
					t.Fatalf("round %d: the taken id: %v, want a conflict", round, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
			if _, err := st.GetWorkspace(ctx, fmt.Sprintf("wkspace_%d_%d", round, i)); err != nil {
				t.Fatalf("round %d: writer %d's workspace: %v", round, i, err)
			}
		}
	}
}
