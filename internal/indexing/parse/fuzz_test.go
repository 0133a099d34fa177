package parse

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fuzz targets of the document parsers, one per format (FuzzParsePDF,
// FuzzRenderPDF and FuzzParseDOCX sit with their parsers' tests). Seeds
// are in testdata/fuzz/<FuzzName>/.

// fuzzParse parses data as contentType and checks what every parser
// promises on any input: no panic, an answer within a generous time, and
// when it succeeds, blocks that keep the invariants, text that is valid
// UTF-8 without NUL (which PostgreSQL refuses), and the same blocks when
// parsed again.
func fuzzParse(t *testing.T, contentType string, data []byte) {
	t.Helper()
	start := time.Now()
	d, err := Parse(contentType, "", data)
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("parsing %d bytes took %v", len(data), took)
	}
	if err != nil {
		if err.Error() == "" {
			t.Fatalf("an error without a message")
		}
		return
	}
	checkInvariants(t, contentType, d.Blocks)
	for i, bl := range d.Blocks {
		if !utf8.ValidString(bl.Text) || strings.ContainsRune(bl.Text, 0) {
			t.Fatalf("block %d: text %q is not valid UTF-8 or holds NUL", i, bl.Text)
		}
	}
	again, err := Parse(contentType, "", data)
	if err != nil || !reflect.DeepEqual(again, d) {
		t.Fatalf("parsed again: %v, different blocks", err)
	}
}

func FuzzParseText(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeText, data) })
}

func FuzzParseMarkdown(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeMarkdown, data) })
}

func FuzzParseHTML(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeHTML, data) })
}

func FuzzParseCSV(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeCSV, data) })
}

func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeJSON, data) })
}
