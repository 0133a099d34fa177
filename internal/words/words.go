// Package words splits text into the words full-text search looks for, the
// same for every database and for the ranking done in Go.
package words

import (
	"strings"
	"unicode"
)

// Query splits a search query into its words: runs of letters and digits,
// lowercased, without English stop words.
func Query(q string) []string {
	ws := strings.FieldsFunc(strings.ToLower(q), Separator)
	out := ws[:0]
	for _, w := range ws {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// Distinct returns ws without repeats, in order of first appearance.
func Distinct(ws []string) []string {
	seen := make(map[string]bool, len(ws))
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Separator reports whether r separates words (it is neither a letter nor a
// digit).
func Separator(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// Stop reports whether w (lowercase) is an English stop word.
func Stop(w string) bool { return stopWords[w] }

// Filler reports whether w (lowercase) is a word people put in questions
// that says nothing about what they ask for ("really", "stuff", "get"):
// a search that understands the question leaves it out, unless the
// question holds nothing else.
func Filler(w string) bool { return fillerWords[w] }

// fillerWords: customers' questions carry these ("do you fix stuff i
// bought somewhere else", "when do i get my money back") and the ranking
// weighed them as much as the words that matter, so a passage about
// stuffing wet boots or what members get came first.
var fillerWords = set(`
	get gets got getting gotten want wants wanted stuff thing things really something anything totally
	please hi hello hey thanks thank actually basically`)

// set is the set of the words of list.
func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// stopWords are the words PostgreSQL's english text search configuration
// ignores (its english.stop): to_tsquery drops them from a query there;
// SQLite's FTS5 would match them in most passages (one costly ranking for
// next to nothing: BM25 weighs such words close to 0), so every backend
// leaves them out.
var stopWords = set(`
	i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
	herself it its itself they them their theirs themselves what which who whom this that these those am is are
	was were be been being have has had having do does did doing a an the and but if or because as until while
	of at by for with about against between into through during before after above below to from up down in out
	on off over under again further then once here there when where why how all any both each few more most
	other some such no nor not only own same so than too very s t can will just don should now`)
