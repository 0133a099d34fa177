package indexing

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/botplatform/botplatform/internal/indexing/lexicon"
	"github.com/botplatform/botplatform/internal/indexing/rank"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/words"
)

// Weights of the words standing in for a query word (rank.Alt): another
// form of it (its lemma: "went" for "go") counts fully; a synonym of its
// first sense ("parcel" → "package") 0.7; a derived form ("cancel" →
// "cancellation") half; a more general word ("parcel" → "container")
// less. Tuned on the evaluation sets, both databases (docs/benchmarks.md).
var altWeights = map[lexicon.Kind]float64{lexicon.Synonym: 0.7, lexicon.Derived: 0.5, lexicon.Hypernym: 0.3}

// Candidate budgets (store.TextCandidates): how many passages holding the
// query's words, and how many more holding only stand-ins, the ranking
// reads at most. A passage holding only stand-ins scores at most half of
// what the words would, so fewer are read: those of the rarer stand-ins.
const (
	wordCandidates = 1000
	altCandidates  = 250
)

// maxAlts bounds the stand-ins of one query word, closest kinds first.
const maxAlts = 12

// searchText ranks the passages of the files the query may see by BM25 of
// the query's words and returns up to limit seqs, best first. With expand,
// each word may be stood in for by its related words (lexicon), scored as
// the better of the word and a stand-in, and the passages holding only
// stand-ins are candidates too, and a passage holding the kind of answer
// the question asks for scores higher. Candidates that hold none of the words as
// the ranking reads them (the database's stemming finds more) come after
// the others, in order of storage. With q.Explain it also returns, for each
// seq, why it scored what it did.
func (s *Service) searchText(ctx context.Context, q Query, limit int, expand bool) ([]int64, []textWhy, error) {
	seq := words.Query(q.Text)
	ws := words.Distinct(seq)
	if expand {
		ws = withoutFiller(ws)
	}
	if len(ws) == 0 {
		return nil, nil, nil
	}
	terms := make([]rank.Term, len(ws))
	var alts []string
	var joined map[string][]string
	if expand {
		joined = compounds(seq)
	}
	for i, w := range ws {
		terms[i].Word = w
		if expand {
			terms[i].Alts = standIns(w, ws, joined[w])
			for _, a := range terms[i].Alts {
				alts = append(alts, a.Word)
			}
		}
	}
	if expand {
		// The model's words are candidates' words like the stand-ins.
		extra := s.rewrite(ctx, q, ws)
		terms = append(terms, rewriteTerms(extra)...)
		alts = append(alts, extra...)
	}
	// Words are counted up to their candidate budget (the store selects
	// candidates by those counts): a commoner word counts as that common.
	// The query's words and their stand-ins are looked up at once.
	var total int64
	var df, altDF []int64
	var ps, more []platform.Passage
	var altErr error
	var wg sync.WaitGroup
	if len(alts) > 0 {
		wg.Go(func() {
			if _, altDF, altErr = s.store.TermStats(ctx, alts, altCandidates+1); altErr == nil {
				more, altErr = s.store.TextCandidates(ctx, q.Visibility, q.Tags, q.NotTags, alts, altDF, altCandidates)
			}
		})
	}
	total, df, err := s.store.TermStats(ctx, ws, wordCandidates+1)
	if err == nil {
		ps, err = s.store.TextCandidates(ctx, q.Visibility, q.Tags, q.NotTags, ws, df, wordCandidates)
	}
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	if altErr != nil {
		return nil, nil, altErr
	}
	ps = appendNewPassages(ps, more)
	df = append(df, altDF...)
	if len(ps) == 0 {
		return nil, nil, nil
	}
	st := rank.Stats{N: total, DF: make(map[string]int64, len(df))}
	for i, w := range append(slices.Clone(ws), alts...) {
		st.DF[w] = max(st.DF[w], df[i])
	}
	docs := make([]rank.Doc, len(ps))
	for i, p := range ps {
		docs[i] = rank.Doc{Content: p.Content, Heading: p.Breadcrumb, Questions: p.Questions}
	}
	var scores []float64
	var matches [][]rank.Match
	if q.Explain {
		scores, matches = rank.Explain(terms, st, docs)
	} else {
		scores = rank.Scores(terms, st, docs)
	}
	var boosted []bool
	if expand {
		boosted = boostAnswers(scores, ps, q.Text)
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	// Best first; at equal scores (none among them, say: words the
	// database's stemming matched and this ranking's did not) in the order
	// passages were stored.
	sort.Slice(order, func(a, b int) bool {
		if scores[order[a]] != scores[order[b]] {
			return scores[order[a]] > scores[order[b]]
		}
		return ps[order[a]].Seq < ps[order[b]].Seq
	})
	out := make([]int64, 0, min(limit, len(order)))
	var why []textWhy
	for _, i := range order[:min(limit, len(order))] {
		out = append(out, ps[i].Seq)
		if q.Explain {
			why = append(why, whyText(terms, len(ws), scores[i], boosted != nil && boosted[i], matches[i]))
		}
	}
	return out, why, nil
}

// standIns returns the words that may stand in for w: its other lemmas
// and the compounds it makes with a neighbour in the query (joined, from
// compounds) at full weight, the parts of w if it is a compound at
// partWeight, then its related words by kind, leaving out stop words and
// the query's own words.
func standIns(w string, query, joined []string) []rank.Alt {
	lx := lexicon.Default()
	skip := map[string]bool{}
	for _, x := range query {
		skip[x] = true
	}
	var out []rank.Alt
	add := func(word string, weight float64) {
		if len(out) < maxAlts && !skip[word] && !words.Stop(word) {
			skip[word] = true
			out = append(out, rank.Alt{Word: word, Weight: weight})
		}
	}
	for _, l := range lx.Lemmas(w) {
		add(l, 1)
	}
	for _, c := range joined {
		add(c, 1)
	}
	for _, p := range lx.Parts(w) {
		add(p, partWeight)
	}
	for _, r := range lx.Related(w) {
		add(r.Word, altWeights[r.Kind])
	}
	return out
}

// withoutFiller returns ws without the words that say nothing about what
// is asked (words.Filler), or ws itself if that leaves none.
func withoutFiller(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !words.Filler(w) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return ws
	}
	return out
}

// partWeight is the weight of a part of a compound query word standing in
// for it ("board" for "surfboards"): one part says less than the whole, as
// a derived form does.
const partWeight = 0.5

// compounds returns, for each word of the query's words in order, the
// compound words it makes with the word before or after it that the
// lexicon knows and splits back into the two ("surf boards" →
// "surfboards", for both): a passage that writes them as one word then
// holds both.
func compounds(seq []string) map[string][]string {
	lx := lexicon.Default()
	out := map[string][]string{}
	for i := 0; i+1 < len(seq); i++ {
		a, b := seq[i], seq[i+1]
		c := a + b
		if len(lx.Lemmas(c)) == 0 {
			continue
		}
		if p := lx.Parts(c); len(p) == 2 && p[0] == a && p[1] == b {
			out[a] = append(out[a], c)
			out[b] = append(out[b], c)
		}
	}
	return out
}

// appendNewPassages appends to ps those of more it does not hold.
func appendNewPassages(ps, more []platform.Passage) []platform.Passage {
	have := make(map[int64]bool, len(ps))
	for _, p := range ps {
		have[p.Seq] = true
	}
	for _, p := range more {
		if !have[p.Seq] {
			have[p.Seq] = true
			ps = append(ps, p)
		}
	}
	return ps
}

// answerBoost raises the score of a passage that holds the kind of answer
// the question asks for (an amount for "how much", a duration for "how
// long": rank.Asks) by this share. Tuned on the evaluation sets
// (docs/benchmarks.md): 0.5 raised MRR on both, 1 lost recall.
const answerBoost = 0.5

// boostAnswers raises the scores of the passages that hold the kind of
// answer the question asks for, and tells which (nil: none).
func boostAnswers(scores []float64, ps []platform.Passage, question string) []bool {
	a := rank.Asks(question)
	if a == rank.AnyAnswer {
		return nil
	}
	boosted := make([]bool, len(ps))
	for i, p := range ps {
		if scores[i] > 0 && rank.Holds(a, p.Content) {
			scores[i] *= 1 + answerBoost
			boosted[i] = true
		}
	}
	return boosted
}
