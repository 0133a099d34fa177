package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/platform"
)

// listUsageActivityDaily (GET /v1/admin/usages/{id}/daily-activity) is AI
// Spend by day: one item per day (UTC), bot and purpose of the metered
// calls, oldest first, for a workspace or one of its bots. Only ai_spend is
// recorded call by call on this server; the storage usages are read as
// they stand.

// maxDailyDays is the longest range one request may ask for.
const maxDailyDays = 366

// usageDay reads a date parameter: a day (2006-01-02) or a date-time,
// whose day (UTC) it is.
func usageDay(q query, name string, def time.Time) (time.Time, error) {
	s := q.str(name)
	if s == "" {
		return def, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return t, platform.Errorf(platform.TypeInvalidQuery, "%s: must be a date (2006-01-02) or an ISO 8601 date-time; got %q", name, s)
		}
	}
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

func (a *api) listUsageActivityDaily(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	typ, err := a.usageType(r)
	if err != nil {
		return err
	}
	if typ != typeAISpend {
		return platform.Errorf(platform.TypeInvalidQuery, "type: daily activity is kept for %s only on this server; got %q", typeAISpend, typ)
	}
	q := newQuery(r)
	p, err := pageUpTo(q, 100, 1000)
	if err != nil {
		return err
	}
	month := aispend.CurrentMonth(a.Clock)
	now := a.Clock.Now().UTC()
	from, err := usageDay(q, "dateFrom", month.Start)
	if err != nil {
		return err
	}
	until, err := usageDay(q, "dateUntil", time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC))
	if err != nil {
		return err
	}
	if until.Before(from) {
		return platform.Errorf(platform.TypeInvalidQuery, "dateUntil: %s is before dateFrom %s", until.Format(time.DateOnly), from.Format(time.DateOnly))
	}
	if until.Sub(from) >= maxDailyDays*24*time.Hour {
		return platform.Errorf(platform.TypeInvalidQuery, "dateFrom: at most %d days before dateUntil", maxDailyDays)
	}
	offset := 0
	if p.Token != "" {
		if offset, err = strconv.Atoi(p.Token); err != nil || offset < 0 {
			return platform.Errorf(platform.TypeInvalidQuery, "nextToken: not a token this operation gave")
		}
	}
	days, err := a.Admin.AISpendDaily(r.Context(), act, r.PathValue("id"), from, until.AddDate(0, 0, 1))
	if err != nil {
		return err
	}
	type itemJSON struct {
		Key      string         `json:"key"`
		Date     string         `json:"date"`
		Value    float64        `json:"value"`
		Metadata map[string]any `json:"metadata"`
	}
	out := []itemJSON{}
	next := ""
	for i := offset; i < len(days); i++ {
		if len(out) == p.Limit {
			next = strconv.Itoa(i)
			break
		}
		d := days[i]
		date := d.Day.Format(time.DateOnly)
		// Every metered call on this server is for files: indexing them, or
		// rewriting a question to search them.
		out = append(out, itemJSON{Key: date + "/" + d.BotID + "/" + d.Purpose, Date: date, Value: aispend.Dollars(d.Cost),
			Metadata: map[string]any{"botId": d.BotID, "type": "FileIndexing", "subtype": d.Purpose}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out, "meta": metaJSON{next}})
	return nil
}
