package sqlstore

import (
	"context"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

var fileSortCols = map[string]string{"key": "f.key", "size": "COALESCE(f.size, -1)", "createdAt": "f.created_at", "updatedAt": "f.updated_at", "status": "f.status"}

// visible adds the condition selecting the files v may see.
func visible(q *strings.Builder, args []any, v store.FileVisibility, alias string) []any {
	q.WriteString(alias + `.bot_id = ?`)
	args = append(args, v.BotID)
	if !v.All {
		q.WriteString(` AND (` + alias + `.scope = ? OR ` + alias + `.shared = ?)`)
		args = append(args, v.Scope, true)
	}
	return args
}

// tagConds adds the conditions of listFiles' and searchFiles' tag filters:
// every key of tags with one of its values, none of notTags' values.
func tagConds(q *strings.Builder, args []any, tags, notTags map[string][]string) []any {
	return tagFilter(q, args, "file_tags t WHERE t.file_id = f.id", tags, notTags)
}

// tagFilter adds tag conditions on the rows of a tags table (t, with key
// and value columns) that from selects for the listed row.
func tagFilter(q *strings.Builder, args []any, from string, tags, notTags map[string][]string) []any {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(tags[k]) == 0 {
			q.WriteString(` AND 1 = 0`)
			continue
		}
		q.WriteString(` AND EXISTS (SELECT 1 FROM ` + from + ` AND t.key = ? AND t.value IN (` + placeholders(len(tags[k])) + `))`)
		args = append(args, k)
		for _, v := range tags[k] {
			args = append(args, v)
		}
	}
	keys = keys[:0]
	for k := range notTags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(notTags[k]) == 0 {
			continue
		}
		q.WriteString(` AND NOT EXISTS (SELECT 1 FROM ` + from + ` AND t.key = ? AND t.value IN (` + placeholders(len(notTags[k])) + `))`)
		args = append(args, k)
		for _, v := range notTags[k] {
			args = append(args, v)
		}
	}
	return args
}

func (s *Store) ListFiles(ctx context.Context, f store.FileFilter) ([]platform.File, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	field := f.SortField
	if field == "" {
		field = "createdAt"
	}
	col := fileSortCols[field]
	text := field == "key" || field == "status"
	dir, cmp := "ASC", ">"
	if f.Descending {
		dir, cmp = "DESC", "<"
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + fileCols + ` FROM files f WHERE `)
	args := visible(&q, nil, f.FileVisibility, "f")
	args = tagConds(&q, args, f.Tags, f.NotTags)
	if len(f.IDs) > 0 {
		q.WriteString(` AND f.id IN (` + placeholders(len(f.IDs)) + `)`)
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if f.Indexed != nil {
		q.WriteString(` AND f.index_requested = ?`)
		args = append(args, *f.Indexed)
	}
	if cur != nil {
		var v any = cur.Value
		if text {
			v = cur.Text
		}
		q.WriteString(` AND (` + col + ` ` + cmp + ` ? OR (` + col + ` = ? AND f.id ` + cmp + ` ?))`)
		args = append(args, v, v, cur.ID)
	}
	q.WriteString(` ORDER BY ` + col + ` ` + dir + `, f.id ` + dir + ` LIMIT ?`)
	args = append(args, f.Limit+1)
	rows, err := s.query(ctx, q.String(), args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := make([]platform.File, 0, f.Limit+1)
	for rows.Next() {
		file, err := scanFile(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, file)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, f.Limit, func(x platform.File) store.Cursor {
		c := store.Cursor{ID: x.ID}
		switch field {
		case "key":
			c.Text = x.Key
		case "status":
			c.Text = x.Status
		case "size":
			c.Value = -1
			if x.Size != nil {
				c.Value = *x.Size
			}
		case "updatedAt":
			c.Value = micros(x.UpdatedAt)
		default:
			c.Value = micros(x.CreatedAt)
		}
		return c
	})
	return page, next, nil
}

// listDistinct pages through the distinct values of col selected by the
// inner query (which ends in a WHERE condition), in order.
func (s *Store) listDistinct(ctx context.Context, inner, col string, args []any, p store.Page) ([]string, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	if cur != nil {
		inner += ` AND ` + col + ` > ?`
		args = append(args, cur.Text)
	}
	rows, err := s.query(ctx, `SELECT DISTINCT v FROM (`+inner+`) d ORDER BY v LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	// The value goes in Text: it may be empty (a tag value), an ID may not.
	page, next := pageOf(out, p.Limit, func(v string) store.Cursor { return store.Cursor{Text: v, ID: "v"} })
	return page, next, nil
}

func (s *Store) ListFileTags(ctx context.Context, v store.FileVisibility, p store.Page) ([]string, string, error) {
	var q strings.Builder
	q.WriteString(`SELECT t.key AS v FROM file_tags t JOIN files f ON f.id = t.file_id WHERE `)
	args := visible(&q, nil, v, "f")
	return s.listDistinct(ctx, q.String(), "t.key", args, p)
}

func (s *Store) ListFileTagValues(ctx context.Context, v store.FileVisibility, key string, p store.Page) ([]string, string, error) {
	var q strings.Builder
	q.WriteString(`SELECT t.value AS v FROM file_tags t JOIN files f ON f.id = t.file_id WHERE t.key = ? AND `)
	args := visible(&q, []any{key}, v, "f")
	return s.listDistinct(ctx, q.String(), "t.value", args, p)
}
