package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// auditRecord is a record of workspace ws at at, as a read returns it.
func auditRecord(id, ws string, at time.Time, action audit.Action) audit.Record {
	return audit.Record{ID: id, WorkspaceID: ws, RecordedAt: at.Truncate(time.Microsecond),
		Actor: audit.Actor{UserID: "acc_1", UserEmail: "a@example.com"}, Action: action, ResourceID: "bot_1", ResourceName: "Bot", Value: "v"}
}

// allAudit pages through a workspace's records, size rows a page.
func (e *env) allAudit(t *testing.T, ws string, size int) []audit.Record {
	t.Helper()
	var out []audit.Record
	token := ""
	for range 1000 {
		page, next, err := e.s.ListAuditRecords(e.ctx, ws, store.Page{Token: token, Limit: size})
		must(t, err, "ListAuditRecords")
		if len(page) > size {
			t.Fatalf("ListAuditRecords: %d rows for a page of %d", len(page), size)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		token = next
	}
	t.Fatalf("ListAuditRecords: no last page")
	return nil
}

func testAuditRecords(t *testing.T, e *env) {
	must(t, e.s.AppendAuditRecords(e.ctx, nil), "AppendAuditRecords nil")
	start := e.now()
	s := time.Second
	recs := []audit.Record{
		auditRecord("audit_01", "wkspace_a", start, audit.CreateWorkspace),
		auditRecord("audit_02", "wkspace_a", start.Add(s), audit.CreateBot),
		auditRecord("audit_03", "wkspace_a", start.Add(s), audit.DeployBot), // same time: by id
		auditRecord("audit_04", "wkspace_b", start.Add(2*s), audit.DeleteBot),
		{ID: "audit_05", WorkspaceID: "wkspace_a", RecordedAt: start.Add(3 * s).Truncate(time.Microsecond), Action: audit.BackupCreated}, // the server, no resource
		auditRecord("audit_06", "wkspace_a", start.Add(4*s), audit.UpdateBot),
	}
	recs[5].Value = "naïve ünïcødé\nline two"
	must(t, e.s.AppendAuditRecords(e.ctx, recs), "AppendAuditRecords")
	want := []audit.Record{recs[5], recs[4], recs[2], recs[1], recs[0]}
	for _, size := range []int{1, 2, 5, 100} {
		same(t, e.allAudit(t, "wkspace_a", size), want, "records of a, %d a page", size)
	}
	same(t, e.allAudit(t, "wkspace_b", 10), []audit.Record{recs[3]}, "records of b")
	same(t, e.allAudit(t, "wkspace_none", 10), []audit.Record(nil), "records of a workspace without any")

	t.Run("a batch is atomic", func(t *testing.T) {
		fresh := auditRecord("audit_07", "wkspace_a", start.Add(5*s), audit.UpdateBot)
		wantErr(t, e.s.AppendAuditRecords(e.ctx, []audit.Record{fresh, recs[0]}), platform.ErrConflict, "AppendAuditRecords with a taken id")
		same(t, e.allAudit(t, "wkspace_a", 10), want, "records after a rejected batch")
	})
	t.Run("records added while paging", func(t *testing.T) {
		page, next, err := e.s.ListAuditRecords(e.ctx, "wkspace_a", store.Page{Limit: 2})
		must(t, err, "first page")
		same(t, page, want[:2], "first page")
		newer := auditRecord("audit_08", "wkspace_a", start.Add(time.Hour), audit.UpdateBot)
		older := auditRecord("audit_00", "wkspace_a", start.Add(-time.Hour), audit.UpdateBot)
		must(t, e.s.AppendAuditRecords(e.ctx, []audit.Record{newer, older}), "append while paging")
		var rest []audit.Record
		for next != "" {
			page, next, err = e.s.ListAuditRecords(e.ctx, "wkspace_a", store.Page{Token: next, Limit: 2})
			must(t, err, "next page")
			rest = append(rest, page...)
		}
		// The newer record sorts before the pages already read: it does not
		// show; the older one does, last.
		same(t, rest, append(append([]audit.Record{}, want[2:]...), older), "later pages")
	})
	t.Run("bad nextToken", func(t *testing.T) {
		_, _, err := e.s.ListAuditRecords(e.ctx, "wkspace_a", store.Page{Token: "not-a-token", Limit: 2})
		wantInvalidQuery(t, err, "ListAuditRecords with a bad token")
	})
}

func testAuditPrune(t *testing.T, e *env) {
	start := e.now()
	day := 24 * time.Hour
	recs := []audit.Record{
		auditRecord("audit_01", "wkspace_a", start, audit.CreateBot),
		auditRecord("audit_02", "wkspace_b", start.Add(day), audit.CreateBot),
		auditRecord("audit_03", "wkspace_a", start.Add(2*day), audit.CreateBot),
	}
	must(t, e.s.AppendAuditRecords(e.ctx, recs), "AppendAuditRecords")
	n, err := e.s.PruneAuditRecords(e.ctx, start.Add(day)) // strictly before
	must(t, err, "PruneAuditRecords")
	if n != 1 {
		t.Fatalf("PruneAuditRecords: %d pruned, want 1", n)
	}
	same(t, e.allAudit(t, "wkspace_a", 10), []audit.Record{recs[2]}, "records of a after pruning")
	same(t, e.allAudit(t, "wkspace_b", 10), []audit.Record{recs[1]}, "records of b after pruning")
	if n, err := e.s.PruneAuditRecords(e.ctx, start.Add(day)); err != nil || n != 0 {
		t.Fatalf("PruneAuditRecords again: %d, %v; want 0, nil", n, err)
	}

	t.Run("the recorder prunes by its clock", func(t *testing.T) {
		clock := platform.NewManualClock(start.Add(3 * day))
		r := audit.NewRecorder(e.s, clock)
		if n, err := r.Prune(e.ctx, 0); err != nil || n != 0 {
			t.Fatalf("Prune with no retention: %d, %v; want 0, nil", n, err)
		}
		if n, err := r.Prune(e.ctx, day); err != nil || n != 1 { // audit_02 is 2 days old, audit_03 1 day: kept (not older)
			t.Fatalf("Prune(1 day): %d, %v; want 1, nil", n, err)
		}
		same(t, e.allAudit(t, "wkspace_b", 10), []audit.Record(nil), "records of b")
		same(t, e.allAudit(t, "wkspace_a", 10), []audit.Record{recs[2]}, "records of a")
	})
}

// testAuditWithChange checks that records riding with a change's context
// commit with it: kept when the change is, gone when it fails, and written
// once however many transactions use the context.
func testAuditWithChange(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "audited")
	other := e.account(t, "other")
	rec := func(action audit.Action, id string) audit.Record {
		return audit.Record{WorkspaceID: w.ID, Actor: audit.Account(a), Action: action, ResourceID: id}
	}
	actions := func() []audit.Action {
		return mapSlice(e.allAudit(t, w.ID, 100), func(r audit.Record) audit.Action { return r.Action })
	}

	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: other.ID, Role: platform.RoleViewer, CreatedAt: e.now()}
	ctx := audit.With(e.ctx, e.clock, rec(audit.AddMember, m.ID))
	must(t, e.s.CreateMember(ctx, m), "CreateMember")
	// The same context again: its record is written already.
	must(t, e.s.UpdateMemberRole(ctx, w.ID, m.ID, platform.RoleDeveloper), "UpdateMemberRole")
	same(t, actions(), []audit.Action{audit.AddMember}, "after a change")

	e.clock.Advance(time.Second)
	failed := audit.With(e.ctx, e.clock, rec(audit.RemoveMember, "wkmember_unknown"))
	wantErr(t, e.s.DeleteMember(failed, w.ID, "wkmember_unknown"), platform.ErrNotFound, "DeleteMember unknown")
	wantErr(t, e.s.CreateMember(failed, m), platform.ErrConflict, "CreateMember again")
	same(t, actions(), []audit.Action{audit.AddMember}, "after failed changes")
	// A failed change gives the records back: the next change with the
	// context writes them.
	must(t, e.s.DeleteMember(failed, w.ID, m.ID), "DeleteMember")
	same(t, actions(), []audit.Action{audit.RemoveMember, audit.AddMember}, "after the change that succeeded")

	e.clock.Advance(time.Second)
	two := audit.With(e.ctx, e.clock, rec(audit.UpdateWorkspace, w.ID), rec(audit.SetAISpendingLimit, w.ID))
	w.SpendingLimit = 5
	must(t, e.s.UpdateWorkspace(two, w), "UpdateWorkspace")
	e.clock.Advance(time.Second)
	_, err := e.s.DeleteBot(audit.With(e.ctx, e.clock, rec(audit.DeleteBot, b.ID)), w.ID, b.ID)
	must(t, err, "DeleteBot")
	got := e.allAudit(t, w.ID, 100)
	same(t, mapSlice(got, func(r audit.Record) audit.Action { return r.Action }),
		[]audit.Action{audit.DeleteBot, audit.SetAISpendingLimit, audit.UpdateWorkspace, audit.RemoveMember, audit.AddMember}, "every record, newest first")
	for _, r := range got {
		if r.ID == "" || r.RecordedAt.IsZero() || r.UserID != a.ID || r.UserEmail != a.Email {
			t.Fatalf("record %+v: want an id, a time and the acting account", r)
		}
	}
	if !got[0].RecordedAt.Equal(e.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("DELETE_BOT recorded at %v, want the clock's %v", got[0].RecordedAt, e.clock.Now())
	}
	ids, err := e.s.WorkspaceIDs(e.ctx)
	must(t, err, "WorkspaceIDs")
	if !slices.Contains(ids, w.ID) || !slices.IsSorted(ids) {
		t.Fatalf("WorkspaceIDs %v: want them sorted, with %s", ids, w.ID)
	}
}
