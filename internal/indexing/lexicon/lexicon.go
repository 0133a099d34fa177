// Package lexicon knows which English words are related to which: for a
// word, its synonyms, its one-hop hypernyms (a "parcel" is a "package") and
// its derivationally related forms ("cancel", "cancellation"), taken from
// the first (most frequent) sense of each part of speech in WordNet 3.0,
// and a lemmatiser (WordNet's morphology rules and exception lists) so that
// inflected forms ("parcels", "went") find their entries.
//
// The table is generated from WordNet's database files by ./gen (see
// scripts/gen-lexicon) and embedded in the binary; nothing is read from the
// network or the disk at run time. WordNet's licence: WORDNET-LICENSE.
package lexicon

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"slices"
	"sync"
)

// Kind is how a related word relates to the word asked about.
type Kind uint8

// Kinds, closest first.
const (
	Synonym  Kind = iota + 1 // another word of the same sense
	Derived                  // a derivationally related form of another part of speech
	Hypernym                 // a word of a more general sense, one hop up
)

func (k Kind) String() string {
	switch k {
	case Synonym:
		return "synonym"
	case Derived:
		return "derived"
	case Hypernym:
		return "hypernym"
	}
	return "unknown"
}

// Relation is a word related to another.
type Relation struct {
	Word string
	Kind Kind
}

// Parts of speech, as bits of Entry.POS.
const (
	Noun uint8 = 1 << iota
	Verb
	Adj
	Adv
)

// posLetters are WordNet's letters for the parts of speech, in bit order.
const posLetters = "nvar"

// Entry is what the table holds for one lemma: the parts of speech it has
// a sense in, and the words related to its first sense of each.
type Entry struct {
	POS      uint8
	Synonyms []string
	Derived  []string
	Hyper    []string
}

// Table is a lexicon: entries by lemma, and the irregular forms of each
// part of speech (WordNet's exception lists: "went" → "go").
type Table struct {
	Entries    map[string]*Entry
	Exceptions [4]map[string][]string // by part of speech, in posLetters order
}

//go:embed wordnet.txt.gz
var embedded []byte

// Notice is WordNet's licence, which must accompany every copy of the table
// (botplatform licenses prints it).
//
//go:embed WORDNET-LICENSE
var Notice string

// Default returns the table built into the binary, decoded on first use
// (about 0.1 s). It panics if the embedded table is corrupt, which a test
// rules out.
var Default = sync.OnceValue(func() *Table {
	zr, err := gzip.NewReader(bytes.NewReader(embedded))
	if err != nil {
		panic("lexicon: " + err.Error())
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		panic("lexicon: " + err.Error())
	}
	t, err := Decode(raw)
	if err != nil {
		panic("lexicon: " + err.Error())
	}
	return t
})

// Related returns the words related to word (any form of it: "parcels"
// is looked up as "parcel"), each once with its closest kind, synonyms
// first, then derived forms, then hypernyms; the word's own lemmas are left
// out. Words not in the table have none.
func (t *Table) Related(word string) []Relation {
	lemmas := t.Lemmas(word)
	seen := map[string]bool{word: true}
	for _, l := range lemmas {
		seen[l] = true
	}
	var out []Relation
	for _, kind := range []Kind{Synonym, Derived, Hypernym} {
		for _, l := range lemmas {
			e := t.Entries[l]
			words := e.Synonyms
			switch kind {
			case Derived:
				words = e.Derived
			case Hypernym:
				words = e.Hyper
			}
			for _, w := range words {
				if !seen[w] {
					seen[w] = true
					out = append(out, Relation{w, kind})
				}
			}
		}
	}
	return out
}

// Parts returns the two words the compound word is made of ("surfboards" →
// "surf", "boards"; "raincoat" → "rain", "coat"), as they are written in
// it, or nil. Each part is at least three letters and a form of a word of
// the table. A word the table knows is split only when its head (the
// second part) is one of its synonyms or more general words, as a
// surfboard is a board: "carpet" is no pet, "passage" no age. A word the
// table does not know ("rainjacket") is split at the place that leaves the
// longest head.
func (t *Table) Parts(word string) []string {
	if len(word) < 6 {
		return nil
	}
	known := len(t.Lemmas(word)) > 0
	var related []Relation
	if known {
		related = t.Related(word)
	}
	for i := 3; i <= len(word)-3; i++ {
		head, mod := word[i:], word[:i]
		heads := t.Lemmas(head)
		if len(heads) == 0 || len(t.Lemmas(mod)) == 0 {
			continue
		}
		if !known {
			return []string{mod, head}
		}
		for _, r := range related {
			if r.Kind != Derived && slices.Contains(heads, r.Word) {
				return []string{mod, head}
			}
		}
	}
	return nil
}
