package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
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
	return s.tx(ctx, func(tx *sql.Tx) error {
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
			args := make([]any, 0, 10*len(batch))
			for _, p := range batch {
				meta, _ := json.Marshal(passageMeta{Type: p.Type, Subtype: p.Subtype, PageNumber: p.PageNumber})
				bc := p.Breadcrumb
				if bc == nil {
					bc = []string{}
				}
				crumbs, _ := json.Marshal(bc)
				var image any
				if p.Image != nil {
					image = p.Image
				}
				args = append(args, p.ID, fileID, botID, p.Position, p.Content, string(meta), string(crumbs), encodeVector(p.Vector), image, p.ImageType)
			}
			if _, err := s.exec(ctx, tx, insertPassages(len(batch)), args...); err != nil {
				return err
			}
		}
		return s.execOne(ctx, tx, `UPDATE files SET status = ?, failed_reason = '', indexing_stack = ?, updated_at = ? WHERE id = ?`,
			platform.FileIndexCompleted, stack, micros(now), fileID)
	})
}

// passageBatch is how many passages CompleteIndexing inserts a statement.
const passageBatch = 256

// insertPassages is the INSERT of n passages, built once for each n.
var insertPassages = func() func(n int) string {
	qs := make([]string, passageBatch+1)
	for n := 1; n <= passageBatch; n++ {
		qs[n] = `INSERT INTO passages (id, file_id, bot_id, position, content, meta, breadcrumb, vector, image, image_type) VALUES ` +
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?), `, n), `, `)
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

const passageCols = `p.seq, p.id, p.file_id, p.bot_id, p.position, p.content, p.meta, p.breadcrumb, p.image_type`

func scanPassage(sc interface{ Scan(...any) error }) (platform.Passage, error) {
	var p platform.Passage
	var meta, crumbs string
	if err := sc.Scan(&p.Seq, &p.ID, &p.FileID, &p.BotID, &p.Position, &p.Content, &meta, &crumbs, &p.ImageType); err != nil {
		return p, noRows(err)
	}
	var m passageMeta
	_ = json.Unmarshal([]byte(meta), &m)
	p.Type, p.Subtype, p.PageNumber = m.Type, m.Subtype, m.PageNumber
	_ = json.Unmarshal([]byte(crumbs), &p.Breadcrumb)
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
	args := make([]any, len(seqs))
	for i, q := range seqs {
		args[i] = q
	}
	return s.passages(ctx, `SELECT `+passageCols+` FROM passages p WHERE p.seq IN (`+placeholders(len(seqs))+`)`, args...)
}

// PassageStats returns the newest seq and the number of a bot's passages.
func (s *Store) PassageStats(ctx context.Context, botID string) (int64, int, error) {
	var maxSeq sql.NullInt64
	var n int
	err := s.queryRow(ctx, `SELECT MAX(seq), COUNT(*) FROM passages WHERE bot_id = ?`, botID).Scan(&maxSeq, &n)
	return maxSeq.Int64, n, err
}

// PassageVectors returns the seq, file and vector of a bot's passages
// stored after afterSeq, by seq.
func (s *Store) PassageVectors(ctx context.Context, botID string, afterSeq int64) ([]platform.Passage, error) {
	rows, err := s.query(ctx, `SELECT seq, file_id, vector FROM passages WHERE bot_id = ? AND seq > ? ORDER BY seq`, botID, afterSeq)
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
// the tag filters.
func (s *Store) SearchableFiles(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string) ([]string, error) {
	var q strings.Builder
	q.WriteString(`SELECT f.id FROM files f WHERE `)
	args := visible(&q, nil, v, "f")
	args = tagConds(&q, args, tags, notTags)
	q.WriteString(` AND f.status = ?`)
	args = append(args, platform.FileIndexCompleted)
	rows, err := s.query(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// queryTerms splits a search query into the words full-text search looks
// for (letters and digits), lowercased, without English stop words.
func queryTerms(q string) []string {
	ws := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := ws[:0]
	for _, w := range ws {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// stopWords are the words PostgreSQL's english text search configuration
// ignores (its english.stop): to_tsquery drops them from the query there;
// SQLite's FTS5 would match them in most passages (one costly ranking for
// next to nothing: BM25 weighs such words close to 0), so both backends
// leave them out.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
		herself it its itself they them their theirs themselves what which who whom this that these those am is are
		was were be been being have has had having do does did doing a an the and but if or because as until while
		of at by for with about against between into through during before after above below to from up down in out
		on off over under again further then once here there when where why how all any both each few more most
		other some such no nor not only own same so than too very s t can will just don should now`) {
		m[w] = true
	}
	return m
}()

// SearchText ranks the passages of the visible, tag-matching indexed files
// by full-text relevance to query (BM25 on SQLite, ts_rank_cd on
// PostgreSQL; any word may match, stop words aside) and returns up to limit
// seqs, best first.
//
// Ranking every passage that holds a word of the query costs microseconds a
// passage, and a common word matches much of a big index (tens of thousands
// of passages out of 100,000). So the passages ranked, the candidates, are
// those holding the query's rarer words: the words are counted (up to
// candidateBudget+1 passages each; counts are remembered for a minute) and
// taken from the rarest while the passages they match stay within
// candidateBudget in all; the first word that matches anything is always
// taken. When even that one matches more than candidateBudget passages
// (every word is common), the candidates are the passages holding the two
// rarest words together, or if fewer than limit are found, candidateBudget
// of the passages holding the rarest. The candidates are ranked by the
// whole query, every word counting as before; left out are passages that
// hold only commoner words, which rank low anyway (BM25 weighs a word by
// its rarity). When all the words are taken (any query on a small index),
// the candidates are all the passages holding any word, as without the
// limit.
func (s *Store) SearchText(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, query string, limit int) ([]int64, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	sel, matching, capped, err := s.selectiveTerms(ctx, terms)
	if err != nil {
		return nil, err
	}
	switch {
	case !capped && len(sel) == len(distinct(terms)):
		return s.searchText(ctx, v, tags, notTags, terms, nil, false, limit)
	case capped && len(matching) >= 2:
		// Every word is common: the candidates are first the passages
		// holding the two rarest together (those BM25 ranks first).
		out, err := s.searchText(ctx, v, tags, notTags, terms, matching[:2], true, limit)
		if err != nil || len(out) >= limit {
			return out, err
		}
	}
	return s.searchText(ctx, v, tags, notTags, terms, sel, false, limit)
}

// searchText ranks by terms the passages holding any of them, or, with
// sel, only candidateBudget of those holding any of sel (all of sel with
// and).
func (s *Store) searchText(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, terms, sel []string, and bool, limit int) ([]int64, error) {
	var q strings.Builder
	var args []any
	ft := s.d.FullText
	q.WriteString(`SELECT p.seq ` + ft.From + ` AND `)
	args = append(args, ft.Query(terms, false))
	if sel != nil {
		q.WriteString(ft.Candidate + ` IN (` + ft.Matching + ` LIMIT ?) AND `)
		args = append(args, ft.Query(sel, and), candidateBudget)
	}
	args = visible(&q, args, v, "f")
	args = tagConds(&q, args, tags, notTags)
	q.WriteString(` AND f.status = ? ORDER BY ` + ft.Rank + `, p.seq LIMIT ?`)
	args = append(args, platform.FileIndexCompleted, limit)
	rows, err := s.query(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		out = append(out, seq)
	}
	return out, rows.Err()
}

// candidateBudget bounds the passages SearchText ranks when the query has
// commoner words (see SearchText).
const candidateBudget = 1000

func distinct(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	var out []string
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// selectiveTerms returns the distinct terms whose passages are the
// candidates of SearchText: counting the passages each term matches (all
// bots', up to candidateBudget+1), the rarest first (and any matching
// nothing: stop words on PostgreSQL, misspellings), then the next ones while
// the counts stay within candidateBudget in all. capped reports that the
// terms match more passages than that; matching are the terms that match
// passages, rarest first.
func (s *Store) selectiveTerms(ctx context.Context, terms []string) (sel, matching []string, capped bool, err error) {
	ds := distinct(terms)
	counts := make([]int64, len(ds))
	now := time.Now()
	var q strings.Builder
	var args []any
	var missing []int
	for i, t := range ds {
		if n, ok := s.counts.get(t, now); ok {
			counts[i] = n
			continue
		}
		if len(missing) == 0 {
			q.WriteString(`SELECT `)
		} else {
			q.WriteString(`, `)
		}
		missing = append(missing, i)
		q.WriteString(`(SELECT count(*) FROM (` + s.d.FullText.Matching + ` LIMIT ?) c)`)
		args = append(args, s.d.FullText.Query([]string{t}, false), candidateBudget+1)
	}
	if len(missing) > 0 {
		dst := make([]any, len(missing))
		for k, i := range missing {
			dst[k] = &counts[i]
		}
		if err := s.queryRow(ctx, q.String(), args...).Scan(dst...); err != nil {
			return nil, nil, false, err
		}
		for _, i := range missing {
			s.counts.put(ds[i], counts[i], now)
		}
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
		if done || (sum > 0 && sum+counts[i] > candidateBudget) {
			done = true
			continue
		}
		sel = append(sel, ds[i])
		sum += counts[i]
	}
	return sel, matching, sum > candidateBudget, nil
}

// termCountCache remembers the (capped) number of passages each common term
// matched, for selectiveTerms: counting visits up to candidateBudget+1 rows
// a term, so common words cost the most. The counts only choose which words
// select SearchText's candidates, never how the candidates rank, so a count
// up to termCountTTL old does as well; this process forgets them all when
// it stores passages, and rarer words (under termCountMin, cheap to count)
// are always counted afresh, so a word new to the index is seen at once.
type termCountCache struct {
	mu sync.Mutex
	m  map[string]termCount
}

type termCount struct {
	n  int64
	at time.Time
}

const (
	termCountTTL = time.Minute
	termCountMax = 10000 // terms remembered; all are forgotten past that
	termCountMin = 100   // fewer matches are not remembered
)

func (c *termCountCache) get(t string, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[t]
	if !ok || now.Sub(e.at) > termCountTTL {
		return 0, false
	}
	return e.n, true
}

func (c *termCountCache) put(t string, n int64, now time.Time) {
	if n < termCountMin {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= termCountMax {
		c.m = map[string]termCount{}
	}
	c.m[t] = termCount{n, now}
}

func (c *termCountCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}
