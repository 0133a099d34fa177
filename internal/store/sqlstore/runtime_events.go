package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

const eventCols = `e.id, e.bot_id, e.type, e.payload, e.conversation_id, e.user_id, e.message_id, e.workflow_id, e.job_id, e.status, e.failure_reason, e.run_at, e.created_at`

func scanEvent(sc interface{ Scan(...any) error }) (platform.RuntimeEvent, error) {
	var ev platform.RuntimeEvent
	var payload []byte
	var run, c int64
	err := sc.Scan(&ev.ID, &ev.BotID, &ev.Type, &payload, &ev.ConversationID, &ev.UserID, &ev.MessageID, &ev.WorkflowID,
		&ev.JobID, &ev.Status, &ev.FailureReason, &run, &c)
	ev.Payload, ev.RunAt, ev.CreatedAt = payload, fromMicros(run), fromMicros(c)
	return ev, noRows(err)
}

// CreateRuntimeEvent records ev and queues the job j that delivers it, at once.
func (s *Store) CreateRuntimeEvent(ctx context.Context, ev platform.RuntimeEvent, j platform.Job) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_events (id, bot_id, type, payload, conversation_id, user_id, message_id, workflow_id, job_id, status, run_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ev.ID, ev.BotID, ev.Type, string(ev.Payload), ev.ConversationID, ev.UserID, ev.MessageID,
			ev.WorkflowID, ev.JobID, ev.Status, micros(ev.RunAt), micros(ev.CreatedAt)); err != nil {
			return err
		}
		_, err := s.insertJob(ctx, tx, j, "")
		return err
	})
}

func (s *Store) GetRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error) {
	return scanEvent(s.queryRow(ctx, `SELECT `+eventCols+` FROM bot_events e WHERE e.bot_id = ? AND e.id = ?`, botID, id))
}

// EndRuntimeEvent records how the delivery by job jobID ended, once.
func (s *Store) EndRuntimeEvent(ctx context.Context, jobID, status, reason string) error {
	_, err := s.exec(ctx, s.w, `UPDATE bot_events SET status = ?, failure_reason = ? WHERE job_id = ? AND status = 'pending'`, status, reason, jobID)
	return err
}

// CancelRuntimeEvent cancels an event whose job has not started: the job
// goes (the next job of its subject becomes the head) and the event is
// canceled. ErrConflict when it is no longer waiting.
func (s *Store) CancelRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error) {
	var ev platform.RuntimeEvent
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		ev, err = scanEvent(tx.QueryRowContext(ctx, s.q(`SELECT `+eventCols+` FROM bot_events e WHERE e.bot_id = ? AND e.id = ?`), botID, id))
		if err != nil {
			return err
		}
		if ev.Status != platform.EventPending {
			return platform.ErrConflict
		}
		var kind, subject string
		if err := tx.QueryRowContext(ctx, s.q(`SELECT kind, subject FROM jobs WHERE id = ?`), ev.JobID).Scan(&kind, &subject); err != nil {
			return platform.ErrConflict // already delivered and not kept
		}
		if err := s.lockSubject(ctx, tx, kind, subject); err != nil {
			return err
		}
		n, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE id = ? AND status = 'pending'`, ev.JobID)
		if err != nil {
			return err
		}
		if n == 0 {
			return platform.ErrConflict // it is being delivered
		}
		if _, err := s.markHead(ctx, tx, kind, subject); err != nil {
			return err
		}
		ev.Status = platform.EventCanceled
		_, err = s.exec(ctx, tx, `UPDATE bot_events SET status = ? WHERE id = ?`, ev.Status, ev.ID)
		return err
	})
	return ev, err
}

// ListRuntimeEvents lists a bot's events, newest first.
func (s *Store) ListRuntimeEvents(ctx context.Context, f store.EventFilter) ([]platform.RuntimeEvent, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + eventCols + ` FROM bot_events e WHERE e.bot_id = ?`)
	args := []any{f.BotID}
	for _, c := range []struct{ col, v string }{{"e.type", f.Type}, {"e.conversation_id", f.ConversationID}, {"e.user_id", f.UserID},
		{"e.message_id", f.MessageID}, {"e.workflow_id", f.WorkflowID}} {
		if c.v != "" {
			q.WriteString(` AND ` + c.col + ` = ?`)
			args = append(args, c.v)
		}
	}
	switch f.Status {
	case "":
	case platform.EventScheduled:
		q.WriteString(` AND e.status = 'pending' AND e.run_at > ?`)
		args = append(args, micros(f.Now))
	case platform.EventPending:
		q.WriteString(` AND e.status = 'pending' AND e.run_at <= ?`)
		args = append(args, micros(f.Now))
	default:
		q.WriteString(` AND e.status = ?`)
		args = append(args, f.Status)
	}
	args, order := dated(&q, args, "e.created_at", "e.id", store.DateRange{}, true, cur)
	return listRows(ctx, s, q.String()+order, args, f.Limit, scanEvent, func(ev platform.RuntimeEvent) store.Cursor {
		return store.Cursor{Value: micros(ev.CreatedAt), ID: ev.ID}
	})
}

// PurgeRuntimeEvents deletes the events that ended and were due before before.
func (s *Store) PurgeRuntimeEvents(ctx context.Context, before time.Time) (int, error) {
	n, err := s.exec(ctx, s.w, `DELETE FROM bot_events WHERE status <> 'pending' AND run_at < ?`, micros(before))
	return int(n), err
}
