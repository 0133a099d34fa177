package audit

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestWire(t *testing.T) {
	for _, c := range []struct {
		rec          Record
		action       Action
		value        string
		unknownValue bool
	}{
		{Record{Action: CreateBot, Value: "changed: code"}, CreateBot, "changed: code", false},
		{Record{Action: SetAISpendingLimit, Value: "100 → 5 USD a month"}, SetAISpendingLimit, "100 → 5 USD a month", false},
		{Record{Action: CreateBotKey, Value: "bot bot_1"}, Unknown, "CREATE_BOT_API_KEY: bot bot_1", true},
		{Record{Action: BackupCreated}, Unknown, "BACKUP_CREATED", true},
		{Record{Action: DeployBot, Value: RollbackValue("v3")}, DeployBot, "version rollback to v3", false},
	} {
		action, value := c.rec.Wire()
		if action != c.action || value != c.value {
			t.Errorf("%s %q: wire %s %q, want %s %q", c.rec.Action, c.rec.Value, action, value, c.action, c.value)
		}
	}
}

func TestWithStampsAndTakesOnce(t *testing.T) {
	clock := platform.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if Attached(context.Background()) != nil {
		t.Fatal("a bare context carries records")
	}
	if ctx := With(context.Background(), clock); Attached(ctx) != nil {
		t.Fatal("With and no record: the context carries records")
	}
	ctx := With(context.Background(), clock, Record{Action: CreateBot}, Record{ID: "audit_given", Action: DeleteBot})
	p := Attached(ctx)
	recs := p.Take()
	if len(recs) != 2 || recs[0].ID == "" || recs[0].ID[:len(IDPrefix)] != IDPrefix || recs[1].ID != "audit_given" ||
		!recs[0].RecordedAt.Equal(clock.Now()) || !recs[1].RecordedAt.Equal(clock.Now()) {
		t.Fatalf("stamped records %+v", recs)
	}
	if p.Take() != nil {
		t.Fatal("taken twice")
	}
	p.Release()
	if again := p.Take(); len(again) != 2 || again[0].ID != recs[0].ID {
		t.Fatalf("after Release: %+v, want the same records", again)
	}
}

type fakeStore struct {
	appended []Record
	pruned   []time.Time
}

func (f *fakeStore) AppendAuditRecords(_ context.Context, recs []Record) error {
	f.appended = append(f.appended, recs...)
	return nil
}

func (f *fakeStore) PruneAuditRecords(_ context.Context, before time.Time) (int, error) {
	f.pruned = append(f.pruned, before)
	return 0, nil
}

func (f *fakeStore) WorkspaceIDs(context.Context) ([]string, error) {
	return []string{"wkspace_a", "wkspace_b"}, nil
}

func TestRecorder(t *testing.T) {
	clock := platform.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	st := &fakeStore{}
	r := NewRecorder(st, clock)
	if err := r.RecordEverywhere(t.Context(), Record{Action: BackupCreated, Value: "to /b"}); err != nil {
		t.Fatal(err)
	}
	if len(st.appended) != 2 || st.appended[0].WorkspaceID != "wkspace_a" || st.appended[1].WorkspaceID != "wkspace_b" ||
		st.appended[0].ID == st.appended[1].ID || st.appended[0].UserID != "" {
		t.Fatalf("appended %+v, want one record per workspace, by the server", st.appended)
	}

	// The pruner prunes once at start, then every interval: a context
	// already ended lets it run exactly once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r.RunPruner(ctx, time.Hour, 90*24*time.Hour, log)
	if len(st.pruned) != 1 || !st.pruned[0].Equal(clock.Now().Add(-90*24*time.Hour)) {
		t.Fatalf("pruned before %v, want once before %v", st.pruned, clock.Now().Add(-90*24*time.Hour))
	}
	r.RunPruner(ctx, time.Hour, 0, log) // no retention: never prunes
	if len(st.pruned) != 1 {
		t.Fatalf("pruned with no retention")
	}
}
