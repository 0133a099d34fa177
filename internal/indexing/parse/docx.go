package parse

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Limits on what a DOCX may expand to, against zip bombs.
var (
	maxDocumentXML int64 = 200 << 20 // word/document.xml
	maxPartXML     int64 = 20 << 20  // styles, relationships
)

const maxDOCXDepth = 10000 // element nesting

// Namespaces of WordprocessingML, transitional and strict.
const (
	nsW       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsWStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	nsMC      = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

var errDOCXNotZip = errors.New("the DOCX file could not be read: it is not a valid .docx (ZIP) archive; if it is an old .doc file or a password-protected document, save it as an unprotected .docx and upload it again")

// parseDOCX reads the main document part of a WordprocessingML package:
// paragraphs, headings (from the paragraph styles), lists (numbered
// paragraphs) and tables. Headers, footers, footnotes and comments are not
// read.
func parseDOCX(content []byte) (blocks []doc.Block, err error) {
	defer func() {
		if r := recover(); r != nil {
			blocks, err = nil, fmt.Errorf("the DOCX file could not be read: it is malformed (%v)", r)
		}
	}()
	zr, err := zip.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return nil, errDOCXNotZip
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[strings.TrimPrefix(f.Name, "/")] = f
	}

	main := "word/document.xml"
	if t := relTarget(files, "_rels/.rels", "", "/officeDocument"); t != "" {
		main = t
	}
	f := files[main]
	if f == nil {
		return nil, errors.New("the DOCX file could not be read: it has no document part (word/document.xml); is it really a Word document?")
	}
	if f.UncompressedSize64 > uint64(maxDocumentXML) {
		return nil, fmt.Errorf("the DOCX file is too large to index: its text part expands to %d MB (the limit is %d MB)", f.UncompressedSize64>>20, maxDocumentXML>>20)
	}

	dir := path.Dir(main)
	stylesPath := relTarget(files, path.Join(dir, "_rels", path.Base(main)+".rels"), dir, "/styles")
	if stylesPath == "" {
		stylesPath = path.Join(dir, "styles.xml")
	}
	w := docxWalker{styles: readStyles(files[stylesPath])}

	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("the DOCX file could not be read: %v", err)
	}
	defer rc.Close()
	lr := &limitedReader{r: rc, n: maxDocumentXML}
	if err := w.walk(newXMLDecoder(lr)); err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, fmt.Errorf("the DOCX file is too large to index: its text part expands to more than %d MB", maxDocumentXML>>20)
		}
		return nil, fmt.Errorf("the DOCX file could not be read: its document part is damaged (%v)", err)
	}
	return w.out, nil
}

// limitedReader fails with errTooLarge once more than n bytes are read.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errTooLarge
	}
	return n, err
}

func newXMLDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		enc, err := htmlindex.Get(label)
		if err != nil {
			return nil, err
		}
		return enc.NewDecoder().Reader(input), nil
	}
	return d
}

// openPart returns the decompressed bytes of a small part, or nil.
func openPart(f *zip.File) []byte {
	if f == nil || f.UncompressedSize64 > uint64(maxPartXML) {
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxPartXML+1))
	if err != nil || int64(len(b)) > maxPartXML {
		return nil
	}
	return b
}

// relTarget returns the target of the first relationship in the rels part
// whose type ends in typeSuffix, resolved against dir; "" if none.
func relTarget(files map[string]*zip.File, rels, dir, typeSuffix string) string {
	b := openPart(files[rels])
	if b == nil {
		return ""
	}
	d := newXMLDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Relationship" || !strings.HasSuffix(attr(se, "Type"), typeSuffix) {
			continue
		}
		if attr(se, "TargetMode") == "External" {
			continue
		}
		t := attr(se, "Target")
		if strings.HasPrefix(t, "/") {
			return strings.TrimPrefix(path.Clean(t), "/")
		}
		return strings.TrimPrefix(path.Clean(path.Join(dir, t)), "/")
	}
}

// attr returns the value of the attribute with the given local name.
func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

type docxStyle struct {
	name, basedOn string
	outline       int // w:outlineLvl + 1; 0 if none
	numbered      int // 1 if the style numbers its paragraphs, -1 if it turns numbering off
}

// readStyles reads the paragraph styles of styles.xml (nil if absent).
func readStyles(f *zip.File) map[string]*docxStyle {
	b := openPart(f)
	if b == nil {
		return nil
	}
	styles := map[string]*docxStyle{}
	d := newXMLDecoder(bytes.NewReader(b))
	var cur *docxStyle
	depth, styleDepth := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return styles
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if !isW(t.Name) {
				continue
			}
			switch t.Name.Local {
			case "style":
				cur = nil
				if attr(t, "type") == "paragraph" || attr(t, "type") == "" {
					cur = &docxStyle{}
					styles[attr(t, "styleId")] = cur
					styleDepth = depth
				}
			case "name":
				if cur != nil && depth == styleDepth+1 {
					cur.name = attr(t, "val")
				}
			case "basedOn":
				if cur != nil && depth == styleDepth+1 {
					cur.basedOn = attr(t, "val")
				}
			case "outlineLvl":
				if cur != nil {
					if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 && v < 9 {
						cur.outline = v + 1
					}
				}
			case "numId":
				if cur != nil {
					if attr(t, "val") == "0" {
						cur.numbered = -1
					} else {
						cur.numbered = 1
					}
				}
			}
		case xml.EndElement:
			depth--
			if isW(t.Name) && t.Name.Local == "style" {
				cur = nil
			}
		}
	}
}

func isW(n xml.Name) bool { return n.Space == nsW || n.Space == nsWStrict }

// headingLevel returns the heading level of a paragraph style (0: not a
// heading), following basedOn.
func (w *docxWalker) headingLevel(id string) int {
	for range 16 {
		if lvl := headingName(id); lvl > 0 {
			return lvl
		}
		s := w.styles[id]
		if s == nil {
			return 0
		}
		if lvl := headingName(s.name); lvl > 0 {
			return lvl
		}
		if s.outline > 0 {
			return min(s.outline, 6)
		}
		id = s.basedOn
		if id == "" {
			return 0
		}
	}
	return 0
}

// headingName maps a style id or name ("Heading2", "heading 2", "Title",
// "Subtitle") to a heading level.
func headingName(s string) int {
	s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
	switch s {
	case "title":
		return 1
	case "subtitle":
		return 2
	}
	if rest, ok := strings.CutPrefix(s, "heading"); ok {
		if v, err := strconv.Atoi(rest); err == nil && v >= 1 && v <= 9 {
			return min(v, 6)
		}
	}
	return 0
}

// styleNumbered reports whether a paragraph style numbers its paragraphs.
func (w *docxWalker) styleNumbered(id string) bool {
	for range 16 {
		s := w.styles[id]
		if s == nil {
			return false
		}
		if s.numbered != 0 {
			return s.numbered > 0
		}
		id = s.basedOn
	}
	return false
}

type docxPara struct {
	text    strings.Builder
	style   string
	numPr   bool // has its own numbering properties
	numOff  bool // numId 0: numbering turned off
	ilvl    int
	outline int // w:outlineLvl + 1
	inCell  bool
}

type docxTable struct {
	rows []string
	row  []string
	cell strings.Builder
}

type docxWalker struct {
	styles map[string]*docxStyle
	out    doc.Blocks
	list   []string // items of the list being gathered
	paras  []*docxPara
	tables []*docxTable
	run    int // depth of w:r
	inText bool
}

func (w *docxWalker) para() *docxPara {
	if len(w.paras) == 0 {
		return nil
	}
	return w.paras[len(w.paras)-1]
}

func (w *docxWalker) flushList() {
	if len(w.list) > 0 {
		w.out.Add(doc.List, 0, strings.Join(w.list, "\n"), 0)
		w.list = w.list[:0]
	}
}

func (w *docxWalker) walk(d *xml.Decoder) error {
	depth, skip := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxDOCXDepth {
				return errors.New("elements nested too deeply")
			}
			if skip > 0 {
				skip++
				continue
			}
			if t.Name.Space == nsMC && t.Name.Local == "Fallback" {
				// The same content again, for older readers.
				skip = 1
				continue
			}
			if !isW(t.Name) {
				continue
			}
			w.start(t, &skip)
		case xml.EndElement:
			depth--
			if skip > 0 {
				skip--
				continue
			}
			if isW(t.Name) {
				w.end(t.Name.Local)
			}
		case xml.CharData:
			if w.inText {
				if p := w.para(); p != nil {
					p.text.Write(t)
				}
			}
		}
	}
	for len(w.paras) > 0 {
		w.end("p")
	}
	for len(w.tables) > 0 {
		w.end("tbl")
	}
	w.flushList()
	return nil
}

func (w *docxWalker) start(t xml.StartElement, skip *int) {
	p := w.para()
	switch t.Name.Local {
	case "pPrChange", "rPrChange", "numberingChange", "del", "moveFrom", "instrText", "delText":
		*skip = 1
	case "p":
		np := &docxPara{}
		if tb := w.table(); tb != nil {
			np.inCell = true
		}
		w.paras = append(w.paras, np)
	case "pStyle":
		if p != nil && w.run == 0 {
			p.style = attr(t, "val")
		}
	case "numPr":
		if p != nil && w.run == 0 {
			p.numPr = true
		}
	case "numId":
		if p != nil && w.run == 0 && attr(t, "val") == "0" {
			p.numOff = true
		}
	case "ilvl":
		if p != nil && w.run == 0 {
			if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 && v < 10 {
				p.ilvl = v
			}
		}
	case "outlineLvl":
		if p != nil && w.run == 0 {
			if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 && v < 9 {
				p.outline = v + 1
			}
		}
	case "r":
		w.run++
	case "t":
		w.inText = p != nil
	case "tab", "ptab":
		if p != nil && w.run > 0 {
			p.text.WriteByte(' ')
		}
	case "br", "cr":
		if p != nil && w.run > 0 {
			p.text.WriteByte('\n')
		}
	case "noBreakHyphen":
		if p != nil && w.run > 0 {
			p.text.WriteByte('-')
		}
	case "tbl":
		if len(w.tables) == 0 && len(w.paras) == 0 {
			w.flushList()
		}
		w.tables = append(w.tables, &docxTable{})
	case "tr":
		if tb := w.table(); tb != nil {
			tb.row = tb.row[:0]
		}
	case "tc":
		if tb := w.table(); tb != nil {
			tb.cell.Reset()
		}
	}
}

func (w *docxWalker) table() *docxTable {
	if len(w.tables) == 0 {
		return nil
	}
	return w.tables[len(w.tables)-1]
}

func (w *docxWalker) end(local string) {
	switch local {
	case "r":
		if w.run > 0 {
			w.run--
		}
	case "t":
		w.inText = false
	case "p":
		p := w.para()
		if p == nil {
			return
		}
		w.paras = w.paras[:len(w.paras)-1]
		w.endPara(p)
	case "tc":
		if tb := w.table(); tb != nil {
			tb.row = append(tb.row, doc.CollapseSpace(tb.cell.String()))
			tb.cell.Reset()
		}
	case "tr":
		if tb := w.table(); tb != nil {
			if strings.TrimSpace(strings.Join(tb.row, "")) != "" {
				tb.rows = append(tb.rows, strings.Join(tb.row, " | "))
			}
			tb.row = tb.row[:0]
		}
	case "tbl":
		tb := w.table()
		if tb == nil {
			return
		}
		w.tables = w.tables[:len(w.tables)-1]
		text := strings.Join(tb.rows, "\n")
		if outer := w.table(); outer != nil {
			// A table in a cell: its rows become part of the cell's text.
			outer.cell.WriteByte(' ')
			outer.cell.WriteString(strings.ReplaceAll(text, "\n", "; "))
			return
		}
		if p := w.para(); p != nil {
			p.text.WriteByte(' ')
			p.text.WriteString(text)
			return
		}
		w.out.Add(doc.Table, 0, text, 0)
	}
}

func (w *docxWalker) endPara(p *docxPara) {
	raw := p.text.String()
	if p.inCell {
		if tb := w.table(); tb != nil {
			tb.cell.WriteByte(' ')
			tb.cell.WriteString(raw)
			return
		}
	}
	if outer := w.para(); outer != nil && outer.inCell {
		// A text box in a table cell.
		outer.text.WriteByte(' ')
		outer.text.WriteString(raw)
		return
	}
	text := doc.CollapseSpace(raw)
	if text == "" {
		return
	}
	level := p.outline
	if level == 0 {
		level = w.headingLevel(p.style)
	}
	if level > 0 {
		w.flushList()
		w.out.Add(doc.Heading, min(level, 6), text, 0)
		return
	}
	numbered := p.numPr && !p.numOff || !p.numPr && w.styleNumbered(p.style)
	if numbered {
		w.list = append(w.list, doc.ListIndent(p.ilvl)+"- "+text)
		return
	}
	w.flushList()
	if strings.Contains(raw, "\n") {
		lines := strings.Split(raw, "\n")
		for i, l := range lines {
			lines[i] = doc.CollapseSpace(l)
		}
		text = strings.TrimSpace(strings.Join(lines, "\n"))
	}
	w.out.Add(doc.Paragraph, 0, text, 0)
}
