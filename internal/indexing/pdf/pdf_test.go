package pdf

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
	"github.com/botplatform/botplatform/internal/indexing/pdf/pdftest"
)

func bp(kind string, level int, text string, page int) doc.Block {
	return doc.Block{Kind: kind, Level: level, Text: text, Page: page}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t testing.TB, content []byte) []doc.Block {
	t.Helper()
	blocks, err := Parse(content)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return blocks
}

// TestPDFInvariantsOnFixtures checks the invariants every parser keeps on
// the blocks of the fixtures that can be read.
func TestPDFInvariantsOnFixtures(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.pdf"))
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	for _, name := range names {
		blocks, err := Parse(fixture(t, filepath.Base(name)))
		if err != nil {
			continue // the error cases are tested on their own
		}
		parsetest.CheckInvariants(t, name, blocks)
	}
}

var handmadePDF = []doc.Block{
	bp(doc.Heading, 1, "Quarterly Report", 1),
	bp(doc.Paragraph, 0, "Revenue grew in every region this quarter, led by strong demand for the new hosting plans.", 1),
	bp(doc.Paragraph, 0, "Costs stayed flat.", 1),
	bp(doc.List, 0, "- Hosting revenue up 20%\n- Support tickets down", 1),
	bp(doc.Heading, 2, "Outlook", 2),
	bp(doc.Paragraph, 0, "The second page talks about zebras and their stripes. Next year looks bright.", 2),
	bp(doc.Paragraph, 0, "Café naïve résumé and more", 2),
	bp(doc.Heading, 3, "Привет, мир. Γειά σου κόσμε.", 3), // 14 pt: larger than the body
	bp(doc.Paragraph, 0, "Text inside a form XObject.", 3),
}

// TestPDFHandmade reads the hand-written three-page PDF: Helvetica text
// positioned with Td/T*/TJ, a Flate-compressed page, a Type0 font with a
// ToUnicode CMap and a form XObject; the page numbers at the foot of the
// pages are dropped.
func TestPDFHandmade(t *testing.T) {
	got := mustParse(t, fixture(t, "handmade.pdf"))
	parsetest.Assert(t, got, handmadePDF)
}

// TestPDFLibreOffice reads a PDF written by LibreOffice from
// handmade.docx: embedded TrueType subsets with ToUnicode maps, text set
// word by word, a wrapped paragraph, a numbered list with a nested
// bullet, a table, and a heading on page 2.
func TestPDFLibreOffice(t *testing.T) {
	got := mustParse(t, fixture(t, "libreoffice.pdf"))
	parsetest.Assert(t, got, []doc.Block{
		bp(doc.Heading, 1, "Botplatform Handbook", 1),
		bp(doc.Heading, 3, "Internal guide", 1),
		bp(doc.Heading, 2, "Getting started", 1),
		bp(doc.Paragraph, 0, "Install the server with one command. Then open the dashboard & sign in.", 1),
		bp(doc.Paragraph, 0, "Line one Line two", 1),
		bp(doc.Paragraph, 0, "Botplatform runs many small bots side by side on one server. Each bot keeps its own "+
			"storage, its own schedule and its own secrets, and the server makes sure that one misbehaving bot "+
			"cannot slow the others down. Files that a bot uploads can be indexed, so that the bot can later "+
			"search them by meaning rather than by exact words.", 1),
		bp(doc.Paragraph, 0, "Unicode check: Привет мир, naïve café.", 1),
		bp(doc.List, 0, "1. First step\n2. Second step\n  - A nested detail", 1),
		bp(doc.Heading, 4, "Configuration", 2),
		bp(doc.Paragraph, 0, "Setting Default", 2),
		bp(doc.Paragraph, 0, "port 8080", 2),
		bp(doc.Paragraph, 0, "workers 4", 2),
		bp(doc.Paragraph, 0, "The configuration lives in one file.", 2),
		bp(doc.Paragraph, 0, "Deletedgone text stays out", 2), // LibreOffice prints the tracked deletion
	})
}

// TestPDFObjectStreams reads the handmade PDF rewritten by qpdf with a
// cross-reference stream, object streams and linearization.
func TestPDFObjectStreams(t *testing.T) {
	parsetest.Assert(t, mustParse(t, fixture(t, "objstm.pdf")), handmadePDF)
}

func TestPDFEncryption(t *testing.T) {
	// Encrypted with an empty user password (only an owner password):
	// readable, RC4 and AES-128.
	for _, name := range []string{"owner_only_rc4.pdf", "owner_only_aes128.pdf"} {
		got := mustParse(t, fixture(t, name))
		parsetest.Assert(t, got, handmadePDF)
	}
	// A user password, or AES-256: a clear error.
	for _, name := range []string{"encrypted_rc4.pdf", "encrypted_aes256.pdf"} {
		_, err := Parse(fixture(t, name))
		if err == nil || !strings.HasPrefix(err.Error(), "the PDF is encrypted") {
			t.Errorf("%s: error = %v", name, err)
		}
	}
}

func TestPDFLenientFile(t *testing.T) {
	pdf := fixture(t, "handmade.pdf")
	// A PDF 2.0 header.
	v2 := bytes.Replace(pdf, []byte("%PDF-1.4"), []byte("%PDF-2.0"), 1)
	parsetest.Assert(t, mustParse(t, v2), handmadePDF)
	// Junk before the header.
	junk := append([]byte("\xEF\xBB\xBFFrom: someone\n\n"), pdf...)
	parsetest.Assert(t, mustParse(t, junk), handmadePDF)
	// Garbage after the end of the file.
	tail := append(bytes.Clone(pdf), bytes.Repeat([]byte("\x00junk"), 100)...)
	parsetest.Assert(t, mustParse(t, tail), handmadePDF)
}

// PDF writers of the tests (package pdftest).
var (
	pdfFile   = pdftest.File
	pdfStream = pdftest.Stream
)

const helvetica = pdftest.Helvetica

func TestPDFLayout(t *testing.T) {
	page := func(content string) []byte {
		return pdfFile(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
			pdfStream("", content),
			helvetica,
		)
	}
	tests := []struct {
		name, content string
		want          []doc.Block
	}{
		{
			"first-line indent starts a paragraph",
			"BT /F1 12 Tf 14 TL 90 700 Td (Indented first line of one) Tj -18 0 Td T* (paragraph.) Tj " +
				"18 0 Td T* (Second paragraph.) Tj ET",
			[]doc.Block{bp(doc.Paragraph, 0, "Indented first line of one paragraph.", 1), bp(doc.Paragraph, 0, "Second paragraph.", 1)},
		},
		{
			"hyphens: hard kept, soft mended",
			"BT /F1 12 Tf 14 TL 72 700 Td (A well-) Tj T* (known word and a bro\xad) Tj T* (ken one.) Tj ET",
			[]doc.Block{bp(doc.Paragraph, 0, "A well-known word and a broken one.", 1)},
		},
		{
			"words placed apart get a space, letters placed together do not",
			"BT /F1 12 Tf 72 700 Td [(Spa) -20 (ced) -400 (words)] TJ 60 0 Td (apart) Tj ET",
			[]doc.Block{bp(doc.Paragraph, 0, "Spaced words apart", 1)},
		},
		{
			"text drawn by a matrix and scaled by cm",
			"q 2 0 0 2 0 0 cm BT /F1 6 Tf 1 0 0 1 36 350 Tm (Scaled twice) Tj ET Q " +
				"BT /F1 12 Tf 1 0 0 1 72 686 Tm (Body) Tj ET",
			[]doc.Block{bp(doc.Paragraph, 0, "Scaled twice Body", 1)},
		},
		{
			"rotated text keeps its words together",
			"BT /F1 12 Tf 0 1 -1 0 300 100 Tm (Rotated words) Tj ET",
			[]doc.Block{bp(doc.Paragraph, 0, "Rotated words", 1)},
		},
		{
			"numbered list items and a bigger numbered heading",
			"BT /F1 20 Tf 72 740 Td (2. Section) Tj ET BT /F1 12 Tf 14 TL 72 700 Td (1. one) Tj T* (2. two) Tj ET " +
				"BT /F1 12 Tf 72 600 Td (Body text follows here at length.) Tj ET",
			[]doc.Block{
				bp(doc.Heading, 1, "2. Section", 1),
				bp(doc.List, 0, "1. one\n2. two", 1),
				bp(doc.Paragraph, 0, "Body text follows here at length.", 1),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsetest.Assert(t, mustParse(t, page(tt.content)), tt.want)
		})
	}
}

func TestPDFRunningHeaders(t *testing.T) {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for i := 1; i <= 4; i++ {
		content := fmt.Sprintf("BT /F1 9 Tf 72 770 Td (Acme Manual, chapter %d) Tj ET "+
			"BT /F1 12 Tf 72 700 Td (Body of page %d, long enough to be the body text.) Tj ET "+
			"BT /F1 9 Tf 300 40 Td (%d) Tj ET", i, i, i)
		n := len(objs) + 1
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Contents %d 0 R >>", n+1),
			pdfStream("", content))
		kids = append(kids, fmt.Sprintf("%d 0 R", n))
	}
	objs = append(objs, helvetica)
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count 4 /Resources << /Font << /F1 %d 0 R >> >> >>",
		strings.Join(kids, " "), len(objs))
	got := mustParse(t, pdfFile(objs...))
	parsetest.Assert(t, got, []doc.Block{
		bp(doc.Paragraph, 0, "Body of page 1, long enough to be the body text.", 1),
		bp(doc.Paragraph, 0, "Body of page 2, long enough to be the body text.", 2),
		bp(doc.Paragraph, 0, "Body of page 3, long enough to be the body text.", 3),
		bp(doc.Paragraph, 0, "Body of page 4, long enough to be the body text.", 4),
	})
}

func TestPDFErrors(t *testing.T) {
	good := fixture(t, "handmade.pdf")
	noText := pdfFile(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
		pdfStream("", "0 0 m 100 100 l S"),
	)
	noPages := pdfFile("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>")
	shifted := bytes.Replace(good, []byte("1 0 obj"), []byte("\n\n\n1 0 obj"), 1)
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty", nil, "the PDF could not be read: the file is not a PDF (it does not start with %PDF-)"},
		{"not a PDF", []byte("hello, this is plain text\n%%EOF"), "the PDF could not be read: the file is not a PDF"},
		{"truncated", good[:len(good)/2], "the PDF could not be read: "},
		{"header only", []byte("%PDF-1.4\n%%EOF\n"), "the PDF could not be read: "},
		{"wrong xref offsets", shifted, "the PDF could not be read: "},
		{"no text", noText, "the PDF contains no text that can be extracted"},
		{"no pages", noPages, "the PDF could not be read: it has no pages"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.content)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want prefix %q", tt.name, err, tt.want)
		}
	}
}

func TestPDFHostileStructure(t *testing.T) {
	tests := map[string][]byte{
		// A page tree whose Kids point back at itself.
		"kids cycle": pdfFile(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 5 >>",
			"<< /Type /Page /Parent 3 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
			pdfStream("", "BT /F1 12 Tf 72 700 Td (survives) Tj ET"),
			helvetica,
		),
		// A form XObject that draws itself.
		"form recursion": pdfFile(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources 5 0 R >>",
			pdfStream("", "BT /F1 12 Tf 72 700 Td (survives) Tj ET /X Do"),
			"<< /Font << /F1 6 0 R >> /XObject << /X 7 0 R >> >>",
			helvetica,
			pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources 5 0 R", "/X Do"),
		),
		// Operators with missing or wrong operands, an unknown font, an
		// unbalanced Q, a string in a bad font.
		"bad operands": pdfFile(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F9 6 0 R >> >> >>",
			pdfStream("", "Q Q cm Tm Td TJ Tf /F1 Tf BT /Nope 12 Tf (x) Tj /F9 10 Tf <00010002> Tj "+
				"/F1 12 Tf 72 700 Td [(survives) 5 /Name] TJ ET ' \" Tj 1 2 3 4 5 6 7 cm (unterminated"),
			helvetica,
			"<< /Type /Font /Subtype /Type0 /Encoding /Identity-H /DescendantFonts [ << /W [1 2 3 [ 4 ] 5] >> ] >>",
		),
	}
	for name, content := range tests {
		blocks, err := Parse(content)
		if err != nil || !strings.Contains(fmt.Sprint(blocks), "survives") {
			t.Errorf("%s: %+v, %v", name, blocks, err)
		}
	}
}

func TestPDFTooMuchText(t *testing.T) {
	old := maxPDFText
	maxPDFText = 50
	defer func() { maxPDFText = old }()
	_, err := Parse(fixture(t, "handmade.pdf"))
	if err == nil || !strings.HasPrefix(err.Error(), "the PDF is too large to index") {
		t.Errorf("error = %v", err)
	}
}

// TestPDFLimitsNamed: a PDF whose text is all past a limit fails naming
// the limit, not as a PDF without text (a scan): a Flate bomb (a content
// stream that expands past maxContentStream, lowered here), forms nested
// too deep, too many forms on a page.
func TestPDFLimitsNamed(t *testing.T) {
	old := maxContentStream
	maxContentStream = 2 << 20
	defer func() { maxContentStream = old }()
	text := "BT /F1 12 Tf 72 700 Td (Lost words) Tj ET"
	page := func(content string, more ...string) []byte {
		return pdfFile(append([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources 5 0 R >>",
			content,
		}, more...)...)
	}
	bomb := page(pdfStream("/Filter /FlateDecode", zlibBytes([]byte(text+strings.Repeat(" ", 3<<20)))),
		"<< /Font << /F1 6 0 R >> >>", helvetica)
	// Forms X0 … X8, each drawing the next; only X8 has text.
	var nested []string
	for i := range 9 {
		content := fmt.Sprintf("/X%d Do", i+1)
		if i == 8 {
			content = text
		}
		nested = append(nested, pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources 5 0 R", content))
	}
	var xobjs []string
	for i := range 9 {
		xobjs = append(xobjs, fmt.Sprintf("/X%d %d 0 R", i, 7+i))
	}
	deep := page(pdfStream("", "/X0 Do"), append([]string{"<< /Font << /F1 6 0 R >> /XObject << " + strings.Join(xobjs, " ") + " >> >>", helvetica}, nested...)...)
	many := page(pdfStream("", strings.Repeat("/B Do ", maxPDFForms)+"/T Do"),
		"<< /Font << /F1 6 0 R >> /XObject << /B 7 0 R /T 8 0 R >> >>", helvetica,
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 9 9]", "0 0 m 1 1 l S"),
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources 5 0 R", text))
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"flate bomb", bomb, "the PDF is too large to index: the content of page 1 expands to more than 2 MB when decompressed (the limit for one content stream)"},
		{"forms nested", deep, "the PDF could not be read: page 1 nests forms more than 8 deep (the limit)"},
		{"too many forms", many, fmt.Sprintf("the PDF could not be read: page 1 draws more than %d forms (the limit)", maxPDFForms)},
	}
	for _, tt := range tests {
		_, err := Parse(tt.content)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestPDFRandomInput feeds random bytes and damaged copies of the
// fixtures to the PDF parser: it must return, without panicking.
func TestPDFRandomInput(t *testing.T) {
	old := Timeout
	Timeout = 10 * time.Second
	defer func() { Timeout = old }()
	seeds := [][]byte{fixture(t, "handmade.pdf"), fixture(t, "libreoffice.pdf"), fixture(t, "owner_only_aes128.pdf")}
	n := 300
	if testing.Short() {
		n = 50
	}
	damagedPDFs(t, rand.New(rand.NewPCG(1, 2)), seeds, n, func(data []byte) { _, _ = Parse(data) })
}

// damagedPDFs calls f with n inputs: damaged copies of the seeds, and
// (one in ten) random bytes shaped like a PDF; f must not panic.
func damagedPDFs(t *testing.T, rng *rand.Rand, seeds [][]byte, n int, f func(data []byte)) {
	t.Helper()
	for i := range n {
		data := parsetest.Mutate(rng, seeds[i%len(seeds)], i)
		if i%10 == 0 {
			data = append([]byte("%PDF-1.5\n"), parsetest.RandomBytes(rng, 1+rng.IntN(4000))...)
			data = append(data, "\nstartxref\n9\n%%EOF\n"...)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("input %d panicked: %v", i, r)
				}
			}()
			f(data)
		}()
	}
}

func FuzzParsePDF(f *testing.F) {
	old := Timeout
	Timeout = 5 * time.Second // mutated fixtures can make the library spin until the time limit
	defer func() { Timeout = old }()
	for _, name := range []string{"handmade.pdf", "owner_only_rc4.pdf", "objstm.pdf"} {
		f.Add(fixture(f, name))
	}
	for _, tc := range pathologicalPDFs() {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { parsetest.Fuzz(t, "PDF", Parse, data) })
}
