// Package aispend holds AI Spend's rules: what a workspace spends on metered
// model calls per calendar month (UTC), how much of its monthly spending
// limit is left, and the check that a plan includes the AI-assisted indexing
// options (the plans themselves are in internal/plans).
// It needs only the store, so the indexing pipeline can check before each
// model call.
package aispend

import (
	"context"
	"math"
	"time"

	"github.com/botplatform/botplatform/internal/plans"
	"github.com/botplatform/botplatform/internal/platform"
)

// NanosPerDollar converts a workspace's spending limit (whole US dollars)
// to the nanodollars AI usage is counted in.
const NanosPerDollar int64 = 1_000_000_000

// Store is what AI Spend reads; store.Store has it.
type Store interface {
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	AISpend(ctx context.Context, workspaceID string, since time.Time) (total int64, byBot map[string]int64, err error)
}

// Month is a usage period: one calendar month, UTC.
type Month struct{ Start, End time.Time }

// MonthOf returns the calendar month (UTC) of t.
func MonthOf(t time.Time) Month {
	t = t.UTC()
	start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Month{start, start.AddDate(0, 1, 0)}
}

// CurrentMonth is the usage period running now by clock c: the month that
// storage quotas and AI Spend report when no other is asked for.
func CurrentMonth(c platform.Clock) Month { return MonthOf(c.Now()) }

// ParseMonth reads a period as the Admin API names it ("2006-01").
func ParseMonth(period string) (Month, bool) {
	t, err := time.Parse("2006-01", period)
	if err != nil {
		return Month{}, false
	}
	return MonthOf(t), true
}

// String is the period's name in the Admin API ("2006-01").
func (m Month) String() string { return m.Start.Format("2006-01") }

// LimitNanos is a spending limit of whole dollars in nanodollars (a limit
// too large to count in nanodollars is unlimited).
func LimitNanos(dollars int64) int64 {
	if dollars <= 0 {
		return 0
	}
	if dollars > math.MaxInt64/NanosPerDollar {
		return math.MaxInt64
	}
	return dollars * NanosPerDollar
}

// Dollars is an amount of nanodollars in US dollars.
func Dollars(nanos int64) float64 { return float64(nanos) / float64(NanosPerDollar) }

// Spent sums the workspace's AI Spend over month m, in all and by bot (in
// nanodollars). A month still running counts up to now.
func Spent(ctx context.Context, st Store, workspaceID string, m Month) (total int64, byBot map[string]int64, err error) {
	total, byBot, err = st.AISpend(ctx, workspaceID, m.Start)
	if err != nil {
		return 0, nil, err
	}
	after, afterByBot, err := st.AISpend(ctx, workspaceID, m.End)
	if err != nil {
		return 0, nil, err
	}
	if after == 0 {
		return total, byBot, nil
	}
	total -= after
	for bot, v := range afterByBot {
		if byBot[bot] -= v; byBot[bot] == 0 {
			delete(byBot, bot)
		}
	}
	return total, byBot, nil
}

// RequirePlan is 402 PaymentRequired unless the workspace's plan includes
// the AI-assisted indexing options; option names the option asked for
// (e.g. "indexing.configuration.summarization.enable").
func RequirePlan(w platform.Workspace, option string) error {
	if p, ok := plans.Get(w.Plan); ok && p.IncludesAI {
		return nil
	}
	return platform.Errorf(platform.TypePaymentRequired, "%s: AI-assisted indexing needs the Team or Enterprise plan; this workspace is on the %s plan", option, w.Plan)
}

// SpendLeft is what the workspace may still spend on model calls this
// calendar month (UTC) before reaching its spending limit, never below
// zero, and the monthly limit; both in nanodollars.
func SpendLeft(ctx context.Context, st Store, workspaceID string, now time.Time) (left, limit int64, err error) {
	w, err := st.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return 0, 0, err
	}
	return SpendLeftOf(ctx, st, w, now)
}

// SpendLeftOf is SpendLeft for a workspace already read.
func SpendLeftOf(ctx context.Context, st Store, w platform.Workspace, now time.Time) (left, limit int64, err error) {
	spent, _, err := st.AISpend(ctx, w.ID, MonthOf(now).Start)
	if err != nil {
		return 0, 0, err
	}
	limit = LimitNanos(w.SpendingLimit)
	return max(limit-spent, 0), limit, nil
}
