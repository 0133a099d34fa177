package lexicon

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// header is the first line of an encoded table; a change of format
// changes it.
const header = "botplatform lexicon v1"

// Encode writes the table as text, one record a line, fields separated by
// tabs and lists by commas, sorted, so that the same table always encodes
// to the same bytes:
//
//	w <lemma> <parts of speech, e.g. "nv"> <synonyms> <derived> <hypernyms>
//	x <part of speech> <irregular form> <lemmas>
func (t *Table) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(header + "\n")
	words := make([]string, 0, len(t.Entries))
	for w := range t.Entries {
		words = append(words, w)
	}
	slices.Sort(words)
	for _, w := range words {
		e := t.Entries[w]
		var pos []byte
		for p := range 4 {
			if e.POS&(1<<p) != 0 {
				pos = append(pos, posLetters[p])
			}
		}
		fmt.Fprintf(&b, "w\t%s\t%s\t%s\t%s\t%s\n", w, pos, strings.Join(e.Synonyms, ","), strings.Join(e.Derived, ","), strings.Join(e.Hyper, ","))
	}
	for p := range 4 {
		forms := make([]string, 0, len(t.Exceptions[p]))
		for f := range t.Exceptions[p] {
			forms = append(forms, f)
		}
		slices.Sort(forms)
		for _, f := range forms {
			fmt.Fprintf(&b, "x\t%c\t%s\t%s\n", posLetters[p], f, strings.Join(t.Exceptions[p][f], ","))
		}
	}
	return b.Bytes()
}

// Decode reads a table written by Encode.
func Decode(raw []byte) (*Table, error) {
	first, rest, _ := bytes.Cut(raw, []byte("\n"))
	if string(first) != header {
		return nil, fmt.Errorf("not a lexicon table (first line %.40q)", first)
	}
	t := &Table{Entries: map[string]*Entry{}}
	for p := range t.Exceptions {
		t.Exceptions[p] = map[string][]string{}
	}
	list := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	for n := 2; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		f := strings.Split(string(line), "\t")
		switch {
		case len(f) == 6 && f[0] == "w":
			e := &Entry{Synonyms: list(f[3]), Derived: list(f[4]), Hyper: list(f[5])}
			for _, c := range f[2] {
				p := strings.IndexRune(posLetters, c)
				if p < 0 {
					return nil, fmt.Errorf("line %d: part of speech %q", n, c)
				}
				e.POS |= 1 << p
			}
			t.Entries[f[1]] = e
		case len(f) == 4 && f[0] == "x" && len(f[1]) == 1 && strings.Contains(posLetters, f[1]):
			t.Exceptions[strings.Index(posLetters, f[1])][f[2]] = list(f[3])
		default:
			return nil, fmt.Errorf("line %d: not a record: %.60q", n, line)
		}
	}
	return t, nil
}
