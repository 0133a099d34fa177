package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Store) AppendAuditRecords(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error { return s.appendAudit(ctx, tx, recs) })
}

// appendAudit stores records with text made valid for PostgreSQL (no NUL,
// valid UTF-8), like log lines.
func (s *Store) appendAudit(ctx context.Context, tx *sql.Tx, recs []audit.Record) error {
	for _, r := range recs {
		if _, err := s.exec(ctx, tx, `INSERT INTO audit_records (id, workspace_id, recorded_at, user_id, user_email, action, resource_id, resource_name, value)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.WorkspaceID, micros(r.RecordedAt), r.UserID, storable(r.UserEmail), string(r.Action), r.ResourceID, storable(r.ResourceName), storable(r.Value)); err != nil {
			return err
		}
	}
	return nil
}

// auditing makes f also append the records ctx carries (audit.With), once
// f has made its change: both commit or neither does.
func (s *Store) auditing(ctx context.Context, f func(tx *sql.Tx) error) func(tx *sql.Tx) error {
	p := audit.Attached(ctx)
	if p == nil {
		return f
	}
	return func(tx *sql.Tx) error {
		if err := f(tx); err != nil {
			return err
		}
		recs := p.Take()
		if recs == nil {
			return nil
		}
		if err := s.appendAudit(ctx, tx, recs); err != nil {
			p.Release()
			return err
		}
		return nil
	}
}

// ListAuditRecords lists a workspace's records, newest first.
func (s *Store) ListAuditRecords(ctx context.Context, workspaceID string, p store.Page) ([]audit.Record, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	query := `SELECT id, workspace_id, recorded_at, user_id, user_email, action, resource_id, resource_name, value FROM audit_records WHERE workspace_id = ?`
	args := []any{workspaceID}
	if cur != nil {
		query += ` AND (recorded_at < ? OR (recorded_at = ? AND id < ?))`
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	query += ` ORDER BY recorded_at DESC, id DESC LIMIT ?`
	args = append(args, p.Limit+1)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []audit.Record{}
	for rows.Next() {
		var r audit.Record
		var at int64
		var action string
		if err := rows.Scan(&r.ID, &r.WorkspaceID, &at, &r.UserID, &r.UserEmail, &action, &r.ResourceID, &r.ResourceName, &r.Value); err != nil {
			return nil, "", err
		}
		r.RecordedAt, r.Action = fromMicros(at), audit.Action(action)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, p.Limit, func(r audit.Record) store.Cursor {
		return store.Cursor{Value: micros(r.RecordedAt), ID: r.ID}
	})
	return page, next, nil
}

func (s *Store) PruneAuditRecords(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.exec(ctx, tx, `DELETE FROM audit_records WHERE recorded_at < ?`, micros(before))
		return err
	})
	return int(n), err
}

func (s *Store) WorkspaceIDs(ctx context.Context) ([]string, error) {
	return s.queryStrings(ctx, `SELECT id FROM workspaces ORDER BY id`)
}
