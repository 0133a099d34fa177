package indexing

import "github.com/botplatform/botplatform/internal/indexing/rank"

// Explanation is why a passage ranked where it did: the two rankings'
// parts of its fused score (Score = FullText.Fused + Vector.Fused), and the
// words that scored it in the full-text ranking. All are the numbers the
// search ranked by.
type Explanation struct {
	FullText     *TextPart   // nil: not among the full-text ranking's candidates
	Vector       *VectorPart // nil: not among the vector ranking's
	VectorWeight float64     // the vector ranking's weight in the fusion
	Words        []WordMatch // the query's words the passage holds (by stem, in it or its headings)
	Related      []WordMatch // words that stood in for them (For), or the model's words
	Missing      []string    // the query's words it holds neither as such nor by a stand-in
}

// TextPart is a passage's place in the full-text (BM25) ranking.
type TextPart struct {
	Rank    int     // 1 is first
	Score   float64 // BM25, with the answer boost when Boosted
	Boosted bool    // it holds the kind of answer the question asks for
	Fused   float64 // 1 / (rrfK + Rank)
}

// VectorPart is a passage's place in the vector ranking.
type VectorPart struct {
	Rank       int
	Similarity float64 // cosine of its vector and the query's
	Fused      float64 // VectorWeight / (rrfK + Rank)
}

// WordMatch is a word that scored a passage: what it added to its BM25
// score (before the answer boost), at its weight. For a stand-in, For is
// the query word it stood for and Source "lexicon"; for a word of the
// model's rewriting of the question (--ai-search-rewrite), Source is
// "rewrite" and For empty; the query's own words have Source "query".
type WordMatch struct {
	Word   string
	For    string
	Source string
	Weight float64
	Score  float64
}

// textWhy is what the full-text ranking knows of a passage it ranked.
type textWhy struct {
	score          float64
	boosted        bool
	words, related []WordMatch
	missing        []string
}

// whyText resolves a passage's matches (rank.Explain) against the terms
// scored: the first queryWords are the query's own words with their
// stand-ins, the rest the model's words.
func whyText(terms []rank.Term, queryWords int, score float64, boosted bool, ms []rank.Match) textWhy {
	w := textWhy{score: score, boosted: boosted}
	found := make([]bool, queryWords)
	for _, m := range ms {
		t := terms[m.Term]
		switch {
		case m.Term >= queryWords:
			w.related = append(w.related, WordMatch{Word: m.Word, Source: "rewrite", Weight: m.Weight, Score: m.Score})
		case m.Word == t.Word:
			found[m.Term] = true
			w.words = append(w.words, WordMatch{Word: m.Word, Source: "query", Weight: m.Weight, Score: m.Score})
		default:
			found[m.Term] = true
			w.related = append(w.related, WordMatch{Word: m.Word, For: t.Word, Source: "lexicon", Weight: m.Weight, Score: m.Score})
		}
	}
	for i, ok := range found {
		if !ok {
			w.missing = append(w.missing, terms[i].Word)
		}
	}
	return w
}

// explain puts together a result's explanation from its ranks in the two
// rankings (0: not in it), what the full-text ranking knew of the passages
// it ranked (in rank order; nil when it did not run) and the vector
// ranking's similarities (in rank order), at vector weight wv.
func explain(textRank int, texts []textWhy, vecRank int, sims []float32, wv float64) *Explanation {
	e := &Explanation{VectorWeight: wv, Words: []WordMatch{}, Related: []WordMatch{}, Missing: []string{}}
	if textRank > 0 && textRank <= len(texts) {
		w := texts[textRank-1]
		e.FullText = &TextPart{Rank: textRank, Score: w.score, Boosted: w.boosted, Fused: 1.0 / float64(rrfK+textRank)}
		e.Words = append(e.Words, w.words...)
		e.Related = append(e.Related, w.related...)
		e.Missing = append(e.Missing, w.missing...)
	}
	if vecRank > 0 && vecRank <= len(sims) {
		e.Vector = &VectorPart{Rank: vecRank, Similarity: float64(sims[vecRank-1]), Fused: wv / float64(rrfK+vecRank)}
	}
	return e
}
