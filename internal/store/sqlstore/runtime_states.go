package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

const stateCols = `id, bot_id, type, scope_id, name, payload, expiry_ms, expires_at, version, created_at, updated_at`

func scanState(sc interface{ Scan(...any) error }) (platform.RuntimeState, error) {
	var st platform.RuntimeState
	var payload []byte
	var expiry, expires sql.NullInt64
	var c, u int64
	err := sc.Scan(&st.ID, &st.BotID, &st.Type, &st.ScopeID, &st.Name, &payload, &expiry, &expires, &st.Version, &c, &u)
	st.Payload, st.CreatedAt, st.UpdatedAt = payload, fromMicros(c), fromMicros(u)
	if expiry.Valid {
		st.Expiry = &expiry.Int64
	}
	st.ExpiresAt = fromNullMicros(expires)
	return st, noRows(err)
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// GetRuntimeState returns a state that has not lapsed at now.
func (s *Store) GetRuntimeState(ctx context.Context, botID, typ, scopeID, name string, now time.Time) (platform.RuntimeState, error) {
	return scanState(s.queryRow(ctx, `SELECT `+stateCols+` FROM runtime_states WHERE bot_id = ? AND type = ? AND scope_id = ? AND name = ?
		AND (expires_at IS NULL OR expires_at > ?)`, botID, typ, scopeID, name, micros(now)))
}

// PutRuntimeState writes st, creating it or replacing the payload and
// expiry of the state of that name (whose id and creation date stay). With
// onlyIfAbsent, a state that exists and has not lapsed at st.UpdatedAt is
// left as it is. It returns the state as stored.
func (s *Store) PutRuntimeState(ctx context.Context, st platform.RuntimeState, onlyIfAbsent bool) (platform.RuntimeState, error) {
	// A lapsed state is gone: what replaces it is a new state.
	const lapsed = `runtime_states.expires_at IS NOT NULL AND runtime_states.expires_at <= excluded.updated_at`
	cond := ``
	if onlyIfAbsent {
		cond = ` WHERE ` + lapsed
	}
	var out platform.RuntimeState
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO runtime_states (`+stateCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
			ON CONFLICT (bot_id, type, scope_id, name) DO UPDATE SET payload = excluded.payload, expiry_ms = excluded.expiry_ms,
			id = CASE WHEN `+lapsed+` THEN excluded.id ELSE runtime_states.id END,
			created_at = CASE WHEN `+lapsed+` THEN excluded.created_at ELSE runtime_states.created_at END,
			expires_at = excluded.expires_at, version = runtime_states.version + 1, updated_at = excluded.updated_at`+cond,
			st.ID, st.BotID, st.Type, st.ScopeID, st.Name, string(st.Payload), nullInt(st.Expiry), nullMicros(st.ExpiresAt),
			micros(st.CreatedAt), micros(st.UpdatedAt)); err != nil {
			return err
		}
		var err error
		out, err = scanState(tx.QueryRowContext(ctx, s.q(`SELECT `+stateCols+` FROM runtime_states WHERE bot_id = ? AND type = ? AND scope_id = ? AND name = ?`),
			st.BotID, st.Type, st.ScopeID, st.Name))
		return err
	})
	return out, err
}

// UpdateRuntimeState replaces the payload and expiry of the state st.ID if
// it is still at st.Version (ErrConflict otherwise: it was written since it
// was read, or has gone).
func (s *Store) UpdateRuntimeState(ctx context.Context, st platform.RuntimeState) error {
	n, err := s.exec(ctx, s.w, `UPDATE runtime_states SET payload = ?, expiry_ms = ?, expires_at = ?, version = version + 1, updated_at = ?
		WHERE id = ? AND version = ?`, string(st.Payload), nullInt(st.Expiry), nullMicros(st.ExpiresAt), micros(st.UpdatedAt), st.ID, st.Version)
	if err == nil && n == 0 {
		err = platform.ErrConflict
	}
	return err
}

// DeleteRuntimeState removes a state (lapsed or not).
func (s *Store) DeleteRuntimeState(ctx context.Context, botID, typ, scopeID, name string) error {
	return s.execOne(ctx, s.w, `DELETE FROM runtime_states WHERE bot_id = ? AND type = ? AND scope_id = ? AND name = ?`, botID, typ, scopeID, name)
}

// LapsedRuntimeStates returns up to limit states lapsed at now.
func (s *Store) LapsedRuntimeStates(ctx context.Context, now time.Time, limit int) ([]platform.RuntimeState, error) {
	rows, err := s.query(ctx, `SELECT `+stateCols+` FROM runtime_states WHERE expires_at IS NOT NULL AND expires_at <= ?
		ORDER BY expires_at LIMIT ?`, micros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.RuntimeState
	for rows.Next() {
		st, err := scanState(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// ExpireRuntimeState deletes a lapsed state, if it is still at st.Version
// and lapsed at now, and queues j (its state_expired event) with it. It
// reports whether it did: another process, or a write, may have come first.
func (s *Store) ExpireRuntimeState(ctx context.Context, st platform.RuntimeState, now time.Time, j platform.Job) (bool, error) {
	var done bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		n, err := s.exec(ctx, tx, `DELETE FROM runtime_states WHERE id = ? AND version = ? AND expires_at <= ?`, st.ID, st.Version, micros(now))
		if err != nil || n == 0 {
			return err
		}
		done = true
		return s.queue(ctx, tx, []platform.Job{j})
	})
	return done, err
}
