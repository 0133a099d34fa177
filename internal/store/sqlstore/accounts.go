package sqlstore

import (
	"context"
	"database/sql"

	"github.com/botplatform/botplatform/internal/platform"
)

func (s *Store) CreateAccount(ctx context.Context, a platform.Account) error {
	return s.insertAccount(ctx, s.w, a)
}

// insertAccount creates a without a picture (UpdateAccount sets one), so
// that it also works on the schemas before migration 0035, which the
// migration tests build on.
func (s *Store) insertAccount(ctx context.Context, db querier, a platform.Account) error {
	_, err := s.exec(ctx, db, `INSERT INTO accounts (id, email, display_name, created_at) VALUES (?, ?, ?, ?)`,
		a.ID, a.Email, a.DisplayName, micros(a.CreatedAt))
	return err
}

func (s *Store) GetAccount(ctx context.Context, id string) (platform.Account, error) {
	return s.getAccount(ctx, `id = ?`, id)
}

func (s *Store) GetAccountByEmail(ctx context.Context, email string) (platform.Account, error) {
	return s.getAccount(ctx, `email = ?`, email)
}

func (s *Store) getAccount(ctx context.Context, where string, arg any) (platform.Account, error) {
	var a platform.Account
	var created int64
	err := s.queryRow(ctx, `SELECT id, email, display_name, profile_picture, created_at FROM accounts WHERE `+where, arg).
		Scan(&a.ID, &a.Email, &a.DisplayName, &a.ProfilePicture, &created)
	a.CreatedAt = fromMicros(created)
	return a, noRows(err)
}

func (s *Store) UpdateAccount(ctx context.Context, a platform.Account) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `UPDATE accounts SET display_name = ?, profile_picture = ? WHERE id = ?`, a.DisplayName, a.ProfilePicture, a.ID)
	})
}

func (s *Store) DeleteAccount(ctx context.Context, id string) ([]string, error) {
	var owned []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, s.q(`SELECT id FROM workspaces WHERE owner_id = ? ORDER BY id LIMIT 10`), id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w string
			if err := rows.Scan(&w); err != nil {
				return err
			}
			owned = append(owned, w)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(owned) > 0 {
			return platform.ErrConflict // nothing written, audit records included
		}
		return s.execOne(ctx, tx, `DELETE FROM accounts WHERE id = ?`, id)
	})
	return owned, err
}

func (s *Store) CreatePAT(ctx context.Context, t platform.Token) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insertPAT(ctx, tx, t) })
}

func (s *Store) insertPAT(ctx context.Context, db querier, t platform.Token) error {
	_, err := s.exec(ctx, db, `INSERT INTO pats (id, account_id, note, hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		t.ID, t.OwnerID, t.Note, t.Hash, micros(t.CreatedAt))
	return err
}

func (s *Store) ListPATs(ctx context.Context, accountID string) ([]platform.Token, error) {
	return s.listTokens(ctx, `SELECT id, account_id, note, created_at FROM pats WHERE account_id = ? ORDER BY id`, accountID)
}

func (s *Store) DeletePAT(ctx context.Context, accountID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `DELETE FROM pats WHERE id = ? AND account_id = ?`, id, accountID)
	})
}

func (s *Store) listTokens(ctx context.Context, query string, args ...any) ([]platform.Token, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []platform.Token{}
	for rows.Next() {
		var t platform.Token
		var created int64
		if err := rows.Scan(&t.ID, &t.OwnerID, &t.Note, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = fromMicros(created)
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Store) CreateOwner(ctx context.Context, a platform.Account, w platform.Workspace, m platform.Member, t platform.Token) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.insertAccount(ctx, tx, a); err != nil {
			return err
		}
		if err := s.insertWorkspace(ctx, tx, w); err != nil {
			return err
		}
		if err := s.insertMember(ctx, tx, m); err != nil {
			return err
		}
		return s.insertPAT(ctx, tx, t)
	})
}

func (s *Store) GetCredential(ctx context.Context, hash []byte, workspaceID string) (platform.Token, platform.Account, *platform.Member, error) {
	var t platform.Token
	var a platform.Account
	var mID, mRole sql.NullString
	var tCreated, aCreated int64
	var mCreated sql.NullInt64
	err := s.queryRow(ctx, `SELECT p.id, p.note, p.hash, p.created_at, a.id, a.email, a.display_name, a.profile_picture, a.created_at, m.id, m.role, m.created_at
		FROM pats p JOIN accounts a ON a.id = p.account_id
		LEFT JOIN members m ON m.account_id = a.id AND m.workspace_id = ?
		WHERE p.hash = ?`, workspaceID, hash).
		Scan(&t.ID, &t.Note, &t.Hash, &tCreated, &a.ID, &a.Email, &a.DisplayName, &a.ProfilePicture, &aCreated, &mID, &mRole, &mCreated)
	if err != nil {
		return t, a, nil, noRows(err)
	}
	t.OwnerID, t.CreatedAt, a.CreatedAt = a.ID, fromMicros(tCreated), fromMicros(aCreated)
	if !mID.Valid {
		return t, a, nil, nil
	}
	return t, a, &platform.Member{ID: mID.String, WorkspaceID: workspaceID, AccountID: a.ID, Email: a.Email,
		DisplayName: a.DisplayName, Role: platform.Role(mRole.String), CreatedAt: fromMicros(mCreated.Int64)}, nil
}
