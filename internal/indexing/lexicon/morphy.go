package lexicon

import "strings"

// rule is one of WordNet's detachment rules: a suffix replaced to undo an
// inflection.
type rule struct{ suffix, with string }

// rules are WordNet's (morph.c), per part of speech in posLetters order.
var rules = [4][]rule{
	{{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	{{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	{{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	nil,
}

// Lemmas returns the base forms of word in the table, as WordNet's morphy
// finds them for each part of speech: the forms its exception lists give,
// the word itself if it is a lemma, and what the detachment rules make of
// it that is a lemma of that part of speech. Each once, in that order, by
// part of speech (noun, verb, adjective, adverb). The word is lowercased
// first; none when nothing is found.
func (t *Table) Lemmas(word string) []string {
	word = strings.ToLower(word)
	var out []string
	add := func(l string) {
		for _, o := range out {
			if o == l {
				return
			}
		}
		out = append(out, l)
	}
	for p := range 4 {
		bit := uint8(1) << p
		for _, b := range t.Exceptions[p][word] {
			if e := t.Entries[b]; e != nil && e.POS&bit != 0 {
				add(b)
			}
		}
		if e := t.Entries[word]; e != nil && e.POS&bit != 0 {
			add(word)
		}
		for _, r := range rules[p] {
			base, ok := strings.CutSuffix(word, r.suffix)
			if !ok || base == "" {
				continue
			}
			base += r.with
			if e := t.Entries[base]; e != nil && e.POS&bit != 0 {
				add(base)
			}
		}
	}
	return out
}
