package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Workspace stores an account and the workspace it owns, for tests of the
// packages above the store.
func Workspace(t testing.TB, s store.Store, now time.Time) platform.Workspace {
	t.Helper()
	ctx := context.Background()
	a := platform.Account{ID: platform.NewID("acc_"), Email: "a@example.com", DisplayName: "A", CreatedAt: now}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	w := platform.Workspace{ID: platform.NewID(platform.PrefixWorkspace), Name: "W", OwnerID: a.ID, Plan: "community", BillingVersion: "v4", CreatedAt: now, UpdatedAt: now}
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: a.ID, Email: a.Email, Role: platform.RoleOwner, CreatedAt: now}
	if err := s.CreateWorkspace(ctx, w, m); err != nil {
		t.Fatal(err)
	}
	return w
}

// Bot is an unsaved bot of w with code.
func Bot(w platform.Workspace, code string, now time.Time) platform.Bot {
	return platform.Bot{ID: platform.NewID(platform.PrefixBot), WorkspaceID: w.ID, Name: "b", Type: "studio", Status: "active",
		SigningSecret: "s", Tags: map[string]string{}, Code: code, CreatedAt: now, UpdatedAt: now}
}

// Conversation stores a bot of w with code, a chat user of it and a
// conversation the user owns.
func Conversation(t testing.TB, s store.Store, w platform.Workspace, code string, now time.Time) (platform.ChatUser, platform.Conversation) {
	t.Helper()
	ctx := context.Background()
	b := Bot(w, code, now)
	if err := s.CreateBot(ctx, b); err != nil {
		t.Fatal(err)
	}
	u := platform.ChatUser{ID: platform.NewID("user_"), BotID: b.ID, Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	u.FID = u.ID
	if err := s.CreateChatUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	c := platform.Conversation{ID: platform.NewID("conv_"), BotID: b.ID, OwnerID: u.ID, Tags: map[string]string{}, Channel: "channel", Integration: "chat", CreatedAt: now, UpdatedAt: now}
	c.FID = c.ID
	if err := s.CreateConversation(ctx, c); err != nil {
		t.Fatal(err)
	}
	return u, c
}
