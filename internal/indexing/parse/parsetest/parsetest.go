// Package parsetest holds the checks the tests of the document parsers
// (packages parse and pdf) share: expected blocks, the invariants every
// parser keeps, the fuzz check, and damaged inputs.
package parsetest

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Fuzz parses data with parse (the parser of the format name) and checks
// what every parser promises on any input: no panic, an answer within a
// generous time, and when it succeeds, blocks that keep the invariants,
// text that is valid UTF-8 without NUL (which PostgreSQL refuses), and the
// same blocks when parsed again.
func Fuzz(t *testing.T, name string, parse func([]byte) ([]doc.Block, error), data []byte) {
	t.Helper()
	start := time.Now()
	blocks, err := parse(data)
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("parsing %d bytes took %v", len(data), took)
	}
	if err != nil {
		if err.Error() == "" {
			t.Fatalf("an error without a message")
		}
		return
	}
	CheckInvariants(t, name, blocks)
	for i, bl := range blocks {
		if !utf8.ValidString(bl.Text) || strings.ContainsRune(bl.Text, 0) {
			t.Fatalf("block %d: text %q is not valid UTF-8 or holds NUL", i, bl.Text)
		}
	}
	again, err := parse(data)
	if err != nil || !reflect.DeepEqual(again, blocks) {
		t.Fatalf("parsed again: %v, different blocks", err)
	}
}

// Assert fails t, listing both, unless got are the want blocks.
func Assert(t *testing.T, got, want []doc.Block) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	t.Errorf("got %d blocks, want %d", len(got), len(want))
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w doc.Block
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "!!"
		}
		t.Logf("%s %d got  %+v", mark, i, g)
		if g != w {
			t.Logf("%s %d want %+v", mark, i, w)
		}
	}
}

// CheckInvariants checks the invariants every parser keeps.
func CheckInvariants(t *testing.T, name string, blocks []doc.Block) {
	t.Helper()
	for i, bl := range blocks {
		trimmed := strings.TrimSpace(bl.Text)
		if bl.Kind == doc.Code || bl.Kind == doc.List {
			trimmed = strings.TrimRight(bl.Text, " \t\r\n")
		}
		if trimmed != bl.Text || strings.TrimSpace(bl.Text) == "" {
			t.Errorf("%s: block %d has untrimmed or empty text %q", name, i, bl.Text)
		}
		switch bl.Kind {
		case doc.Heading:
			if bl.Level < 1 || bl.Level > 6 {
				t.Errorf("%s: heading %d has level %d", name, i, bl.Level)
			}
		case doc.Paragraph, doc.List, doc.Table, doc.Code, doc.Blockquote:
			if bl.Level != 0 {
				t.Errorf("%s: %s %d has level %d", name, bl.Kind, i, bl.Level)
			}
		default:
			t.Errorf("%s: block %d has kind %q", name, i, bl.Kind)
		}
	}
}

// RandomBytes returns n random bytes.
func RandomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// Mutate returns a damaged copy of seed: flipped bytes, a cut, a spliced
// or duplicated range, or PDF tokens dropped in.
func Mutate(rng *rand.Rand, seed []byte, i int) []byte {
	data := bytes.Clone(seed)
	if len(data) == 0 {
		return data
	}
	switch i % 5 {
	case 0:
		for range 1 + rng.IntN(20) {
			data[rng.IntN(len(data))] = byte(rng.UintN(256))
		}
	case 1:
		data = data[:rng.IntN(len(data))]
	case 2:
		a, c := rng.IntN(len(data)), rng.IntN(len(data))
		if a > c {
			a, c = c, a
		}
		data = append(data[:a:a], data[c:]...)
	case 3:
		tokens := []string{"<<", ">>", "[", "]", "(", ")", "0 R", "obj", "endobj", "stream", "/Kids", "/Type /Pages", "-1", "99999999999", "/Filter /FlateDecode", "BT", "Tj", "TJ"}
		for range 1 + rng.IntN(8) {
			at := rng.IntN(len(data))
			tok := tokens[rng.IntN(len(tokens))]
			data = append(data[:at], append([]byte(" "+tok+" "), data[at:]...)...)
		}
	case 4:
		a := rng.IntN(len(data))
		c := min(len(data), a+rng.IntN(200))
		data = append(data[:c:c], append(bytes.Clone(data[a:c]), data[c:]...)...)
	}
	return data
}
