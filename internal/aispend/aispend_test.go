package aispend

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

type call struct {
	bot  string
	cost int64
	at   time.Time
}

// fakeStore keeps one workspace and its calls.
type fakeStore struct {
	w     platform.Workspace
	calls []call
}

func (f *fakeStore) GetWorkspace(_ context.Context, id string) (platform.Workspace, error) {
	if id != f.w.ID {
		return platform.Workspace{}, platform.ErrNotFound
	}
	return f.w, nil
}

func (f *fakeStore) AISpend(_ context.Context, id string, since time.Time) (int64, map[string]int64, error) {
	var total int64
	byBot := map[string]int64{}
	for _, c := range f.calls {
		if id == f.w.ID && !c.at.Before(since) {
			total += c.cost
			byBot[c.bot] += c.cost
		}
	}
	return total, byBot, nil
}

var now = time.Date(2026, time.March, 14, 15, 9, 26, 0, time.FixedZone("X", -8*3600)) // 23:09 UTC

func TestMonth(t *testing.T) {
	m := MonthOf(now)
	if want := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC); !m.Start.Equal(want) || !m.End.Equal(want.AddDate(0, 1, 0)) {
		t.Fatalf("MonthOf = %v, want March 2026 UTC", m)
	}
	// 2026-03-31 20:00 at UTC-8 is April in UTC.
	if got := MonthOf(time.Date(2026, time.March, 31, 20, 0, 0, 0, now.Location())).String(); got != "2026-04" {
		t.Fatalf("MonthOf late on the 31st at UTC-8 = %s, want 2026-04", got)
	}
	if got, ok := ParseMonth("2025-12"); !ok || got.String() != "2025-12" || got.End.Format("2006-01") != "2026-01" {
		t.Fatalf("ParseMonth(2025-12) = %v, %v", got, ok)
	}
	for _, bad := range []string{"2025-13", "2025-1", "december", "2025-12-01", ""} {
		if _, ok := ParseMonth(bad); ok {
			t.Errorf("ParseMonth(%q) accepted", bad)
		}
	}
}

func TestLimitNanos(t *testing.T) {
	for dollars, want := range map[int64]int64{0: 0, -5: 0, 1: 1e9, 100: 100e9, 1 << 40: math.MaxInt64, math.MaxInt64: math.MaxInt64, 9_223_372_036: 9_223_372_036e9} {
		if got := LimitNanos(dollars); got != want {
			t.Errorf("LimitNanos(%d) = %d, want %d", dollars, got, want)
		}
	}
	if got := Dollars(1_250_500_000); got != 1.2505 {
		t.Errorf("Dollars = %v", got)
	}
}

func TestSpentAndLeft(t *testing.T) {
	ctx := context.Background()
	m := MonthOf(now)
	f := &fakeStore{w: platform.Workspace{ID: "wkspace_1", Plan: "team", SpendingLimit: 10}, calls: []call{
		{"bot_a", 2e9, m.Start.Add(-time.Nanosecond)}, // last month
		{"bot_a", 3e9, m.Start},
		{"bot_b", 1e9, now},
	}}
	total, byBot, err := Spent(ctx, f, "wkspace_1", m)
	if err != nil || total != 4e9 || !reflect.DeepEqual(byBot, map[string]int64{"bot_a": 3e9, "bot_b": 1e9}) {
		t.Fatalf("Spent this month = %d, %v, %v", total, byBot, err)
	}
	prev, _ := ParseMonth("2026-02")
	total, byBot, err = Spent(ctx, f, "wkspace_1", prev)
	if err != nil || total != 2e9 || !reflect.DeepEqual(byBot, map[string]int64{"bot_a": 2e9}) {
		t.Fatalf("Spent last month = %d, %v, %v", total, byBot, err)
	}

	left, limit, err := SpendLeft(ctx, f, "wkspace_1", now)
	if err != nil || left != 6e9 || limit != 10e9 {
		t.Fatalf("SpendLeft = %d, %d, %v; want 6e9, 10e9", left, limit, err)
	}

	// Over the limit: nothing left, never negative.
	f.calls = append(f.calls, call{"bot_b", 7e9, now})
	left, _, err = SpendLeft(ctx, f, "wkspace_1", now)
	if err != nil || left != 0 {
		t.Fatalf("SpendLeft over the limit = %d, %v", left, err)
	}
	// Next month starts afresh.
	if left, _, err := SpendLeft(ctx, f, "wkspace_1", m.End); err != nil || left != 10e9 {
		t.Fatalf("SpendLeft next month = %d, %v", left, err)
	}

	// Community has no AI-assisted indexing.
	f.w.Plan = "community"
	err = RequirePlan(f.w, "summarization.enable")
	if pe, ok := platform.AsError(err); !ok || pe.Type != platform.TypePaymentRequired {
		t.Fatalf("RequirePlan on community: %v, want PaymentRequired", err)
	}
	for _, p := range []string{"team", "enterprise"} {
		if err := RequirePlan(platform.Workspace{Plan: p}, "x"); err != nil {
			t.Errorf("RequirePlan on %s: %v", p, err)
		}
	}
	if _, _, err := SpendLeft(ctx, f, "wkspace_nope", now); err != platform.ErrNotFound {
		t.Fatalf("SpendLeft of an unknown workspace: %v", err)
	}
}
