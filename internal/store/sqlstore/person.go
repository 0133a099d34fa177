package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// personSQL holds the conditions that select a Person's rows, table by
// table. Each is a WHERE clause with its arguments, used alike to read the
// rows (PersonData) and to delete them (ErasePerson): what an export shows
// is what an erase removes.
type personSQL struct {
	p store.Person
	s *Store
}

// where is a condition and its arguments, in placeholder order.
type where struct {
	sql  string
	args []any
}

func (q personSQL) owned() where {
	return where{`SELECT id FROM conversations WHERE bot_id = ? AND owner_id = ?`, []any{q.p.BotID, q.p.UserID}}
}

// ownedKeys are the owned conversations' ids as log lines carry them: the
// internal id and the one clients see.
func (q personSQL) ownedKeys() where {
	return where{`SELECT id FROM conversations WHERE bot_id = ? AND owner_id = ? UNION SELECT fid FROM conversations WHERE bot_id = ? AND owner_id = ?`,
		[]any{q.p.BotID, q.p.UserID, q.p.BotID, q.p.UserID}}
}

func (q personSQL) workflowIDs() where {
	o := q.owned()
	return where{`SELECT id FROM workflows WHERE bot_id = ? AND (user_id = ? OR conversation_id IN (` + o.sql + `))`,
		append([]any{q.p.BotID, q.p.UserID}, o.args...)}
}

// join makes one condition of parts, each with its arguments.
func join(sep string, parts ...where) where {
	var out where
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		texts = append(texts, p.sql)
		out.args = append(out.args, p.args...)
	}
	out.sql = "(" + strings.Join(texts, sep) + ")"
	return out
}

func in(col string, sub where) where { return where{col + ` IN (` + sub.sql + `)`, sub.args} }

func oneOf(col string, values []string) where {
	if len(values) == 0 {
		return where{`1 = 0`, nil}
	}
	return where{col + ` IN (` + placeholders(len(values)) + `)`, anys(values)}
}

// mentioning matches col holding any of the person's mentions.
func (q personSQL) mentioning(col string) []where {
	var out []where
	for _, m := range q.p.Mentions {
		out = append(out, where{q.s.d.Contains(col), []any{m}})
	}
	return out
}

func eq(col string, v any) where { return where{col + ` = ?`, []any{v}} }

// theirs is the condition on a chat row (messages, chat_events): in a
// conversation they own, or sent by them in another of the bot's.
func (q personSQL) theirs(alias string) where {
	return join(" OR ", in(alias+".conversation_id", q.owned()),
		join(" AND ", eq(alias+".user_id", q.p.UserID), in(alias+".conversation_id", where{`SELECT id FROM conversations WHERE bot_id = ?`, []any{q.p.BotID}})))
}

func (q personSQL) states() where {
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ",
		join(" AND ", where{`type = 'user'`, nil}, eq("scope_id", q.p.UserID)),
		join(" AND ", where{`type = 'conversation'`, nil}, in("scope_id", q.owned())),
		join(" AND ", where{`type = 'workflow'`, nil}, in("scope_id", q.workflowIDs()))))
}

func (q personSQL) codeStates() where {
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ",
		join(" AND ", where{`scope = 'user'`, nil}, eq("scope_id", q.p.UserID)),
		join(" AND ", where{`scope = 'conversation'`, nil}, in("scope_id", q.owned()))))
}

func (q personSQL) workflows() where {
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ", eq("user_id", q.p.UserID), in("conversation_id", q.owned())))
}

func (q personSQL) events() where {
	or := []where{eq("user_id", q.p.UserID), in("conversation_id", q.owned()),
		in("message_id", where{`SELECT id FROM messages WHERE user_id = ?`, []any{q.p.UserID}}), in("workflow_id", q.workflowIDs())}
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ", append(or, q.mentioning("payload")...)...))
}

func (q personSQL) logs() where {
	or := []where{oneOf("user_id", q.p.Aliases), in("conversation_id", q.ownedKeys()), in("workflow_id", q.workflowIDs())}
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ", append(or, q.mentioning("message")...)...))
}

// files are the bot's files the user owns (created with x-user-id) or
// tagged FileTag with one of their ids.
func (q personSQL) files() where {
	owners := make([]string, len(q.p.Aliases))
	for i, a := range q.p.Aliases {
		owners[i] = ownerJSON(platform.FileOwner{Type: "user", ID: a})
	}
	or := []where{oneOf("owner", owners)}
	if q.p.FileTag != "" {
		tagged := join(" AND ", eq("bot_id", q.p.BotID), eq("key", q.p.FileTag), oneOf("value", q.p.Aliases))
		or = append(or, in("id", where{`SELECT file_id FROM file_tags WHERE ` + tagged.sql, tagged.args}))
	}
	return join(" AND ", eq("bot_id", q.p.BotID), join(" OR ", or...))
}

func ownerJSON(o platform.FileOwner) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// read runs query (with `?` placeholders) where w holds, in the order of
// the columns order (then id), on db and scans every row.
func read[T any](ctx context.Context, s *Store, db querier, query string, w where, order string, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, s.q(query+` WHERE `+w.sql+` ORDER BY `+order), w.args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scan)
}

// PersonData reads what p selects, on the read pool.
func (s *Store) PersonData(ctx context.Context, p store.Person) (store.PersonData, error) {
	return s.personData(ctx, on(ctx, s.r), p)
}

func (s *Store) personData(ctx context.Context, db querier, p store.Person) (store.PersonData, error) {
	q := personSQL{p: p, s: s}
	var d store.PersonData
	var err error
	if d.User, err = scanChatUser(db.QueryRowContext(ctx, s.q(`SELECT `+chatUserCols+` FROM chat_users u WHERE u.bot_id = ? AND u.id = ?`), p.BotID, p.UserID)); err != nil {
		return d, err
	}
	if d.Owned, err = read(ctx, s, db, `SELECT `+convCols+` FROM conversations c`, join(" AND ", eq("c.bot_id", p.BotID), eq("c.owner_id", p.UserID)), "c.created_at, c.id", scanConversation); err != nil {
		return d, err
	}
	joined := where{`c.bot_id = ? AND c.owner_id <> ? AND pa.user_id = ?`, []any{p.BotID, p.UserID, p.UserID}}
	if d.Joined, err = read(ctx, s, db, `SELECT `+convCols+` FROM conversations c JOIN participants pa ON pa.conversation_id = c.id`, joined, "c.created_at, c.id", scanConversation); err != nil {
		return d, err
	}
	if d.Messages, err = read(ctx, s, db, `SELECT `+messageCols+` FROM messages m`, q.theirs("m"), "m.created_at, m.id", scanMessage); err != nil {
		return d, err
	}
	if d.ChatEvents, err = read(ctx, s, db, `SELECT `+chatEventCols+` FROM chat_events e`, q.theirs("e"), "e.created_at, e.id", scanChatEvent); err != nil {
		return d, err
	}
	if d.States, err = read(ctx, s, db, `SELECT `+stateCols+` FROM runtime_states`, q.states(), "created_at, id", scanState); err != nil {
		return d, err
	}
	if d.CodeStates, err = read(ctx, s, db, `SELECT bot_id, scope, scope_id, value FROM bot_states`, q.codeStates(), "scope, scope_id", scanCodeState); err != nil {
		return d, err
	}
	if d.Workflows, err = read(ctx, s, db, `SELECT `+workflowCols+` FROM workflows w`, q.workflows(), "w.created_at, w.id", scanWorkflow); err != nil {
		return d, err
	}
	if d.Events, err = read(ctx, s, db, `SELECT `+eventCols+` FROM bot_events e`, q.events(), "e.created_at, e.id", scanEvent); err != nil {
		return d, err
	}
	if d.Files, err = read(ctx, s, db, `SELECT `+fileCols+` FROM files f`, q.files(), "f.created_at, f.id", scanFile); err != nil {
		return d, err
	}
	d.Logs, err = read(ctx, s, db, `SELECT `+logCols+` FROM bot_logs`, q.logs(), "ts, id", scanLog)
	return d, err
}

func scanCodeState(sc interface{ Scan(...any) error }) (platform.BotState, error) {
	var st platform.BotState
	var v []byte
	err := sc.Scan(&st.BotID, &st.Scope, &st.ScopeID, &v)
	st.Value = v
	return st, err
}

// ErasePerson deletes what PersonData reads, in one transaction: the rows
// that name the user or what they own first, then the files (releasing
// their storage), their owned conversations (with every message, event,
// participant and tag of them) and the user. Their queued or kept jobs go
// too. The blob keys of the files' content are returned for removal once
// committed.
func (s *Store) ErasePerson(ctx context.Context, p store.Person) (store.PersonData, []string, error) {
	q := personSQL{p: p, s: s}
	var d store.PersonData
	var blobs []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if d, err = s.personData(ctx, tx, p); err != nil {
			return err
		}
		if err := s.dropPersonJobs(ctx, tx, p, d); err != nil {
			return err
		}
		for _, del := range []struct {
			table string
			w     where
		}{
			{"bot_logs", q.logs()}, {"bot_events", q.events()}, {"runtime_states", q.states()}, {"bot_states", q.codeStates()},
			{"workflows", q.workflows()}, {"chat_events", q.theirs("chat_events")}, {"messages", q.theirs("messages")},
		} {
			if _, err := s.exec(ctx, tx, `DELETE FROM `+del.table+` WHERE `+del.w.sql, del.w.args...); err != nil {
				return err
			}
		}
		files := q.files()
		ws, err := s.botWorkspace(ctx, tx, p.BotID)
		if err != nil {
			return err
		}
		if blobs, err = s.dropFiles(ctx, tx, ws, files.sql, files.args...); err != nil {
			return err
		}
		for _, f := range d.Files {
			// A metered call stays counted; it no longer names the file.
			if _, err := s.exec(ctx, tx, `UPDATE ai_usage SET file_id = '' WHERE file_id = ?`, f.ID); err != nil {
				return err
			}
			if _, err := s.exec(ctx, tx, `DELETE FROM files WHERE id = ?`, f.ID); err != nil {
				return err
			}
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM conversations WHERE bot_id = ? AND owner_id = ?`, p.BotID, p.UserID); err != nil {
			return err
		}
		if err := s.execOne(ctx, tx, `DELETE FROM chat_users WHERE bot_id = ? AND id = ?`, p.BotID, p.UserID); err != nil {
			return err
		}
		if s.d.FullText.Purge != "" && len(d.Files) > 0 {
			// The full-text index keeps the words of deleted passages until
			// its segments are merged: merged now, no trace of them is left.
			_, err = tx.ExecContext(ctx, s.d.FullText.Purge)
		}
		return err
	})
	if err != nil {
		return store.PersonData{}, nil, err
	}
	return d, blobs, nil
}

func (s *Store) botWorkspace(ctx context.Context, db querier, botID string) (string, error) {
	var ws string
	err := db.QueryRowContext(ctx, s.q(`SELECT workspace_id FROM bots WHERE id = ?`), botID).Scan(&ws)
	return ws, noRows(err)
}

// dropPersonJobs deletes the bot's event jobs about the person's data:
// queued deliveries of their messages and events, jobs of their owned
// conversations, their scheduled events and workflows' updates, and the
// done rows kept of them. Each subject's next job becomes its head.
func (s *Store) dropPersonJobs(ctx context.Context, tx *sql.Tx, p store.Person, d store.PersonData) error {
	ids := map[string]bool{p.UserID: true}
	for _, set := range [][]string{
		mapped(d.Owned, func(c platform.Conversation) string { return c.ID }),
		mapped(d.Messages, func(m platform.Message) string { return m.ID }),
		mapped(d.ChatEvents, func(e platform.ChatEvent) string { return e.ID }),
		mapped(d.Events, func(e platform.RuntimeEvent) string { return e.ID }),
		mapped(d.Events, func(e platform.RuntimeEvent) string { return e.JobID }),
		mapped(d.Workflows, func(w platform.Workflow) string { return w.ID }),
	} {
		for _, id := range set {
			ids[id] = true
		}
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id, kind, subject, payload FROM jobs WHERE kind = ? AND (subject = ? OR subject IN (SELECT id FROM conversations WHERE bot_id = ?))`),
		platform.JobBotEvent, platform.JobSubjectBot(p.BotID), p.BotID)
	if err != nil {
		return err
	}
	type job struct{ id, kind, subject string }
	var drop []job
	for rows.Next() {
		var j job
		var payload string
		if err := rows.Scan(&j.id, &j.kind, &j.subject, &payload); err != nil {
			rows.Close()
			return err
		}
		var b platform.BotEventJob
		_ = json.Unmarshal([]byte(payload), &b) // a payload it cannot read is matched by its text below
		hit := ids[j.id] || ids[j.subject] || slices.ContainsFunc([]string{b.ID, b.ConversationID, b.UserID, b.EventID, b.MessageID, b.WorkflowID}, func(v string) bool { return v != "" && ids[v] })
		for _, m := range p.Mentions {
			hit = hit || strings.Contains(payload, m)
		}
		if hit {
			drop = append(drop, j)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, j := range drop {
		if err := s.lockSubject(ctx, tx, j.kind, j.subject); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE id = ?`, j.id); err != nil {
			return err
		}
		if _, err := s.markHead(ctx, tx, j.kind, j.subject); err != nil {
			return err
		}
	}
	return nil
}

func mapped[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
