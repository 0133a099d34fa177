package parse

import (
	"archive/zip"
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
)

var handmadeDOCX = []doc.Block{
	b(doc.Heading, 1, "Botplatform Handbook"),
	b(doc.Heading, 2, "Internal guide"),
	b(doc.Heading, 1, "Getting started"),
	b(doc.Paragraph, 0, "Install the server with one command. Then open the dashboard & sign in."),
	b(doc.Paragraph, 0, "Line one\nLine two"),
	b(doc.Paragraph, 0, "Botplatform runs many small bots side by side on one server. Each bot keeps its own "+
		"storage, its own schedule and its own secrets, and the server makes sure that one misbehaving bot "+
		"cannot slow the others down. Files that a bot uploads can be indexed, so that the bot can later "+
		"search them by meaning rather than by exact words."),
	b(doc.Paragraph, 0, "Unicode check: Привет мир, naïve café."),
	b(doc.List, 0, "- First step\n- Second step\n  - A nested detail"),
	b(doc.Heading, 2, "Configuration"),
	b(doc.Table, 0, "Setting | Default\nport | 8080\nworkers | 4"),
	b(doc.Paragraph, 0, "The configuration lives in one file."),
	b(doc.Heading, 3, "Deleted text stays out"),
}

// TestDOCXFixtures reads the hand-zipped DOCX and the same document as
// LibreOffice writes it.
func TestDOCXFixtures(t *testing.T) {
	for _, name := range []string{"handmade.docx", "libreoffice.docx"} {
		t.Run(name, func(t *testing.T) {
			got := mustParse(t, TypeDOCX, name, fixture(t, name))
			parsetest.Assert(t, got, handmadeDOCX)
		})
	}
}

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

// docxFile zips the given parts; document.xml gets a body wrapper and the
// package relationships unless they are given.
func docxFile(t testing.TB, parts map[string]string) []byte {
	t.Helper()
	if _, ok := parts["_rels/.rels"]; !ok {
		parts["_rels/.rels"] = `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, data := range parts {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func body(xml string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><w:document ` + wNS +
		` xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"` +
		` xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"` +
		` xmlns:v="urn:schemas-microsoft-com:vml"><w:body>` + xml + `</w:body></w:document>`
}

func wp(text string) string { return `<w:p><w:r><w:t>` + text + `</w:t></w:r></w:p>` }

func wpStyle(style, text string) string {
	return `<w:p><w:pPr><w:pStyle w:val="` + style + `"/></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
}

func TestDOCXStructure(t *testing.T) {
	styles := `<?xml version="1.0"?><w:styles ` + wNS + `>` +
		// Word in German names its styles' ids after the local names.
		`<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Custom"><w:name w:val="My Section"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="BigTitle"><w:name w:val="Big Title"/><w:basedOn w:val="Title"/></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>` +
		`<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="3"/></w:numPr></w:pPr></w:style>` +
		`<w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="heading 1 char"/></w:style>` +
		`</w:styles>`
	rels := `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`
	textBox := `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent>` +
		wp("Text box") + `</w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox><w:txbxContent>` +
		wp("Text box") + `</w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>` +
		`<w:r><w:t>Outer text</w:t></w:r></w:p>`
	nestedTable := `<w:tbl><w:tr><w:tc>` + wp("a") + wp("b") + `</w:tc><w:tc><w:tbl><w:tr><w:tc>` + wp("x") +
		`</w:tc><w:tc>` + wp("y") + `</w:tc></w:tr><w:tr><w:tc>` + wp("z") + `</w:tc></w:tr></w:tbl></w:tc></w:tr>` +
		`<w:tr><w:tc>` + wp("") + `</w:tc><w:tc><w:p/></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:pPr><w:pStyle w:val="Heading1"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>` +
		`<w:r><w:t>in cell</w:t></w:r></w:p></w:tc><w:tc/></w:tr></w:tbl>`
	doc1 := body(
		wpStyle("berschrift1", "Localized heading") +
			wpStyle("Custom", "Outline level heading") +
			wpStyle("BigTitle", "Based on title") +
			`<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Direct outline level</w:t></w:r></w:p>` +
			wpStyle("ListBullet", "Bullet by style") +
			`<w:p><w:pPr><w:pStyle w:val="ListBullet"/><w:numPr><w:numId w:val="0"/></w:numPr></w:pPr><w:r><w:t>Numbering off</w:t></w:r></w:p>` +
			`<w:p><w:pPr><w:numPr><w:ilvl w:val="2"/><w:numId w:val="4"/></w:numPr></w:pPr><w:r><w:t>Deep item</w:t></w:r></w:p>` +
			`<w:p/>` +
			`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="4"/></w:numPr></w:pPr><w:r><w:t>After an empty paragraph</w:t></w:r></w:p>` +
			textBox + nestedTable +
			`<w:p><w:pPr><w:rPr><w:rStyle w:val="Heading1Char"/></w:rPr></w:pPr>` +
			`<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> HYPERLINK "x" </w:instrText></w:r>` +
			`<w:r><w:fldChar w:fldCharType="end"/></w:r><w:hyperlink><w:r><w:t>Link text</w:t></w:r></w:hyperlink>` +
			`<w:ins><w:r><w:t xml:space="preserve"> inserted</w:t></w:r></w:ins><w:r><w:noBreakHyphen/><w:t>x</w:t><w:tab/><w:t>y</w:t></w:r></w:p>`,
	)
	got := mustParse(t, TypeDOCX, "", docxFile(t, map[string]string{
		"word/document.xml":            doc1,
		"word/styles.xml":              styles,
		"word/_rels/document.xml.rels": rels,
	}))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Heading, 1, "Localized heading"),
		b(doc.Heading, 3, "Outline level heading"),
		b(doc.Heading, 1, "Based on title"),
		b(doc.Heading, 2, "Direct outline level"),
		b(doc.List, 0, "- Bullet by style"),
		b(doc.Paragraph, 0, "Numbering off"),
		b(doc.List, 0, "    - Deep item\n- After an empty paragraph"),
		b(doc.Paragraph, 0, "Text box"),
		b(doc.Paragraph, 0, "Outer text"),
		b(doc.Table, 0, "a b | x | y; z\nin cell |"),
		b(doc.Paragraph, 0, "Link text inserted-x y"),
	})
}

func TestDOCXPackageVariants(t *testing.T) {
	// Strict OOXML namespace, and a main part found through the package
	// relationships under another name.
	strict := `<?xml version="1.0"?><w:document xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main"><w:body>` +
		wpStyle("Heading2", "Strict heading") + wp("Strict text") + `</w:body></w:document>`
	got := mustParse(t, TypeDOCX, "", docxFile(t, map[string]string{
		"_rels/.rels": `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="r1" Type="http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument" Target="/word/document2.xml"/></Relationships>`,
		"word/document2.xml": strict,
	}))
	parsetest.Assert(t, got, []doc.Block{b(doc.Heading, 2, "Strict heading"), b(doc.Paragraph, 0, "Strict text")})

	// No package relationships at all.
	data := docxFile(t, map[string]string{"_rels/.rels": "", "word/document.xml": body(wp("No rels"))})
	parsetest.Assert(t, mustParse(t, TypeDOCX, "", data), []doc.Block{b(doc.Paragraph, 0, "No rels")})
}

func TestDOCXErrors(t *testing.T) {
	good := fixture(t, "handmade.docx")
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty", nil, "the DOCX file could not be read: it is not a valid .docx (ZIP) archive"},
		{"old .doc", append([]byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"), make([]byte, 600)...), "the DOCX file could not be read: it is not a valid .docx (ZIP) archive; if it is an old .doc file"},
		{"truncated", good[:len(good)/2], "the DOCX file could not be read: it is not a valid .docx (ZIP) archive"},
		{"no document", docxFile(t, map[string]string{"word/other.xml": "<x/>"}), "the DOCX file could not be read: it has no document part"},
		{"bad XML", docxFile(t, map[string]string{"word/document.xml": body(`<w:p><w:r><w:t>unclosed</w:r></w:p>`)}), "the DOCX file could not be read: its document part is damaged"},
	}
	for _, tt := range tests {
		_, err := Parse(TypeDOCX, "", tt.content)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error = %v\nwant prefix %q", tt.name, err, tt.want)
		}
	}
}

// TestDOCXZipBomb checks the cap on the decompressed document part, both
// as the archive declares it and as it really expands.
func TestDOCXZipBomb(t *testing.T) {
	old := maxDocumentXML
	maxDocumentXML = 1 << 20
	defer func() { maxDocumentXML = old }()

	huge := body(strings.Repeat(wp(strings.Repeat("bomb ", 200)), 2000)) // ~2 MB, compresses to a few KB
	data := docxFile(t, map[string]string{"word/document.xml": huge})
	if len(data) > 64<<10 {
		t.Fatalf("test archive is %d bytes", len(data))
	}
	_, err := Parse(TypeDOCX, "", data)
	if err == nil || !strings.HasPrefix(err.Error(), "the DOCX file is too large to index") {
		t.Errorf("declared size: error = %v", err)
	}

	// The same archive with its sizes understated in the headers.
	lying := understateSizes(data)
	_, err = Parse(TypeDOCX, "", lying)
	if err == nil || !strings.Contains(err.Error(), "too large") && !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("understated size: error = %v", err)
	}
}

// understateSizes rewrites the uncompressed sizes in a zip's local and
// central headers to 1000 bytes.
func understateSizes(data []byte) []byte {
	out := bytes.Clone(data)
	put := func(at int) {
		out[at], out[at+1], out[at+2], out[at+3] = 0xE8, 0x03, 0, 0
	}
	for i := 0; i+30 < len(out); i++ {
		switch {
		case bytes.Equal(out[i:i+4], []byte("PK\x03\x04")):
			put(i + 22)
		case bytes.Equal(out[i:i+4], []byte("PK\x01\x02")):
			put(i + 24)
		}
	}
	return out
}

// TestDOCXRandomInput feeds damaged copies of the fixtures and random bytes
// to the DOCX parser: it must return, without panicking.
func TestDOCXRandomInput(t *testing.T) {
	seeds := [][]byte{fixture(t, "handmade.docx"), fixture(t, "libreoffice.docx")}
	// A stored (uncompressed) archive, so that damage reaches the XML.
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	w.Write([]byte(body(wpStyle("Heading1", "Stored") + `<w:tbl><w:tr><w:tc>` + wp("cell") + `</w:tc></w:tr></w:tbl>`)))
	z.Close()
	seeds = append(seeds, buf.Bytes())

	rng := rand.New(rand.NewPCG(3, 4))
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := range n {
		data := parsetest.Mutate(rng, seeds[i%len(seeds)], i)
		if i%10 == 0 {
			data = append([]byte("PK\x03\x04"), parsetest.RandomBytes(rng, 1+rng.IntN(2000))...)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("input %d panicked: %v", i, r)
				}
			}()
			_, _ = parseDOCX(data)
		}()
	}
}

func FuzzParseDOCX(f *testing.F) {
	f.Add(fixture(f, "handmade.docx"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeDOCX, data) })
}
