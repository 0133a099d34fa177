package sqlstore

import (
	"context"
	"database/sql"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Store) putKBTags(ctx context.Context, tx *sql.Tx, kb platform.KnowledgeBase) error {
	if _, err := s.exec(ctx, tx, `DELETE FROM knowledge_base_tags WHERE kb_id = ?`, kb.ID); err != nil {
		return err
	}
	keys := make([]string, 0, len(kb.Tags))
	for k := range kb.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := s.exec(ctx, tx, `INSERT INTO knowledge_base_tags (kb_id, key, value) VALUES (?, ?, ?)`, kb.ID, k, kb.Tags[k]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) CreateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO knowledge_bases (id, bot_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			kb.ID, kb.BotID, kb.Name, micros(kb.CreatedAt), micros(kb.UpdatedAt)); err != nil {
			return err
		}
		return s.putKBTags(ctx, tx, kb)
	})
}

func (s *Store) UpdateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE knowledge_bases SET name = ?, updated_at = ? WHERE bot_id = ? AND id = ?`,
			kb.Name, micros(kb.UpdatedAt), kb.BotID, kb.ID); err != nil {
			return err
		}
		return s.putKBTags(ctx, tx, kb)
	})
}

func (s *Store) DeleteKnowledgeBase(ctx context.Context, botID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `DELETE FROM knowledge_base_tags WHERE kb_id IN (SELECT id FROM knowledge_bases WHERE bot_id = ? AND id = ?)`, botID, id); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM knowledge_bases WHERE bot_id = ? AND id = ?`, botID, id)
	})
}

func (s *Store) kbTags(ctx context.Context, ids []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
		out[id] = map[string]string{}
	}
	rows, err := s.query(ctx, `SELECT kb_id, key, value FROM knowledge_base_tags WHERE kb_id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, k, v string
		if err := rows.Scan(&id, &k, &v); err != nil {
			return nil, err
		}
		out[id][k] = v
	}
	return out, rows.Err()
}

func (s *Store) GetKnowledgeBase(ctx context.Context, botID, id string) (platform.KnowledgeBase, error) {
	kbs, _, err := s.listKBs(ctx, botID, `AND k.id = ?`, []any{id}, 1)
	if err != nil {
		return platform.KnowledgeBase{}, err
	}
	if len(kbs) == 0 {
		return platform.KnowledgeBase{}, platform.ErrNotFound
	}
	return kbs[0], nil
}

// ListKnowledgeBases lists a bot's knowledge bases by id; tags: every key
// must have one of its values.
func (s *Store) ListKnowledgeBases(ctx context.Context, botID string, tags map[string][]string, p store.Page) ([]platform.KnowledgeBase, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	var args []any
	args = tagFilter(&q, args, "knowledge_base_tags t WHERE t.kb_id = k.id", tags, nil)
	if cur != nil {
		q.WriteString(` AND k.id > ?`)
		args = append(args, cur.ID)
	}
	return s.listKBs(ctx, botID, q.String(), args, p.Limit)
}

func (s *Store) listKBs(ctx context.Context, botID, where string, args []any, limit int) ([]platform.KnowledgeBase, string, error) {
	rows, err := s.query(ctx, `SELECT k.id, k.bot_id, k.name, k.created_at, k.updated_at FROM knowledge_bases k WHERE k.bot_id = ? `+where+` ORDER BY k.id LIMIT ?`,
		append(append([]any{botID}, args...), limit+1)...)
	if err != nil {
		return nil, "", err
	}
	var out []platform.KnowledgeBase
	for rows.Next() {
		var kb platform.KnowledgeBase
		var created, updated int64
		if err := rows.Scan(&kb.ID, &kb.BotID, &kb.Name, &created, &updated); err != nil {
			rows.Close()
			return nil, "", err
		}
		kb.CreatedAt, kb.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, kb)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, limit, func(k platform.KnowledgeBase) store.Cursor { return store.Cursor{ID: k.ID} })
	ids := make([]string, len(page))
	for i, k := range page {
		ids[i] = k.ID
	}
	tags, err := s.kbTags(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	for i := range page {
		page[i].Tags = tags[page[i].ID]
	}
	return page, next, nil
}
