package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Store) EnqueueJob(ctx context.Context, j platform.Job) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.insertJob(ctx, tx, j, "")
		return err
	})
}

// insertJob queues j (pending) in tx, marked as its subject's head when no
// unfinished job of the subject comes before it; the head it displaces loses
// its mark. With cond, a condition on args, j is queued only when it holds.
// It reports whether j was queued.
func (s *Store) insertJob(ctx context.Context, tx *sql.Tx, j platform.Job, cond string, args ...any) (bool, error) {
	if cond == "" {
		cond = "1 = 1"
	}
	if s.d.LockSubject != "" {
		// The lock only when the condition holds, in one round trip: a
		// job that is not queued needs no lock.
		n, err := s.exec(ctx, tx, s.d.LockSubject+` WHERE `+cond, append([]any{j.Kind + "|" + j.Subject}, args...)...)
		if err != nil || n == 0 {
			return false, err
		}
		cond, args = "1 = 1", nil
	}
	at := micros(j.RunAfter)
	n, err := s.exec(ctx, tx, `INSERT INTO jobs (id, kind, subject, payload, status, attempts, run_after, created_at, owner, head)
		SELECT ?, ?, ?, ?, 'pending', 0, ?, ?, ?, CASE WHEN EXISTS (SELECT 1 FROM jobs o WHERE o.kind = ? AND o.subject = ? AND o.status <> 'done'
		    AND o.run_after <= ? AND (o.run_after < ? OR o.id < ?)) THEN 0 ELSE 1 END
		WHERE `+cond, append([]any{j.ID, j.Kind, j.Subject, string(j.Payload), at, micros(j.CreatedAt), j.Owner, j.Kind, j.Subject, at, at, j.ID}, args...)...)
	if err != nil || n == 0 {
		return false, err
	}
	s.queued.note(tx, j.Kind)
	// The first unfinished job after j was the head if j now is.
	_, err = s.exec(ctx, tx, `UPDATE jobs SET head = 0 WHERE head = 1 AND id = (SELECT o.id FROM jobs o WHERE o.kind = ? AND o.subject = ? AND o.status <> 'done'
		AND o.run_after >= ? AND (o.run_after > ? OR o.id > ?) ORDER BY o.run_after, o.id LIMIT 1)`, j.Kind, j.Subject, at, at, j.ID)
	return true, err
}

// lockSubject serialises the transactions that queue and finish the jobs of
// one subject (Dialect.LockSubject; insertJob takes it itself).
func (s *Store) lockSubject(ctx context.Context, tx *sql.Tx, kind, subject string) error {
	if s.d.LockSubject == "" {
		return nil
	}
	_, err := s.exec(ctx, tx, s.d.LockSubject, kind+"|"+subject)
	return err
}

func (s *Store) CountOwnedJobs(ctx context.Context, kind, owner string) (int, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM jobs WHERE owner = ? AND kind = ? AND status <> 'done' AND owner <> ''`, owner, kind).Scan(&n)
	return n, err
}

// claimable selects the ids of the jobs ClaimJobs may take: the first job of
// each subject (its head, marked by insertJob and FinishJob), due, not held
// under a live lease, while no other job of its subject is (a job queued
// before a running one becomes the head but waits for it).
//
// A pending job's lease_until, when set, is the time before which it may
// not run (a retry's back-off): its place in line, run_after, is kept.
//
// Only heads are read (index jobs_heads), so the cost does not grow with the
// jobs queued behind them.
const claimable = claimableWhere + `
	ORDER BY j.run_after, j.id`

const claimableWhere = `SELECT j.id FROM jobs j
	WHERE j.head = 1 AND j.kind = ? AND j.run_after <= ?
	  AND ((j.status = 'pending' AND (j.lease_until IS NULL OR j.lease_until <= ?)) OR (j.status = 'running' AND j.lease_until <= ?))
	  AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.kind = j.kind AND o.subject = j.subject AND o.status = 'running' AND o.lease_until > ? AND o.id <> j.id)`

// claimQuery takes up to limit claimable jobs in one statement. The limit
// is written into the text, not bound: SQLite plans with a bound LIMIT's
// value and compiles the statement again whenever it changes (the
// dispatcher's free workers change from one claim to the next), which cost
// more than the claim itself. One statement per limit is cached instead.
func (s *Store) claimQuery(limit int) string {
	return `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, node_id = ? WHERE id IN (` +
		claimable + " LIMIT " + strconv.Itoa(limit) + s.d.SkipLocked + `)
		RETURNING id, kind, subject, payload, status, attempts, run_after, created_at`
}

func claimArgs(kind, node string, now, leaseUntil time.Time) []any {
	return []any{micros(leaseUntil), node, kind, micros(now), micros(now), micros(now), micros(now)}
}

func (s *Store) ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error) {
	var out []platform.Job
	err := s.tx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		st, err := s.txStmt(ctx, tx, s.claimQuery(limit))
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, claimArgs(kind, node, now, leaseUntil)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return err
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	sortJobs(out)
	return out, err
}

// sortJobs orders jobs as they were queued (RETURNING has no order).
func sortJobs(js []platform.Job) {
	for i := 1; i < len(js); i++ {
		for k := i; k > 0 && jobBefore(js[k], js[k-1]); k-- {
			js[k], js[k-1] = js[k-1], js[k]
		}
	}
}

func jobBefore(a, b platform.Job) bool {
	if !a.RunAfter.Equal(b.RunAfter) {
		return a.RunAfter.Before(b.RunAfter)
	}
	return a.ID < b.ID
}

func scanJob(sc interface{ Scan(...any) error }) (platform.Job, error) {
	var j platform.Job
	var payload string
	var runAfter, created int64
	err := sc.Scan(&j.ID, &j.Kind, &j.Subject, &payload, &j.Status, &j.Attempts, &runAfter, &created)
	j.Payload = json.RawMessage(payload)
	j.RunAfter, j.CreatedAt = fromMicros(runAfter), fromMicros(created)
	return j, noRows(err)
}

// ExtendLease moves a running job's lease to until (its worker is alive);
// ErrNotFound when the job is no longer running.
func (s *Store) ExtendLease(ctx context.Context, id string, until time.Time) error {
	return s.execOne(ctx, s.w, `UPDATE jobs SET lease_until = ? WHERE id = ? AND status = 'running'`, micros(until), id)
}

func (s *Store) FinishJob(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, _, _, err := s.finishJob(ctx, tx, id, keep, states, logs, now)
		return err
	})
}

func (s *Store) FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (*platform.Job, bool, error) {
	var next *platform.Job
	var left bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		next = nil // a retried transaction starts again
		var kind, subject string
		var err error
		kind, subject, left, err = s.finishJob(ctx, tx, id, keep, states, logs, now())
		if err != nil || !left {
			return err
		}
		// Read after the subject is held: a job of it committed before is
		// visible, and due by now if it was due when queued.
		at := now()
		st, err := s.txStmt(ctx, tx, `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, node_id = ? WHERE id IN (`+
			claimableWhere+" AND j.subject = ? LIMIT 1"+s.d.SkipLocked+`) RETURNING id, kind, subject, payload, status, attempts, run_after, created_at`)
		if err != nil {
			return err
		}
		j, err := scanJob(st.QueryRowContext(ctx, append(claimArgs(kind, node, at, at.Add(lease)), subject)...))
		if errors.Is(err, platform.ErrNotFound) {
			return nil
		}
		next = &j
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return next, left && next == nil, nil
}

// finishJob is FinishJob in tx; it returns the job's kind and subject, and
// whether the subject has an unfinished job left (its head now).
func (s *Store) finishJob(ctx context.Context, tx *sql.Tx, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) (kind, subject string, left bool, err error) {
	if err := s.appendLogs(ctx, tx, logs); err != nil {
		return "", "", false, err
	}
	for _, st := range states {
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_states (bot_id, scope, scope_id, value, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (bot_id, scope, scope_id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			st.BotID, st.Scope, st.ScopeID, string(st.Value), micros(now)); err != nil {
			return "", "", false, err
		}
	}
	if s.d.LockSubject != "" {
		if err := tx.QueryRowContext(ctx, s.q(`SELECT kind, subject FROM jobs WHERE id = ?`), id).Scan(&kind, &subject); err != nil {
			return "", "", false, noRows(err)
		}
		if err := s.lockSubject(ctx, tx, kind, subject); err != nil {
			return "", "", false, err
		}
	}
	end := `DELETE FROM jobs WHERE id = ? RETURNING kind, subject`
	if keep {
		end = `UPDATE jobs SET status = 'done', lease_until = NULL, head = 0 WHERE id = ? AND status <> 'done' RETURNING kind, subject`
	}
	st, err := s.txStmt(ctx, tx, end)
	if err != nil {
		return "", "", false, err
	}
	if err := st.QueryRowContext(ctx, id).Scan(&kind, &subject); err != nil {
		return "", "", false, noRows(err)
	}
	left, err = s.markHead(ctx, tx, kind, subject)
	return kind, subject, left, err
}

// markHead marks the subject's first unfinished job its head (again, when
// the job that finished or went was not the head), and tells whether there
// is one.
func (s *Store) markHead(ctx context.Context, tx *sql.Tx, kind, subject string) (bool, error) {
	n, err := s.exec(ctx, tx, `UPDATE jobs SET head = 1 WHERE id = (SELECT o.id FROM jobs o WHERE o.kind = ? AND o.subject = ? AND o.status <> 'done'
		ORDER BY o.run_after, o.id LIMIT 1)`, kind, subject)
	return n > 0, err
}

func (s *Store) PurgeJobs(ctx context.Context, kind string, before time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.exec(ctx, tx, `DELETE FROM jobs WHERE kind = ? AND status = 'done' AND run_after < ?`, kind, micros(before))
		return err
	})
	return int(n), err
}

func (s *Store) RetryJob(ctx context.Context, id string, runAfter time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `UPDATE jobs SET status = 'pending', lease_until = ? WHERE id = ? AND status <> 'done'`, micros(runAfter), id)
	})
}

func (s *Store) ReleaseJobs(ctx context.Context, kind, node string) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if node == "" {
			n, err = s.exec(ctx, tx, `UPDATE jobs SET status = 'pending', lease_until = NULL WHERE kind = ? AND status = 'running'`, kind)
		} else {
			n, err = s.exec(ctx, tx, `UPDATE jobs SET status = 'pending', lease_until = NULL WHERE kind = ? AND status = 'running' AND node_id = ?`, kind, node)
		}
		return err
	})
	return int(n), err
}

// NextJobAt is when the first pending head of kind falls due after after
// (its run_after, or the end of its retry's back-off). Only heads count: a
// job queued behind another of its subject cannot run before that one ends,
// and whoever finishes it looks again. So the cost is that of the heads (one
// per subject), not of the jobs queued behind them.
//
// A head is pending or running (never done): "not running" is "pending",
// written so that SQLite reads index jobs_heads rather than jobs_ready,
// whose (kind, status) would lead it through every pending job of the kind.
func (s *Store) NextJobAt(ctx context.Context, kind string, after time.Time) (time.Time, bool, error) {
	var at sql.NullInt64
	if err := s.queryRow(ctx, `SELECT MIN(CASE WHEN lease_until > run_after THEN lease_until ELSE run_after END) FROM jobs
		WHERE head = 1 AND kind = ? AND status <> 'running' AND (run_after > ? OR lease_until > ?)`, kind, micros(after), micros(after)).Scan(&at); err != nil {
		return time.Time{}, false, err
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(at.Int64), true, nil
}

// JobQueues reads the unfinished jobs (index jobs_open).
func (s *Store) JobQueues(ctx context.Context, now time.Time) ([]store.JobQueue, error) {
	at := micros(now)
	rows, err := s.query(ctx, `SELECT kind,
		SUM(CASE WHEN status = 'pending' AND run_after <= ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN status = 'pending' AND run_after > ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END),
		MIN(CASE WHEN status = 'pending' AND run_after <= ? THEN run_after END)
		FROM jobs WHERE status <> 'done' GROUP BY kind ORDER BY kind`, at, at, at)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.JobQueue
	for rows.Next() {
		var q store.JobQueue
		var oldest sql.NullInt64
		if err := rows.Scan(&q.Kind, &q.Due, &q.Scheduled, &q.Running, &oldest); err != nil {
			return nil, err
		}
		if oldest.Valid {
			q.OldestDue = fromMicros(oldest.Int64)
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

func (s *Store) BotStates(ctx context.Context, botID, userID, conversationID string) (map[string]json.RawMessage, error) {
	rows, err := s.query(ctx, `SELECT scope, value FROM bot_states WHERE bot_id = ?
		AND ((scope = 'bot' AND scope_id = '') OR (scope = 'user' AND scope_id = ?) OR (scope = 'conversation' AND scope_id = ?))`,
		botID, userID, conversationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	for rows.Next() {
		var scope, value string
		if err := rows.Scan(&scope, &value); err != nil {
			return nil, err
		}
		out[scope] = json.RawMessage(value)
	}
	return out, rows.Err()
}

func (s *Store) BotVersion(ctx context.Context, botID string) (string, time.Time, error) {
	var ws string
	var updated int64
	err := s.queryRow(ctx, `SELECT workspace_id, updated_at FROM bots WHERE id = ?`, botID).Scan(&ws, &updated)
	return ws, fromMicros(updated), noRows(err)
}

// RecurringBots returns each bot with recurring events: id, workspace, spec
// and update time only.
func (s *Store) RecurringBots(ctx context.Context) ([]platform.Bot, error) {
	rows, err := s.query(ctx, `SELECT id, workspace_id, spec, updated_at FROM bots WHERE spec LIKE ?`, `%"recurringEvents"%`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.Bot
	for rows.Next() {
		var b platform.Bot
		var spec string
		var updated int64
		if err := rows.Scan(&b.ID, &b.WorkspaceID, &spec, &updated); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(spec), &b.Spec); err != nil {
			return nil, err
		}
		if len(b.Spec.RecurringEvents) == 0 || string(b.Spec.RecurringEvents) == "{}" {
			continue
		}
		b.UpdatedAt = fromMicros(updated)
		out = append(out, b)
	}
	return out, rows.Err()
}
