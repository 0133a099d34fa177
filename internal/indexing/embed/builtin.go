package embed

import (
	"context"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/stem"
)

// The builtin embedder's dimension and feature weights (see the package
// comment). Changing any of them, the stemmer, the stop words or the hashing
// changes the vectors: change BuiltinName with them.
const (
	BuiltinDim    = 256
	BuiltinName   = "builtin-hash-256"
	WeightWord    = 1.0
	WeightBigram  = 0.5
	WeightTrigram = 0.5
)

// Builtin is the embedder that needs nothing but the text. It is safe for
// concurrent use.
type Builtin struct {
	pool sync.Pool
}

// NewBuiltin returns the builtin embedder.
func NewBuiltin() *Builtin {
	return &Builtin{pool: sync.Pool{New: func() any { return new(scratch) }}}
}

func (*Builtin) Name() string { return BuiltinName }
func (*Builtin) Dim() int     { return BuiltinDim }

// Embed returns one vector per text. It fails only when ctx is done.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*BuiltinDim)
	s := b.pool.Get().(*scratch)
	defer b.pool.Put(s)
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := flat[i*BuiltinDim : (i+1)*BuiltinDim : (i+1)*BuiltinDim]
		s.vector(t, v)
		out[i] = v
	}
	return out, nil
}

// scratch holds the buffers one text's features are gathered in.
type scratch struct {
	word    []byte   // the current word, lowercase
	stem    []byte   // its stem
	tri     []byte   // "^" + word + "$"
	starts  []int    // rune offsets in tri, for non-ASCII words
	words   []uint64 // feature hashes by kind
	bigrams []uint64
	trigram []uint64
	slots   []slot   // counting table, all free between uses
	order   []uint32 // its used slots in order of first use
}

// Seeds keep the three kinds of features apart.
const (
	seedWord    = 0x9e3779b97f4a7c15
	seedBigram  = 0xc2b2ae3d27d4eb4f
	seedTrigram = 0x165667b19e3779f9
)

func (s *scratch) vector(text string, v []float32) {
	s.words, s.bigrams, s.trigram = s.words[:0], s.bigrams[:0], s.trigram[:0]
	var prev uint64
	havePrev := false
	word := s.word[:0]
	flush := func() {
		if len(word) == 0 {
			return
		}
		if !stopWord(word) {
			s.addTrigrams(word)
			s.stem = append(s.stem[:0], word...)
			h := fnv1a(seedWord, stem.Bytes(s.stem))
			s.words = append(s.words, h)
			if havePrev {
				s.bigrams = append(s.bigrams, mix(prev*31^h^seedBigram))
			}
			prev, havePrev = h, true
		}
		word = word[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				word = append(word, c)
			case c >= 'A' && c <= 'Z':
				word = append(word, c+'a'-'A')
			case c == '\'' && len(word) > 0:
				i = apostrophe(text, i+1)
				continue
			default:
				flush()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '’' && len(word) > 0:
			i = apostrophe(text, i+size)
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default:
			flush()
		}
		i += size
	}
	flush()
	s.word = word

	clear(v)
	s.accumulate(v, s.words, WeightWord)
	s.accumulate(v, s.bigrams, WeightBigram)
	s.accumulate(v, s.trigram, WeightTrigram)
	Normalize(v)
}

// apostrophe handles an apostrophe inside a word, the next byte at i: it
// is dropped when a letter follows; a possessive "'s" ends the word without
// its "s". It returns where to go on.
func apostrophe(text string, i int) int {
	if i >= len(text) {
		return i
	}
	r, size := utf8.DecodeRuneInString(text[i:])
	if !unicode.IsLetter(r) {
		return i
	}
	if (r == 's' || r == 'S') && (i+size == len(text) || !isWordRune(text[i+size:])) {
		return i + size // the possessive: the word ends at the next non-letter
	}
	return i
}

func isWordRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// addTrigrams adds the character trigrams of "^" + w + "$".
func (s *scratch) addTrigrams(w []byte) {
	t := append(append(append(s.tri[:0], '^'), w...), '$')
	s.tri = t
	ascii := true
	for _, c := range w {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i+3 <= len(t); i++ {
			s.trigram = append(s.trigram, fnv1a(seedTrigram, t[i:i+3]))
		}
		return
	}
	st := s.starts[:0]
	for i := 0; i < len(t); {
		st = append(st, i)
		_, size := utf8.DecodeRune(t[i:])
		i += size
	}
	st = append(st, len(t))
	s.starts = st
	for i := 0; i+3 < len(st); i++ {
		s.trigram = append(s.trigram, fnv1a(seedTrigram, t[st[i]:st[i+3]]))
	}
}

// accumulate adds each distinct feature in hs, tf times present, with
// weight w × (1 + ln tf) and the sign its hash gives, to its dimension, in
// the order of first occurrence. It counts with an open-addressing table
// that it leaves empty again.
func (s *scratch) accumulate(v []float32, hs []uint64, w float64) {
	size := 64
	for size < 2*len(hs) {
		size <<= 1
	}
	if len(s.slots) < size {
		s.slots = make([]slot, size)
	}
	tab, mask := s.slots[:size], uint64(size-1)
	order := s.order[:0]
	for _, h := range hs {
		if h == 0 {
			h = 1 // 0 marks a free slot
		}
		i := (h >> 16) & mask
		for {
			if tab[i].key == h {
				tab[i].count++
				break
			}
			if tab[i].key == 0 {
				tab[i] = slot{key: h, count: 1}
				order = append(order, uint32(i))
				break
			}
			i = (i + 1) & mask
		}
	}
	for _, i := range order {
		sl := tab[i]
		tab[i] = slot{}
		x := float32(w * sublinear(int(sl.count)))
		if sl.key>>63 != 0 {
			x = -x
		}
		v[sl.key&(BuiltinDim-1)] += x
	}
	s.order = order
}

type slot struct {
	key   uint64
	count uint32
}

// logTable[tf] is 1 + ln tf, written out so that no platform's math.Log
// can change a vector's last bit.
var logTable = [64]float64{
	0, 1, 1.6931471805599454, 2.09861228866811,
	2.3862943611198908, 2.6094379124341005, 2.791759469228055, 2.9459101490553135,
	3.0794415416798357, 3.1972245773362196, 3.3025850929940459, 3.3978952727983707,
	3.4849066497880004, 3.5649493574615367, 3.6390573296152584, 3.7080502011022101,
	3.7725887222397811, 3.8332133440562162, 3.8903717578961645, 3.9444389791664403,
	3.9957322735539909, 4.0445224377234226, 4.0910424533583161, 4.1354942159291497,
	4.1780538303479453, 4.218875824868201, 4.2580965380214817, 4.2958368660043291,
	4.3322045101752042, 4.3672958299864746, 4.4011973816621559, 4.4339872044851463,
	4.465735902799727, 4.4965075614664798, 4.5263605246161616, 4.5553480614894131,
	4.5835189384561099, 4.6109179126442239, 4.6375861597263857, 4.6635616461296463,
	4.6888794541139358, 4.713572066704308, 4.737669618283368, 4.7612001156935619,
	4.7841896339182615, 4.8066624897703196, 4.8286413964890951, 4.8501476017100584,
	4.8712010109078907, 4.8918202981106269, 4.9120230054281464, 4.9318256327243262,
	4.9512437185814271, 4.9702919135521224, 4.9889840465642745, 5.0073331852324712,
	5.0253516907351496, 5.0430512678345503, 5.0604430105464191, 5.0775374439057197,
	5.0943445622221004, 5.1108738641733114, 5.1271343850450917, 5.1431347263915326,
}

// sublinear is 1 + ln tf: exact up to 63, then 1 + ln(tf >> k) + k ln 2,
// with k the smallest shift that brings tf under 64 (within 2% of it).
func sublinear(tf int) float64 {
	k := 0
	for tf >= len(logTable) {
		tf >>= 1
		k++
	}
	return logTable[tf] + float64(float64(k)*math.Ln2) // no fused multiply-add
}

// fnv1a is 64-bit FNV-1a over b, from an offset basis varied by seed,
// finished by mix.
func fnv1a(seed uint64, b []byte) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) ^ seed
	h *= prime
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return mix(h)
}

// mix is the finalizer of SplitMix64: it spreads every input bit over the
// output, so the low bits (the dimension) and the top bit (the sign) are
// both well distributed.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// stopWord reports whether w is an English stop word.
func stopWord(w []byte) bool {
	if len(w) > 10 {
		return false
	}
	_, ok := stopWords[string(w)]
	return ok
}

var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself",
		"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
		"you", "your", "yours", "yourself", "yourselves",
		"dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "cant", "wont", "im", "ive", "youre", "its", "s", "t",
	} {
		m[w] = struct{}{}
	}
	return m
}()
