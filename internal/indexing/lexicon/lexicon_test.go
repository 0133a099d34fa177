package lexicon

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestFromWordNet builds a table from a small database in WordNet's format
// and checks what each lemma relates to, the lemmatiser, and that the
// table survives encoding.
func TestFromWordNet(t *testing.T) {
	tb, err := FromWordNet("testdata/wordnet")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Entry{
		"parcel":    {POS: Noun | Verb, Synonyms: []string{"package", "wrap"}, Derived: []string{"wrap"}, Hyper: []string{"container"}},
		"container": {POS: Noun},
		"mailbag":   {POS: Noun},
		"post":      {POS: Noun},                                // parcel_post: not a single word
		"cheap":     {POS: Adj, Derived: []string{"cheapness"}}, // "cheap(a)": the marker is dropped
		"cheapness": {POS: Noun, Derived: []string{"cheap"}},    //
		"cheaply":   {POS: Adv, Derived: []string{"cheap"}},     // a pertainym
		"wrap":      {POS: Verb, Synonyms: []string{"parcel"}},  // the derivation pointer is parcel's, not wrap's
	}
	if !reflect.DeepEqual(tb.Entries, want) {
		for w, e := range tb.Entries {
			t.Logf("%s: %+v", w, *e)
		}
		t.Fatalf("entries differ from %v", want)
	}
	if got := tb.Exceptions; !reflect.DeepEqual(got[1], map[string][]string{"parcelled": {"parcel"}, "wrapt": {"wrap"}}) ||
		!reflect.DeepEqual(got[2], map[string][]string{"cheaper": {"cheap"}}) || len(got[0]) != 0 {
		t.Fatalf("exceptions %v (mice → mouse has no entry: dropped)", got)
	}
	for word, lemmas := range map[string][]string{
		"parcels":   {"parcel"},
		"Parcel":    {"parcel"},
		"parcelled": {"parcel"},
		"wraps":     {"wrap"},
		"wrapt":     {"wrap"},
		"cheaper":   {"cheap"},
		"mailbags":  {"mailbag"},
		"boxes":     nil,
		"":          nil,
	} {
		if got := tb.Lemmas(word); !slices.Equal(got, lemmas) {
			t.Errorf("Lemmas(%q) = %q, want %q", word, got, lemmas)
		}
	}
	if got, want := tb.Related("parcels"), []Relation{{"package", Synonym}, {"wrap", Synonym}, {"container", Hypernym}}; !slices.Equal(got, want) {
		t.Errorf("Related(parcels) = %v, want %v", got, want)
	}
	if got := tb.Related("unknown"); got != nil {
		t.Errorf("Related(unknown) = %v", got)
	}
	back, err := Decode(tb.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, tb) || !bytes.Equal(back.Encode(), tb.Encode()) {
		t.Fatal("the table changed through Encode and Decode")
	}
}

// TestDecodeRefusesOtherData: a file that is not a table, or a damaged one,
// is an error, not a partial table.
func TestDecodeRefusesOtherData(t *testing.T) {
	for _, raw := range []string{"", "hello\n", header + "\nw\tx\n", header + "\nw\tparcel\tq\t\t\t\n", header + "\nx\tz\tgeese\tgoose\n"} {
		if _, err := Decode([]byte(raw)); err == nil {
			t.Errorf("Decode(%q) succeeded", raw)
		}
	}
}

// TestDefault: the table built into the binary holds WordNet's first
// senses and its irregular forms.
func TestDefault(t *testing.T) {
	tb := Default()
	if n := len(tb.Entries); n < 70000 {
		t.Fatalf("%d lemmas in the built-in table", n)
	}
	for word, lemma := range map[string]string{"went": "go", "parcels": "parcel", "boxes": "box", "refunded": "refund", "children": "child", "cheaper": "cheap"} {
		if got := tb.Lemmas(word); !slices.Contains(got, lemma) {
			t.Errorf("Lemmas(%q) = %q, want %q among them", word, got, lemma)
		}
	}
	for word, want := range map[string]Relation{
		"parcels":   {"package", Synonym},
		"cheap":     {"inexpensive", Synonym},
		"cancel":    {"cancellation", Derived},
		"arrived":   {"arrival", Derived},
		"refunds":   {"repay", Synonym},
		"delivery":  {"transport", Hypernym},
		"purchased": {"buy", Synonym},
	} {
		if got := tb.Related(word); !slices.Contains(got, want) {
			t.Errorf("Related(%q) = %v, want %v among them", word, got, want)
		}
	}
}

// TestDefaultIsGenerated: the committed table is what the generator makes
// of WordNet's files, where they are installed (Debian's wordnet-base, or
// the directory in BOTPLATFORM_WORDNET_DIR).
func TestDefaultIsGenerated(t *testing.T) {
	dir := os.Getenv("BOTPLATFORM_WORDNET_DIR")
	if dir == "" {
		dir = "/usr/share/wordnet"
	}
	if _, err := os.Stat(filepath.Join(dir, "data.noun")); err != nil {
		t.Skipf("no WordNet database in %s (install wordnet-base, or see scripts/gen-lexicon): %v", dir, err)
	}
	tb, err := FromWordNet(dir)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tb.Encode(), committed) {
		t.Fatal("wordnet.txt.gz differs from what scripts/gen-lexicon generates: regenerate it")
	}
}

func TestParts(t *testing.T) {
	lx := Default()
	for w, want := range map[string][]string{
		"surfboards": {"surf", "boards"}, // a surfboard is a board
		"raincoat":   {"rain", "coat"},
		"toothbrush": {"tooth", "brush"},
		"rainjacket": {"rain", "jacket"}, // not in the table: split where the parts are words
		"carpet":     nil,                // no pet
		"passage":    nil,                // no age
		"weekend":    nil,
		"boots":      nil, // too short
		"":           nil,
	} {
		if got := lx.Parts(w); !slices.Equal(got, want) {
			t.Errorf("Parts(%q) = %q, want %q", w, got, want)
		}
	}
}
