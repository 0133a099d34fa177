package parse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
)

// b is shorthand for an expected block.
func b(kind string, level int, text string) doc.Block {
	return doc.Block{Kind: kind, Level: level, Text: text}
}

func bp(kind string, level int, text string, page int) doc.Block {
	return doc.Block{Kind: kind, Level: level, Text: text, Page: page}
}

// fixture reads testdata/name; the PDF fixtures are the PDF package's.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	dir := "testdata"
	if filepath.Ext(name) == ".pdf" {
		dir = filepath.Join("..", "pdf", "testdata")
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t testing.TB, contentType, key string, content []byte) []doc.Block {
	t.Helper()
	d, err := Parse(contentType, key, content)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", contentType, key, err)
	}
	return d.Blocks
}

func TestDetect(t *testing.T) {
	tests := []struct {
		contentType, key, want string
	}{
		{"text/plain", "a.bin", TypeText},
		{"text/plain; charset=utf-8", "", TypeText},
		{"TEXT/Markdown", "x", TypeMarkdown},
		{"text/x-markdown", "x", TypeMarkdown},
		{"text/html; charset=ISO-8859-1", "x", TypeHTML},
		{"application/pdf", "x", TypePDF},
		{TypeDOCX, "x", TypeDOCX},
		{"text/csv", "x", TypeCSV},
		{"application/json", "x", TypeJSON},
		// Fallback by extension.
		{"", "notes/readme.md", TypeMarkdown},
		{"application/octet-stream", "dir/report.PDF", TypePDF},
		{"", "a.markdown", TypeMarkdown},
		{"", "a.htm", TypeHTML},
		{"", "a.html", TypeHTML},
		{"application/octet-stream", "a.docx", TypeDOCX},
		{"", "a.csv", TypeCSV},
		{"", "a.json", TypeJSON},
		{"", "a.txt", TypeText},
		{"application/vnd.ms-excel", "export.csv", TypeCSV},
	}
	for _, tt := range tests {
		got, err := Detect(tt.contentType, tt.key)
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q, %q) = %q, %v; want %q", tt.contentType, tt.key, got, err, tt.want)
		}
	}
}

func TestUnsupported(t *testing.T) {
	tests := []struct {
		contentType, key, typ string
	}{
		{"image/png", "a.png", "image/png"},
		{"image/png; foo=bar", "a.md", "image/png"}, // the content type wins
		{"application/octet-stream", "a.exe", "application/octet-stream"},
		{"", "archive.zip", ".zip"},
		{"", "noext", ""},
		{"application/vnd.ms-excel", "book.xls", "application/vnd.ms-excel"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.contentType, tt.key, []byte("x"))
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Fatalf("Parse(%q, %q) error = %v, want *UnsupportedError", tt.contentType, tt.key, err)
		}
		if ue.Type != tt.typ {
			t.Errorf("Parse(%q, %q): Type = %q, want %q", tt.contentType, tt.key, ue.Type, tt.typ)
		}
	}
	want := "files of type image/png cannot be indexed; supported: text/plain, text/markdown, text/html, application/pdf, application/vnd.openxmlformats-officedocument.wordprocessingml.document, text/csv, application/json"
	if got := (&UnsupportedError{Type: "image/png"}).Error(); got != want {
		t.Errorf("Error() = %q\nwant %q", got, want)
	}
	if got := (&UnsupportedError{}).Error(); !strings.HasPrefix(got, "files of type unknown cannot be indexed; supported: text/plain, ") {
		t.Errorf("Error() = %q", got)
	}
	if len(Supported) != 7 {
		t.Errorf("Supported = %v", Supported)
	}
}

func TestFallbackByExtensionParses(t *testing.T) {
	for _, tt := range []struct{ key, ct string }{
		{"sample.md", ""}, {"sample.md", "application/octet-stream"},
	} {
		got := mustParse(t, tt.ct, tt.key, fixture(t, "sample.md"))
		if got[0] != b(doc.Heading, 1, "Botplatform Guide") {
			t.Errorf("%q %q: first block %+v, want the Markdown heading", tt.ct, tt.key, got[0])
		}
	}
	got := mustParse(t, "", "report.pdf", fixture(t, "handmade.pdf"))
	if got[0].Page != 1 || got[0].Text != "Quarterly Report" {
		t.Errorf("PDF by extension: %+v", got[0])
	}
	got = mustParse(t, "application/octet-stream", "handbook.docx", fixture(t, "handmade.docx"))
	if got[0] != b(doc.Heading, 1, "Botplatform Handbook") {
		t.Errorf("DOCX by extension: %+v", got[0])
	}
}

func TestTextEncodings(t *testing.T) {
	// UTF-8 with a byte-order mark.
	got := mustParse(t, "text/plain", "", []byte("\xEF\xBB\xBFhello"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "hello")})
	// UTF-16 little and big endian, with byte-order marks.
	got = mustParse(t, "text/plain", "", []byte("\xFF\xFEh\x00\xe9\x00\n\x00\n\x00x\x00"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "hé"), b(doc.Paragraph, 0, "x")})
	got = mustParse(t, "text/csv", "", []byte("\xFE\xFF\x00a\x00\n\x001"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Table, 0, "a: 1")})
	// A declared charset.
	got = mustParse(t, "text/plain; charset=ISO-8859-1", "", []byte("caf\xe9"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "café")})
	got = mustParse(t, "text/markdown; charset=\"windows-1252\"", "", []byte("# \x93quoted\x94"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Heading, 1, "“quoted”")})

	// Invalid UTF-8 is refused with the line of the first bad byte.
	for _, ct := range []string{"text/plain", "text/markdown", "text/csv", "application/json"} {
		_, err := Parse(ct, "", []byte("ok\nstill ok\nbad \xff byte"))
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: error = %v", ct, err)
		}
	}
	_, err := Parse("text/plain; charset=klingon", "", []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "klingon") {
		t.Errorf("unknown charset: error = %v", err)
	}
}

// TestNULDropped: no parser lets a NUL character into a block's text.
func TestNULDropped(t *testing.T) {
	for typ, in := range map[string]string{
		TypeText:     "a\x00b\n\n- c\x00",
		TypeMarkdown: "# H\x00\n\nx\x00y",
		TypeHTML:     "<p>a&#0;b\x00c</p>",
		TypeCSV:      "h\x00,k\nv,w\x00",
		TypeJSON:     `{"k\u0000": "v\u0000"}`,
	} {
		d, err := Parse(typ, "", []byte(in))
		if err != nil || len(d.Blocks) == 0 {
			t.Errorf("%s: %v, %d blocks", typ, err, len(d.Blocks))
		}
		for _, bl := range d.Blocks {
			if strings.ContainsRune(bl.Text, 0) {
				t.Errorf("%s: %q", typ, bl.Text)
			}
		}
	}
}

func TestEmptyInputs(t *testing.T) {
	for _, ct := range []string{"text/plain", "text/markdown", "text/html", "text/csv"} {
		d, err := Parse(ct, "", nil)
		if err != nil || len(d.Blocks) != 0 {
			t.Errorf("%s: empty input gave %v, %v", ct, d.Blocks, err)
		}
	}
	for _, ct := range []string{"application/json", "application/pdf", TypeDOCX} {
		if _, err := Parse(ct, "", nil); err == nil {
			t.Errorf("%s: empty input parsed without error", ct)
		}
	}
}

// TestConcurrent parses every fixture from many goroutines (run with
// -race).
func TestConcurrent(t *testing.T) {
	files := map[string]string{
		"sample.md": "", "sample.txt": "", "sample.html": "", "sample.csv": "",
		"sample.json": "", "handmade.pdf": "", "libreoffice.pdf": "", "handmade.docx": "",
		"libreoffice.docx": "",
	}
	for name := range files {
		files[name] = string(fixture(t, name))
	}
	var wg sync.WaitGroup
	for range 4 {
		for name, content := range files {
			wg.Go(func() {
				if _, err := Parse("", name, []byte(content)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			})
		}
	}
	wg.Wait()
}

func TestInvariantsOnFixtures(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if _, err := Detect("", name); err != nil {
			continue
		}
		d, err := Parse("", name, fixture(t, name))
		if err != nil {
			continue // the error cases are tested on their own
		}
		parsetest.CheckInvariants(t, name, d.Blocks)
	}
}
