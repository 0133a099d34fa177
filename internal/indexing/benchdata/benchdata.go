// Package benchdata generates the retrieval benchmark of file search: a
// corpus of documents in mixed formats (HTML, Markdown, plain text, CSV,
// JSON) on varied topics, and queries whose relevant passages are known.
//
// Everything is derived from a seed with math/rand/v2's PCG: the same seed
// gives the same bytes on every run and platform.
//
// # The corpus
//
// Seven collections, each a realistic kind of knowledge base a bot is given:
//
//   - product pages (HTML): 60 products of 12 categories (headphones, robot
//     vacuums, kettles, ...), each with specifications, battery, warranty,
//     returns, troubleshooting and category-specific usage sections, with
//     phrasings varied between products;
//   - recipes (Markdown): 40 dishes with ingredients, method, storage and
//     substitution tips;
//   - travel guides (HTML and Markdown): 30 cities, when to go, airport
//     transfers, money and tipping, food, day trips;
//   - the manual of a command-line tool (Markdown): 24 command pages and 16
//     troubleshooting pages for error codes;
//   - company policies (plain text): 30 customer and employee policies;
//   - tables (CSV): store locations and opening hours, shipping rates, staff
//     directories, accessory price lists, a conference schedule, bus
//     timetables;
//   - JSON: FAQ lists, book catalogues, event listings.
//
// Documents of one collection share templates and vocabulary (every product
// has a warranty, every store opening hours), as real knowledge bases do:
// the right passage has to be told apart from many similar ones by the
// entity the question names.
//
// # The queries
//
// Each fact the generator writes into a document (a sentence, a table row,
// a JSON record) comes with the questions a user would ask about it, written
// by hand the way people ask them: full questions ("How long is the warranty
// on the Aurora X2?") and keyword queries ("aurora x2 warranty"), often in
// other words than the document ("send back" for "return", "money back"
// for "refund") and naming the entity the short way (the product's brand and
// model, not its full name). Both are written without looking at how either
// search method ranks them.
//
// Facts are sampled per collection (a fixed quota each), one phrasing of
// each at random, and the phrasing is then varied the way real input varies,
// each variation drawn independently:
//
//   - form (probability 0.3): one word that has other forms takes another
//     one: plural or singular, another tense or participle ("refund" →
//     "refunded", "keep" → "kept", "battery" → "batteries");
//   - drop (0.2, questions of 5 words or more): one word is left out;
//   - typo (0.2): one word of 4 letters or more gets one slip of the kinds
//     that make up most misspellings (Damerau, 1964): two adjacent letters
//     swapped, a letter left out, a letter doubled, or a letter replaced by
//     a neighbouring key; never the first letter;
//   - extra (0.25): words that do not help are added ("hi,", "quick
//     question:", "thanks", "i bought it last month");
//   - then the text is lowercased (probability 0.6) and its question mark
//     dropped (0.5).
//
// About 30% of the queries come out with none of the first four variations.
// The rates are guesses at what a support bot sees, not measurements;
// Query.Variations records what was applied, so results can be broken down.
//
// A passage is relevant to a query when its content holds one of the query's
// needles: a piece of text the generator knows sits in the passage that
// answers it (the fact's sentence, or a table row's key cells), and nowhere
// else in the corpus.
package benchdata

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Document is a file of the corpus.
type Document struct {
	Key         string // path-like, with the format's extension
	ContentType string
	Content     []byte
	Collection  string
}

// Query is a question with known relevant passages.
type Query struct {
	Text string
	// Base is the question as written, before the variations.
	Base string
	// Needles: a passage is relevant when its content contains one of them
	// (after collapsing runs of whitespace to one space).
	Needles    []string
	Collection string
	// Variations applied: "form", "drop", "typo", "extra"; none for a
	// query asked as written.
	Variations []string
}

// Relevant reports whether a passage with this content answers q.
func (q Query) Relevant(content string) bool {
	c := strings.Join(strings.Fields(content), " ")
	for _, n := range q.Needles {
		if strings.Contains(c, n) {
			return true
		}
	}
	return false
}

// Documents counts the documents (each given as its passages' contents)
// holding a passage that answers q: a well-made query has exactly one.
func (q Query) Documents(passages [][]string) int {
	docs := 0
	for _, ps := range passages {
		for _, p := range ps {
			if q.Relevant(p) {
				docs++
				break
			}
		}
	}
	return docs
}

// Corpus is the generated benchmark.
type Corpus struct {
	Docs    []Document
	Queries []Query
}

// Collections, with the number of queries drawn from each.
var quotas = []struct {
	name string
	n    int
}{
	{"products", 70}, {"recipes", 45}, {"travel", 35}, {"software", 45},
	{"policies", 50}, {"tables", 45}, {"json", 30},
}

// fact is a piece of information in a document and the ways to ask for it.
type fact struct {
	collection string
	needle     string
	questions  []string
}

// gen accumulates the corpus.
type gen struct {
	r     *rand.Rand
	docs  []Document
	facts []fact
	// productNames are the products' short names, for the accessory
	// price lists.
	productNames []string
}

func (g *gen) doc(collection, key, contentType, content string) {
	g.docs = append(g.docs, Document{Key: key, ContentType: contentType, Content: []byte(content), Collection: collection})
}

func (g *gen) fact(collection, needle string, questions ...string) {
	needle = strings.Join(strings.Fields(needle), " ")
	g.facts = append(g.facts, fact{collection: collection, needle: needle, questions: questions})
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// between returns a random integer in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// Generate returns the corpus of seed: 240 documents and 320 queries.
func Generate(seed uint64) Corpus {
	g := &gen{r: newRand(seed)}
	g.products()
	g.recipes()
	g.travel()
	g.software()
	g.policies()
	g.tables()
	g.json()

	var c Corpus
	c.Docs = g.docs
	byColl := map[string][]fact{}
	for _, f := range g.facts {
		byColl[f.collection] = append(byColl[f.collection], f)
	}
	for _, q := range quotas {
		fs := byColl[q.name]
		g.r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		for _, f := range fs[:min(q.n, len(fs))] {
			base := g.pick(f.questions)
			text, vars := vary(g.r, base, q.name)
			c.Queries = append(c.Queries, Query{Text: text, Base: base, Needles: []string{f.needle}, Collection: q.name, Variations: vars})
		}
	}
	return c
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5eed)) }

// vary applies the variations of the package comment to a question of the
// collection.
func vary(r *rand.Rand, q, collection string) (string, []string) {
	words := strings.Fields(q)
	var vars []string
	if r.Float64() < 0.3 {
		var cand []int
		for i, w := range words {
			if _, ok := forms[trimPunct(w)]; ok { // lowercase only: not a name
				cand = append(cand, i)
			}
		}
		if len(cand) > 0 {
			i := cand[r.IntN(len(cand))]
			w := trimPunct(words[i])
			words[i] = strings.Replace(words[i], w, forms[w], 1)
			vars = append(vars, "form")
		}
	}
	if len(words) >= 4 && r.Float64() < 0.2 {
		var cand []int
		for i, w := range words {
			if droppable[strings.ToLower(w)] {
				cand = append(cand, i)
			}
		}
		if len(cand) > 0 {
			i := cand[r.IntN(len(cand))]
			words = append(words[:i], words[i+1:]...)
			vars = append(vars, "drop")
		}
	}
	if r.Float64() < 0.2 {
		var cand []int
		for i, w := range words {
			if w = trimPunct(w); len(w) >= 4 && isLetters(w) {
				cand = append(cand, i)
			}
		}
		if len(cand) > 0 {
			i := cand[r.IntN(len(cand))]
			w := trimPunct(words[i])
			words[i] = strings.Replace(words[i], w, typo(r, w), 1)
			vars = append(vars, "typo")
		}
	}
	if r.Float64() < 0.25 {
		if r.IntN(2) == 0 {
			words = append([]string{prefixes[r.IntN(len(prefixes))]}, words...)
		} else {
			sfx := append(suffixes[:len(suffixes):len(suffixes)], contextual[collection]...)
			s := sfx[r.IntN(len(sfx))]
			words[len(words)-1] = strings.TrimSuffix(words[len(words)-1], "?")
			words = append(words, s)
		}
		vars = append(vars, "extra")
	}
	text := strings.Join(words, " ")
	if r.Float64() < 0.6 {
		text = strings.ToLower(text)
	}
	if r.Float64() < 0.5 {
		text = strings.TrimSuffix(text, "?")
	}
	return text, vars
}

func trimPunct(w string) string { return strings.Trim(w, "?,.!:;'\"()") }

func isLetters(w string) bool {
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// keyboard neighbours on a QWERTY layout.
var neighbours = map[byte]string{
	'q': "wa", 'w': "qes", 'e': "wrd", 'r': "etf", 't': "ryg", 'y': "tuh", 'u': "yij", 'i': "uok", 'o': "ipl", 'p': "ol",
	'a': "qsz", 's': "awdz", 'd': "sefx", 'f': "drgc", 'g': "fthv", 'h': "gyjb", 'j': "hukn", 'k': "jilm", 'l': "kop",
	'z': "asx", 'x': "zsdc", 'c': "xdfv", 'v': "cfgb", 'b': "vghn", 'n': "bhjm", 'm': "njk",
}

// typo makes one slip in w (ASCII letters, 4 or more), never in its first
// letter.
func typo(r *rand.Rand, w string) string {
	b := []byte(w)
	n := len(b)
	switch r.IntN(4) {
	case 0: // swap two adjacent letters
		for range 8 {
			i := 1 + r.IntN(n-2)
			if b[i] != b[i+1] {
				b[i], b[i+1] = b[i+1], b[i]
				return string(b)
			}
		}
		fallthrough
	case 1: // leave one out
		i := 1 + r.IntN(n-1)
		return string(b[:i]) + string(b[i+1:])
	case 2: // double one
		i := 1 + r.IntN(n-1)
		return string(b[:i+1]) + string(b[i:])
	default: // hit a neighbouring key
		i := 1 + r.IntN(n-1)
		c := b[i]
		lower := c | 0x20
		nb := neighbours[lower]
		if nb == "" {
			return string(b[:i]) + string(b[i+1:])
		}
		x := nb[r.IntN(len(nb))]
		if c != lower {
			x &^= 0x20
		}
		b[i] = x
		return string(b)
	}
}

var prefixes = []string{"hi,", "hello", "hey", "quick question:", "can you tell me", "i need to know", "please tell me", "question -", "help:"}

var suffixes = []string{"thanks", "please", "thx", "asap", "thank you!", "need help", "?? urgent"}

// contextual are words added that fit the collection but do not help find
// the answer.
var contextual = map[string][]string{
	"products": {"i bought it last month", "it was a gift", "for my order"},
	"recipes":  {"for dinner tonight", "for a party", "first time making it"},
	"travel":   {"for my trip next month", "first time there", "with kids"},
	"software": {"on linux", "in our ci", "using the latest version"},
	"policies": {"as a new employee", "for my situation"},
}

// droppable are the words users leave out without changing what they ask.
var droppable = map[string]bool{"a": true, "an": true, "the": true, "do": true, "does": true, "i": true, "is": true, "are": true,
	"to": true, "of": true, "for": true, "in": true, "on": true, "at": true, "my": true, "it": true, "be": true, "there": true}

// forms maps a noun to its other number: "battery" may be typed
// "batteries", "logs" "log". Tense and other forms are in the questions as
// written ("refunded", "kept", "frozen"), where the sentence calls for them.
var forms = func() map[string]string {
	m := map[string]string{}
	for _, p := range [][2]string{
		{"hour", "hours"}, {"day", "days"}, {"minute", "minutes"}, {"battery", "batteries"}, {"warranty", "warranties"},
		{"filter", "filters"}, {"book", "books"}, {"backup", "backups"}, {"log", "logs"}, {"token", "tokens"}, {"user", "users"},
		{"ticket", "tickets"}, {"store", "stores"}, {"talk", "talks"}, {"point", "points"}, {"expense", "expenses"},
		{"password", "passwords"}, {"device", "devices"}, {"room", "rooms"}, {"bus", "buses"}, {"page", "pages"},
		{"speaker", "speakers"}, {"ingredient", "ingredients"}, {"cookie", "cookies"}, {"holiday", "holidays"},
		{"extension", "extensions"}, {"price", "prices"}, {"order", "orders"}, {"refund", "refunds"}, {"return", "returns"},
		{"secret", "secrets"}, {"worker", "workers"}, {"card", "cards"}, {"claim", "claims"}, {"leftover", "leftovers"},
		{"receipt", "receipts"}, {"cushion", "cushions"}, {"pad", "pads"}, {"limit", "limits"}, {"migration", "migrations"},
		{"environment", "environments"}, {"plugin", "plugins"}, {"file", "files"}, {"error", "errors"}, {"step", "steps"},
		{"notification", "notifications"}, {"option", "options"}, {"fee", "fees"}, {"rate", "rates"}, {"session", "sessions"},
		{"date", "dates"}, {"month", "months"}, {"week", "weeks"}, {"serving", "servings"}, {"portion", "portions"},
		{"trip", "trips"}, {"dish", "dishes"}, {"preset", "presets"}, {"button", "buttons"}, {"light", "lights"},
		{"brush", "brushes"}, {"head", "heads"}, {"account", "accounts"}, {"email", "emails"}, {"payment", "payments"},
		{"invoice", "invoices"}, {"package", "packages"}, {"item", "items"}, {"parcel", "parcels"}, {"member", "members"},
		{"student", "students"}, {"visitor", "visitors"}, {"bike", "bikes"}, {"dog", "dogs"}, {"pet", "pets"},
		{"phone", "phones"}, {"laptop", "laptops"}, {"gift", "gifts"}, {"meal", "meals"}, {"drink", "drinks"},
		{"exam", "exams"}, {"budget", "budgets"}, {"parameter", "parameters"}, {"stage", "stages"}, {"release", "releases"},
		{"deploy", "deploys"}, {"shell", "shells"}, {"column", "columns"}, {"row", "rows"}, {"schedule", "schedules"},
		{"template", "templates"}, {"credential", "credentials"}, {"snapshot", "snapshots"}, {"plan", "plans"},
	} {
		m[p[0]], m[p[1]] = p[1], p[0]
	}
	return m
}()

// slug makes a file name part of a title.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// expand replaces {S} and other named fields in t.
func expand(t string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(t)
}

// sentences returns the prose sentences the generator writes for seed (the
// facts that are sentences, not table rows), shuffled.
func sentences(seed uint64) []string {
	g := &gen{r: newRand(seed)}
	g.products()
	g.recipes()
	g.travel()
	g.software()
	g.policies()
	g.tables()
	g.json()
	var out []string
	for _, f := range g.facts {
		if strings.Count(f.needle, " ") >= 4 && strings.HasSuffix(f.needle, ".") {
			out = append(out, f.needle)
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Prose returns documents of running text, Markdown and plain text in turn,
// of about size bytes each and at least total bytes in all: sections of a
// heading and paragraphs of 2 to 6 sentences, sometimes a list, drawn from
// the corpus's sentences. It is text with the vocabulary and sentence
// lengths of the corpus, for throughput and load benchmarks.
func Prose(seed uint64, size, total int) []Document {
	ss := sentences(seed)
	r := newRand(seed + 1)
	var docs []Document
	for n, sum := 0, 0; sum < total; n++ {
		var b strings.Builder
		md := n%2 == 0
		for b.Len() < size {
			h := headingOf(ss[r.IntN(len(ss))])
			if md {
				b.WriteString("## " + h + "\n\n")
			} else {
				b.WriteString(h + "\n" + strings.Repeat("-", len(h)) + "\n\n")
			}
			for range 2 + r.IntN(4) {
				if r.IntN(6) == 0 {
					for range 3 + r.IntN(3) {
						b.WriteString("- " + ss[r.IntN(len(ss))] + "\n")
					}
					b.WriteString("\n")
					continue
				}
				for i := range 2 + r.IntN(5) {
					if i > 0 {
						b.WriteString(" ")
					}
					b.WriteString(ss[r.IntN(len(ss))])
				}
				b.WriteString("\n\n")
			}
		}
		d := Document{Key: sprintf("prose/%04d.md", n), ContentType: "text/markdown", Content: []byte(b.String()), Collection: "prose"}
		if !md {
			d.Key, d.ContentType = sprintf("prose/%04d.txt", n), "text/plain"
		}
		docs = append(docs, d)
		sum += b.Len()
	}
	return docs
}

// KB is a large knowledge base for load benchmarks.
type KB struct {
	Files   [][]string // the passages of each file
	Queries []string
}

// LargeKB returns files × perFile passages and nQueries queries. A passage
// is 1 to 6 of the corpus's sentences (about 60 to 700 characters, as the
// chunker's passages are). So that names are as rare as in a real
// knowledge base, where each document is about its own products, places
// and people, every file gets its own names: each capitalized word inside a
// sentence (brands, models, cities, people) is replaced, file by file, by a
// made-up word from a lexicon of 30,000, and numbers are redrawn. The
// common vocabulary stays shared, with its natural skew. The queries are
// the retrieval benchmark's (with their variations), each about the names
// of a random file.
func LargeKB(seed uint64, files, perFile, nQueries int) KB {
	ss := sentences(seed)
	r := newRand(seed + 2)
	lex := lexicon(seed, 30000)
	// Names: capitalized words inside sentences that never occur in
	// lowercase ("Aurora", "Lisbon", but not "Your" or "Send").
	names, lower := map[string]bool{}, map[string]bool{}
	for _, s := range ss {
		for i, w := range strings.Fields(s) {
			w = trimPunct(w)
			switch {
			case w == "":
			case w[0] >= 'a' && w[0] <= 'z':
				lower[w] = true
			case i > 0 && w[0] >= 'A' && w[0] <= 'Z' && !strings.HasSuffix(strings.Fields(s)[i-1], "."):
				names[strings.ToLower(w)] = true
			}
		}
	}
	for w := range lower {
		delete(names, w)
	}
	rename := func(file int, text string, anyCase bool) string {
		ws := strings.Fields(text)
		for i, w := range ws {
			t := trimPunct(w)
			if t == "" {
				continue
			}
			var to string
			switch {
			case t[0] >= '0' && t[0] <= '9':
				to = sprintf("%d", 1+int(mix(uint64(file)<<32^uint64(i)^seed)%500))
			case names[strings.ToLower(t)] && (anyCase || (i > 0 && t[0] >= 'A' && t[0] <= 'Z')):
				to = lex[int(mix(uint64(file)*0x9e3779b97f4a7c15^fnv(strings.ToLower(t)))%uint64(len(lex)))]
			default:
				continue
			}
			ws[i] = strings.Replace(w, t, to, 1)
		}
		return strings.Join(ws, " ")
	}
	kb := KB{Files: make([][]string, files)}
	for f := range files {
		ps := make([]string, perFile)
		for i := range ps {
			var b strings.Builder
			for j := range 1 + r.IntN(6) {
				if j > 0 {
					b.WriteString(" ")
				}
				b.WriteString(ss[r.IntN(len(ss))])
			}
			ps[i] = rename(f, b.String(), false)
		}
		kb.Files[f] = ps
	}
	var qs []Query
	for i := uint64(0); len(qs) < nQueries; i++ {
		qs = append(qs, Generate(seed+i).Queries...)
	}
	for _, q := range qs[:nQueries] {
		kb.Queries = append(kb.Queries, rename(r.IntN(files), q.Text, true))
	}
	return kb
}

// lexicon returns n distinct made-up words of 2 to 4 syllables.
func lexicon(seed uint64, n int) []string {
	r := newRand(seed + 3)
	cons, vows := "bdfgklmnprstvz", "aeiou"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteByte(cons[r.IntN(len(cons))])
			b.WriteByte(vows[r.IntN(len(vows))])
		}
		w := b.String()
		if !seen[w] {
			seen[w] = true
			out = append(out, strings.ToUpper(w[:1])+w[1:])
		}
	}
	return out
}

func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// headingOf makes a heading of the first words of a sentence.
func headingOf(s string) string {
	ws := strings.Fields(strings.TrimSuffix(s, "."))
	return strings.Trim(strings.Join(ws[:min(len(ws), 4)], " "), ",;:")
}
