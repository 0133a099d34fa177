package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/botplatform/botplatform/internal/store"
)

// dayMicros is a UTC day in microseconds: created_at / dayMicros is its
// day. It is written into the queries (daySQL), not bound: PostgreSQL groups
// by an expression only if it is the same text as the one selected.
const (
	dayMicros = int64(24 * time.Hour / time.Microsecond)
	daySQL    = "86400000000"
)

// TrackAnalytics adds count to the bot's named counter of at's day.
func (s *Store) TrackAnalytics(ctx context.Context, botID, name string, count int64, at time.Time) error {
	_, err := s.exec(ctx, s.w, `INSERT INTO bot_analytics (bot_id, day, name, count) VALUES (?, ?, ?, ?)
		ON CONFLICT (bot_id, day, name) DO UPDATE SET count = bot_analytics.count + excluded.count`, botID, micros(at)/dayMicros, name, count)
	return err
}

// BotAnalytics computes a bot's daily figures for the days from..to
// (UTC day numbers, to excluded). Days without activity are absent.
func (s *Store) BotAnalytics(ctx context.Context, botID string, from, to int64) (map[int64]*store.DayAnalytics, error) {
	out := map[int64]*store.DayAnalytics{}
	day := func(d int64) *store.DayAnalytics {
		if out[d] == nil {
			out[d] = &store.DayAnalytics{EventTypes: map[string]int64{}, CustomEvents: map[string]int64{}}
		}
		return out[d]
	}
	lo, hi := from*dayMicros, to*dayMicros
	each := func(query string, args []any, scan func(rows *sql.Rows) error) error {
		rows, err := s.query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	// Messages, by whom; sessions (conversations users wrote in); users
	// who wrote that day though created before it.
	if err := each(`SELECT m.created_at / `+daySQL+` AS d, COUNT(*), SUM(CASE WHEN m.is_bot = ? THEN 1 ELSE 0 END),
			COUNT(DISTINCT CASE WHEN m.is_bot = ? THEN m.conversation_id END),
			COUNT(DISTINCT CASE WHEN m.is_bot = ? AND u.created_at < (m.created_at / `+daySQL+`) * `+daySQL+` THEN m.user_id END)
		FROM messages m JOIN conversations c ON c.id = m.conversation_id LEFT JOIN chat_users u ON u.id = m.user_id
		WHERE c.bot_id = ? AND m.created_at >= ? AND m.created_at < ? GROUP BY m.created_at / `+daySQL+``,
		[]any{true, false, false, botID, lo, hi},
		func(rows *sql.Rows) error {
			var d, all, bot, sessions, returning int64
			if err := rows.Scan(&d, &all, &bot, &sessions, &returning); err != nil {
				return err
			}
			a := day(d)
			a.Messages, a.BotMessages, a.UserMessages, a.Sessions, a.ReturningUsers = all, bot, all-bot, sessions, returning
			return nil
		}); err != nil {
		return nil, err
	}
	if err := each(`SELECT created_at / `+daySQL+` AS d, COUNT(*) FROM chat_users WHERE bot_id = ? AND id <> bot_id AND created_at >= ? AND created_at < ?
		GROUP BY created_at / `+daySQL+``, []any{botID, lo, hi},
		func(rows *sql.Rows) error {
			var d, n int64
			if err := rows.Scan(&d, &n); err != nil {
				return err
			}
			day(d).NewUsers = n
			return nil
		}); err != nil {
		return nil, err
	}
	// Events: those created through the Runtime API by type, users'
	// custom chat events as "custom".
	if err := each(`SELECT created_at / `+daySQL+` AS d, type, COUNT(*) FROM bot_events WHERE bot_id = ? AND created_at >= ? AND created_at < ?
		GROUP BY created_at / `+daySQL+`, type`, []any{botID, lo, hi},
		func(rows *sql.Rows) error {
			var d, n int64
			var typ string
			if err := rows.Scan(&d, &typ, &n); err != nil {
				return err
			}
			a := day(d)
			a.EventTypes[typ] += n
			a.Events += n
			return nil
		}); err != nil {
		return nil, err
	}
	if err := each(`SELECT e.created_at / `+daySQL+` AS d, COUNT(*) FROM chat_events e JOIN conversations c ON c.id = e.conversation_id
		WHERE c.bot_id = ? AND e.is_bot = ? AND e.created_at >= ? AND e.created_at < ? GROUP BY e.created_at / `+daySQL+``,
		[]any{botID, false, lo, hi},
		func(rows *sql.Rows) error {
			var d, n int64
			if err := rows.Scan(&d, &n); err != nil {
				return err
			}
			a := day(d)
			a.EventTypes["custom"] += n
			a.Events += n
			return nil
		}); err != nil {
		return nil, err
	}
	if err := each(`SELECT day, name, count FROM bot_analytics WHERE bot_id = ? AND day >= ? AND day < ?`, []any{botID, from, to},
		func(rows *sql.Rows) error {
			var d, n int64
			var name string
			if err := rows.Scan(&d, &name, &n); err != nil {
				return err
			}
			day(d).CustomEvents[name] = n
			return nil
		}); err != nil {
		return nil, err
	}
	// Model calls: counts, tokens, and the sums that give each figure's
	// mean and spread (latency in ms, throughput in output tokens per
	// second of answered calls, cost in nanodollars).
	if err := each(`SELECT created_at / `+daySQL+` AS d, COUNT(*), SUM(failed), SUM(input_tokens), SUM(output_tokens),
			SUM(CAST(latency_ms AS DOUBLE PRECISION)), SUM(CAST(latency_ms AS DOUBLE PRECISION) * latency_ms), MIN(latency_ms), MAX(latency_ms),
			COUNT(CASE WHEN failed = 0 AND latency_ms > 0 THEN 1 END),
			SUM(CASE WHEN failed = 0 AND latency_ms > 0 THEN output_tokens * 1000.0 / latency_ms END),
			SUM(CASE WHEN failed = 0 AND latency_ms > 0 THEN (output_tokens * 1000.0 / latency_ms) * (output_tokens * 1000.0 / latency_ms) END),
			MIN(CASE WHEN failed = 0 AND latency_ms > 0 THEN output_tokens * 1000.0 / latency_ms END),
			MAX(CASE WHEN failed = 0 AND latency_ms > 0 THEN output_tokens * 1000.0 / latency_ms END),
			SUM(CAST(cost AS DOUBLE PRECISION)), SUM(CAST(cost AS DOUBLE PRECISION) * cost), MIN(cost), MAX(cost)
		FROM ai_usage WHERE bot_id = ? AND created_at >= ? AND created_at < ? GROUP BY created_at / `+daySQL+``,
		[]any{botID, lo, hi},
		func(rows *sql.Rows) error {
			var d int64
			var l store.LLMAnalytics
			var tpsSum, tpsSq, tpsMin, tpsMax sql.NullFloat64
			if err := rows.Scan(&d, &l.Calls, &l.Errors, &l.InputTokens, &l.OutputTokens,
				&l.Latency.Sum, &l.Latency.SumSquares, &l.Latency.Min, &l.Latency.Max,
				&l.TokensPerSecond.N, &tpsSum, &tpsSq, &tpsMin, &tpsMax,
				&l.Cost.Sum, &l.Cost.SumSquares, &l.Cost.Min, &l.Cost.Max); err != nil {
				return err
			}
			l.Latency.N, l.Cost.N = l.Calls, l.Calls
			l.TokensPerSecond.Sum, l.TokensPerSecond.SumSquares = tpsSum.Float64, tpsSq.Float64
			l.TokensPerSecond.Min, l.TokensPerSecond.Max = tpsMin.Float64, tpsMax.Float64
			day(d).LLM = l
			return nil
		}); err != nil {
		return nil, err
	}
	return out, nil
}
