package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"

	"github.com/botplatform/botplatform/internal/platform"
)

func (s *Store) SaveBotVersion(ctx context.Context, workspaceID string, v platform.BotVersion, keep int, update *platform.Bot) (platform.BotVersion, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Writing the bot's row first (or touching it) serializes the
		// versions of one bot: the next seq is read under its row lock.
		if update != nil {
			if err := s.updateBot(ctx, tx, *update); err != nil {
				return err
			}
		} else if err := s.execOne(ctx, tx, `UPDATE bots SET updated_at = updated_at WHERE workspace_id = ? AND id = ?`, workspaceID, v.BotID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(seq), 0) + 1 FROM bot_versions WHERE bot_id = ?`), v.BotID).Scan(&v.Seq); err != nil {
			return err
		}
		if v.Name == "" {
			v.Name = "v" + strconv.FormatInt(v.Seq, 10)
		}
		spec, err := json.Marshal(v.Spec)
		if err != nil {
			return err
		}
		tags, err := json.Marshal(v.Tags)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_versions (id, bot_id, seq, name, description, bot_name, code, tags, spec, digest, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			v.ID, v.BotID, v.Seq, v.Name, v.Description, v.BotName, v.Code, string(tags), string(spec), v.Digest, v.CreatedBy, micros(v.CreatedAt)); err != nil {
			return err
		}
		_, err = s.exec(ctx, tx, `DELETE FROM bot_versions WHERE bot_id = ? AND seq <= ?`, v.BotID, v.Seq-int64(keep))
		return err
	})
	return v, err
}

// botVersionCols are the columns ListBotVersions reads: code and spec stay
// out of a listing (a Node bot's code is megabytes).
const botVersionCols = `v.id, v.bot_id, v.seq, v.name, v.description, v.bot_name, v.tags, v.digest, v.created_by, v.created_at`

func scanBotVersion(row interface{ Scan(...any) error }, v *platform.BotVersion, more ...any) error {
	var tags string
	var created int64
	if err := row.Scan(append([]any{&v.ID, &v.BotID, &v.Seq, &v.Name, &v.Description, &v.BotName, &tags, &v.Digest, &v.CreatedBy, &created}, more...)...); err != nil {
		return err
	}
	v.CreatedAt = fromMicros(created)
	return json.Unmarshal([]byte(tags), &v.Tags)
}

func (s *Store) ListBotVersions(ctx context.Context, workspaceID, botID string) ([]platform.BotVersion, error) {
	var exists int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM bots WHERE workspace_id = ? AND id = ?`, workspaceID, botID).Scan(&exists); err != nil {
		return nil, err
	}
	if exists == 0 {
		return nil, platform.ErrNotFound
	}
	rows, err := s.query(ctx, `SELECT `+botVersionCols+` FROM bot_versions v WHERE v.bot_id = ? ORDER BY v.seq DESC`, botID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []platform.BotVersion{}
	for rows.Next() {
		var v platform.BotVersion
		if err := scanBotVersion(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (s *Store) GetBotVersion(ctx context.Context, workspaceID, botID, id string) (platform.BotVersion, error) {
	var v platform.BotVersion
	var spec string
	err := scanBotVersion(s.queryRow(ctx, `SELECT `+botVersionCols+`, v.code, v.spec FROM bot_versions v JOIN bots b ON b.id = v.bot_id
		WHERE b.workspace_id = ? AND v.bot_id = ? AND v.id = ?`, workspaceID, botID, id), &v, &v.Code, &spec)
	if err != nil {
		return v, noRows(err)
	}
	return v, json.Unmarshal([]byte(spec), &v.Spec)
}
