package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// archivePage is how many rows EachBotRow reads a query.
const archivePage = 500

type scanner = interface{ Scan(...any) error }

// botRows is how EachBotRow reads one kind: a query taking the bot id, the
// last key read and a limit, in key order; the key of a row; its scan.
type botRows struct {
	query string
	key   func(any) string
	scan  func(scanner) (any, error)
}

func anyOf[T any](scan func(scanner) (T, error)) func(scanner) (any, error) {
	return func(sc scanner) (any, error) { return scan(sc) }
}

var botRowKinds = map[string]botRows{
	store.RowVersions: {`SELECT ` + botVersionCols + `, v.code, v.spec FROM bot_versions v WHERE v.bot_id = ? AND v.id > ? ORDER BY v.id LIMIT ?`,
		func(r any) string { return r.(platform.BotVersion).ID }, anyOf(scanWholeVersion)},
	store.RowUsers: {`SELECT ` + chatUserCols + ` FROM chat_users u WHERE u.bot_id = ? AND u.id > ? ORDER BY u.id LIMIT ?`,
		func(r any) string { return r.(platform.ChatUser).ID }, anyOf(scanChatUser)},
	store.RowConversations: {`SELECT ` + convCols + ` FROM conversations c WHERE c.bot_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`,
		func(r any) string { return r.(store.BotConversation).ID },
		func(sc scanner) (any, error) {
			c, err := scanConversation(sc)
			return store.BotConversation{Conversation: c}, err
		}},
	store.RowMessages: {`SELECT ` + messageCols + ` FROM messages m WHERE m.conversation_id IN (SELECT id FROM conversations WHERE bot_id = ?) AND m.id > ? ORDER BY m.id LIMIT ?`,
		func(r any) string { return r.(platform.Message).ID }, anyOf(scanMessage)},
	store.RowStates: {`SELECT ` + stateCols + ` FROM runtime_states WHERE bot_id = ? AND id > ? ORDER BY id LIMIT ?`,
		func(r any) string { return r.(platform.RuntimeState).ID }, anyOf(scanState)},
	// A bot's code states have no id: the scope and its id are the key.
	store.RowCodeStates: {`SELECT bot_id, scope, scope_id, value FROM bot_states WHERE bot_id = ? AND scope || ':' || scope_id > ? ORDER BY scope || ':' || scope_id LIMIT ?`,
		func(r any) string { st := r.(platform.BotState); return st.Scope + ":" + st.ScopeID }, anyOf(scanCodeState)},
	store.RowWorkflows: {`SELECT ` + workflowCols + ` FROM workflows w WHERE w.bot_id = ? AND w.id > ? ORDER BY w.id LIMIT ?`,
		func(r any) string { return r.(platform.Workflow).ID }, anyOf(scanWorkflow)},
	store.RowFiles: {`SELECT ` + fileCols + ` FROM files f WHERE f.bot_id = ? AND f.id > ? ORDER BY f.id LIMIT ?`,
		func(r any) string { return r.(platform.File).ID }, anyOf(scanFile)},
	store.RowPassages: {`SELECT ` + passageCols + `, p.vector, p.image FROM passages p WHERE p.bot_id = ? AND p.id > ? ORDER BY p.id LIMIT ?`,
		func(r any) string { return r.(platform.Passage).ID }, anyOf(scanWholePassage)},
}

func scanWholeVersion(sc scanner) (platform.BotVersion, error) {
	var v platform.BotVersion
	var spec string
	if err := scanBotVersion(sc, &v, &v.Code, &spec); err != nil {
		return v, err
	}
	return v, json.Unmarshal([]byte(spec), &v.Spec)
}

func scanWholePassage(sc scanner) (platform.Passage, error) {
	var vector, image []byte
	p, err := scanPassage(scanFunc(func(dst ...any) error { return sc.Scan(append(dst, &vector, &image)...) }))
	p.Vector, p.Image = decodeVector(vector), image
	return p, err
}

type scanFunc func(...any) error

func (f scanFunc) Scan(dst ...any) error { return f(dst...) }

func (s *Store) EachBotRow(ctx context.Context, botID, kind string, fn func(any) error) error {
	k, ok := botRowKinds[kind]
	if !ok {
		return fmt.Errorf("sqlstore: no bot rows of kind %q", kind)
	}
	after := ""
	for {
		rows, err := s.query(ctx, k.query, botID, after, archivePage)
		if err != nil {
			return err
		}
		page, err := scanAll(rows, k.scan)
		if err != nil {
			return err
		}
		if kind == store.RowConversations {
			if err := s.withParticipants(ctx, page); err != nil {
				return err
			}
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < archivePage {
			return nil
		}
		after = k.key(page[len(page)-1])
	}
}

// withParticipants fills in the participants of a page of conversations.
func (s *Store) withParticipants(ctx context.Context, page []any) error {
	if len(page) == 0 {
		return nil
	}
	ids := make([]any, len(page))
	at := map[string]int{}
	for i, r := range page {
		ids[i] = r.(store.BotConversation).ID
		at[r.(store.BotConversation).ID] = i
	}
	rows, err := s.query(ctx, `SELECT conversation_id, user_id, created_at FROM participants WHERE conversation_id IN (`+placeholders(len(ids))+`) ORDER BY conversation_id, created_at, user_id`, ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var conv string
		var p store.Participant
		var created int64
		if err := rows.Scan(&conv, &p.UserID, &created); err != nil {
			return err
		}
		p.CreatedAt = fromMicros(created)
		c := page[at[conv]].(store.BotConversation)
		c.Participants = append(c.Participants, p)
		page[at[conv]] = c
	}
	return rows.Err()
}

// ImportBot writes a bot archive's rows; every INSERT skips a row whose id
// (or unique key) is stored already, so that importing again adds nothing
// twice.
func (s *Store) ImportBot(ctx context.Context, in store.BotImport) (map[string]int, error) {
	defer s.counts.clear()
	n := map[string]int{}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		clear(n)
		imp := importer{s: s, tx: tx, ctx: ctx, in: in, n: n, size: new(int64), vector: new(int64)}
		if in.Bot != nil {
			spec, tags, err := botJSON(*in.Bot)
			if err != nil {
				return err
			}
			b := in.Bot
			if _, err := s.exec(ctx, tx, `INSERT INTO bots (id, workspace_id, name, dev, type, status, signing_secret, code, tags, created_by, spec, deployed_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				b.ID, b.WorkspaceID, b.Name, b.Dev, b.Type, b.Status, b.SigningSecret, b.Code, tags, b.CreatedBy, spec,
				nullMicros(b.DeployedAt), micros(b.CreatedAt), micros(b.UpdatedAt)); err != nil {
				return err
			}
			if err := s.writeBotChildren(ctx, tx, *b, true); err != nil {
				return err
			}
		}
		if err := in.Rows(imp.row); err != nil {
			return err
		}
		return imp.takeStorage()
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

type importer struct {
	s   *Store
	tx  *sql.Tx
	ctx context.Context
	in  store.BotImport
	n   map[string]int
	// size and vector are the new files' File Storage and Vector DB
	// Storage, taken at the end.
	size, vector *int64
}

// row writes one row of the archive.
func (m importer) row(row any) error {
	switch r := row.(type) {
	case platform.BotVersion:
		return m.version(r)
	case platform.ChatUser:
		return m.user(r)
	case store.BotConversation:
		return m.conversation(r)
	case platform.Message:
		return m.message(r)
	case platform.RuntimeState:
		return m.state(r)
	case platform.BotState:
		return m.codeState(r)
	case platform.Workflow:
		return m.workflow(r)
	case platform.File:
		return m.file(r)
	case platform.Passage:
		return m.passage(r)
	}
	return fmt.Errorf("import: a row of type %T", row)
}

// insert runs an INSERT that skips stored rows and counts what it added.
func (m importer) insert(kind, query string, args ...any) (bool, error) {
	k, err := m.s.exec(m.ctx, m.tx, query+` ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return false, err
	}
	m.n[kind] += int(k)
	return k > 0, nil
}

func (m importer) version(v platform.BotVersion) error {
	spec, err := json.Marshal(v.Spec)
	if err != nil {
		return err
	}
	if _, err := m.insert(store.RowVersions, `INSERT INTO bot_versions (id, bot_id, seq, name, description, bot_name, code, tags, spec, digest, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, m.in.BotID, v.Seq, v.Name, v.Description, v.BotName, v.Code, tagsJSON(v.Tags), string(spec), v.Digest, v.CreatedBy, micros(v.CreatedAt)); err != nil {
		return err
	}
	return nil
}

func (m importer) user(u platform.ChatUser) error {
	added, err := m.insert(store.RowUsers, `INSERT INTO chat_users (id, bot_id, fid, name, picture_url, profile, tags, properties, attributes, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, m.in.BotID, u.FID, u.Name, u.PictureURL, u.Profile, tagsJSON(u.Tags),
		tagsJSON(u.Properties), tagsJSON(u.Attributes), micros(u.CreatedAt), micros(u.UpdatedAt))
	if err != nil {
		return err
	}
	if added {
		if err := m.s.writeTags(m.ctx, m.tx, userTags, u.ID, m.in.BotID, u.Tags); err != nil {
			return err
		}
	}
	return nil
}

func (m importer) conversation(c store.BotConversation) error {
	added, err := m.insert(store.RowConversations, `INSERT INTO conversations (id, bot_id, fid, owner_id, tags, channel, integration, properties, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, m.in.BotID, c.FID, c.OwnerID, tagsJSON(c.Tags), c.Channel, c.Integration,
		tagsJSON(c.Properties), micros(c.CreatedAt), micros(c.UpdatedAt))
	if err != nil {
		return err
	}
	if added {
		if err := m.s.writeTags(m.ctx, m.tx, conversationTags, c.ID, m.in.BotID, c.Tags); err != nil {
			return err
		}
	}
	for _, p := range c.Participants {
		if _, err := m.s.exec(m.ctx, m.tx, `INSERT INTO participants (conversation_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
			c.ID, p.UserID, micros(p.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

func (m importer) message(msg platform.Message) error {
	updated := int64(0)
	if !msg.UpdatedAt.IsZero() {
		updated = micros(msg.UpdatedAt)
	}
	added, err := m.insert(store.RowMessages, `INSERT INTO messages (id, conversation_id, user_id, payload, metadata, is_bot, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		msg.ID, msg.ConversationID, msg.UserID, string(msg.Payload), nullJSON(msg.Metadata), msg.IsBot, tagsJSON(msg.Tags), micros(msg.CreatedAt), updated)
	if err != nil {
		return err
	}
	if added && len(msg.Tags) > 0 {
		if err := m.s.writeTags(m.ctx, m.tx, messageTags, msg.ID, m.in.BotID, msg.Tags); err != nil {
			return err
		}
	}
	return nil
}

func (m importer) state(st platform.RuntimeState) error {
	if _, err := m.insert(store.RowStates, `INSERT INTO runtime_states (id, bot_id, type, scope_id, name, payload, expiry_ms, expires_at, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		st.ID, m.in.BotID, st.Type, st.ScopeID, st.Name, string(st.Payload), nullInt(st.Expiry), nullMicros(st.ExpiresAt), st.Version,
		micros(st.CreatedAt), micros(st.UpdatedAt)); err != nil {
		return err
	}
	return nil
}

func (m importer) codeState(st platform.BotState) error {
	if _, err := m.insert(store.RowCodeStates, `INSERT INTO bot_states (bot_id, scope, scope_id, value, updated_at) VALUES (?, ?, ?, ?, ?)`,
		m.in.BotID, st.Scope, st.ScopeID, string(st.Value), micros(m.in.Now)); err != nil {
		return err
	}
	return nil
}

func (m importer) workflow(w platform.Workflow) error {
	added, err := m.insert(store.RowWorkflows, `INSERT INTO workflows (id, bot_id, name, status, input, output, parent_id, conversation_id, user_id, tags,
		failure_reason, event_id, timeout_at, completed_at, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, m.in.BotID, w.Name, w.Status, string(w.Input), string(w.Output), w.ParentID, w.ConversationID, w.UserID, tagsJSON(w.Tags),
		w.FailureReason, w.EventID, micros(w.TimeoutAt), nullMicros(w.CompletedAt), w.Version, micros(w.CreatedAt), micros(w.UpdatedAt))
	if err != nil {
		return err
	}
	if added {
		if err := m.s.writeTags(m.ctx, m.tx, workflowTags, w.ID, m.in.BotID, w.Tags); err != nil {
			return err
		}
	}
	return nil
}

// file inserts a new file, counting its storage, and queues the indexing
// of one archived before its indexing ended.
func (m importer) file(f platform.File) error {
	tags, meta, policies, owner := fileJSON(f)
	added, err := m.insert(store.RowFiles, `INSERT INTO files (id, bot_id, workspace_id, scope, key, status, size, declared_size, content_type, tags,
		metadata, access_policies, shared, index_requested, public_now, failed_reason, indexing_stack, expires_at, owner, generation,
		blob_key, sha256, counted, extra_bytes, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, m.in.BotID, m.in.WorkspaceID, f.Scope, f.Key, f.Status, nullSize(f.Size), f.DeclaredSize, f.ContentType, tags,
		meta, policies, f.Has(platform.PolicyIntegrations), f.Index, f.PublicNow, f.FailedReason, f.IndexingStack, nullMicros(f.ExpiresAt), owner, f.Generation,
		f.BlobKey, f.SHA256, f.Counted, f.ExtraBytes, micros(f.CreatedAt), micros(f.UpdatedAt))
	if err != nil || !added {
		return err
	}
	f.BotID = m.in.BotID
	if err := m.s.writeFileTags(m.ctx, m.tx, f); err != nil {
		return err
	}
	if f.Counted && f.Size != nil {
		*m.size += *f.Size + f.ExtraBytes
		if f.Index {
			*m.vector += *f.Size
		}
	}
	if f.Status == platform.FileIndexPending {
		payload, _ := json.Marshal(platform.IndexJob{FileID: f.ID, Generation: f.Generation})
		if _, err := m.s.insertJob(m.ctx, m.tx, platform.Job{ID: platform.NewID("job_"), Kind: platform.JobIndexFile, Subject: f.ID, Payload: payload,
			RunAfter: m.in.Now, CreatedAt: m.in.Now}, ""); err != nil {
			return err
		}
	}
	return nil
}

// takeStorage takes the new files' storage at once (as CompleteUpload
// does, one conditional update within the limits).
func (m importer) takeStorage() error {
	size, vector := *m.size, *m.vector
	if size == 0 && vector == 0 {
		return nil
	}
	ws := m.in.WorkspaceID
	if _, err := m.s.exec(m.ctx, m.tx, `INSERT INTO workspace_storage (workspace_id) VALUES (?) ON CONFLICT DO NOTHING`, ws); err != nil {
		return err
	}
	k, err := m.s.exec(m.ctx, m.tx, `UPDATE workspace_storage SET file_bytes = file_bytes + ?, vector_bytes = vector_bytes + ?
		WHERE workspace_id = ? AND file_bytes + ? <= ? AND (? = 0 OR vector_bytes + ? <= ?)`,
		size, vector, ws, size, m.in.MaxStorage, vector, vector, m.in.MaxVector)
	if err != nil || k > 0 {
		return err
	}
	st, err := m.s.storage(m.ctx, m.tx, ws)
	if err != nil {
		return err
	}
	if st.FileBytes+size > m.in.MaxStorage {
		return &store.QuotaError{Quota: "file storage", Used: st.FileBytes, Limit: m.in.MaxStorage, Size: size}
	}
	return &store.QuotaError{Quota: "vector storage", Used: st.VectorBytes, Limit: m.in.MaxVector, Size: vector}
}

func (m importer) passage(p platform.Passage) error {
	if _, err := m.insert(store.RowPassages, insertPassages(1), passageArgs(p, p.FileID, m.in.BotID)...); err != nil {
		return err
	}
	return nil
}
