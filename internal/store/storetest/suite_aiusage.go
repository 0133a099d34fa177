package storetest

import (
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// newAIUsage returns an unsaved metered call of bot in workspace w.
func (e *env) newAIUsage(workspaceID, botID string, cost int64, at time.Time) platform.AIUsage {
	return platform.AIUsage{
		ID: platform.NewID("aiu_"), WorkspaceID: workspaceID, BotID: botID, FileID: "file_" + platform.RandomToken(6),
		Purpose: "summarization", Model: "small-model", InputTokens: 1200, OutputTokens: 300, Cost: cost, CreatedAt: at,
	}
}

func testAIUsage(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	empty, _ := e.workspace(t, a)
	b1 := e.bot(t, w.ID, "one")
	b2 := e.bot(t, w.ID, "two")
	ob := e.bot(t, other.ID, "other")

	record := func(t *testing.T, u platform.AIUsage) {
		t.Helper()
		must(t, e.s.RecordAIUsage(e.ctx, u), "RecordAIUsage %s", u.ID)
	}
	type spend struct {
		Total int64
		ByBot map[string]int64
	}
	get := func(t *testing.T, workspaceID string, since time.Time) spend {
		t.Helper()
		total, byBot, err := e.s.AISpend(e.ctx, workspaceID, since)
		must(t, err, "AISpend(%s, %s)", workspaceID, since)
		if byBot == nil {
			t.Fatalf("AISpend(%s, %s): nil byBot map, want an empty map", workspaceID, since)
		}
		return spend{total, byBot}
	}

	// Times: early < mid < late; since = mid keeps mid and late.
	early := e.now()
	mid := e.now()
	late := e.now()
	const big = int64(3) << 40 // well over 2^31 (about $3,298)
	record(t, e.newAIUsage(w.ID, b1.ID, 100, early))
	record(t, e.newAIUsage(w.ID, b1.ID, 20, mid)) // exactly at since: counts
	record(t, e.newAIUsage(w.ID, b1.ID, 3, late))
	record(t, e.newAIUsage(w.ID, b2.ID, big, late))
	record(t, e.newAIUsage(w.ID, b2.ID, 4000, mid.Add(-time.Microsecond))) // just before since
	record(t, e.newAIUsage(other.ID, ob.ID, 50000, late))

	t.Run("totals and by bot", func(t *testing.T) {
		same(t, get(t, w.ID, early.Add(-time.Hour)),
			spend{100 + 20 + 3 + big + 4000, map[string]int64{b1.ID: 123, b2.ID: big + 4000}}, "AISpend of w since before everything")
		same(t, get(t, w.ID, mid), spend{20 + 3 + big, map[string]int64{b1.ID: 23, b2.ID: big}}, "AISpend of w since mid")
		same(t, get(t, w.ID, mt(mid)), spend{20 + 3 + big, map[string]int64{b1.ID: 23, b2.ID: big}}, "AISpend of w since mid, truncated")
		same(t, get(t, w.ID, late), spend{3 + big, map[string]int64{b1.ID: 3, b2.ID: big}}, "AISpend of w since late")
		same(t, get(t, w.ID, late.Add(time.Microsecond)), spend{0, map[string]int64{}}, "AISpend of w after the last call")
		same(t, get(t, other.ID, early), spend{50000, map[string]int64{ob.ID: 50000}}, "AISpend of the other workspace")
	})
	// Over several days: whole days come from the kept daily totals, a
	// first day since begins within from its calls; failed calls count
	// nowhere.
	t.Run("over days", func(t *testing.T) {
		dw, _ := e.workspace(t, a)
		db := e.bot(t, dw.ID, "days")
		day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
		record(t, e.newAIUsage(dw.ID, db.ID, 1, day.Add(-36*time.Hour)))  // the 8th, noon
		record(t, e.newAIUsage(dw.ID, db.ID, 10, day.Add(-24*time.Hour))) // the 9th, midnight
		record(t, e.newAIUsage(dw.ID, db.ID, 100, day.Add(-time.Microsecond)))
		record(t, e.newAIUsage(dw.ID, db.ID, 1000, day.Add(5*time.Hour)))
		failed := e.newAIUsage(dw.ID, db.ID, 10000, day.Add(6*time.Hour))
		failed.Failed = true
		record(t, failed)
		for _, tc := range []struct {
			since time.Time
			want  int64
		}{
			{day.Add(-48 * time.Hour), 1111},
			{day.Add(-37 * time.Hour), 1111},
			{day.Add(-36 * time.Hour), 1111},
			{day.Add(-35 * time.Hour), 1110},
			{day.Add(-24 * time.Hour), 1110},
			{day.Add(-24*time.Hour + time.Microsecond), 1100},
			{day.Add(-time.Microsecond), 1100},
			{day, 1000},
			{day.Add(5 * time.Hour), 1000},
			{day.Add(5*time.Hour + time.Microsecond), 0},
		} {
			want := spend{tc.want, map[string]int64{db.ID: tc.want}}
			if tc.want == 0 {
				want.ByBot = map[string]int64{}
			}
			same(t, get(t, dw.ID, tc.since), want, "AISpend since %s", tc.since.Format(time.RFC3339Nano))
		}
	})

	t.Run("empty workspace", func(t *testing.T) {
		same(t, get(t, empty.ID, time.Time{}), spend{0, map[string]int64{}}, "AISpend of an empty workspace")
		same(t, get(t, "wkspace_unknown", time.Time{}), spend{0, map[string]int64{}}, "AISpend of an unknown workspace")
	})
	t.Run("large sums", func(t *testing.T) {
		// Sums past 2^32 and 2^53 stay exact.
		huge := int64(1) << 53
		record(t, e.newAIUsage(empty.ID, "bot_gone", huge, late))
		record(t, e.newAIUsage(empty.ID, "bot_gone", 1, late))
		same(t, get(t, empty.ID, time.Time{}), spend{huge + 1, map[string]int64{"bot_gone": huge + 1}}, "AISpend of exact large sums")
	})
	t.Run("duplicate id", func(t *testing.T) {
		u := e.newAIUsage(other.ID, ob.ID, 1, late)
		record(t, u)
		wantErr(t, e.s.RecordAIUsage(e.ctx, u), platform.ErrConflict, "RecordAIUsage with a taken id")
		same(t, get(t, other.ID, early), spend{50001, map[string]int64{ob.ID: 50001}}, "AISpend after a refused duplicate")
	})
	t.Run("by day", func(t *testing.T) {
		// Fixed days, apart from the clock: two calls of one bot and
		// purpose on one day add up; the day ends at midnight UTC; a failed
		// call and calls outside [from, until) are not counted.
		dw, _ := e.workspace(t, a)
		d := dw.ID
		day1 := time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)
		day2 := day1.AddDate(0, 0, 1)
		at := func(bot, purpose string, cost int64, when time.Time) platform.AIUsage {
			u := e.newAIUsage(d, bot, cost, when)
			u.Purpose = purpose
			return u
		}
		record(t, at("bot_b", "summarization", 5, day1.Add(time.Hour)))
		record(t, at("bot_b", "summarization", 7, day2.Add(-time.Microsecond)))
		record(t, at("bot_a", "smart_cleanup", 11, day1.Add(2*time.Hour)))
		record(t, at("bot_a", "summarization", 13, day2))
		record(t, at("bot_a", "summarization", 17, day2.AddDate(0, 0, 1))) // until: not counted
		record(t, at("bot_a", "summarization", 19, day1.Add(-time.Microsecond)))
		failed := at("bot_a", "summarization", 1000, day2.Add(time.Hour))
		failed.Failed = true
		record(t, failed)
		got, err := e.s.AISpendByDay(e.ctx, d, day1, day2.AddDate(0, 0, 1))
		must(t, err, "AISpendByDay")
		same(t, got, []store.AISpendDay{
			{Day: day1, BotID: "bot_a", Purpose: "smart_cleanup", Cost: 11},
			{Day: day1, BotID: "bot_b", Purpose: "summarization", Cost: 12},
			{Day: day2, BotID: "bot_a", Purpose: "summarization", Cost: 13},
		}, "AISpendByDay over two days")
		got, err = e.s.AISpendByDay(e.ctx, empty.ID, day1, day2)
		must(t, err, "AISpendByDay of a workspace without calls then")
		same(t, got, []store.AISpendDay{}, "AISpendByDay of a workspace without calls then")
	})
	t.Run("deleting a bot keeps its spend", func(t *testing.T) {
		must(t, e.deleteBot(e.ctx, w.ID, b2.ID), "DeleteBot")
		same(t, get(t, w.ID, mid), spend{20 + 3 + big, map[string]int64{b1.ID: 23, b2.ID: big}}, "AISpend after deleting a bot")
	})
	t.Run("deleting the workspace deletes its spend", func(t *testing.T) {
		must(t, e.deleteWorkspace(e.ctx, w.ID), "DeleteWorkspace")
		same(t, get(t, w.ID, time.Time{}), spend{0, map[string]int64{}}, "AISpend of a deleted workspace")
		same(t, get(t, other.ID, early), spend{50001, map[string]int64{ob.ID: 50001}}, "AISpend of the other workspace after the delete")
	})
}
