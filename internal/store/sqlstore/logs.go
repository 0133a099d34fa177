package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Store) AppendLogs(ctx context.Context, entries []platform.LogEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.appendLogs(ctx, tx, entries) })
}

// appendLogs stores log lines with NUL characters replaced by U+FFFD and
// invalid UTF-8 made valid, on both databases: PostgreSQL text holds
// neither, and a line that cannot be stored must not fail the event that
// logged it (bot code logs whatever users send).
func (s *Store) appendLogs(ctx context.Context, tx *sql.Tx, entries []platform.LogEntry) error {
	for _, e := range entries {
		msg := storable(e.Message)
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_logs (id, bot_id, ts, level, message, user_id, conversation_id, workflow_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.BotID, micros(e.Timestamp), e.Level, msg, e.UserID, e.ConversationID, e.WorkflowID); err != nil {
			return err
		}
	}
	return nil
}

// ListLogs returns a bot's log lines in time order within [Start, End).
// storable is v with NUL characters replaced by U+FFFD and invalid UTF-8
// made valid: PostgreSQL text holds neither.
func storable(v string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(v, "\uFFFD"), "\x00", "\uFFFD")
}

func (s *Store) ListLogs(ctx context.Context, f store.LogFilter) ([]platform.LogEntry, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	query := `SELECT ` + logColsOf("l") + ` FROM bot_logs l WHERE l.bot_id = ? AND l.ts >= ? AND l.ts < ?`
	args := []any{f.BotID, micros(f.Start), micros(f.End)}
	if in := f.Integration; in != nil {
		// The lines its code wrote in each bot of the workspace that has it
		// installed, which start with the installation's alias.
		query = `SELECT ` + logColsOf("l") + ` FROM bot_logs l JOIN bot_integrations i ON i.bot_id = l.bot_id JOIN bots b ON b.id = l.bot_id
			WHERE i.integration_id = ? AND b.workspace_id = ? AND l.ts >= ? AND l.ts < ?
			AND substr(l.message, 1, length(i.name) + 3) = '[' || i.name || '] '`
		args = []any{in.IntegrationID, in.WorkspaceID, micros(f.Start), micros(f.End)}
	}
	for _, c := range []struct{ col, v string }{
		{"l.level", f.Level}, {"l.user_id", f.UserID}, {"l.conversation_id", f.ConversationID}, {"l.workflow_id", f.WorkflowID},
	} {
		if c.v != "" {
			query += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	if f.MessageContains != "" {
		// A case-sensitive substring test on both databases. LIKE is not
		// one: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
		query += ` AND ` + s.d.Contains("l.message")
		args = append(args, f.MessageContains)
	}
	if cur != nil {
		query += ` AND (l.ts > ? OR (l.ts = ? AND l.id > ?))`
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	query += ` ORDER BY l.ts, l.id LIMIT ?`
	args = append(args, f.Limit+1)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, "", err
	}
	out, err := scanAll(rows, scanLog)
	if err != nil {
		return nil, "", err
	}
	if out == nil {
		out = []platform.LogEntry{}
	}
	page, next := pageOf(out, f.Limit, func(e platform.LogEntry) store.Cursor {
		return store.Cursor{Value: micros(e.Timestamp), ID: e.ID}
	})
	return page, next, nil
}

const logCols = `id, bot_id, ts, level, message, user_id, conversation_id, workflow_id`

// logColsOf is logCols of the table aliased t.
func logColsOf(t string) string {
	return t + "." + strings.ReplaceAll(logCols, ", ", ", "+t+".")
}

func scanLog(sc interface{ Scan(...any) error }) (platform.LogEntry, error) {
	var e platform.LogEntry
	var ts int64
	err := sc.Scan(&e.ID, &e.BotID, &ts, &e.Level, &e.Message, &e.UserID, &e.ConversationID, &e.WorkflowID)
	e.Timestamp = fromMicros(ts)
	return e, err
}
