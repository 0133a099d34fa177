package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

const chatUserCols = `u.id, u.bot_id, u.fid, u.name, u.picture_url, u.profile, u.tags, u.properties, u.attributes, u.created_at, u.updated_at`

// chatUserOrEmptyCols are chatUserCols of a row that may be missing (a
// LEFT JOIN's): empty values then, and an empty id.
const chatUserOrEmptyCols = `COALESCE(u.id, ''), COALESCE(u.bot_id, ''), COALESCE(u.fid, ''), COALESCE(u.name, ''),
	COALESCE(u.picture_url, ''), COALESCE(u.profile, ''), u.tags, u.properties, u.attributes, COALESCE(u.created_at, 0), COALESCE(u.updated_at, 0)`

func scanChatUser(sc interface{ Scan(...any) error }) (platform.ChatUser, error) {
	var u platform.ChatUser
	var raw chatUserRaw
	err := sc.Scan(raw.dst(&u)...)
	if err == nil {
		err = raw.decode(&u)
	}
	return u, noRows(err)
}

// chatUserRaw holds the columns of chatUserCols that are decoded after the
// scan.
type chatUserRaw struct {
	tags, properties, attributes []byte
	created, updated             int64
}

// dst is where chatUserCols scan to.
func (r *chatUserRaw) dst(u *platform.ChatUser) []any {
	return []any{&u.ID, &u.BotID, &u.FID, &u.Name, &u.PictureURL, &u.Profile, &r.tags, &r.properties, &r.attributes, &r.created, &r.updated}
}

func (r *chatUserRaw) decode(u *platform.ChatUser) error {
	u.CreatedAt, u.UpdatedAt = fromMicros(r.created), fromMicros(r.updated)
	var err error
	for _, f := range []struct {
		raw []byte
		dst *map[string]string
	}{{r.tags, &u.Tags}, {r.properties, &u.Properties}, {r.attributes, &u.Attributes}} {
		if *f.dst, err = readTags(f.raw); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) CreateChatUser(ctx context.Context, u platform.ChatUser) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO chat_users (id, bot_id, fid, name, picture_url, profile, tags, properties, attributes, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.BotID, u.FID, u.Name, u.PictureURL, u.Profile, tagsJSON(u.Tags),
			tagsJSON(u.Properties), tagsJSON(u.Attributes), micros(u.CreatedAt), micros(u.UpdatedAt)); err != nil {
			return err
		}
		return s.writeTags(ctx, tx, userTags, u.ID, u.BotID, u.Tags)
	})
}

// GetChatUser finds a user of the bot by foreign id, or by internal id.
func (s *Store) GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error) {
	u, err := scanChatUser(s.queryRow(ctx, `SELECT `+chatUserCols+` FROM chat_users u WHERE u.bot_id = ? AND u.fid = ?`, botID, id))
	if err == platform.ErrNotFound {
		u, err = scanChatUser(s.queryRow(ctx, `SELECT `+chatUserCols+` FROM chat_users u WHERE u.bot_id = ? AND u.id = ?`, botID, id))
	}
	return u, err
}

// UpdateChatUser replaces the user's name, picture, profile, tags,
// properties and attributes.
func (s *Store) UpdateChatUser(ctx context.Context, u platform.ChatUser) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE chat_users SET name = ?, picture_url = ?, profile = ?, tags = ?, properties = ?, attributes = ?, updated_at = ? WHERE id = ?`,
			u.Name, u.PictureURL, u.Profile, tagsJSON(u.Tags), tagsJSON(u.Properties), tagsJSON(u.Attributes), micros(u.UpdatedAt), u.ID); err != nil {
			return err
		}
		return s.writeTags(ctx, tx, userTags, u.ID, u.BotID, u.Tags)
	})
}

func (s *Store) DeleteChatUser(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `DELETE FROM bot_states WHERE scope = 'user' AND scope_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM runtime_states WHERE type = 'user' AND scope_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM bot_events WHERE user_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `UPDATE workflows SET user_id = '' WHERE user_id = ?`, id); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM chat_users WHERE id = ?`, id)
	})
}

const convCols = `c.id, c.bot_id, c.fid, c.owner_id, c.tags, c.channel, c.integration, c.properties, c.created_at, c.updated_at`

func scanConversation(sc interface{ Scan(...any) error }) (platform.Conversation, error) {
	var c platform.Conversation
	var raw convRaw
	return c, noRows(raw.decode(&c, sc.Scan(raw.dst(&c)...)))
}

// convRaw holds the columns of convCols that are decoded after the scan.
type convRaw struct {
	tags, properties []byte
	created, updated int64
}

// dst is where convCols scan to.
func (r *convRaw) dst(c *platform.Conversation) []any {
	return []any{&c.ID, &c.BotID, &c.FID, &c.OwnerID, &r.tags, &c.Channel, &c.Integration, &r.properties, &r.created, &r.updated}
}

// decode completes c once scanned, unless the scan failed with err.
func (r *convRaw) decode(c *platform.Conversation, err error) error {
	if err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(r.created), fromMicros(r.updated)
	if c.Tags, err = readTags(r.tags); err != nil {
		return err
	}
	c.Properties, err = readTags(r.properties)
	return err
}

// CreateConversation inserts the conversation with its owner as first participant.
func (s *Store) CreateConversation(ctx context.Context, c platform.Conversation) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO conversations (id, bot_id, fid, owner_id, tags, channel, integration, properties, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.BotID, c.FID, c.OwnerID, tagsJSON(c.Tags), cmp.Or(c.Channel, "channel"),
			cmp.Or(c.Integration, "chat"), tagsJSON(c.Properties), micros(c.CreatedAt), micros(c.UpdatedAt)); err != nil {
			return err
		}
		if err := s.writeTags(ctx, tx, conversationTags, c.ID, c.BotID, c.Tags); err != nil {
			return err
		}
		_, err := s.exec(ctx, tx, `INSERT INTO participants (conversation_id, user_id, created_at) VALUES (?, ?, ?)`, c.ID, c.OwnerID, micros(c.CreatedAt))
		return err
	})
}

func (s *Store) GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error) {
	c, err := scanConversation(s.queryRow(ctx, `SELECT `+convCols+` FROM conversations c WHERE c.bot_id = ? AND c.fid = ?`, botID, id))
	if err == platform.ErrNotFound {
		c, err = scanConversation(s.queryRow(ctx, `SELECT `+convCols+` FROM conversations c WHERE c.bot_id = ? AND c.id = ?`, botID, id))
	}
	return c, err
}

func (s *Store) GetConversationAs(ctx context.Context, botID, id, userID string) (c platform.Conversation, participant bool, err error) {
	const q = `SELECT ` + convCols + `, EXISTS (SELECT 1 FROM participants p WHERE p.conversation_id = c.id AND p.user_id = ?) FROM conversations c WHERE c.bot_id = ? AND `
	c, err = scanConversation(alsoScan{s.queryRow(ctx, q+`c.fid = ?`, userID, botID, id), &participant})
	if err == platform.ErrNotFound {
		c, err = scanConversation(alsoScan{s.queryRow(ctx, q+`c.id = ?`, userID, botID, id), &participant})
	}
	return c, participant && err == nil, err
}

// alsoScan scans one more column after those its caller asks for.
type alsoScan struct {
	sc   interface{ Scan(...any) error }
	more any
}

func (a alsoScan) Scan(dest ...any) error { return a.sc.Scan(append(dest, a.more)...) }

func (s *Store) GetConversationByID(ctx context.Context, id string) (platform.Conversation, error) {
	return scanConversation(s.queryRow(ctx, `SELECT `+convCols+` FROM conversations c WHERE c.id = ?`, id))
}

// DeleteConversation deletes it with its participants, messages, events and
// their queued deliveries to the bot.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM bot_states WHERE scope = 'conversation' AND scope_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM runtime_states WHERE type = 'conversation' AND scope_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM bot_events WHERE conversation_id = ?`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM workflows WHERE conversation_id = ?`, id); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM conversations WHERE id = ?`, id)
	})
}

// ListConversations lists the conversations a user owns, by id.
func (s *Store) ListConversations(ctx context.Context, ownerID, integration string, p store.Page) ([]platform.Conversation, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	query, args := `SELECT `+convCols+` FROM conversations c WHERE c.owner_id = ? AND c.integration = ?`, []any{ownerID, integration}
	if cur != nil {
		query += ` AND c.id > ?`
		args = append(args, cur.ID)
	}
	rows, err := s.query(ctx, query+` ORDER BY c.id LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []platform.Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, p.Limit, func(c platform.Conversation) store.Cursor { return store.Cursor{ID: c.ID} })
	return page, next, nil
}

// AddParticipant adds the user; adding a participant twice is not an error.
func (s *Store) AddParticipant(ctx context.Context, conversationID, userID string, at int64) error {
	_, err := s.exec(ctx, s.w, `INSERT INTO participants (conversation_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, conversationID, userID, at)
	return err
}

func (s *Store) IsParticipant(ctx context.Context, conversationID, userID string) (bool, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM participants WHERE conversation_id = ? AND user_id = ?`, conversationID, userID).Scan(&n)
	return n > 0, err
}

func (s *Store) RemoveParticipant(ctx context.Context, conversationID, userID string) error {
	return s.execOne(ctx, s.w, `DELETE FROM participants WHERE conversation_id = ? AND user_id = ?`, conversationID, userID)
}

// ListParticipants pages through a conversation's participants in user id
// order, on the primary key: a page costs the same however many there are.
func (s *Store) ListParticipants(ctx context.Context, conversationID string, p store.Page) ([]platform.ChatUser, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	query, args := `SELECT `+chatUserCols+` FROM participants pa JOIN chat_users u ON u.id = pa.user_id WHERE pa.conversation_id = ?`, []any{conversationID}
	if cur != nil {
		query += ` AND pa.user_id > ?`
		args = append(args, cur.ID)
	}
	rows, err := s.query(ctx, query+` ORDER BY pa.user_id LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []platform.ChatUser
	for rows.Next() {
		u, err := scanChatUser(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, p.Limit, func(u platform.ChatUser) store.Cursor { return store.Cursor{ID: u.ID} })
	return page, next, nil
}

// enqueueBotEvent queues the delivery of an incoming message or event to
// the bot, in the transaction that stores it; a bot without code or url
// (served elsewhere: an SDK bot) gets none.
// It is due at due, or at the message's date when due is zero.
func (s *Store) enqueueBotEvent(ctx context.Context, tx *sql.Tx, kind, id, conversationID string, created, due time.Time) (bool, error) {
	if due.IsZero() {
		due = created
	}
	payload, _ := json.Marshal(platform.BotEventJob{Type: kind, ID: id, ConversationID: conversationID})
	return s.insertJob(ctx, tx, platform.Job{ID: platform.NewID("job_"), Kind: platform.JobBotEvent, Subject: conversationID, Payload: payload, RunAfter: due, CreatedAt: due},
		`EXISTS (SELECT 1 FROM conversations c JOIN bots b ON b.id = c.bot_id WHERE c.id = ? AND (b.code <> '' OR COALESCE(`+s.d.Tables.JSONText("b.spec")+`, '') <> ''))`,
		conversationID, s.d.Tables.PathArg([]string{"url"}))
}

func nullJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return string(v)
}

// CreateMessage stores the message; a user's message is also queued for
// delivery to the bot.
func (s *Store) CreateMessage(ctx context.Context, m platform.Message) (queued bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		queued = false // a retried transaction starts again
		if _, err := s.exec(ctx, tx, `INSERT INTO messages (id, conversation_id, user_id, payload, metadata, is_bot, tags, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.ConversationID, m.UserID, string(m.Payload), nullJSON(m.Metadata), m.IsBot, tagsJSON(m.Tags), micros(m.CreatedAt)); err != nil {
			return err
		}
		if len(m.Tags) > 0 {
			var botID string
			if err := tx.QueryRowContext(ctx, s.q(`SELECT bot_id FROM conversations WHERE id = ?`), m.ConversationID).Scan(&botID); err != nil {
				return noRows(err)
			}
			if err := s.writeTags(ctx, tx, messageTags, m.ID, botID, m.Tags); err != nil {
				return err
			}
		}
		if m.IsBot || m.History {
			return nil
		}
		queued, err = s.enqueueBotEvent(ctx, tx, platform.BotEventMessage, m.ID, m.ConversationID, m.CreatedAt, m.DueAt)
		return err
	})
	return queued && err == nil, err
}

const messageCols = `m.id, m.conversation_id, m.user_id, m.payload, m.metadata, m.is_bot, m.tags, m.created_at, m.updated_at`

func scanMessage(sc interface{ Scan(...any) error }) (platform.Message, error) {
	var m platform.Message
	var payload, tags []byte
	var meta sql.NullString
	var at, up int64
	err := sc.Scan(&m.ID, &m.ConversationID, &m.UserID, &payload, &meta, &m.IsBot, &tags, &at, &up)
	m.Payload, m.CreatedAt = payload, fromMicros(at)
	if up != 0 {
		m.UpdatedAt = fromMicros(up)
	}
	if meta.Valid {
		m.Metadata = json.RawMessage(meta.String)
	}
	if err == nil {
		m.Tags, err = readTags(tags)
	}
	return m, noRows(err)
}

func (s *Store) GetMessage(ctx context.Context, id string) (platform.Message, error) {
	return scanMessage(s.queryRow(ctx, `SELECT `+messageCols+` FROM messages m WHERE m.id = ?`, id))
}

func (s *Store) DeleteMessage(ctx context.Context, id string) error {
	return s.execOne(ctx, s.w, `DELETE FROM messages WHERE id = ?`, id)
}

// ListMessages pages through a conversation's messages, newest first.
func (s *Store) ListMessages(ctx context.Context, conversationID string, p store.Page) ([]platform.Message, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	query, args := `SELECT `+messageCols+` FROM messages m WHERE m.conversation_id = ?`, []any{conversationID}
	if cur != nil {
		query += ` AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))`
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	rows, err := s.query(ctx, query+` ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []platform.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, p.Limit, func(m platform.Message) store.Cursor { return store.Cursor{Value: micros(m.CreatedAt), ID: m.ID} })
	return page, next, nil
}

// LastMessages returns the newest message of each of the conversations
// that has one, by conversation id (an index read per conversation).
func (s *Store) LastMessages(ctx context.Context, conversationIDs []string) (map[string]platform.Message, error) {
	out := map[string]platform.Message{}
	if len(conversationIDs) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, `SELECT `+messageCols+` FROM messages m WHERE m.id IN (
		SELECT (SELECT l.id FROM messages l WHERE l.conversation_id = c.id ORDER BY l.created_at DESC, l.id DESC LIMIT 1)
		FROM conversations c WHERE c.id IN (`+placeholders(len(conversationIDs))+`))`, anys(conversationIDs)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out[m.ConversationID] = m
	}
	return out, rows.Err()
}

// CreateChatEvent stores a custom event; a user's is also queued for the bot.
func (s *Store) CreateChatEvent(ctx context.Context, e platform.ChatEvent) (queued bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		queued = false // a retried transaction starts again
		if _, err := s.exec(ctx, tx, `INSERT INTO chat_events (id, conversation_id, user_id, payload, is_bot, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			e.ID, e.ConversationID, e.UserID, string(e.Payload), e.IsBot, micros(e.CreatedAt)); err != nil {
			return err
		}
		if e.IsBot {
			return nil
		}
		queued, err = s.enqueueBotEvent(ctx, tx, platform.BotEventChat, e.ID, e.ConversationID, e.CreatedAt, e.DueAt)
		return err
	})
	return queued && err == nil, err
}

const chatEventCols = `e.id, e.conversation_id, e.user_id, e.payload, e.is_bot, e.created_at`

func scanChatEvent(sc interface{ Scan(...any) error }) (platform.ChatEvent, error) {
	var e platform.ChatEvent
	var payload []byte
	var at int64
	err := sc.Scan(&e.ID, &e.ConversationID, &e.UserID, &payload, &e.IsBot, &at)
	e.Payload, e.CreatedAt = payload, fromMicros(at)
	return e, noRows(err)
}

func (s *Store) GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error) {
	return scanChatEvent(s.queryRow(ctx, `SELECT `+chatEventCols+` FROM chat_events e WHERE e.id = ?`, id))
}
