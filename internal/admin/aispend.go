package admin

import (
	"context"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/plans"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func checkPlan(plan string) error {
	if _, ok := plans.Get(plan); !ok {
		return platform.Invalid("plan", "must be one of %s; got %q", strings.Join(plans.Names(), ", "), plan)
	}
	return nil
}

// AISpendUsage is the AI Spend of a workspace, or of one of its bots, over
// one month.
type AISpendUsage struct {
	ID    string // the workspace or bot id asked for
	Month aispend.Month
	Spent int64 // nanodollars
	Limit int64 // the workspace's monthly spending limit, whole US dollars
}

// month reads a usage period ("2006-01"); empty is the current month.
func (s *Service) month(period string) (aispend.Month, error) {
	if period == "" {
		return aispend.CurrentMonth(s.clock), nil
	}
	m, ok := aispend.ParseMonth(period)
	if !ok {
		return m, platform.Errorf(platform.TypeInvalidQuery, "period: must be a month written YYYY-MM; got %q", period)
	}
	return m, nil
}

// usageOwner resolves id, a workspace or a bot id, to its workspace, which
// the actor must be a member of (404 otherwise, naming what was asked for).
// botID is empty when id is a workspace.
func (s *Service) usageOwner(ctx context.Context, a *platform.Actor, id string) (w platform.Workspace, botID string, err error) {
	if !strings.HasPrefix(id, platform.PrefixBot) {
		w, err = s.workspaceAs(ctx, a, id)
		return w, "", err
	}
	wsID, err := s.store.GetBotWorkspace(ctx, id)
	if err != nil {
		return w, "", notFound(err, "bot", id)
	}
	if w, err = s.workspaceAs(ctx, a, wsID); err != nil {
		if pe, ok := platform.AsError(err); ok && pe.Type == platform.TypeResourceNotFound {
			return w, "", platform.NotFound("bot", id) // do not name its workspace
		}
		return w, "", err
	}
	return w, id, nil
}

// AISpend is the AI Spend of a workspace or of one bot (id is either) in
// the month named by period (empty: the current month, UTC), with the
// workspace's spending limit. Any member of the workspace may read it.
func (s *Service) AISpend(ctx context.Context, a *platform.Actor, id, period string) (AISpendUsage, error) {
	m, err := s.month(period)
	if err != nil {
		return AISpendUsage{}, err
	}
	w, botID, err := s.usageOwner(ctx, a, id)
	if err != nil {
		return AISpendUsage{}, err
	}
	total, byBot, err := aispend.Spent(ctx, s.store, w.ID, m)
	if err != nil {
		return AISpendUsage{}, err
	}
	if botID != "" {
		total = byBot[botID]
	}
	return AISpendUsage{ID: id, Month: m, Spent: total, Limit: w.SpendingLimit}, nil
}

// AISpendByBot is a workspace's AI Spend in the month named by period, by
// bot (nanodollars; bots that spent nothing are absent, deleted bots that
// spent stay). Any member may read it.
func (s *Service) AISpendByBot(ctx context.Context, a *platform.Actor, workspaceID, period string) (map[string]int64, aispend.Month, error) {
	m, err := s.month(period)
	if err != nil {
		return nil, m, err
	}
	if _, err := s.workspaceAs(ctx, a, workspaceID); err != nil {
		return nil, m, err
	}
	_, byBot, err := aispend.Spent(ctx, s.store, workspaceID, m)
	return byBot, m, err
}

// AISpendDaily is the AI Spend of a workspace or of one of its bots (id is
// either) by day (UTC), bot and purpose, of the calls made in [from, until).
// Any member of the workspace may read it.
func (s *Service) AISpendDaily(ctx context.Context, a *platform.Actor, id string, from, until time.Time) ([]store.AISpendDay, error) {
	w, botID, err := s.usageOwner(ctx, a, id)
	if err != nil {
		return nil, err
	}
	days, err := s.store.AISpendByDay(ctx, w.ID, from, until)
	if err != nil || botID == "" {
		return days, err
	}
	mine := days[:0]
	for _, d := range days {
		if d.BotID == botID {
			mine = append(mine, d)
		}
	}
	return mine, nil
}
