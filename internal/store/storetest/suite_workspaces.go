package storetest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func testWorkspaces(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, m := e.newWorkspace(a)
	w.Blocked = true
	w.SpendingLimit = 1 << 40 // needs 64 bits
	w.About, w.ProfilePicture, w.ContactEmail, w.Website = "About us", "https://example.com/p.png", "hi@example.com", "https://example.com"
	w.SocialAccounts = []string{"https://x.com/acme", "https://github.com/acme"}
	w.IsPublic = true
	w.Handle = "acme"
	must(t, e.s.CreateWorkspace(e.ctx, w, m), "CreateWorkspace")

	got, err := e.s.GetWorkspace(e.ctx, w.ID)
	must(t, err, "GetWorkspace")
	same(t, got, normWorkspace(w), "GetWorkspace")
	gotM, err := e.s.GetMember(e.ctx, w.ID, a.ID)
	must(t, err, "GetMember of the owner")
	same(t, gotM, normMember(m), "owner membership")

	// A workspace without handle or profile; several may lack a handle.
	plain1, _ := e.workspace(t, a)
	plain2, _ := e.workspace(t, a)
	for _, p := range []platform.Workspace{plain1, plain2} {
		got, err := e.s.GetWorkspace(e.ctx, p.ID)
		must(t, err, "GetWorkspace %s", p.ID)
		same(t, got, normWorkspace(p), "GetWorkspace of a plain workspace")
	}

	t.Run("BotCount counts the workspace's bots only", func(t *testing.T) {
		e.bot(t, w.ID, "one")
		e.bot(t, w.ID, "two")
		e.bot(t, plain1.ID, "elsewhere")
		devBot := e.newBot(w.ID, "dev")
		devBot.Dev = true
		must(t, e.s.CreateBot(e.ctx, devBot), "CreateBot dev")
		for id, want := range map[string]int{w.ID: 3, plain1.ID: 1, plain2.ID: 0} {
			got, err := e.s.GetWorkspace(e.ctx, id)
			must(t, err, "GetWorkspace %s", id)
			if got.BotCount != want {
				t.Fatalf("BotCount of %s = %d, want %d", id, got.BotCount, want)
			}
		}
		must(t, e.deleteBot(e.ctx, w.ID, devBot.ID), "DeleteBot")
		got, err := e.s.GetWorkspace(e.ctx, w.ID)
		must(t, err, "GetWorkspace")
		if got.BotCount != 2 {
			t.Fatalf("BotCount after DeleteBot = %d, want 2", got.BotCount)
		}
	})
	t.Run("conflicts and unknown ids", func(t *testing.T) {
		dup, dm := e.newWorkspace(a)
		dup.ID, dm.WorkspaceID = w.ID, w.ID
		wantErr(t, e.s.CreateWorkspace(e.ctx, dup, dm), platform.ErrConflict, "CreateWorkspace with a taken id")
		_, err := e.s.GetMemberByID(e.ctx, w.ID, dm.ID)
		wantErr(t, err, platform.ErrNotFound, "owner member of the rejected workspace")

		taken, tm := e.newWorkspace(a)
		taken.Handle = w.Handle
		wantErr(t, e.s.CreateWorkspace(e.ctx, taken, tm), platform.ErrConflict, "CreateWorkspace with a taken handle")
		_, err = e.s.GetWorkspace(e.ctx, taken.ID)
		wantErr(t, err, platform.ErrNotFound, "GetWorkspace of the rejected workspace")

		// The member insert fails (taken member id): the workspace must not stay.
		half, hm := e.newWorkspace(a)
		hm.ID = m.ID
		wantErr(t, e.s.CreateWorkspace(e.ctx, half, hm), platform.ErrConflict, "CreateWorkspace with a taken member id")
		_, err = e.s.GetWorkspace(e.ctx, half.ID)
		wantErr(t, err, platform.ErrNotFound, "GetWorkspace after a failed owner membership")

		_, err = e.s.GetWorkspace(e.ctx, "wkspace_unknown")
		wantErr(t, err, platform.ErrNotFound, "GetWorkspace unknown")
	})
}

func testListWorkspaces(t *testing.T, e *env) {
	a := e.account(t, "a")
	b := e.account(t, "b")
	var aIDs, bIDs, aOwn, shared []string
	for range 3 {
		w, _ := e.workspace(t, a)
		aIDs = append(aIDs, w.ID)
		aOwn = append(aOwn, w.ID)
	}
	for range 2 {
		w, _ := e.workspace(t, b)
		e.member(t, w.ID, a, platform.RoleViewer)
		aIDs = append(aIDs, w.ID)
		bIDs = append(bIDs, w.ID)
		shared = append(shared, w.ID)
	}
	bOnly, _ := e.workspace(t, b)
	bIDs = append(bIDs, bOnly.ID)
	aIDs, bIDs = sorted(aIDs...), sorted(bIDs...)

	list := func(accountID string, f store.WorkspaceFilter) func(string) ([]platform.Workspace, string, error) {
		return func(token string) ([]platform.Workspace, string, error) {
			f.Token = token
			return e.s.ListWorkspaces(e.ctx, accountID, f)
		}
	}
	for _, tc := range []struct {
		name    string
		account string
		want    []string
	}{
		{"a", a.ID, aIDs},
		{"b", b.ID, bIDs},
		{"unknown account", "acc_unknown", []string{}},
	} {
		for _, limit := range []int{1, 2, 5, 100} {
			got := collect(t, "ListWorkspaces "+tc.name, limit, list(tc.account, store.WorkspaceFilter{Page: store.Page{Limit: limit}}))
			same(t, workspaceIDs(got), tc.want, "ListWorkspaces of %s, limit %d", tc.name, limit)
		}
	}

	// Rows of the listing are whole workspaces, BotCount included.
	e.bot(t, shared[0], "counted")
	want := map[string]platform.Workspace{}
	for _, id := range aIDs {
		w, err := e.s.GetWorkspace(e.ctx, id)
		must(t, err, "GetWorkspace")
		want[id] = w
	}
	rows := collect(t, "ListWorkspaces", 100, list(a.ID, store.WorkspaceFilter{Page: store.Page{Limit: 100}}))
	for _, w := range rows {
		same(t, w, want[w.ID], "listed workspace %s", w.ID)
	}
	if want[shared[0]].BotCount != 1 {
		t.Fatalf("BotCount = %d, want 1", want[shared[0]].BotCount)
	}

	t.Run("handle filter", func(t *testing.T) {
		shared := want[shared[1]] // b owns it, a is a member
		shared.Handle = "shared-handle"
		must(t, e.s.UpdateWorkspace(e.ctx, shared), "UpdateWorkspace")
		own := want[aOwn[1]]
		own.Handle = "own-handle"
		must(t, e.s.UpdateWorkspace(e.ctx, own), "UpdateWorkspace")
		for _, tc := range []struct {
			account, handle string
			want            []string
		}{
			{a.ID, "shared-handle", []string{shared.ID}},
			{b.ID, "shared-handle", []string{shared.ID}},
			{a.ID, "own-handle", []string{own.ID}},
			{b.ID, "own-handle", []string{}}, // b is no member of it
			{a.ID, "no-such-handle", []string{}},
		} {
			got := collect(t, "ListWorkspaces by handle", 1, list(tc.account, store.WorkspaceFilter{Page: store.Page{Limit: 1}, Handle: tc.handle}))
			same(t, workspaceIDs(got), tc.want, "ListWorkspaces(%s, handle %q)", tc.account, tc.handle)
		}
	})
}

func testUpdateWorkspace(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	other.Handle = "other"
	must(t, e.s.UpdateWorkspace(e.ctx, other), "UpdateWorkspace set handle")

	u := w
	u.Name, u.Plan, u.BillingVersion = "Renamed", "team", "v5"
	u.Blocked, u.SpendingLimit = true, 12345
	u.About, u.ProfilePicture, u.ContactEmail, u.Website = "New about", "https://example.com/new.png", "new@example.com", "https://new.example.com"
	u.SocialAccounts = []string{"https://x.com/new"}
	u.IsPublic = true
	u.Handle = "renamed"
	u.UpdatedAt = e.now()
	must(t, e.s.UpdateWorkspace(e.ctx, u), "UpdateWorkspace")
	got, err := e.s.GetWorkspace(e.ctx, w.ID)
	must(t, err, "GetWorkspace")
	same(t, got, normWorkspace(u), "workspace after UpdateWorkspace")

	t.Run("profile fields can be cleared", func(t *testing.T) {
		c := u
		c.Blocked, c.IsPublic = false, false
		c.About, c.ProfilePicture, c.ContactEmail, c.Website, c.SocialAccounts, c.Handle = "", "", "", "", nil, ""
		c.UpdatedAt = e.now()
		must(t, e.s.UpdateWorkspace(e.ctx, c), "UpdateWorkspace clearing")
		got, err := e.s.GetWorkspace(e.ctx, w.ID)
		must(t, err, "GetWorkspace")
		same(t, got, normWorkspace(c), "workspace after clearing")
		// A cleared handle is free again, and two workspaces may both lack one.
		third, _ := e.workspace(t, a)
		third.Handle = "renamed"
		must(t, e.s.UpdateWorkspace(e.ctx, third), "UpdateWorkspace taking a released handle")
		third.Handle = ""
		must(t, e.s.UpdateWorkspace(e.ctx, third), "UpdateWorkspace clearing a second handle")
		u = c
	})
	t.Run("handle must be unique", func(t *testing.T) {
		c := u
		c.Name, c.Handle = "Should not stick", "other"
		wantErr(t, e.s.UpdateWorkspace(e.ctx, c), platform.ErrConflict, "UpdateWorkspace to a taken handle")
		got, err := e.s.GetWorkspace(e.ctx, w.ID)
		must(t, err, "GetWorkspace")
		same(t, got, normWorkspace(u), "workspace after rejected update")
	})
	t.Run("unknown workspace", func(t *testing.T) {
		c := u
		c.ID = "wkspace_unknown"
		wantErr(t, e.s.UpdateWorkspace(e.ctx, c), platform.ErrNotFound, "UpdateWorkspace unknown")
	})
	t.Run("other workspace untouched", func(t *testing.T) {
		got, err := e.s.GetWorkspace(e.ctx, other.ID)
		must(t, err, "GetWorkspace")
		same(t, got, normWorkspace(other), "other workspace")
	})
}

func testDeleteWorkspace(t *testing.T, e *env) {
	a := e.account(t, "a")
	b := e.account(t, "b")
	w, wm := e.workspace(t, a)
	keep, keepM := e.workspace(t, a)
	bm := e.member(t, w.ID, b, platform.RoleDeveloper)
	e.member(t, keep.ID, b, platform.RoleViewer)

	bot := e.newBot(w.ID, "doomed")
	bot.Integrations = append(bot.Integrations, e.newIntegration(bot.ID, "slack"))
	must(t, e.s.CreateBot(e.ctx, bot), "CreateBot")
	key := e.newToken(platform.PrefixBotKey, bot.ID, "key")
	must(t, e.s.CreateBotKey(e.ctx, w.ID, key), "CreateBotKey")
	logAt := e.now()
	must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{{ID: platform.NewID(platform.PrefixLog), BotID: bot.ID, Timestamp: logAt, Level: "info", Message: "hello"}}), "AppendLogs")

	keptBot := e.bot(t, keep.ID, "kept")
	keptKey := e.newToken(platform.PrefixBotKey, keptBot.ID, "kept key")
	must(t, e.s.CreateBotKey(e.ctx, keep.ID, keptKey), "CreateBotKey")

	must(t, e.deleteWorkspace(e.ctx, w.ID), "DeleteWorkspace")

	_, err := e.s.GetWorkspace(e.ctx, w.ID)
	wantErr(t, err, platform.ErrNotFound, "GetWorkspace after delete")
	for _, m := range []platform.Member{wm, bm} {
		_, err = e.s.GetMember(e.ctx, w.ID, m.AccountID)
		wantErr(t, err, platform.ErrNotFound, "GetMember after workspace delete")
		_, err = e.s.GetMemberByID(e.ctx, w.ID, m.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMemberByID after workspace delete")
	}
	ms, _, err := e.s.ListMembers(e.ctx, w.ID, store.Page{Limit: 10})
	must(t, err, "ListMembers")
	if len(ms) != 0 {
		t.Fatalf("ListMembers of a deleted workspace = %s, want none", show(ms))
	}
	_, err = e.s.GetBot(e.ctx, w.ID, bot.ID)
	wantErr(t, err, platform.ErrNotFound, "GetBot after workspace delete")
	for _, in := range bot.Integrations {
		_, err = e.s.GetIntegrationByWebhook(e.ctx, in.WebhookID)
		wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook after workspace delete")
	}
	_, _, err = e.s.GetBotKeyByHash(e.ctx, key.Hash)
	wantErr(t, err, platform.ErrNotFound, "GetBotKeyByHash after workspace delete")
	logs, _, err := e.s.ListLogs(e.ctx, store.LogFilter{Page: store.Page{Limit: 10}, BotID: bot.ID, Start: logAt.Add(-time.Second), End: logAt.Add(time.Second)})
	must(t, err, "ListLogs")
	if len(logs) != 0 {
		t.Fatalf("ListLogs of a deleted workspace's bot = %s, want none", show(logs))
	}
	for _, acc := range []platform.Account{a, b} {
		list, _, err := e.s.ListWorkspaces(e.ctx, acc.ID, store.WorkspaceFilter{Page: store.Page{Limit: 10}})
		must(t, err, "ListWorkspaces")
		same(t, workspaceIDs(list), []string{keep.ID}, "ListWorkspaces of %s after delete", acc.Email)
		_, err = e.s.GetAccount(e.ctx, acc.ID)
		must(t, err, "accounts survive their workspace")
	}

	// The other workspace keeps everything.
	gotKeep, err := e.s.GetWorkspace(e.ctx, keep.ID)
	must(t, err, "GetWorkspace kept")
	if gotKeep.BotCount != 1 {
		t.Fatalf("kept workspace BotCount = %d, want 1", gotKeep.BotCount)
	}
	gotM, err := e.s.GetMember(e.ctx, keep.ID, a.ID)
	must(t, err, "GetMember kept")
	same(t, gotM, normMember(keepM), "kept membership")
	gotBot, err := e.s.GetBot(e.ctx, keep.ID, keptBot.ID)
	must(t, err, "GetBot kept")
	same(t, gotBot, normBot(keptBot), "kept bot")
	_, ws, err := e.s.GetBotKeyByHash(e.ctx, keptKey.Hash)
	must(t, err, "GetBotKeyByHash kept")
	if ws != keep.ID {
		t.Fatalf("kept key workspace = %q, want %q", ws, keep.ID)
	}

	wantErr(t, e.deleteWorkspace(e.ctx, w.ID), platform.ErrNotFound, "DeleteWorkspace twice")
	wantErr(t, e.deleteWorkspace(e.ctx, "wkspace_unknown"), platform.ErrNotFound, "DeleteWorkspace unknown")
}

func testMembers(t *testing.T, e *env) {
	a := e.account(t, "a")
	b := e.account(t, "b")
	w, owner := e.workspace(t, a)
	other, _ := e.workspace(t, b)
	m := e.member(t, w.ID, b, platform.RoleDeveloper)

	for _, want := range []platform.Member{owner, m} {
		got, err := e.s.GetMember(e.ctx, w.ID, want.AccountID)
		must(t, err, "GetMember")
		same(t, got, normMember(want), "GetMember %s", want.Email)
		got, err = e.s.GetMemberByID(e.ctx, w.ID, want.ID)
		must(t, err, "GetMemberByID")
		same(t, got, normMember(want), "GetMemberByID %s", want.Email)
	}

	// Lookups through the wrong workspace find nothing.
	_, err := e.s.GetMember(e.ctx, other.ID, a.ID)
	wantErr(t, err, platform.ErrNotFound, "GetMember of a non-member")
	_, err = e.s.GetMemberByID(e.ctx, other.ID, m.ID)
	wantErr(t, err, platform.ErrNotFound, "GetMemberByID through another workspace")
	_, err = e.s.GetMemberByID(e.ctx, w.ID, "wkmember_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetMemberByID unknown")

	dup := m
	dup.ID, dup.Role = platform.NewID(platform.PrefixMember), platform.RoleViewer
	wantErr(t, e.s.CreateMember(e.ctx, dup), platform.ErrConflict, "CreateMember for an account already member")
	_, err = e.s.GetMemberByID(e.ctx, w.ID, dup.ID)
	wantErr(t, err, platform.ErrNotFound, "GetMemberByID of the rejected duplicate")
	dupID := m
	dupID.WorkspaceID = other.ID
	wantErr(t, e.s.CreateMember(e.ctx, dupID), platform.ErrConflict, "CreateMember with a taken id")

	t.Run("UpdateMemberRole", func(t *testing.T) {
		wantErr(t, e.s.UpdateMemberRole(e.ctx, other.ID, m.ID, platform.RoleOwner), platform.ErrNotFound, "UpdateMemberRole through another workspace")
		wantErr(t, e.s.UpdateMemberRole(e.ctx, w.ID, "wkmember_unknown", platform.RoleOwner), platform.ErrNotFound, "UpdateMemberRole unknown")
		got, err := e.s.GetMemberByID(e.ctx, w.ID, m.ID)
		must(t, err, "GetMemberByID")
		same(t, got, normMember(m), "member after rejected role updates")

		must(t, e.s.UpdateMemberRole(e.ctx, w.ID, m.ID, platform.RoleAdministrator), "UpdateMemberRole")
		want := m
		want.Role = platform.RoleAdministrator
		got, err = e.s.GetMember(e.ctx, w.ID, b.ID)
		must(t, err, "GetMember")
		same(t, got, normMember(want), "member after UpdateMemberRole")
		got, err = e.s.GetMemberByID(e.ctx, w.ID, owner.ID)
		must(t, err, "GetMemberByID owner")
		same(t, got, normMember(owner), "other member after UpdateMemberRole")
	})
	t.Run("DeleteMember", func(t *testing.T) {
		wantErr(t, e.s.DeleteMember(e.ctx, other.ID, m.ID), platform.ErrNotFound, "DeleteMember through another workspace")
		_, err := e.s.GetMemberByID(e.ctx, w.ID, m.ID)
		must(t, err, "member survives a delete through another workspace")
		must(t, e.s.DeleteMember(e.ctx, w.ID, m.ID), "DeleteMember")
		_, err = e.s.GetMemberByID(e.ctx, w.ID, m.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMemberByID after delete")
		_, err = e.s.GetMember(e.ctx, w.ID, b.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMember after delete")
		wantErr(t, e.s.DeleteMember(e.ctx, w.ID, m.ID), platform.ErrNotFound, "DeleteMember twice")
		list, _, err := e.s.ListWorkspaces(e.ctx, b.ID, store.WorkspaceFilter{Page: store.Page{Limit: 10}})
		must(t, err, "ListWorkspaces")
		same(t, workspaceIDs(list), []string{other.ID}, "b's workspaces after leaving w")
		// The account may join again.
		again := e.member(t, w.ID, b, platform.RoleViewer)
		got, err := e.s.GetMember(e.ctx, w.ID, b.ID)
		must(t, err, "GetMember after rejoining")
		same(t, got, normMember(again), "rejoined member")
	})
}

func testListMembers(t *testing.T, e *env) {
	owner := e.account(t, "owner")
	w, om := e.workspace(t, owner)
	other, _ := e.workspace(t, owner)
	want := []platform.Member{om}
	roles := []platform.Role{platform.RoleViewer, platform.RoleDeveloper, platform.RoleManager, platform.RoleAdministrator}
	for i := range 6 {
		acc := e.account(t, "m")
		want = append(want, e.member(t, w.ID, acc, roles[i%len(roles)]))
		if i%2 == 0 {
			e.member(t, other.ID, acc, platform.RoleViewer)
		}
	}
	wantNorm := mapSlice(want, normMember)
	sortByID(wantNorm, func(m platform.Member) string { return m.ID })
	for _, limit := range []int{1, 2, 3, 7, 100} {
		got := collect(t, "ListMembers", limit, func(token string) ([]platform.Member, string, error) {
			return e.s.ListMembers(e.ctx, w.ID, store.Page{Token: token, Limit: limit})
		})
		same(t, got, wantNorm, "ListMembers limit %d", limit)
	}
	got := collect(t, "ListMembers", 2, func(token string) ([]platform.Member, string, error) {
		return e.s.ListMembers(e.ctx, "wkspace_unknown", store.Page{Token: token, Limit: 2})
	})
	if len(got) != 0 {
		t.Fatalf("ListMembers of an unknown workspace = %s, want none", show(got))
	}
	gotOther := collect(t, "ListMembers other", 100, func(token string) ([]platform.Member, string, error) {
		return e.s.ListMembers(e.ctx, other.ID, store.Page{Token: token, Limit: 100})
	})
	if len(gotOther) != 4 {
		t.Fatalf("ListMembers of the other workspace has %d rows, want 4 (%s)", len(gotOther), show(memberIDs(gotOther)))
	}
}

func testPublicWorkspaces(t *testing.T, e *env) {
	a := e.account(t, "pub")
	tag := fmt.Sprintf("q%dz", e.next()) // in this test's names only
	mk := func(name, handle string, public bool) platform.Workspace {
		w, m := e.newWorkspace(a)
		w.Name, w.Handle, w.IsPublic = name, handle, public
		must(t, e.s.CreateWorkspace(e.ctx, w, m), "CreateWorkspace %s", name)
		return w
	}
	shop := mk("Shop "+tag, "", true)
	hidden := mk("Hidden "+tag, "", false)
	bots := mk("Bots", tag+"-bots", true)
	ids := []string{shop.ID, hidden.ID, bots.ID}
	list := func(f store.PublicWorkspaceFilter) []string {
		t.Helper()
		f.Limit = cmpOr(f.Limit, 10)
		ws, _, err := e.s.ListPublicWorkspaces(e.ctx, f)
		must(t, err, "ListPublicWorkspaces")
		out := []string{}
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}
	public := []string{shop.ID, bots.ID}
	sort.Strings(public)
	same(t, list(store.PublicWorkspaceFilter{IDs: ids}), public, "the public ones of three")
	same(t, list(store.PublicWorkspaceFilter{Search: strings.ToUpper(tag)}), public, "by name or handle, in any case")
	same(t, list(store.PublicWorkspaceFilter{Search: "shop " + tag}), []string{shop.ID}, "by name")
	same(t, list(store.PublicWorkspaceFilter{Search: "hidden " + tag}), []string{}, "a private one is never listed")
	collected := collect(t, "ListPublicWorkspaces limit 1", 1, func(tok string) ([]platform.Workspace, string, error) {
		return e.s.ListPublicWorkspaces(e.ctx, store.PublicWorkspaceFilter{Page: store.Page{Token: tok, Limit: 1}, IDs: ids})
	})
	got := []string{}
	for _, w := range collected {
		got = append(got, w.ID)
	}
	same(t, got, public, "paged one by one")
	_, _, err := e.s.ListPublicWorkspaces(e.ctx, store.PublicWorkspaceFilter{Page: store.Page{Token: "not a token", Limit: 3}})
	wantInvalidQuery(t, err, "ListPublicWorkspaces with a bad token")
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
