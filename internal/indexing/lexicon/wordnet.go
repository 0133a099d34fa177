package lexicon

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// wordnetFiles are the names of WordNet's files per part of speech, in
// posLetters order.
var wordnetFiles = [4]string{"noun", "verb", "adj", "adv"}

// synset is a WordNet synset as its data file holds it.
type synset struct {
	words []string // lowercased, adjective markers ("(a)") removed
	ptrs  []pointer
}

type pointer struct {
	symbol   string
	target   synsetKey
	src, dst int // word numbers (1-based) of a lexical pointer; 0 for a semantic one
}

type synsetKey struct {
	pos    byte // n, v, a or r (satellites are filed with adjectives)
	offset int
}

// FromWordNet builds the table from a WordNet 3.0 database directory
// (index.noun, data.noun, noun.exc and the same for verb, adj and adv, as
// Debian's wordnet-base installs them in /usr/share/wordnet). Only
// single-word lemmas of letters are kept: search matches single words.
func FromWordNet(dir string) (*Table, error) {
	synsets := map[synsetKey]*synset{}
	for p, name := range wordnetFiles {
		if err := eachLine(filepath.Join(dir, "data."+name), func(line string) error {
			key, s, err := parseData(line)
			if err != nil {
				return err
			}
			key.pos = posLetters[p]
			synsets[key] = s
			return nil
		}); err != nil {
			return nil, err
		}
	}
	t := &Table{Entries: map[string]*Entry{}}
	for p, name := range wordnetFiles {
		if err := eachLine(filepath.Join(dir, "index."+name), func(line string) error {
			f := strings.Fields(line)
			if len(f) < 4 {
				return fmt.Errorf("index line %.60q", line)
			}
			lemma := f[0]
			if !singleWord(lemma) {
				return nil
			}
			nptr, err := strconv.Atoi(f[3])
			if err != nil || len(f) < 4+nptr+3 {
				return fmt.Errorf("index line %.60q", line)
			}
			first, err := strconv.Atoi(f[4+nptr+2])
			if err != nil {
				return fmt.Errorf("index line %.60q", line)
			}
			s := synsets[synsetKey{posLetters[p], first}]
			if s == nil {
				return fmt.Errorf("%s: no synset %d in data.%s", lemma, first, name)
			}
			e := t.Entries[lemma]
			if e == nil {
				e = &Entry{}
				t.Entries[lemma] = e
			}
			e.POS |= 1 << p
			addFirstSense(e, lemma, s, synsets)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for p, name := range wordnetFiles {
		t.Exceptions[p] = map[string][]string{}
		if err := eachLine(filepath.Join(dir, name+".exc"), func(line string) error {
			f := strings.Fields(line)
			if len(f) < 2 || !singleWord(f[0]) {
				return nil
			}
			for _, base := range f[1:] {
				if e := t.Entries[base]; e != nil && e.POS&(1<<p) != 0 {
					t.Exceptions[p][f[0]] = appendNew(t.Exceptions[p][f[0]], f[0], base)
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// addFirstSense adds to e the words related to lemma's sense s: the other
// words of s, the words of its hypernyms (instance hypernyms too), and the
// forms its derivation and pertainym pointers from lemma lead to.
func addFirstSense(e *Entry, lemma string, s *synset, synsets map[synsetKey]*synset) {
	self := 0
	for i, w := range s.words {
		if w == lemma {
			self = i + 1
		}
		e.Synonyms = appendNew(e.Synonyms, lemma, w)
	}
	for _, ptr := range s.ptrs {
		t := synsets[ptr.target]
		if t == nil {
			continue
		}
		switch ptr.symbol {
		case "@", "@i":
			for _, w := range t.words {
				e.Hyper = appendNew(e.Hyper, lemma, w)
			}
		case "+", `\`:
			if ptr.src != self || self == 0 {
				continue
			}
			for i, w := range t.words {
				if ptr.dst == 0 || ptr.dst == i+1 {
					e.Derived = appendNew(e.Derived, lemma, w)
				}
			}
		}
	}
}

// appendNew appends w to list unless it is lemma itself, already there, or
// not a single word.
func appendNew(list []string, lemma, w string) []string {
	if w == lemma || !singleWord(w) {
		return list
	}
	for _, x := range list {
		if x == w {
			return list
		}
	}
	return append(list, w)
}

// singleWord: at least two lowercase ASCII letters and nothing else.
func singleWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// parseData parses a line of a data file: offset, lexicographer file,
// synset type, words (count in hex, each with its lex id), pointers
// (count, then symbol, offset, part of speech, source/target in hex).
func parseData(line string) (synsetKey, *synset, error) {
	bad := func() (synsetKey, *synset, error) { return synsetKey{}, nil, fmt.Errorf("data line %.60q", line) }
	line, _, _ = strings.Cut(line, " | ")
	f := strings.Fields(line)
	if len(f) < 4 {
		return bad()
	}
	offset, err1 := strconv.Atoi(f[0])
	nw, err2 := strconv.ParseInt(f[3], 16, 32)
	if err1 != nil || err2 != nil || len(f) < 4+2*int(nw)+1 {
		return bad()
	}
	s := &synset{}
	for i := range int(nw) {
		w := strings.ToLower(f[4+2*i])
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j] // an adjective's marker: "(a)", "(p)", "(ip)"
		}
		s.words = append(s.words, w)
	}
	at := 4 + 2*int(nw)
	np, err := strconv.Atoi(f[at])
	if err != nil || len(f) < at+1+4*np {
		return bad()
	}
	for i := range np {
		g := f[at+1+4*i : at+5+4*i]
		off, err1 := strconv.Atoi(g[1])
		st, err2 := strconv.ParseInt(g[3], 16, 32)
		if err1 != nil || err2 != nil || len(g[2]) != 1 {
			return bad()
		}
		pos := g[2][0]
		if pos == 's' {
			pos = 'a'
		}
		s.ptrs = append(s.ptrs, pointer{symbol: g[0], target: synsetKey{pos, off}, src: int(st >> 8), dst: int(st & 0xff)})
	}
	return synsetKey{offset: offset}, s, nil
}

// eachLine calls fn with each line of the file at path, skipping the
// licence header (lines starting with a space) and empty lines.
func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", filepath.Base(path), n, err)
		}
	}
	return sc.Err()
}
