package indexing

import (
	"context"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/botplatform/botplatform/internal/indexing/embed"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Query is a searchFiles request.
type Query struct {
	Visibility store.FileVisibility
	Tags       map[string][]string
	NotTags    map[string][]string
	Text       string
	Limit      int // passages returned; default 10
	// ContextDepth is how many passages before and after each result are
	// returned in its context (withContext); 0–10, default 1.
	ContextDepth      int
	WithContext       bool
	IncludeBreadcrumb bool
	// Consolidate merges the results of one file into one passage, in the
	// file's order.
	Consolidate bool
	// Mode: "" (hybrid), "text" (full-text only, BM25 of the query's own
	// words) or "vector" (vector only); for the retrieval benchmark.
	Mode string
	// Explain adds to each result the parts of its score (Result.Explain).
	Explain bool
}

// ContextItem is an entry of a result's context.
type ContextItem struct {
	Text string `json:"text"`
	Type string `json:"type"` // preceding, subsequent, breadcrumb
}

// Result is a passage found by Search.
type Result struct {
	Passage platform.Passage
	Score   float64
	File    platform.File
	Context []ContextItem
	Explain *Explanation // with Query.Explain
}

// candidates is how many passages each ranking contributes to the fusion.
const candidates = 50

// rrfK is the constant of reciprocal rank fusion: a passage scores
// Σ weight/(rrfK + rank) over the rankings it is in.
const rrfK = 60

// builtinVectorWeight is the vector ranking's weight in the fusion when
// the vectors are the built-in embedder's, the full-text ranking's being 1.
// Those vectors carry the words and their spelling but no meaning: at equal
// weight they outvoted a passage holding the query's words often enough to
// rank below full-text alone; at this weight a vector match still lifts a
// passage the words rank close, and surfaces those holding none of them
// (misspellings), on the retrieval benchmark and the evaluation set, on
// both databases (docs/benchmarks.md, issue 17). A model's vectors, which
// carry meaning, weigh as much as the words.
const builtinVectorWeight = 0.2

// vectorWeight is the vector ranking's weight in the fusion.
func (s *Service) vectorWeight() float64 {
	if s.emb.Name() == embed.BuiltinName {
		return builtinVectorWeight
	}
	return 1
}

// Search ranks the passages of the files the caller may see two ways, by
// BM25 of the query's words (searchText: with stand-ins for them, but in
// Mode "text") and by the cosine similarity of their vectors to the
// query's, and fuses the two rankings (reciprocal rank fusion, the vector
// ranking at vectorWeight).
func (s *Service) Search(ctx context.Context, q Query) ([]Result, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	limit := max(q.Limit, candidates)
	// The two rankings are independent: they run at once.
	var textSeqs, vecSeqs []int64
	var textWhy []textWhy
	var vecSims []float32
	var textErr, vecErr error
	var wg sync.WaitGroup
	if q.Mode != "text" {
		wg.Go(func() { vecSeqs, vecSims, vecErr = s.searchVectors(ctx, q, limit) })
	}
	if q.Mode != "vector" {
		textSeqs, textWhy, textErr = s.searchText(ctx, q, limit, q.Mode != "text")
	}
	wg.Wait()
	if textErr != nil {
		return nil, textErr
	}
	if vecErr != nil {
		return nil, vecErr
	}
	scores := make(map[int64]float64, len(textSeqs)+len(vecSeqs))
	textRank := make(map[int64]int, len(textSeqs))
	for i, seq := range textSeqs {
		scores[seq] += 1.0 / float64(rrfK+i+1)
		textRank[seq] = i + 1
	}
	wv := s.vectorWeight()
	vecRank := make(map[int64]int, len(vecSeqs))
	for i, seq := range vecSeqs {
		scores[seq] += wv / float64(rrfK+i+1)
		vecRank[seq] = i + 1
	}
	ranked := make([]int64, 0, len(scores))
	for seq := range scores {
		ranked = append(ranked, seq)
	}
	sort.Slice(ranked, func(i, j int) bool {
		if scores[ranked[i]] != scores[ranked[j]] {
			return scores[ranked[i]] > scores[ranked[j]]
		}
		// At equal scores a passage holding the query's words comes first:
		// a word match is surer than a similar vector.
		ti, tj := textRank[ranked[i]], textRank[ranked[j]]
		if (ti > 0) != (tj > 0) {
			return ti > 0
		}
		if ti != tj {
			return ti < tj
		}
		return ranked[i] < ranked[j]
	})
	if len(ranked) > q.Limit {
		ranked = ranked[:q.Limit]
	}
	ps, err := s.store.PassagesBySeq(ctx, ranked)
	if err != nil {
		return nil, err
	}
	bySeq := map[int64]platform.Passage{}
	var fileIDs []string
	for _, p := range ps {
		bySeq[p.Seq] = p
		fileIDs = append(fileIDs, p.FileID)
	}
	slices.Sort(fileIDs)
	fs, err := s.store.GetFiles(ctx, slices.Compact(fileIDs))
	if err != nil {
		return nil, err
	}
	files := make(map[string]platform.File, len(fs))
	for _, f := range fs {
		files[f.ID] = f
	}
	var out []Result
	for _, seq := range ranked {
		p, ok := bySeq[seq]
		if !ok {
			continue // deleted meanwhile
		}
		f, ok := files[p.FileID]
		if !ok {
			continue // deleted meanwhile
		}
		r := Result{Passage: p, Score: scores[seq], File: f}
		if q.Explain {
			r.Explain = explain(textRank[seq], textWhy, vecRank[seq], vecSims, wv)
		}
		if q.WithContext || q.IncludeBreadcrumb {
			if r.Context, err = s.context(ctx, p, q); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	if q.Consolidate {
		out = consolidate(out)
	}
	return out, nil
}

func (s *Service) context(ctx context.Context, p platform.Passage, q Query) ([]ContextItem, error) {
	var items []ContextItem
	if q.IncludeBreadcrumb && len(p.Breadcrumb) > 0 {
		items = append(items, ContextItem{Text: strings.Join(p.Breadcrumb, " > "), Type: "breadcrumb"})
	}
	if q.WithContext && q.ContextDepth > 0 {
		around, err := s.store.PassagesAround(ctx, p.FileID, p.Position-q.ContextDepth, p.Position+q.ContextDepth)
		if err != nil {
			return nil, err
		}
		for _, a := range around {
			switch {
			case a.Position < p.Position:
				items = append(items, ContextItem{Text: a.Content, Type: "preceding"})
			case a.Position > p.Position:
				items = append(items, ContextItem{Text: a.Content, Type: "subsequent"})
			}
		}
	}
	return items, nil
}

// consolidate merges the results of each file into one, its passages in
// the file's order, scored as the best of them, files in order of score.
func consolidate(rs []Result) []Result {
	var order []string
	byFile := map[string][]Result{}
	for _, r := range rs {
		if _, ok := byFile[r.File.ID]; !ok {
			order = append(order, r.File.ID)
		}
		byFile[r.File.ID] = append(byFile[r.File.ID], r)
	}
	out := make([]Result, 0, len(order))
	for _, id := range order {
		group := byFile[id]
		best := group[0]
		sort.SliceStable(group, func(i, j int) bool { return group[i].Passage.Position < group[j].Passage.Position })
		texts := make([]string, len(group))
		for i, r := range group {
			texts[i] = r.Passage.Content
		}
		merged := best
		merged.Passage.Content = strings.Join(texts, "\n\n")
		merged.Passage.Type = "consolidated"
		merged.Passage.Position = group[0].Passage.Position
		merged.Passage.PageNumber = group[0].Passage.PageNumber
		merged.Context = nil
		out = append(out, merged)
	}
	return out
}

// vectorIndex holds a bot's passage vectors in memory, loaded from the
// database and topped up with what was stored since.
type vectorIndex struct {
	mu      sync.RWMutex
	maxSeq  int64
	rows    int              // passages loaded, with a vector or without (headings)
	seqs    []int64          // the passages with a vector
	files   []int32          // per passage, its file's number in fileIDs
	fileIDs []string         // the files, numbered in order of first load
	fileNum map[string]int32 // the inverse of fileIDs
	cols    [][]float32      // dim columns: cols[d][i] is passage i's vector at d
	dim     int
	stale   bool
	loaded  bool
	changes int64 // the bot's passages' changes (PassageStats) it holds
}

// vectorIndexOf returns the bot's index, made empty if it has none yet.
func (s *Service) vectorIndexOf(botID string) *vectorIndex {
	s.vecMu.Lock()
	defer s.vecMu.Unlock()
	idx, ok := s.vecs[botID]
	if !ok {
		idx = &vectorIndex{}
		s.vecs[botID] = idx
	}
	return idx
}

// searchVectors returns the seqs of the passages most similar to the
// query, best first, and their similarities.
func (s *Service) searchVectors(ctx context.Context, q Query, limit int) ([]int64, []float32, error) {
	vs, err := s.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, nil, err
	}
	idx, err := s.vectors(ctx, q.Visibility.BotID)
	if err != nil {
		return nil, nil, err
	}
	if q.Visibility.All && len(q.Tags) == 0 && len(q.NotTags) == 0 {
		// Every indexed file of the bot may be searched: the best passages
		// of all are taken, and only their files (at most limit) are checked
		// (still indexed, not deleted) rather than every file id of the bot
		// read. Should one of them not be, the search below reads them all.
		seqs, sims, files := idx.top(vs[0], nil, limit)
		slices.Sort(files)
		files = slices.Compact(files)
		ok, err := s.store.SearchableFiles(ctx, q.Visibility, nil, nil, files)
		if err != nil {
			return nil, nil, err
		}
		if len(ok) == len(files) {
			return seqs, sims, nil
		}
	}
	allowed, err := s.store.SearchableFiles(ctx, q.Visibility, q.Tags, q.NotTags, nil)
	if err != nil || len(allowed) == 0 {
		return nil, nil, err
	}
	seqs, sims, _ := idx.top(vs[0], allowed, limit)
	return seqs, sims, nil
}

// vectors returns the bot's index, brought up to date with the database on
// every search (the bot's passage stats are one row): the passages stored
// since are loaded; when some were deleted, it is reloaded whole. So a
// search sees every passage committed before it, stored by this process or
// another sharing the database.
func (s *Service) vectors(ctx context.Context, botID string) (*vectorIndex, error) {
	maxSeq, count, changes, err := s.store.PassageStats(ctx, botID)
	if err != nil {
		return nil, err
	}
	idx := s.vectorIndexOf(botID)
	// changes only grows: an index loaded by a search that read the stats
	// after this one is at least as current as this search needs (and
	// loading from this search's older stats could take its newer
	// passages for deleted ones).
	idx.mu.RLock()
	fresh := idx.loaded && idx.changes >= changes
	idx.mu.RUnlock()
	if fresh {
		return idx, nil
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.loaded && idx.changes >= changes {
		return idx, nil // loaded by another search meanwhile
	}
	if idx.stale || count < idx.rows || maxSeq < idx.maxSeq {
		idx.rows, idx.seqs, idx.files, idx.fileIDs, idx.fileNum, idx.cols, idx.maxSeq, idx.stale = 0, nil, nil, nil, nil, nil, 0, false
	}
	// Up to the stats' newest: what the count counts.
	ps, err := s.store.PassageVectors(ctx, botID, idx.maxSeq, maxSeq)
	if err != nil {
		idx.loaded = false
		return nil, err
	}
	for _, p := range ps {
		idx.add(p)
	}
	idx.maxSeq = max(idx.maxSeq, maxSeq)
	idx.changes, idx.loaded = changes, true
	// Deleted passages are still in memory, or a passage committed after one
	// with a higher seq was missed: reload whole next time. (Vectors of
	// deleted passages match nothing: their seqs no longer load.)
	idx.stale = idx.rows != count
	if idx.stale {
		idx.changes = -1 // not up to date, whatever the stats say next
	}
	return idx, nil
}

// top returns the seqs of the limit passages most similar to v among the
// allowed files (nil: every file; vectors are normalized: the dot product
// is the cosine), best first, ties in order of storage, and their
// similarities and files. A large index is scanned in parallel, in parts
// whose bests are merged.
func (idx *vectorIndex) top(v []float32, allowed []string, limit int) ([]int64, []float32, []string) {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	if idx.dim == 0 || len(v) != idx.dim || limit <= 0 {
		return nil, nil, nil
	}
	ok := make([]bool, len(idx.fileIDs))
	if allowed == nil {
		for n := range ok {
			ok[n] = true
		}
	}
	for _, id := range allowed {
		if n, found := idx.fileNum[id]; found {
			ok[n] = true
		}
	}
	q := queryOf(v)
	n := len(idx.seqs)
	parts := min(runtime.GOMAXPROCS(0), n/parallelScan)
	var best []hit
	if parts <= 1 {
		best = idx.scan(q, ok, 0, n, limit)
	} else {
		found := make([][]hit, parts)
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { found[p] = idx.scan(q, ok, p*n/parts, (p+1)*n/parts, limit) })
		}
		wg.Wait()
		for _, f := range found {
			best = append(best, f...)
		}
		sort.Slice(best, func(i, j int) bool {
			if best[i].score != best[j].score {
				return best[i].score > best[j].score
			}
			return best[i].at < best[j].at
		})
		best = best[:min(limit, len(best))]
	}
	out, sims, files := make([]int64, len(best)), make([]float32, len(best)), make([]string, len(best))
	for i, h := range best {
		out[i], sims[i], files[i] = idx.seqs[h.at], h.score, idx.fileIDs[idx.files[h.at]]
	}
	return out, sims, files
}

// parallelScan is the fewest passages per goroutine of a parallel scan.
const parallelScan = 16384

// hit is a passage of a scan, by its place in the index.
type hit struct {
	at    int
	score float32
}

// add appends a loaded passage (idx.mu held).
func (idx *vectorIndex) add(p platform.Passage) {
	idx.rows++
	idx.maxSeq = max(idx.maxSeq, p.Seq)
	if len(p.Vector) == 0 {
		return // a heading
	}
	if idx.dim == 0 {
		idx.dim = len(p.Vector)
	}
	if len(p.Vector) != idx.dim {
		return // another embedder's vector: not comparable
	}
	if idx.cols == nil { // new, or emptied for a reload
		idx.cols, idx.fileNum = make([][]float32, idx.dim), map[string]int32{}
	}
	n, ok := idx.fileNum[p.FileID]
	if !ok {
		n = int32(len(idx.fileIDs))
		idx.fileNum[p.FileID] = n
		idx.fileIDs = append(idx.fileIDs, p.FileID)
	}
	idx.seqs = append(idx.seqs, p.Seq)
	idx.files = append(idx.files, n)
	for d, x := range p.Vector {
		idx.cols[d] = append(idx.cols[d], x)
	}
}

// scan returns the limit best passages of idx[from:to] of the allowed files
// (by file number), best first, ties in index order. Passages with nothing
// in common with the query (score 0 or less) still fill a short list: on a
// small index the vector half returns every passage.
//
// The vectors are stored by dimension, and a block of passages is scored
// one dimension of the query at a time: only the query's non-zero
// dimensions are read (a short question's built-in vector has a few dozen
// of 256), each as one run through memory. Each score is, bit for bit, the
// dot product taken in order of dimension into four sums (by dimension
// modulo 4), which the sums add up in the end; products with a zero of the
// query, left out, add nothing.
func (idx *vectorIndex) scan(q query, ok []bool, from, to, limit int) []hit {
	best := make([]hit, 0, limit+1)
	var sums [4][scanBlock]float32
	whole := idx.dim &^ 3 // dimensions from here on go to the first sum
	for lo := from; lo < to; lo += scanBlock {
		hi := min(lo+scanBlock, to)
		for k := range sums {
			clear(sums[k][:hi-lo])
		}
		for k, d := range q.at {
			sum := sums[d&3][:hi-lo]
			if int(d) >= whole {
				sum = sums[0][:hi-lo]
			}
			x := q.val[k]
			for p, y := range idx.cols[d][lo:hi] {
				sum[p] += x * y
			}
		}
		for p := range hi - lo {
			i := lo + p
			if !ok[idx.files[i]] {
				continue
			}
			sc := sums[0][p] + sums[1][p] + sums[2][p] + sums[3][p]
			if len(best) == limit && sc <= best[len(best)-1].score {
				continue
			}
			at := sort.Search(len(best), func(k int) bool { return best[k].score < sc })
			best = append(best, hit{})
			copy(best[at+1:], best[at:])
			best[at] = hit{i, sc}
			if len(best) > limit {
				best = best[:limit]
			}
		}
	}
	return best
}

// scanBlock is how many passages scan scores at once (its sums fit a
// core's first-level cache).
const scanBlock = 512

// query is a query's vector as a scan multiplies it: its non-zero
// dimensions, ascending, and its values there.
type query struct {
	at  []int32
	val []float32
}

func queryOf(v []float32) query {
	var q query
	for i, x := range v {
		if x != 0 {
			q.at = append(q.at, int32(i))
			q.val = append(q.val, x)
		}
	}
	return q
}
