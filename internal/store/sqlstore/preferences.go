package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/store"
)

// preferenceOwner is the column and id of o: its account or its workspace.
func preferenceOwner(o store.PreferenceOwner) (col, id string, err error) {
	switch {
	case (o.AccountID == "") == (o.WorkspaceID == ""):
		return "", "", errors.New("sqlstore: a preference belongs to an account or a workspace, exactly one")
	case o.AccountID != "":
		return "account_id", o.AccountID, nil
	default:
		return "workspace_id", o.WorkspaceID, nil
	}
}

func (s *Store) SetPreference(ctx context.Context, o store.PreferenceOwner, key string, value json.RawMessage, now time.Time) error {
	col, id, err := preferenceOwner(o)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO preferences (`+col+`, key, value, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (`+col+`, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			id, key, string(value), micros(now))
		return err
	})
}

func (s *Store) GetPreference(ctx context.Context, o store.PreferenceOwner, key string) (json.RawMessage, error) {
	col, id, err := preferenceOwner(o)
	if err != nil {
		return nil, err
	}
	var v string
	if err := s.queryRow(ctx, `SELECT value FROM preferences WHERE `+col+` = ? AND key = ?`, id, key).Scan(&v); err != nil {
		return nil, noRows(err)
	}
	return json.RawMessage(v), nil
}
