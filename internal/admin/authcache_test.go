package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

func TestAuthCache(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, backend)
			clock := platform.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			svc := admin.New(st, clock, admin.Config{ChatURL: "http://127.0.0.1/chat", AuthCacheTTL: 5 * time.Second})
			boot, err := svc.Bootstrap(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			owner, err := svc.Authenticate(ctx, boot.Token, boot.WorkspaceID)
			if err != nil {
				t.Fatal(err)
			}
			pats, err := st.ListPATs(ctx, owner.Account.ID)
			if err != nil || len(pats) != 1 {
				t.Fatalf("ListPATs = %v, %v", pats, err)
			}

			// A token deleted by another process sharing the database keeps
			// working until the cached authentication expires, not longer.
			if err := st.DeletePAT(ctx, owner.Account.ID, pats[0].ID); err != nil {
				t.Fatal(err)
			}
			clock.Advance(4 * time.Second)
			if _, err := svc.Authenticate(ctx, boot.Token, boot.WorkspaceID); err != nil {
				t.Fatalf("within the TTL: %v", err)
			}
			clock.Advance(2 * time.Second)
			if _, err := svc.Authenticate(ctx, boot.Token, boot.WorkspaceID); !isType(err, platform.TypeUnauthorized) {
				t.Fatalf("after the TTL: err = %v, want Unauthorized", err)
			}

			// Changes made through this process apply at once.
			value, err := svc.IssueToken(ctx, admin.OwnerEmail, "second")
			if err != nil {
				t.Fatal(err)
			}
			a, err := svc.Authenticate(ctx, value, boot.WorkspaceID)
			if err != nil {
				t.Fatal(err)
			}
			m, err := svc.AddMember(ctx, a, "dev@example.com", platform.RoleDeveloper)
			if err != nil {
				t.Fatal(err)
			}
			devToken, err := svc.IssueToken(ctx, "dev@example.com", "dev")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Authenticate(ctx, devToken, boot.WorkspaceID); err != nil {
				t.Fatal(err)
			}
			if err := svc.RemoveMember(ctx, a, m.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Authenticate(ctx, devToken, boot.WorkspaceID); !isType(err, platform.TypeUnauthorized) {
				t.Fatalf("removed member: err = %v, want Unauthorized at once", err)
			}
			// The cached actor is a copy: changing one does not change the next.
			a.Member.Role = platform.RoleViewer
			again, err := svc.Authenticate(ctx, value, boot.WorkspaceID)
			if err != nil || again.Member.Role != platform.RoleOwner {
				t.Fatalf("cached actor = %+v, %v; want the owner role", again, err)
			}

			// Bot API keys: the same, a key deleted elsewhere lasting the TTL
			// at most, one deleted here (or with its bot) refused at once.
			name := "keys"
			b, err := svc.CreateBot(ctx, again, admin.BotInput{Name: &name})
			if err != nil {
				t.Fatal(err)
			}
			botKey := func() (platform.Token, string) {
				t.Helper()
				k, v, err := svc.CreateBotKey(ctx, again, b.ID, "n")
				if err != nil {
					t.Fatal(err)
				}
				if got, ws, _, err := svc.AuthenticateBotKey(ctx, v); err != nil || got.ID != k.ID || ws != boot.WorkspaceID {
					t.Fatalf("AuthenticateBotKey = %+v, %q, %v", got, ws, err)
				}
				return k, v
			}
			k, v := botKey()
			if err := st.DeleteBotKey(ctx, boot.WorkspaceID, k.ID); err != nil {
				t.Fatal(err)
			}
			clock.Advance(4 * time.Second)
			if _, _, _, err := svc.AuthenticateBotKey(ctx, v); err != nil {
				t.Fatalf("a bot key deleted elsewhere, within the TTL: %v", err)
			}
			clock.Advance(2 * time.Second)
			if _, _, _, err := svc.AuthenticateBotKey(ctx, v); !isType(err, platform.TypeUnauthorized) {
				t.Fatalf("a bot key deleted elsewhere, after the TTL: err = %v, want Unauthorized", err)
			}
			k, v = botKey()
			if err := svc.DeleteBotKey(ctx, again, k.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := svc.AuthenticateBotKey(ctx, v); !isType(err, platform.TypeUnauthorized) {
				t.Fatalf("a deleted bot key: err = %v, want Unauthorized at once", err)
			}
			_, v = botKey()
			if err := svc.DeleteBot(ctx, again, b.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := svc.AuthenticateBotKey(ctx, v); !isType(err, platform.TypeUnauthorized) {
				t.Fatalf("the key of a deleted bot: err = %v, want Unauthorized at once", err)
			}
		})
	}
}

func isType(err error, typ platform.ErrorType) bool {
	e, ok := platform.AsError(err)
	return ok && e.Type == typ
}
