package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

func (s *Store) storage(ctx context.Context, db querier, workspaceID string) (platform.Storage, error) {
	var st platform.Storage
	var mf, ms, mv sql.NullInt64
	err := db.QueryRowContext(ctx, s.q(`SELECT file_bytes, vector_bytes, max_file_bytes, max_storage, max_vector_bytes FROM workspace_storage WHERE workspace_id = ?`), workspaceID).
		Scan(&st.FileBytes, &st.VectorBytes, &mf, &ms, &mv)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	for _, x := range []struct {
		v   sql.NullInt64
		dst **int64
	}{{mf, &st.MaxFileBytes}, {ms, &st.MaxStorage}, {mv, &st.MaxVectorBytes}} {
		if x.v.Valid {
			v := x.v.Int64
			*x.dst = &v
		}
	}
	return st, err
}

func (s *Store) GetStorage(ctx context.Context, workspaceID string) (platform.Storage, error) {
	return s.storage(ctx, on(ctx, s.r), workspaceID)
}

func (s *Store) SetStorageLimits(ctx context.Context, workspaceID string, st platform.Storage) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO workspace_storage (workspace_id) VALUES (?) ON CONFLICT DO NOTHING`, workspaceID); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `UPDATE workspace_storage SET max_file_bytes = ?, max_storage = ?, max_vector_bytes = ? WHERE workspace_id = ?`,
			nullSize(st.MaxFileBytes), nullSize(st.MaxStorage), nullSize(st.MaxVectorBytes), workspaceID)
	})
}

func (s *Store) ListJobs(ctx context.Context, subject string) ([]platform.Job, error) {
	rows, err := s.query(ctx, `SELECT id, kind, subject, payload, status, attempts, run_after, created_at FROM jobs WHERE subject = ? ORDER BY created_at, id`, subject)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.Job
	for rows.Next() {
		var j platform.Job
		var payload []byte
		var runAfter, created int64
		if err := rows.Scan(&j.ID, &j.Kind, &j.Subject, &payload, &j.Status, &j.Attempts, &runAfter, &created); err != nil {
			return nil, err
		}
		j.Payload, j.RunAfter, j.CreatedAt = payload, fromMicros(runAfter), fromMicros(created)
		out = append(out, j)
	}
	return out, rows.Err()
}

func (s *Store) Secret(ctx context.Context, name string, value []byte) ([]byte, error) {
	if _, err := s.exec(ctx, s.w, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, name, value, time.Now().UnixMicro()); err != nil {
		return nil, err
	}
	var v []byte
	err := on(ctx, s.w).QueryRowContext(ctx, s.q(`SELECT value FROM secrets WHERE name = ?`), name).Scan(&v)
	return v, err
}
