package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Limits on the work one PDF may cause.
var (
	// PDFTimeout bounds the time spent reading one PDF.
	PDFTimeout = 3 * time.Minute
	// maxPDFText bounds the text extracted from one PDF, in bytes.
	maxPDFText = 100 << 20
	// The work one PDF may cause, in bytes the library reads and decodes
	// and content bytes interpreted: pdfWorkBase plus pdfWorkFactor times
	// its size. The library reads an object from the file (and decodes
	// its whole object stream) again each time it is used, so a small
	// crafted file can make it work for minutes; valid files stay far
	// below this.
	pdfWorkBase   int64 = 32 << 20
	pdfWorkFactor int64 = 256
)

const (
	maxPDFPageNodes = 200000 // page tree nodes visited
	maxPDFTreeDepth = 64     // page tree depth
	maxPDFFormDepth = 8      // form XObjects drawn inside form XObjects
	maxPDFForms     = 2000   // form XObjects drawn on one page
)

// pdfAbort is the panic value that stops reading a PDF when a limit is hit.
type pdfAbort struct{ err error }

// parsePDF extracts the text of each page, with positions, and rebuilds
// lines, paragraphs (from vertical gaps and indentation), bulleted lists
// and headings (from font sizes larger than the body text).
func parsePDF(content []byte) ([]doc.Block, error) {
	var lines []pdfLine
	var noPages bool
	var dropped error
	err := withPDF(content, func(r *pdf.Reader, x *pdfExtractor) {
		pages := x.pageTree(r)
		noPages = len(pages) == 0
		for i, p := range pages {
			x.page(i+1, p)
		}
		lines, dropped = x.lines, x.dropped
	})
	switch {
	case err != nil:
		return nil, err
	case noPages:
		return nil, errors.New("the PDF could not be read: it has no pages")
	case len(lines) == 0 && dropped != nil:
		// Nothing was read because of a limit: say which, not "no text".
		return nil, dropped
	case len(lines) == 0:
		return nil, ErrNoText
	}
	return layoutPDF(lines), nil
}

func (e pdfAbort) Error() string { return e.err.Error() }

func pdfOpenError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(strings.ToLower(msg), "encrypt"):
		return errors.New("the PDF is encrypted (password-protected or using an unsupported encryption) and cannot be read; remove the protection and upload it again")
	case strings.Contains(msg, "invalid header"):
		return errors.New("the PDF could not be read: the file is not a PDF (it does not start with %PDF-)")
	case strings.Contains(msg, "not a PDF file"):
		return fmt.Errorf("the PDF could not be read: %s", strings.TrimPrefix(msg, "not a PDF file: "))
	}
	return fmt.Errorf("the PDF could not be read: %s", strings.TrimPrefix(msg, "malformed PDF: "))
}

// pdfSource is the io.ReaderAt the PDF library reads from. It presents a
// PDF 2.0 header as 1.7 (the library refuses 2.0, whose syntax it reads
// fine), ends the file after the last %%EOF (trailing garbage is common),
// and aborts the read when the time limit has passed, which bounds any
// loop inside the library on a crafted file.
type pdfSource struct {
	data     []byte
	header   []byte
	size     int64
	deadline time.Time
	reads    int
	// The work budget: work counts the bytes read, plus the decoded size
	// of an object stream (stmCost, by the offset of its object) each
	// time the library reads that object to get one from it, plus the
	// content interpreted.
	work, budget int64
	stmCost      map[int64]int64
}

func newPDFSource(content []byte) *pdfSource {
	// Readers accept junk (a mail header, a BOM) before %PDF- in the first
	// kilobyte; offsets then count from %PDF-.
	if i := bytes.Index(content[:min(len(content), 1024)], []byte("%PDF-")); i > 0 {
		content = content[i:]
	}
	s := &pdfSource{data: content, size: int64(len(content)), deadline: time.Now().Add(PDFTimeout)}
	s.budget = pdfWorkBase + pdfWorkFactor*s.size
	if i := bytes.LastIndex(content, []byte("%%EOF")); i > 0 {
		s.size = int64(i + 5)
	}
	if len(content) >= 9 && bytes.HasPrefix(content, []byte("%PDF-")) {
		h := slices.Clone(content[:9])
		if h[5] == '2' || h[5] == '1' && (h[7] < '0' || h[7] > '7') {
			copy(h[5:8], "1.7")
		}
		if h[8] != '\r' && h[8] != '\n' && (h[8] == ' ' || h[8] == '\t' || h[8] == '%') {
			h[8] = '\n'
		}
		s.header = h
	}
	return s
}

func (s *pdfSource) ReadAt(p []byte, off int64) (int, error) {
	s.reads++
	if s.reads&63 == 0 && time.Now().After(s.deadline) {
		panic(pdfAbort{pdfTimeoutError()})
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= s.size {
		return 0, io.EOF
	}
	n := copy(p, s.data[off:s.size])
	if off < int64(len(s.header)) {
		copy(p, s.header[off:])
	}
	s.spend(int64(n) + s.stmCost[off])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// spend adds work, and aborts the read past the budget.
func (s *pdfSource) spend(n int64) {
	if s.work += n; s.work > s.budget {
		panic(pdfAbort{errPDFTooMuchWork})
	}
}

var (
	// ErrNoText is returned for a PDF that is read without error but
	// holds no text: its pages are images (a scan), or drawings. The
	// vision options read such pages; nothing else can.
	ErrNoText = errors.New("the PDF contains no text that can be extracted (it may be made of scanned images: run it through OCR and upload it again)")

	errPDFTooBig      = fmt.Errorf("the PDF is too large to index: it holds more than %d MB of text", maxPDFText>>20)
	errPDFTooMuchWork = errors.New("the PDF could not be read: it takes too much work to process for its size (it reads or expands the same data over and over; it may be damaged)")
)

func pdfTimeoutError() error {
	return fmt.Errorf("the PDF could not be read: it takes too long to process (over %v)", PDFTimeout)
}

type pdfPage struct {
	v         pdf.Value
	resources pdf.Value
}

// pageTree lists the pages in order, with their inherited resources,
// without trusting the tree's counts and guarding against cycles.
func (x *pdfExtractor) pageTree(r *pdf.Reader) []pdfPage {
	var pages []pdfPage
	visited := 0
	var walk func(node, resources pdf.Value, depth int)
	walk = func(node, resources pdf.Value, depth int) {
		visited++
		if depth > maxPDFTreeDepth || visited > maxPDFPageNodes || node.Kind() != pdf.Dict {
			return
		}
		if res := node.Key("Resources"); res.Kind() == pdf.Dict {
			resources = res
		}
		kids := node.Key("Kids")
		typ := node.Key("Type").Name()
		if typ == "Page" || typ != "Pages" && kids.Kind() != pdf.Array {
			pages = append(pages, pdfPage{v: node, resources: resources})
			return
		}
		for i := 0; i < kids.Len(); i++ {
			walk(kids.Index(i), resources, depth+1)
		}
	}
	root := r.Trailer().Key("Root").Key("Pages")
	walk(root, pdf.Value{}, 0)
	if n := root.Key("Count").Int64(); n > 0 && int64(len(pages)) > n {
		// More pages than the tree says it has: a cycle.
		pages = pages[:n]
	}
	return pages
}

// pdfLine is one line of text as drawn.
type pdfLine struct {
	text   string
	page   int
	size   float64 // font size in points
	dx, dy float64 // writing direction (unit vector)
	base   float64 // position of the baseline across the writing direction
	pos    float64 // start position along the writing direction
}

type pdfExtractor struct {
	src   *pdfSource
	lines []pdfLine
	total int // bytes of text so far
	ops   int
	pg    int
	forms int

	// Content streams (by Value.String, which names a stream by its
	// dictionary and offset) that draw nothing: forms drawn again and
	// again, and pages sharing their contents, are read once.
	blank map[string]bool
	// Fonts by their dictionary (Value.String, whose references name
	// the objects), read once.
	fonts map[string]*pdfFont

	// dropped is the first limit that made content be skipped (a
	// content stream too large, too many forms): when a PDF yields no
	// text, it is the reason given.
	dropped error

	// Hooks for the page renderer (pdfrender.go), nil when extracting
	// text: onGlyph is called for each glyph shown, at its origin in user
	// space, with its size, writing direction and text; onImage for each
	// image XObject drawn, with the CTM that maps its unit square.
	onGlyph func(ox, oy, dx, dy, size float64, text string, f *pdfFont, invisible bool)
	onImage func(xo pdf.Value, ctm matrix)

	// The line being built.
	cur     strings.Builder
	curOn   bool
	ox, oy  float64 // start of the line
	ex, ey  float64 // end of the last glyph
	dx, dy  float64
	curSize float64
}

// page extracts the lines of one page. A page whose content is damaged
// keeps the lines read before the damage.
func (x *pdfExtractor) page(num int, p pdfPage) {
	x.pg = num
	x.forms = 0
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(pdfAbort); ok {
				panic(r)
			}
		}
		x.endLine()
	}()
	contents := p.v.Key("Contents")
	if contents.Kind() != pdf.Stream && contents.Kind() != pdf.Array {
		return
	}
	x.interpret(contents, p.resources, identity, 0)
}

type matrix [6]float64 // a b c d e f

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul returns m × n (m applied first).
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

func translate(x, y float64) matrix { return matrix{1, 0, 0, 1, x, y} }

type pdfGState struct {
	ctm                   matrix
	tc, tw, th, tl, trise float64
	tfs                   float64
	font                  *pdfFont
	tm, tlm               matrix
	tr                    float64 // text rendering mode
}

// interpret runs a content stream (a page's, or a form XObject's).
func (x *pdfExtractor) interpret(strm, resources pdf.Value, ctm matrix, depth int) {
	id := strm.String()
	if x.blank[id] {
		return
	}
	data, tooBig := readStream(strm, maxContentStream)
	if tooBig {
		x.drop(fmt.Errorf("the PDF is too large to index: the content of page %d expands to more than %d MB when decompressed (the limit for one content stream)", x.pg, maxContentStream>>20))
		return
	}
	x.src.spend(int64(len(data)))
	draws := false
	fonts := map[string]*pdfFont{}
	g := pdfGState{ctm: ctm, th: 1, tm: identity, tlm: identity}
	var stack []pdfGState
	lex := contentLexer{data: data}
	lex.run(func(op string, args []operand) {
		x.ops++
		if x.ops&1023 == 0 && time.Now().After(x.src.deadline) {
			panic(pdfAbort{pdfTimeoutError()})
		}
		num := func(i int) float64 {
			if i < len(args) && args[i].kind == 'n' {
				return args[i].num
			}
			return 0
		}
		matrixArgs := func() (matrix, bool) {
			if len(args) != 6 {
				return matrix{}, false
			}
			return matrix{num(0), num(1), num(2), num(3), num(4), num(5)}, true
		}
		switch op {
		case "Tj", "TJ", "'", "\"", "Do":
			draws = true
		}
		switch op {
		case "q":
			if len(stack) < 1000 {
				stack = append(stack, g)
			}
		case "Q":
			if len(stack) > 0 {
				g = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "cm":
			if m, ok := matrixArgs(); ok {
				g.ctm = m.mul(g.ctm)
			}
		case "BT":
			g.tm, g.tlm = identity, identity
		case "Tc":
			g.tc = num(0)
		case "Tw":
			g.tw = num(0)
		case "Tz":
			g.th = num(0) / 100
		case "TL":
			g.tl = num(0)
		case "Ts":
			g.trise = num(0)
		case "Tr":
			g.tr = num(0)
		case "Tf":
			if len(args) == 2 && args[0].kind == '/' {
				name := args[0].str
				f, ok := fonts[name]
				if !ok {
					f = x.font(resources.Key("Font").Key(name))
					fonts[name] = f
				}
				g.font = f
				g.tfs = num(1)
			}
		case "Td", "TD":
			if op == "TD" {
				g.tl = -num(1)
			}
			g.tlm = translate(num(0), num(1)).mul(g.tlm)
			g.tm = g.tlm
		case "Tm":
			if m, ok := matrixArgs(); ok {
				g.tm, g.tlm = m, m
			}
		case "T*":
			g.tlm = translate(0, -g.tl).mul(g.tlm)
			g.tm = g.tlm
		case "Tj", "'", "\"":
			if op == "\"" && len(args) == 3 {
				g.tw, g.tc = num(0), num(1)
				args = args[2:]
			}
			if op != "Tj" {
				g.tlm = translate(0, -g.tl).mul(g.tlm)
				g.tm = g.tlm
			}
			if len(args) == 1 && args[0].kind == 's' {
				x.show(&g, args[0].str, 0)
			}
		case "TJ":
			if len(args) == 1 && args[0].kind == '[' {
				for _, v := range args[0].arr {
					switch v.kind {
					case 's':
						x.show(&g, v.str, 0)
					case 'n':
						x.show(&g, "", v.num)
					}
				}
			}
		case "Do":
			// Past the limits nothing is drawn; the object is looked up
			// only until a skipped form is recorded.
			over := depth >= maxPDFFormDepth || x.forms >= maxPDFForms
			if len(args) == 1 && args[0].kind == '/' && (!over || x.dropped == nil) {
				xo := resources.Key("XObject").Key(args[0].str)
				form := xo.Kind() == pdf.Stream && xo.Key("Subtype").Name() == "Form"
				switch {
				case over && form && depth >= maxPDFFormDepth:
					x.drop(fmt.Errorf("the PDF could not be read: page %d nests forms more than %d deep (the limit)", x.pg, maxPDFFormDepth))
				case over && form:
					x.drop(fmt.Errorf("the PDF could not be read: page %d draws more than %d forms (the limit)", x.pg, maxPDFForms))
				case over:
				case form:
					x.forms++
					m := identity
					if fm := xo.Key("Matrix"); fm.Len() == 6 {
						m = matrix{fm.Index(0).Float64(), fm.Index(1).Float64(), fm.Index(2).Float64(), fm.Index(3).Float64(), fm.Index(4).Float64(), fm.Index(5).Float64()}
					}
					res := xo.Key("Resources")
					if res.Kind() != pdf.Dict {
						res = resources
					}
					x.interpret(xo, res, m.mul(g.ctm), depth+1)
				case x.onImage != nil && xo.Kind() == pdf.Stream && xo.Key("Subtype").Name() == "Image":
					x.onImage(xo, g.ctm)
				}
			}
		}
	})
	if !draws {
		if x.blank == nil {
			x.blank = map[string]bool{}
		}
		x.blank[id] = true
	}
}

// drop records a limit that made content be skipped; the first one is
// kept.
func (x *pdfExtractor) drop(err error) {
	if x.dropped == nil {
		x.dropped = err
	}
}

// show draws a string (or, with s empty, moves by a TJ adjustment adj).
func (x *pdfExtractor) show(g *pdfGState, s string, adj float64) {
	f := g.font
	if f == nil {
		f = nopFont
	}
	if s == "" {
		g.tm = translate(-adj/1000*g.tfs*g.th, 0).mul(g.tm)
		return
	}
	m := g.tm.mul(g.ctm)
	size := math.Abs(g.tfs) * math.Hypot(m[2], m[3])
	dx, dy := m[0], m[1]
	if l := math.Hypot(dx, dy); l > 0 {
		dx, dy = dx/l, dy/l
	} else {
		dx, dy = 1, 0
	}
	if g.tfs*g.th < 0 {
		dx, dy = -dx, -dy
	}
	cum := 0.0
	for i := 0; i < len(s); {
		n := 1
		if f.twoByte && i+1 < len(s) {
			n = 2
		}
		code := int(s[i])
		if n == 2 {
			code = code<<8 | int(s[i+1])
		}
		text := f.decode(s[i:i+n], code)
		i += n
		ox, oy := m.apply(cum, g.trise)
		tx := f.width(code)*g.tfs + g.tc
		if n == 1 && code == 32 {
			tx += g.tw
		}
		cum += tx * g.th
		ex, ey := m.apply(cum, g.trise)
		if x.onGlyph != nil {
			x.onGlyph(ox, oy, dx, dy, size, text, f, g.tr == 3 || g.tr == 7)
		}
		x.glyph(ox, oy, ex, ey, dx, dy, size, text)
	}
	g.tm = translate(cum, 0).mul(g.tm)
}

// glyph adds one glyph to the current line, or ends the line and starts
// another when the glyph is not on it.
func (x *pdfExtractor) glyph(ox, oy, ex, ey, dx, dy, size float64, text string) {
	if size < 0.5 || math.IsNaN(ox+oy+ex+ey+size) || math.IsInf(ox+oy+ex+ey+size, 0) {
		return
	}
	if x.curOn {
		vx, vy := ox-x.ex, oy-x.ey
		along := vx*dx + vy*dy
		across := vy*dx - vx*dy
		ref := max(size, x.curSize)
		switch {
		case dx*x.dx+dy*x.dy < 0.99 || math.Abs(across) > 0.5*ref:
			x.endLine()
		case along > 0.2*ref || along < -0.6*ref:
			if text != "" && text != " " {
				x.space()
			}
		}
	}
	if !x.curOn {
		if text == "" || text == " " {
			return
		}
		x.curOn = true
		x.ox, x.oy, x.dx, x.dy, x.curSize = ox, oy, dx, dy, size
	}
	if text == " " {
		x.space()
	} else {
		x.cur.WriteString(text)
		if x.total+x.cur.Len() > maxPDFText {
			panic(pdfAbort{errPDFTooBig})
		}
	}
	x.ex, x.ey = ex, ey
	x.curSize = max(x.curSize, size)
}

func (x *pdfExtractor) space() {
	if n := x.cur.Len(); n > 0 && x.cur.String()[n-1] != ' ' {
		x.cur.WriteByte(' ')
	}
}

func (x *pdfExtractor) endLine() {
	if !x.curOn {
		return
	}
	x.curOn = false
	text := strings.TrimSpace(x.cur.String())
	x.cur.Reset()
	if text == "" {
		return
	}
	x.total += len(text)
	if x.total > maxPDFText {
		panic(pdfAbort{errPDFTooBig})
	}
	x.lines = append(x.lines, pdfLine{
		text: text,
		page: x.pg,
		size: x.curSize,
		dx:   x.dx,
		dy:   x.dy,
		base: x.oy*x.dx - x.ox*x.dy,
		pos:  x.ox*x.dx + x.oy*x.dy,
	})
}

// font returns the font of a font dictionary, read once.
func (x *pdfExtractor) font(v pdf.Value) *pdfFont {
	id := v.String()
	if f, ok := x.fonts[id]; ok {
		return f
	}
	if x.fonts == nil {
		x.fonts = map[string]*pdfFont{}
	}
	f := newPDFFont(v)
	x.fonts[id] = f
	return f
}

// pdfFont decodes a font's character codes and gives their widths.
type pdfFont struct {
	enc      pdf.TextEncoding
	twoByte  bool
	scale    float64 // glyph space to text space
	first    int
	widths   []float64
	missing  float64
	cidW     map[int]float64
	cidRange []cidRange
	std      *[95]float64 // standard 14 font metrics when there are no widths
	noText   bool         // codes cannot be mapped to text
	special  map[int]string
	cache    map[int]string
	base     string // BaseFont
}

type cidRange struct {
	first, last int
	w           float64
}

// nopFont stands for a missing font. It is shared, so it caches nothing.
var nopFont = &pdfFont{scale: 0.001, missing: 500}

func newPDFFont(v pdf.Value) *pdfFont {
	f := &pdfFont{scale: 0.001, cache: map[int]string{}}
	if v.Kind() != pdf.Dict {
		f.missing = 500
		return f
	}
	f.base = v.Key("BaseFont").Name()
	if safeEncoding(v) {
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(pdfAbort); ok {
						panic(r)
					}
					f.enc = nil
				}
			}()
			pf := pdf.Font{V: v}
			f.enc = pf.Encoder()
		}()
	}
	subtype := v.Key("Subtype").Name()
	if subtype == "Type0" {
		f.twoByte = true
		enc := v.Key("Encoding").Name()
		if v.Key("ToUnicode").Kind() != pdf.Stream && !strings.Contains(enc, "UCS2") && !strings.Contains(enc, "UTF16") {
			// Glyph ids with no way back to characters.
			f.noText = true
		}
		f.missing = 1000
		d := v.Key("DescendantFonts").Index(0)
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.missing = dw.Float64()
		}
		f.cidW = map[int]float64{}
		w := d.Key("W")
		widths := 0 // CIDs are 16-bit: a valid W gives at most 65536 widths
		for i := 0; i < w.Len() && i < 100000; {
			c := int(w.Index(i).Int64())
			next := w.Index(i + 1)
			if next.Kind() == pdf.Array {
				for j := 0; j < next.Len() && j < 65536 && widths < 1<<18; j++ {
					f.cidW[c+j] = next.Index(j).Float64()
					widths++
				}
				i += 2
				continue
			}
			f.cidRange = append(f.cidRange, cidRange{c, int(next.Int64()), w.Index(i + 2).Float64()})
			i += 3
		}
		return f
	}
	if subtype == "Type3" {
		if fm := v.Key("FontMatrix"); fm.Len() == 6 {
			f.scale = math.Abs(fm.Index(0).Float64())
		}
	}
	f.first = int(v.Key("FirstChar").Int64())
	ws := v.Key("Widths")
	for i := 0; i < ws.Len() && i < 65536; i++ {
		f.widths = append(f.widths, ws.Index(i).Float64())
	}
	f.missing = v.Key("FontDescriptor").Key("MissingWidth").Float64()
	if base := v.Key("BaseFont").Name(); strings.Contains(base, "CMSY") && v.Key("ToUnicode").Kind() != pdf.Stream {
		// TeX's math symbol font has its own encoding, which PDFs made by
		// TeX often leave undeclared; its bullets and operators matter.
		f.special = cmsyText
	}
	if len(f.widths) == 0 {
		base := v.Key("BaseFont").Name()
		if strings.Contains(base, "Courier") {
			f.missing = 600
		} else {
			f.std = &helveticaWidths
		}
	}
	return f
}

// safeEncoding reports whether the library can be trusted to read the
// font's encoding: its CMap reader loops forever on a stream that ends in
// an unterminated hex string, repeats a block's count (a number in the
// file) at every end of a block, and the encoding decodes each code
// through the whole of a Differences array.
func safeEncoding(v pdf.Value) bool {
	if d := v.Key("Encoding").Key("Differences"); d.Len() > 5000 {
		return false
	}
	tu := v.Key("ToUnicode")
	if tu.Kind() != pdf.Stream {
		return true
	}
	data, tooBig := readStream(tu, maxCMap)
	return !tooBig && bytes.LastIndexByte(data, '<') < bytes.LastIndexByte(data, '>') && cmapSafe(data)
}

const maxCMap = 4 << 20

func (f *pdfFont) width(code int) float64 {
	if f.twoByte {
		if w, ok := f.cidW[code]; ok {
			return w * f.scale
		}
		for _, r := range f.cidRange {
			if code >= r.first && code <= r.last {
				return r.w * f.scale
			}
		}
		return f.missing * f.scale
	}
	if i := code - f.first; i >= 0 && i < len(f.widths) {
		return f.widths[i] * f.scale
	}
	if f.std != nil {
		if code >= 32 && code < 127 {
			return f.std[code-32] * f.scale
		}
		return 500 * f.scale
	}
	if f.missing > 0 {
		return f.missing * f.scale
	}
	return 500 * f.scale
}

// decode returns the text of one character code, cached per font.
func (f *pdfFont) decode(raw string, code int) string {
	if s, ok := f.cache[code]; ok {
		return s
	}
	var s string
	if t, ok := f.special[code]; ok {
		s = t
	} else if f.noText {
	} else if f.enc == nil {
		if raw[0] >= 32 && raw[0] < 127 && len(raw) == 1 {
			s = raw
		}
	} else {
		s = cleanGlyphText(safeDecode(f.enc, raw))
	}
	if f.cache != nil && len(f.cache) < 70000 {
		f.cache[code] = s
	}
	return s
}

func safeDecode(enc pdf.TextEncoding, raw string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(pdfAbort); ok {
				panic(r)
			}
			s = ""
		}
	}()
	return enc.Decode(raw)
}

// cleanGlyphText drops what a font decodes to that is not text: control
// characters, the replacement character of unmapped codes, invalid UTF-8.
func cleanGlyphText(s string) string {
	if r, n := utf8.DecodeRuneInString(s); n == len(s) && r >= 0xF000 && r <= 0xF0FF {
		// Symbol and Wingdings fonts map their bullets into the private
		// use area.
		switch r {
		case 0xF0B7, 0xF0A7, 0xF06C, 0xF06E, 0xF0A8, 0xF0D8, 0xF0FC, 0xF076:
			return "•"
		}
	}
	ok := true
	for _, r := range s {
		if r >= 0xFB00 && r <= 0xFB06 {
			return cleanGlyphText(ligatures.Replace(s))
		}
		if r < 32 || r == utf8.RuneError || r == 0xAD || r >= 0xE000 && r <= 0xF8FF || isSpace(r) && r != ' ' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || isSpace(r):
			b.WriteByte(' ')
		case r == 0xAD:
			b.WriteRune(r) // a soft hyphen, kept to mend the word at the line end
		case r < 32 || r == utf8.RuneError || r >= 0xE000 && r <= 0xF8FF:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cmsyText is the text of the commonest symbols of TeX's CMSY fonts.
var cmsyText = map[int]string{
	0x00: "−", 0x01: "·", 0x02: "×", 0x03: "∗", 0x06: "±", 0x0E: "◦", 0x0F: "•",
	0x14: "≤", 0x15: "≥", 0x21: "→", 0x22: "↑", 0x23: "↓", 0x24: "↔",
	0x66: "{", 0x67: "}", 0x68: "⟨", 0x69: "⟩", 0x6A: "|", 0x6E: "\\",
}

var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// helveticaWidths are the advance widths of Helvetica for codes 32-126,
// used for the standard fonts, which PDFs may use without giving widths.
var helveticaWidths = [95]float64{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
}

// pdfPara is a run of lines that belong together.
type pdfPara struct {
	lines    []string
	page     int
	size     float64
	pos      float64 // where the first line starts
	item     bool    // starts with a list bullet or number
	numbered bool    // with a number
}

// layoutPDF groups lines into paragraphs, lists and headings.
func layoutPDF(lines []pdfLine) []doc.Block {
	bucket := func(size float64) int { return int(math.Round(size * 2)) }

	// The usual distance between the lines of a paragraph, per font size.
	gaps := map[int][]float64{}
	for i := 1; i < len(lines); i++ {
		p, c := lines[i-1], lines[i]
		if p.page != c.page || bucket(p.size) != bucket(c.size) || p.dx*c.dx+p.dy*c.dy < 0.99 {
			continue
		}
		if g := p.base - c.base; g >= 0.9*c.size && g <= 1.45*c.size {
			gaps[bucket(c.size)] = append(gaps[bucket(c.size)], g)
		}
	}
	lineGap := map[int]float64{}
	for b, g := range gaps {
		slices.Sort(g)
		lineGap[b] = g[len(g)/4]
	}

	var paras []*pdfPara
	var cur *pdfPara
	for i, l := range lines {
		item, text := pdfListItem(l.text)
		if !item && cur != nil && cur.item && strings.HasPrefix(l.text, "o ") && len(l.text) > 2 {
			// Word's second-level bullet, an "o" in Courier New.
			item, text = true, "- "+strings.TrimSpace(l.text[2:])
		}
		brk := cur == nil || item
		if !brk {
			p := lines[i-1]
			ref := max(p.size, l.size)
			gap := p.base - l.base
			lg, ok := lineGap[bucket(l.size)]
			if !ok {
				lg = 1.2 * l.size
			}
			switch {
			case p.page != l.page, p.dx*l.dx+p.dy*l.dy < 0.99:
				brk = true
			case math.Abs(p.size-l.size) > 0.1*ref:
				brk = true
			case gap < 0.3*ref || gap > 1.3*lg+0.5:
				brk = true
			case !cur.item && l.pos-p.pos > ref:
				brk = true // first-line indent
			case cur.item && l.pos < cur.pos+0.5*ref:
				brk = true // not indented under the item's text
			}
		}
		if brk {
			cur = &pdfPara{page: l.page, size: l.size, pos: l.pos, item: item, numbered: item && text[0] != '-'}
			paras = append(paras, cur)
		}
		cur.lines = append(cur.lines, text)
	}

	// Body size: the size most text is set in.
	chars := map[int]int{}
	for _, p := range paras {
		for _, l := range p.lines {
			chars[bucket(p.size)] += len(l)
		}
	}
	body, most := 0, -1
	for b, n := range chars {
		if n > most || n == most && b < body {
			body, most = b, n
		}
	}
	texts := make([]string, len(paras))
	var headingSizes []int
	for i, p := range paras {
		texts[i] = joinPDFLines(p.lines)
		if isPDFHeading(p, texts[i], body) && !slices.Contains(headingSizes, bucket(p.size)) {
			headingSizes = append(headingSizes, bucket(p.size))
		}
	}
	slices.Sort(headingSizes)
	slices.Reverse(headingSizes)

	drop := runningHeaders(paras, texts, func(i int) bool { return isPDFHeading(paras[i], texts[i], body) })
	if !slices.Contains(drop, false) {
		drop = make([]bool, len(paras)) // it cannot all be headers
	}

	var out blockList
	var list []string
	var indents []float64
	listPage := 0
	flushList := func() {
		if len(list) > 0 {
			out.add(doc.List, 0, strings.Join(list, "\n"), listPage)
			list = list[:0]
		}
	}
	for i, p := range paras {
		text := texts[i]
		if drop[i] {
			continue
		}
		if isPDFHeading(p, text, body) {
			flushList()
			level := slices.Index(headingSizes, bucket(p.size)) + 1
			out.add(doc.Heading, min(level, 6), text, p.page)
			continue
		}
		if p.item {
			if len(list) == 0 {
				listPage = p.page
				indents = indents[:0]
			}
			// Nesting from the indentation of the bullets.
			tol := 0.5 * p.size
			for len(indents) > 0 && indents[len(indents)-1] > p.pos+tol {
				indents = indents[:len(indents)-1]
			}
			if len(indents) == 0 || p.pos > indents[len(indents)-1]+tol {
				indents = append(indents, p.pos)
			}
			list = append(list, listIndent(len(indents)-1)+text)
			continue
		}
		flushList()
		out.add(doc.Paragraph, 0, text, p.page)
	}
	flushList()
	return out
}

// runningHeaders marks the paragraphs to leave out: page numbers, and
// running headers and footers (text that, digits aside, recurs at the top
// or bottom of many pages, in a size that is not a heading's).
func runningHeaders(paras []*pdfPara, texts []string, heading func(int) bool) []bool {
	drop := make([]bool, len(paras))
	type span struct{ first, last int }
	var pages []span
	for i, p := range paras {
		if i == 0 || paras[i-1].page != p.page {
			pages = append(pages, span{i, i})
		}
		pages[len(pages)-1].last = i
	}
	key := func(s string) string {
		return collapseSpace(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return ' '
			}
			return unicode.ToLower(r)
		}, s))
	}
	// The paragraphs at the top and at the bottom of each page: one each,
	// two on a page with enough paragraphs for two-line headers.
	edges := func(sp span) []int {
		n := 1
		if sp.last-sp.first >= 5 {
			n = 2
		}
		var idx []int
		for i := sp.first; i <= sp.last && i < sp.first+n; i++ {
			idx = append(idx, i)
		}
		for i := max(sp.last-n+1, sp.first+n); i <= sp.last; i++ {
			idx = append(idx, i)
		}
		return idx
	}
	seen := map[string]int{}
	for _, sp := range pages {
		keys := map[string]bool{}
		for _, i := range edges(sp) {
			if k := key(texts[i]); k != "" && len(k) < 200 {
				keys[k] = true
			}
		}
		for k := range keys {
			seen[k]++
		}
	}
	for _, sp := range pages {
		for _, i := range edges(sp) {
			if (i == sp.first || i == sp.last) && isPageNumber(texts[i]) {
				drop[i] = true
			}
			if n := seen[key(texts[i])]; n >= 3 && n*10 >= len(pages)*3 && !heading(i) {
				drop[i] = true
			}
		}
	}
	return drop
}

func isPDFHeading(p *pdfPara, text string, body int) bool {
	return (!p.item || p.numbered) && body > 0 && p.size*2 >= float64(body)*1.15 && len(p.lines) <= 3 && utf8.RuneCountInString(text) <= 200
}

// joinPDFLines joins the lines of a paragraph with spaces, mending words
// broken by a soft hyphen and keeping hard hyphens ("well-" + "known").
func joinPDFLines(lines []string) string {
	if len(lines) == 1 {
		return strings.ReplaceAll(lines[0], "\u00ad", "")
	}
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b := make([]byte, 0, n)
	for i, l := range lines {
		if i > 0 {
			switch {
			case bytes.HasSuffix(b, []byte("\u00ad")):
				b = b[:len(b)-len("\u00ad")]
			case len(b) > 1 && b[len(b)-1] == '-' && unicode.IsLetter(lastRune(b[:len(b)-1])) && startsLower(l):
			default:
				b = append(b, ' ')
			}
		}
		b = append(b, l...)
	}
	return strings.ReplaceAll(string(b), "\u00ad", "")
}

func lastRune(b []byte) rune {
	r, _ := utf8.DecodeLastRune(b)
	return r
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// pdfListItem reports whether a line starts a list item, and returns it as
// "- text" (bullets) or "N. text" (numbers); other lines come back as they
// are.
func pdfListItem(line string) (bool, string) {
	r, n := utf8.DecodeRuneInString(line)
	switch r {
	case '•', '◦', '▪', '‣', '⁃', '●', '■', '□', '○', '►', '▸', '–', '-', '*', '·', '✓', '✔', '➢', '➤':
		rest := strings.TrimSpace(line[n:])
		if rest == "" || (r == '-' || r == '–' || r == '*') && !strings.HasPrefix(line[n:], " ") {
			return false, line
		}
		return true, "- " + rest
	}
	if _, item, ok := listItem(line); ok && item[0] >= '0' && item[0] <= '9' {
		return true, item
	}
	return false, line
}

func isPageNumber(s string) bool {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, "Page "), "page "))
	if s == "" || len(s) > 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
