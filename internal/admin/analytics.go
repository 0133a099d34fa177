package admin

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// MaxAnalyticsDays is the longest range getBotAnalytics covers.
const MaxAnalyticsDays = 366

// AnalyticsDay is a bot's figures for one UTC day.
type AnalyticsDay struct {
	Start time.Time
	store.DayAnalytics
}

// BotAnalytics returns a bot's figures for each UTC day from start's day
// to end's (end excluded when it falls on midnight).
func (s *Service) BotAnalytics(ctx context.Context, a *platform.Actor, botID string, start, end time.Time) ([]AnalyticsDay, error) {
	if _, err := s.GetBot(ctx, a, botID); err != nil {
		return nil, err
	}
	if !end.After(start) {
		return nil, platform.Errorf(platform.TypeInvalidQuery, "endDate: must be after startDate")
	}
	const day = 24 * time.Hour
	from := start.UTC().Truncate(day)
	to := end.UTC().Truncate(day)
	if to.Before(end) {
		to = to.Add(day)
	}
	n := int(to.Sub(from) / day)
	if n > MaxAnalyticsDays {
		return nil, platform.Errorf(platform.TypeInvalidQuery, "endDate: the range covers %d days; at most %d", n, MaxAnalyticsDays)
	}
	first := from.UnixMicro() / day.Microseconds()
	figures, err := s.store.BotAnalytics(ctx, botID, first, first+int64(n))
	if err != nil {
		return nil, err
	}
	out := make([]AnalyticsDay, n)
	for i := range out {
		out[i].Start = from.Add(time.Duration(i) * day)
		if f := figures[first+int64(i)]; f != nil {
			out[i].DayAnalytics = *f
		} else {
			out[i].EventTypes, out[i].CustomEvents = map[string]int64{}, map[string]int64{}
		}
	}
	return out, nil
}
