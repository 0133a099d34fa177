package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/words"
)

type passageMeta struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype,omitempty"`
	PageNumber int    `json:"pageNumber,omitempty"`
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// CompleteIndexing replaces the file's passages and marks it indexed, if
// its content is still generation gen (ErrConflict otherwise: it was
// replaced meanwhile, and a newer job will index it).
func (s *Store) CompleteIndexing(ctx context.Context, fileID string, gen int64, stack string, ps []platform.Passage, now time.Time) error {
	defer s.counts.clear() // after the write: a count taken meanwhile may predate it
	n := len(ps)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var botID string
		if err := tx.QueryRowContext(ctx, s.q(`SELECT bot_id FROM files WHERE id = ? AND generation = ?`+s.d.ForUpdate), fileID, gen).Scan(&botID); err != nil {
			if err == sql.ErrNoRows {
				return platform.ErrConflict
			}
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM passages WHERE file_id = ?`, fileID); err != nil {
			return err
		}
		var extra int64
		for _, p := range ps {
			extra += int64(len(p.Image))
		}
		if err := s.setExtraBytes(ctx, tx, fileID, extra); err != nil {
			return err
		}
		// Rows go passageBatch to a statement: one round trip each, not one
		// a passage (PostgreSQL is over the network).
		for len(ps) > 0 {
			batch := ps[:min(passageBatch, len(ps))]
			ps = ps[len(batch):]
			args := make([]any, 0, 11*len(batch))
			for _, p := range batch {
				args = append(args, passageArgs(p, fileID, botID)...)
			}
			if _, err := s.exec(ctx, tx, insertPassages(len(batch)), args...); err != nil {
				return err
			}
		}
		return s.execOne(ctx, tx, `UPDATE files SET status = ?, failed_reason = '', indexing_stack = ?, updated_at = ? WHERE id = ?`,
			platform.FileIndexCompleted, stack, micros(now), fileID)
	})
	if err == nil {
		s.stats.wrote(n + 1) // the passages and the file
	}
	return err
}

// passageArgs are the values of a passage's row, in insertPassages' order.
func passageArgs(p platform.Passage, fileID, botID string) []any {
	meta, _ := json.Marshal(passageMeta{Type: p.Type, Subtype: p.Subtype, PageNumber: p.PageNumber})
	bc := p.Breadcrumb
	if bc == nil {
		bc = []string{}
	}
	crumbs, _ := json.Marshal(bc)
	qs := p.Questions
	if qs == nil {
		qs = []string{}
	}
	questions, _ := json.Marshal(qs)
	var image any
	if p.Image != nil {
		image = p.Image
	}
	return []any{p.ID, fileID, botID, p.Position, p.Content, string(meta), string(crumbs), string(questions), encodeVector(p.Vector), image, p.ImageType}
}

// passageBatch is how many passages CompleteIndexing inserts a statement.
const passageBatch = 256

// insertPassages is the INSERT of n passages, built once for each n.
var insertPassages = func() func(n int) string {
	qs := make([]string, passageBatch+1)
	for n := 1; n <= passageBatch; n++ {
		qs[n] = `INSERT INTO passages (id, file_id, bot_id, position, content, meta, breadcrumb, questions, vector, image, image_type) VALUES ` +
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), `, n), `, `)
	}
	return func(n int) string { return qs[n] }
}()

// FailIndexing marks the file's indexing failed with reason and drops the
// passages of an earlier indexing, if its content is still generation gen
// (ErrConflict otherwise).
func (s *Store) FailIndexing(ctx context.Context, fileID string, gen int64, reason string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		err := s.execOne(ctx, tx, `UPDATE files SET status = ?, failed_reason = ?, updated_at = ? WHERE id = ? AND generation = ?`,
			platform.FileIndexFailed, reason, micros(now), fileID, gen)
		if err == platform.ErrNotFound {
			return platform.ErrConflict
		}
		if err != nil {
			return err
		}
		if _, err = s.exec(ctx, tx, `DELETE FROM passages WHERE file_id = ?`, fileID); err != nil {
			return err
		}
		return s.setExtraBytes(ctx, tx, fileID, 0)
	})
}

// setExtraBytes sets the bytes a file's indexing stored besides its
// content (page images), moving the workspace's File Storage usage by the
// difference.
func (s *Store) setExtraBytes(ctx context.Context, tx *sql.Tx, fileID string, extra int64) error {
	var ws string
	var old int64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT workspace_id, extra_bytes FROM files WHERE id = ?`), fileID).Scan(&ws, &old); err != nil {
		return noRows(err)
	}
	if extra == old {
		return nil
	}
	if _, err := s.exec(ctx, tx, `UPDATE workspace_storage SET file_bytes = file_bytes + ? WHERE workspace_id = ?`, extra-old, ws); err != nil {
		return err
	}
	_, err := s.exec(ctx, tx, `UPDATE files SET extra_bytes = ? WHERE id = ?`, extra, fileID)
	return err
}

// PassageImage returns the image of a file's passage (vision.indexPages)
// and its MIME type; ErrNotFound when the passage has none.
func (s *Store) PassageImage(ctx context.Context, fileID, passageID string) (string, []byte, error) {
	var typ string
	var img []byte
	err := s.queryRow(ctx, `SELECT image_type, image FROM passages WHERE file_id = ? AND id = ? AND image IS NOT NULL`, fileID, passageID).Scan(&typ, &img)
	return typ, img, noRows(err)
}

// QueueIndexing sets the file back to indexing_pending and queues a job to
// index it with the given payload (setFilePassages).
func (s *Store) QueueIndexing(ctx context.Context, fileID string, payload json.RawMessage, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE files SET status = ?, failed_reason = '', updated_at = ? WHERE id = ?`,
			platform.FileIndexPending, micros(now), fileID); err != nil {
			return err
		}
		_, err := s.insertJob(ctx, tx, platform.Job{ID: platform.NewID("job_"), Kind: platform.JobIndexFile, Subject: fileID, Payload: payload, RunAfter: now, CreatedAt: now}, "")
		return err
	})
}

const passageCols = `p.seq, p.id, p.file_id, p.bot_id, p.position, p.content, p.meta, p.breadcrumb, p.questions, p.image_type`

func scanPassage(sc interface{ Scan(...any) error }) (platform.Passage, error) {
	var p platform.Passage
	var meta, crumbs, questions string
	if err := sc.Scan(&p.Seq, &p.ID, &p.FileID, &p.BotID, &p.Position, &p.Content, &meta, &crumbs, &questions, &p.ImageType); err != nil {
		return p, noRows(err)
	}
	var m passageMeta
	_ = json.Unmarshal([]byte(meta), &m)
	p.Type, p.Subtype, p.PageNumber = m.Type, m.Subtype, m.PageNumber
	_ = json.Unmarshal([]byte(crumbs), &p.Breadcrumb)
	if questions != "[]" {
		_ = json.Unmarshal([]byte(questions), &p.Questions)
	}
	return p, nil
}

func (s *Store) passages(ctx context.Context, query string, args ...any) ([]platform.Passage, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.Passage
	for rows.Next() {
		p, err := scanPassage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ListPassages lists a file's passages in order.
func (s *Store) ListPassages(ctx context.Context, fileID string, p store.Page) ([]platform.Passage, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	after := int64(-1)
	if cur != nil {
		after = cur.Value
	}
	ps, err := s.passages(ctx, `SELECT `+passageCols+` FROM passages p WHERE p.file_id = ? AND p.position > ? ORDER BY p.position LIMIT ?`, fileID, after, p.Limit+1)
	if err != nil {
		return nil, "", err
	}
	page, next := pageOf(ps, p.Limit, func(x platform.Passage) store.Cursor { return store.Cursor{Value: int64(x.Position), ID: x.ID} })
	return page, next, nil
}

// PassagesAround returns a file's passages with positions in [from, to].
func (s *Store) PassagesAround(ctx context.Context, fileID string, from, to int) ([]platform.Passage, error) {
	return s.passages(ctx, `SELECT `+passageCols+` FROM passages p WHERE p.file_id = ? AND p.position BETWEEN ? AND ? ORDER BY p.position`, fileID, from, to)
}

// PassagesBySeq loads passages by seq, in no particular order.
func (s *Store) PassagesBySeq(ctx context.Context, seqs []int64) ([]platform.Passage, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	return s.passages(ctx, `SELECT `+passageCols+` FROM passages p WHERE p.seq IN (`+placeholders(len(seqs))+`)`, anys(seqs)...)
}

// PassageStats returns the newest seq and the number of a bot's passages,
// and how many times they changed, as the triggers of passages keep them
// (migration 0036): one row read, however many passages the bot has.
func (s *Store) PassageStats(ctx context.Context, botID string) (int64, int, int64, error) {
	var maxSeq, n, changes int64
	err := s.queryRow(ctx, `SELECT max_seq, passages, changes FROM passage_stats WHERE bot_id = ?`, botID).Scan(&maxSeq, &n, &changes)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, nil // none ever stored
	}
	return maxSeq, int(n), changes, err
}

// PassageVectors returns the seq, file and vector of a bot's passages
// whose seq is after afterSeq and at most upToSeq, by seq.
func (s *Store) PassageVectors(ctx context.Context, botID string, afterSeq, upToSeq int64) ([]platform.Passage, error) {
	rows, err := s.query(ctx, `SELECT seq, file_id, vector FROM passages WHERE bot_id = ? AND seq > ? AND seq <= ? ORDER BY seq`, botID, afterSeq, upToSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.Passage
	for rows.Next() {
		var p platform.Passage
		var vec []byte
		if err := rows.Scan(&p.Seq, &p.FileID, &vec); err != nil {
			return nil, err
		}
		p.Vector = decodeVector(vec)
		out = append(out, p)
	}
	return out, rows.Err()
}

// SearchableFiles returns the ids of the indexed files v may see that pass
// the tag filters, among the files of among unless it is nil.
func (s *Store) SearchableFiles(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, among []string) ([]string, error) {
	if among != nil && len(among) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString(`SELECT f.id FROM files f WHERE `)
	args := visible(&q, nil, v, "f")
	args = tagConds(&q, args, tags, notTags)
	if among != nil {
		q.WriteString(` AND f.id IN (` + placeholders(len(among)) + `)`)
		args = append(args, anys(among)...)
	}
	q.WriteString(` AND f.status = ?`)
	args = append(args, platform.FileIndexCompleted)
	return s.queryStrings(ctx, q.String(), args...)
}

// TextCandidates returns the passages of the visible, tag-matching indexed
// files that hold terms (words.Query's words), with their content and
// heading path, in no order: the caller ranks them (BM25, in Go, the same
// on every database). df holds the terms' counts from TermStats (nil:
// counted here).
//
// A common word matches much of a big index (tens of thousands of passages
// out of 100,000), and every candidate is read and ranked. So the
// candidates are those holding the query's rarer words: the words are
// taken from the rarest (by their counts) while the passages they match
// stay within budget in all; the first word that matches anything is
// always taken. When even that one matches more than budget passages
// (every word is common), the candidates are the passages holding the two
// rarest words together, if at least minCandidates do, or else budget of
// the passages holding the rarest. Left out are passages that hold only
// commoner words, which rank low anyway (BM25 weighs a word by its
// rarity). When all the words are taken (any query on a small index), the
// candidates are all the passages holding any word.
func (s *Store) TextCandidates(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, terms []string, df []int64, budget int) ([]platform.Passage, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	sel, matching, capped, err := s.selectiveTerms(ctx, terms, df, budget)
	if err != nil {
		return nil, err
	}
	if capped && len(matching) >= 2 {
		out, err := s.textCandidates(ctx, v, tags, notTags, matching[:2], true, budget)
		if err != nil || len(out) >= minCandidates {
			return out, err
		}
	}
	return s.textCandidates(ctx, v, tags, notTags, sel, false, budget)
}

// minCandidates is the fewest passages holding the two rarest of only
// common words that TextCandidates settles for.
const minCandidates = 50

// textCandidates returns up to budget passages holding any of sel (all of
// sel with and).
func (s *Store) textCandidates(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, sel []string, and bool, budget int) ([]platform.Passage, error) {
	var q strings.Builder
	var args []any
	ft := s.d.FullText
	switch {
	case ft.Candidates == "":
		q.WriteString(`SELECT ` + passageCols + ` ` + ft.From + ` AND `)
		args = append(args, ft.Query(sel, and))
	case and:
		q.WriteString(`SELECT ` + passageCols + ` ` + ft.Candidates + ` AND `)
		args = append(args, []string{ft.Query(sel, true)}, budget)
	default:
		qs := make([]string, len(sel))
		for i, w := range sel {
			qs[i] = ft.Query([]string{w}, false)
		}
		q.WriteString(`SELECT ` + passageCols + ` ` + ft.Candidates + ` AND `)
		args = append(args, qs, budget)
	}
	args = visible(&q, args, v, "f")
	args = tagConds(&q, args, tags, notTags)
	q.WriteString(` AND f.status = ? LIMIT ?`)
	args = append(args, platform.FileIndexCompleted, budget)
	return s.passages(ctx, q.String(), args...)
}

// selectiveTerms returns the distinct terms whose passages are the
// candidates of TextCandidates: counting the passages each term matches (all
// bots', up to budget+1), the rarest first (and any matching
// nothing: stop words on PostgreSQL, misspellings), then the next ones while
// the counts stay within budget in all. capped reports that the
// terms match more passages than that; matching are the terms that match
// passages, rarest first. df, when not nil, holds the counts of terms.
func (s *Store) selectiveTerms(ctx context.Context, terms []string, df []int64, budget int) (sel, matching []string, capped bool, err error) {
	ds := words.Distinct(terms)
	var counts []int64
	if df != nil {
		known := make(map[string]int64, len(terms))
		for i, t := range terms {
			known[t] = df[i]
		}
		counts = make([]int64, len(ds))
		for i, t := range ds {
			counts[i] = known[t]
		}
	} else if counts, err = s.termCounts(ctx, ds, int64(budget)+1); err != nil {
		return nil, nil, false, err
	}
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] < counts[order[b]] })
	var sum int64
	done := false
	for _, i := range order {
		if counts[i] > 0 {
			matching = append(matching, ds[i])
		}
		if done || (sum > 0 && sum+counts[i] > int64(budget)) {
			done = true
			continue
		}
		sel = append(sel, ds[i])
		sum += counts[i]
	}
	return sel, matching, sum > int64(budget), nil
}

// termCounts counts the passages (of every bot) holding each of the
// distinct words ds, up to limit each, from the cache where it has them,
// the others in one statement.
func (s *Store) termCounts(ctx context.Context, ds []string, limit int64) ([]int64, error) {
	counts := make([]int64, len(ds))
	now := time.Now()
	var missing []int
	for i, t := range ds {
		if n, ok := s.counts.get(t, limit, now); ok {
			counts[i] = n
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return counts, nil
	}
	ft := s.d.FullText
	if ft.CountEach != "" {
		qs := make([]string, len(missing))
		for k, i := range missing {
			qs[k] = ft.Query([]string{ds[i]}, false)
		}
		rows, err := s.query(ctx, ft.CountEach, limit, qs)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		k := 0
		for ; rows.Next() && k < len(missing); k++ {
			if err := rows.Scan(&counts[missing[k]]); err != nil {
				return nil, err
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if k != len(missing) {
			return nil, fmt.Errorf("counting words: %d counts for %d words", k, len(missing))
		}
	} else {
		var q strings.Builder
		var args []any
		dst := make([]any, len(missing))
		for k, i := range missing {
			if k == 0 {
				q.WriteString(`SELECT `)
			} else {
				q.WriteString(`, `)
			}
			q.WriteString(`(SELECT count(*) FROM (` + ft.Matching + ` LIMIT ?) c)`)
			args = append(args, ft.Query([]string{ds[i]}, false), limit)
			dst[k] = &counts[i]
		}
		if err := s.queryRow(ctx, q.String(), args...).Scan(dst...); err != nil {
			return nil, err
		}
	}
	for _, i := range missing {
		s.counts.put(ds[i], counts[i], limit, now)
	}
	return counts, nil
}

// TermStats returns the number of passages and how many hold each word,
// up to limit (see store.Store), both remembered like the counts of
// selectiveTerms.
func (s *Store) TermStats(ctx context.Context, ws []string, limit int) (int64, []int64, error) {
	ds := words.Distinct(ws)
	counts, err := s.termCounts(ctx, ds, int64(limit))
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	total, ok := s.counts.get(totalKey, math.MaxInt64, now)
	if !ok {
		if err := s.queryRow(ctx, `SELECT count(*) FROM passages`).Scan(&total); err != nil {
			return 0, nil, err
		}
		s.counts.put(totalKey, total, math.MaxInt64, now)
	}
	byWord := make(map[string]int64, len(ds))
	for i, w := range ds {
		byWord[w] = counts[i]
	}
	df := make([]int64, len(ws))
	for i, w := range ws {
		df[i] = byWord[w]
	}
	return total, df, nil
}

// totalKey is the count cache's key for the number of passages (no word
// is empty).
const totalKey = ""

// termCountCache remembers the (capped) number of passages each word
// matched, for selectiveTerms and TermStats: counting visits up to the
// limit asked rows a word, and a search counts every word of the query and
// of its stand-ins. The counts choose which words select TextCandidates'
// candidates and give the ranking its document frequencies, where a count
// up to termCountTTL old does as well: a word's frequency barely moves in a
// minute, and a word counted too rare is taken first, never left out, so
// passages stored meanwhile (by another process sharing the database) are
// still found. This process forgets them all when it stores passages.
type termCountCache struct {
	mu sync.Mutex
	m  map[string]termCount
}

type termCount struct {
	n, limit int64 // counted up to limit
	at       time.Time
}

const (
	termCountTTL = time.Minute
	termCountMax = 10000 // terms remembered; all are forgotten past that
)

// get returns t's count up to limit, if it is known: counted up to limit
// or more, or found below the limit it was counted to.
func (c *termCountCache) get(t string, limit int64, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[t]
	if !ok || now.Sub(e.at) > termCountTTL || (e.n >= e.limit && e.limit < limit) {
		return 0, false
	}
	return min(e.n, limit), true
}

func (c *termCountCache) put(t string, n, limit int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= termCountMax {
		c.m = map[string]termCount{}
	}
	c.m[t] = termCount{n, limit, now}
}

func (c *termCountCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}
