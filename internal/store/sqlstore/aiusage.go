package sqlstore

import (
	"context"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// RecordAIUsage stores one metered model call.
func (s *Store) RecordAIUsage(ctx context.Context, u platform.AIUsage) error {
	failed := 0
	if u.Failed {
		failed = 1
	}
	_, err := s.exec(ctx, s.w, `INSERT INTO ai_usage (id, workspace_id, bot_id, file_id, purpose, model, input_tokens, output_tokens, cost, latency_ms, failed, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.WorkspaceID, u.BotID, u.FileID, u.Purpose, u.Model, u.InputTokens, u.OutputTokens, u.Cost, u.Latency.Milliseconds(), failed, micros(u.CreatedAt))
	return err
}

// AISpend sums the cost of the workspace's calls made at or after since, in
// all and by bot: the whole days from since on are read from the totals
// the triggers of ai_usage keep by day (ai_spend_days), the calls of a
// first day since begins within one by one.
func (s *Store) AISpend(ctx context.Context, workspaceID string, since time.Time) (int64, map[string]int64, error) {
	from := micros(since)
	day := from / microsPerDay
	if day*microsPerDay < from {
		day++ // since is within a day: its calls from since on are summed one by one
	}
	rows, err := s.query(ctx, `SELECT bot_id, CAST(SUM(cost) AS BIGINT) FROM (
			SELECT bot_id, cost FROM ai_spend_days WHERE workspace_id = ? AND day >= ?
			UNION ALL
			SELECT bot_id, cost FROM ai_usage WHERE workspace_id = ? AND created_at >= ? AND created_at < ? AND failed = 0
		) spend GROUP BY bot_id`, workspaceID, day, workspaceID, from, day*microsPerDay)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var total int64
	byBot := map[string]int64{}
	for rows.Next() {
		var bot string
		var cost int64
		if err := rows.Scan(&bot, &cost); err != nil {
			return 0, nil, err
		}
		byBot[bot] = cost
		total += cost
	}
	return total, byBot, rows.Err()
}

// microsPerDay is a day in the microseconds times are stored in.
const microsPerDay = 24 * 3600 * 1_000_000

// AISpendByDay sums the cost of the workspace's calls made in [from, until)
// by day (UTC), bot and purpose. Days are counted from the epoch by integer
// division, the same in both databases.
func (s *Store) AISpendByDay(ctx context.Context, workspaceID string, from, until time.Time) ([]store.AISpendDay, error) {
	rows, err := s.query(ctx, `SELECT created_at / `+strconv.Itoa(microsPerDay)+` AS day, bot_id, purpose, CAST(SUM(cost) AS BIGINT)
		FROM ai_usage WHERE workspace_id = ? AND created_at >= ? AND created_at < ? AND failed = 0
		GROUP BY day, bot_id, purpose ORDER BY day, bot_id, purpose`, workspaceID, micros(from), micros(until))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.AISpendDay{}
	for rows.Next() {
		var d store.AISpendDay
		var day int64
		if err := rows.Scan(&day, &d.BotID, &d.Purpose, &d.Cost); err != nil {
			return nil, err
		}
		d.Day = time.UnixMicro(day * microsPerDay).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}
