package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// The Runtime API's queries over chat users, conversations and messages:
// tags (a JSON column read with the row, and a tag table per kind that
// filters use), lists by bot with filters, and updates.

// tagTable names a tag table and the column of the row it tags.
type tagTable struct{ name, owner string }

var (
	userTags         = tagTable{"chat_user_tags", "user_id"}
	conversationTags = tagTable{"conversation_tags", "conversation_id"}
	messageTags      = tagTable{"message_tags", "message_id"}
)

// tagKinds maps store.TagKind to its table.
var tagKinds = map[string]tagTable{store.TagKindUser: userTags, store.TagKindConversation: conversationTags, store.TagKindMessage: messageTags}

func tagsJSON(tags map[string]string) string {
	if len(tags) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

func readTags(raw []byte) (map[string]string, error) {
	tags := map[string]string{}
	if len(raw) == 0 {
		return tags, nil
	}
	return tags, json.Unmarshal(raw, &tags)
}

// writeTags replaces the tag rows of one row.
func (s *Store) writeTags(ctx context.Context, tx *sql.Tx, t tagTable, ownerID, botID string, tags map[string]string) error {
	if _, err := s.exec(ctx, tx, `DELETE FROM `+t.name+` WHERE `+t.owner+` = ?`, ownerID); err != nil {
		return err
	}
	for k, v := range tags {
		if _, err := s.exec(ctx, tx, `INSERT INTO `+t.name+` (`+t.owner+`, bot_id, key, value) VALUES (?, ?, ?, ?)`, ownerID, botID, k, v); err != nil {
			return err
		}
	}
	return nil
}

// dated adds a creation-date range and the keyset condition of a list in
// (date, id) order, and returns the ORDER BY clause.
func dated(q *strings.Builder, args []any, col, idCol string, d store.DateRange, desc bool, cur *store.Cursor) ([]any, string) {
	if d.After != nil {
		q.WriteString(` AND ` + col + ` > ?`)
		args = append(args, micros(*d.After))
	}
	if d.Before != nil {
		q.WriteString(` AND ` + col + ` < ?`)
		args = append(args, micros(*d.Before))
	}
	dir, cmp := "ASC", ">"
	if desc {
		dir, cmp = "DESC", "<"
	}
	if cur != nil {
		q.WriteString(` AND (` + col + ` ` + cmp + ` ? OR (` + col + ` = ? AND ` + idCol + ` ` + cmp + ` ?))`)
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	return args, ` ORDER BY ` + col + ` ` + dir + `, ` + idCol + ` ` + dir
}

// listRows runs a list query and pages its rows by (date, id).
func listRows[T any](ctx context.Context, s *Store, query string, args []any, limit int, scan func(interface{ Scan(...any) error }) (T, error), cursor func(T) store.Cursor) ([]T, string, error) {
	rows, err := s.query(ctx, query+` LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	out, err := scanAll(rows, scan)
	if err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, limit, cursor)
	return page, next, nil
}

// scanAll scans every row of rows, and closes them.
func scanAll[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListChatUsers lists a bot's users by creation (or update) date, without
// the user the bot speaks as.
func (s *Store) ListChatUsers(ctx context.Context, f store.ChatUserFilter) ([]platform.ChatUser, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + chatUserCols + ` FROM chat_users u WHERE u.bot_id = ? AND u.id <> u.bot_id`)
	args := []any{f.BotID}
	if f.ConversationID != "" {
		q.WriteString(` AND EXISTS (SELECT 1 FROM participants pa WHERE pa.user_id = u.id AND pa.conversation_id = ?)`)
		args = append(args, f.ConversationID)
	}
	args = tagFilter(&q, args, userTags.name+` t WHERE t.user_id = u.id`, f.Tags, nil)
	col := "u.created_at"
	if f.ByUpdate {
		col = "u.updated_at"
	}
	args, order := dated(&q, args, col, "u.id", f.DateRange, f.Descending, cur)
	return listRows(ctx, s, q.String()+order, args, f.Limit, scanChatUser, func(u platform.ChatUser) store.Cursor {
		if f.ByUpdate {
			return store.Cursor{Value: micros(u.UpdatedAt), ID: u.ID}
		}
		return store.Cursor{Value: micros(u.CreatedAt), ID: u.ID}
	})
}

// messageCount is the number of messages of conversation c, which
// triggers keep (migration 0029).
const messageCount = `c.message_count`

func scanCountedConversation(sc interface{ Scan(...any) error }) (store.CountedConversation, error) {
	var out store.CountedConversation
	var raw convRaw
	return out, noRows(raw.decode(&out.Conversation, sc.Scan(append(raw.dst(&out.Conversation), &out.Messages)...)))
}

// ListBotConversations lists a bot's conversations with their message counts.
func (s *Store) ListBotConversations(ctx context.Context, f store.ConversationFilter) ([]store.CountedConversation, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + convCols + `, ` + messageCount + ` FROM conversations c WHERE c.bot_id = ?`)
	args := []any{f.BotID}
	for _, p := range f.ParticipantIDs {
		q.WriteString(` AND EXISTS (SELECT 1 FROM participants pa WHERE pa.conversation_id = c.id AND pa.user_id = ?)`)
		args = append(args, p)
	}
	if f.Channel != "" {
		q.WriteString(` AND c.channel = ?`)
		args = append(args, f.Channel)
	}
	if f.Integration != "" {
		q.WriteString(` AND c.integration = ?`)
		args = append(args, f.Integration)
	}
	if f.MinMessages != nil {
		q.WriteString(` AND ` + messageCount + ` >= ?`)
		args = append(args, *f.MinMessages)
	}
	if f.MaxMessages != nil {
		q.WriteString(` AND ` + messageCount + ` <= ?`)
		args = append(args, *f.MaxMessages)
	}
	args = tagFilter(&q, args, conversationTags.name+` t WHERE t.conversation_id = c.id`, f.Tags, nil)
	col := "c.created_at"
	if f.ByUpdate {
		col = "c.updated_at"
	}
	args, order := dated(&q, args, col, "c.id", f.DateRange, f.Descending, cur)
	return listRows(ctx, s, q.String()+order, args, f.Limit, scanCountedConversation, func(c store.CountedConversation) store.Cursor {
		if f.ByUpdate {
			return store.Cursor{Value: micros(c.UpdatedAt), ID: c.ID}
		}
		return store.Cursor{Value: micros(c.CreatedAt), ID: c.ID}
	})
}

// CountMessages returns the number of messages of a conversation.
func (s *Store) CountMessages(ctx context.Context, conversationID string) (int64, error) {
	var n int64
	err := s.queryRow(ctx, `SELECT message_count FROM conversations WHERE id = ?`, conversationID).Scan(&n)
	return n, noRows(err)
}

// UpdateConversation replaces the conversation's tags, properties and
// update date.
func (s *Store) UpdateConversation(ctx context.Context, c platform.Conversation) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE conversations SET tags = ?, properties = ?, updated_at = ? WHERE id = ?`,
			tagsJSON(c.Tags), tagsJSON(c.Properties), micros(c.UpdatedAt), c.ID); err != nil {
			return err
		}
		return s.writeTags(ctx, tx, conversationTags, c.ID, c.BotID, c.Tags)
	})
}

// FindMessages lists a bot's messages, newest first.
func (s *Store) FindMessages(ctx context.Context, f store.MessageFilter) ([]platform.Message, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	var args []any
	if f.ConversationID != "" {
		q.WriteString(`SELECT ` + messageCols + ` FROM messages m WHERE m.conversation_id = ?`)
		args = append(args, f.ConversationID)
	} else {
		q.WriteString(`SELECT ` + messageCols + ` FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.bot_id = ?`)
		args = append(args, f.BotID)
	}
	args = tagFilter(&q, args, messageTags.name+` t WHERE t.message_id = m.id`, f.Tags, nil)
	args, order := dated(&q, args, "m.created_at", "m.id", f.DateRange, true, cur)
	return listRows(ctx, s, q.String()+order, args, f.Limit, scanMessage, func(m platform.Message) store.Cursor {
		return store.Cursor{Value: micros(m.CreatedAt), ID: m.ID}
	})
}

// UpdateMessage replaces a message's payload and tags.
func (s *Store) UpdateMessage(ctx context.Context, m platform.Message, botID string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE messages SET payload = ?, metadata = ?, tags = ?, updated_at = ? WHERE id = ?`, string(m.Payload), nullJSON(m.Metadata), tagsJSON(m.Tags), micros(m.UpdatedAt), m.ID); err != nil {
			return err
		}
		return s.writeTags(ctx, tx, messageTags, m.ID, botID, m.Tags)
	})
}

// ListChatTagValues pages through the values a tag key has on a bot's
// users, conversations or messages, in order.
func (s *Store) ListChatTagValues(ctx context.Context, botID, kind, key string, p store.Page) ([]string, string, error) {
	t, ok := tagKinds[kind]
	if !ok {
		return nil, "", platform.Errorf(platform.TypeInvalidPayload, "type: must be one of user, conversation, message")
	}
	return s.listDistinct(ctx, `SELECT t.value AS v FROM `+t.name+` t WHERE t.bot_id = ? AND t.key = ?`, "t.value", []any{botID, key}, p)
}
