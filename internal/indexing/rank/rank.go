// Package rank scores candidate passages against a query by BM25, in Go, so
// that every database ranks alike; a word of the query may be stood in for
// by related words at a lower weight, scored as the better of the word and
// its stand-ins, never as extra words of their own.
package rank

import (
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/stem"
)

// BM25's parameters (the usual ones, also SQLite FTS5's), and the weights
// of a passage's heading path and of the questions the model wrote for it
// against its content (as the full-text indexes weigh them). A question is
// the model's guess at what the passage answers: it lets other words find
// the passage, below a passage that holds them itself.
const (
	k1             = 1.2
	b              = 0.75
	HeadingWeight  = 0.5
	QuestionWeight = 0.4
)

// Term is a word of the query, with the words that may stand in for it.
// Weight is the word's own weight (0: 1), its stand-ins' being absolute.
type Term struct {
	Word   string
	Weight float64
	Alts   []Alt
}

func (t Term) weight() float64 {
	if t.Weight == 0 {
		return 1
	}
	return t.Weight
}

// Alt is a word standing in for a query word, at a weight below 1.
type Alt struct {
	Word   string
	Weight float64
}

// Doc is a passage as the ranking reads it.
type Doc struct {
	Content   string
	Heading   []string // the heading path, outermost first
	Questions []string // questions the passage answers (--ai-index-questions)
}

// Stats are the statistics of the collection the candidates come from: N
// passages in all, and how many hold each word (of the terms and their
// stand-ins, by the word as given).
type Stats struct {
	N  int64
	DF map[string]int64
}

// slot is one way a stem counts for a term: as the term's word (weight 1)
// or as a stand-in.
type slot struct {
	term   int
	word   string // the word that put the stem there for the term
	weight float64
	idf    float64
}

// Match is one term's part of a doc's score: the word that scored best for
// it (the term's own, or one of its stand-ins), at its weight, and what it
// added.
type Match struct {
	Term   int // the term's index in the terms scored
	Word   string
	Weight float64
	Score  float64
}

// Scores returns each doc's score: the sum over the terms of the best of
// weight × BM25 of the term's word or of one of its stand-ins (words are
// compared by stem), with the document length of BM25 the doc's word count
// (content, heading path and questions) against the mean over docs. A doc holding none
// of the words scores 0.
func Scores(terms []Term, st Stats, docs []Doc) []float64 {
	out, _ := score(terms, st, docs, false)
	return out
}

// Explain is Scores, with each doc's matches: for each term that adds to
// its score, the word that did and what it added (the scores are the sums
// of their matches).
func Explain(terms []Term, st Stats, docs []Doc) ([]float64, [][]Match) {
	return score(terms, st, docs, true)
}

func score(terms []Term, st Stats, docs []Doc, explain bool) ([]float64, [][]Match) {
	stems := map[string]int{} // stem → index in slots
	var slots [][]slot
	add := func(word string, term int, weight float64) {
		s := stem.String(word)
		i, ok := stems[s]
		if !ok {
			i = len(slots)
			stems[s] = i
			slots = append(slots, nil)
		}
		for k, x := range slots[i] {
			if x.term == term {
				if weight > x.weight {
					slots[i][k].weight, slots[i][k].word = weight, word
				}
				return
			}
		}
		slots[i] = append(slots[i], slot{term, word, weight, idf(st.N, st.DF[word])})
	}
	for i, t := range terms {
		add(t.Word, i, t.weight())
		for _, a := range t.Alts {
			add(a.Word, i, a.Weight)
		}
	}
	// Stemming only changes a word's end: a word whose first two letters
	// begin no stem cannot match, and is not stemmed.
	var pre prefixes
	for st := range stems {
		pre.add(st)
	}
	tfs := make([][]float64, len(docs))
	lens := make([]float64, len(docs))
	var total float64
	var buf []byte
	for d, doc := range docs {
		tf := make([]float64, len(slots))
		n := 0
		count := func(text string, weight float64) {
			n += eachWord(text, &buf, func(w []byte) {
				if !pre.may(w) {
					return
				}
				if i, ok := stems[string(stem.Bytes(w))]; ok {
					tf[i] += weight
				}
			})
		}
		count(doc.Content, 1)
		for _, h := range doc.Heading {
			count(h, HeadingWeight)
		}
		for _, q := range doc.Questions {
			count(q, QuestionWeight)
		}
		tfs[d], lens[d] = tf, float64(n)
		total += float64(n)
	}
	avg := max(total/float64(max(len(docs), 1)), 1)
	out := make([]float64, len(docs))
	best := make([]float64, len(terms))
	var why [][]Match
	var from []*slot // per term, the slot of its best (explain only)
	if explain {
		why, from = make([][]Match, len(docs)), make([]*slot, len(terms))
	}
	for d := range docs {
		clear(best)
		norm := k1 * (1 - b + b*lens[d]/avg)
		for i, tf := range tfs[d] {
			if tf == 0 {
				continue
			}
			sat := tf * (k1 + 1) / (tf + norm)
			for k, s := range slots[i] {
				if v := s.weight * s.idf * sat; v > best[s.term] {
					best[s.term] = v
					if explain {
						from[s.term] = &slots[i][k]
					}
				}
			}
		}
		for t, v := range best {
			out[d] += v
			if explain && v > 0 {
				why[d] = append(why[d], Match{Term: t, Word: from[t].word, Weight: from[t].weight, Score: v})
			}
		}
	}
	return out, why
}

// prefixes holds the first two bytes of the stems looked for (one byte
// for a stem of one), as a set of bits.
type prefixes struct {
	two [1 << 16 / 64]uint64
	one [256 / 64]uint64
}

func (p *prefixes) add(stem string) {
	switch len(stem) {
	case 0:
	case 1:
		p.one[stem[0]/64] |= 1 << (stem[0] % 64)
	default:
		k := uint16(stem[0])<<8 | uint16(stem[1])
		p.two[k/64] |= 1 << (k % 64)
	}
}

// may reports whether w may stem to a stem of p.
func (p *prefixes) may(w []byte) bool {
	if len(w) == 1 {
		return p.one[w[0]/64]&(1<<(w[0]%64)) != 0
	}
	k := uint16(w[0])<<8 | uint16(w[1])
	return p.two[k/64]&(1<<(k%64)) != 0
}

// idf is BM25's inverse document frequency, never negative; a word the
// statistics have not seen counts as held by one passage.
func idf(n, df int64) float64 {
	df = max(df, 1)
	n = max(n, df)
	return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5))
}

// eachWord calls fn with each word of text (a run of letters and digits),
// lowercased, in a buffer reused between calls, and returns how many there
// were.
func eachWord(text string, buf *[]byte, fn func([]byte)) int {
	n := 0
	w := (*buf)[:0]
	flush := func() {
		if len(w) > 0 {
			n++
			fn(w)
			w = w[:0]
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				w = append(w, c)
			case 'A' <= c && c <= 'Z':
				w = append(w, c+'a'-'A')
			default:
				flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			w = utf8.AppendRune(w, unicode.ToLower(r))
		} else {
			flush()
		}
	}
	flush()
	*buf = w
	return n
}
