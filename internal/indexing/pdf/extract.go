package pdf

import (
	"fmt"
	"strings"

	"math"
	"time"

	lpdf "github.com/ledongthuc/pdf"
)

type pdfPage struct {
	v         lpdf.Value
	resources lpdf.Value
}

// pageTree lists the pages in order, with their inherited resources,
// without trusting the tree's counts and guarding against cycles.
func (x *pdfExtractor) pageTree(r *lpdf.Reader) []pdfPage {
	var pages []pdfPage
	visited := 0
	var walk func(node, resources lpdf.Value, depth int)
	walk = func(node, resources lpdf.Value, depth int) {
		visited++
		if depth > maxPDFTreeDepth || visited > maxPDFPageNodes || node.Kind() != lpdf.Dict {
			return
		}
		if res := node.Key("Resources"); res.Kind() == lpdf.Dict {
			resources = res
		}
		kids := node.Key("Kids")
		typ := node.Key("Type").Name()
		if typ == "Page" || typ != "Pages" && kids.Kind() != lpdf.Array {
			pages = append(pages, pdfPage{v: node, resources: resources})
			return
		}
		for i := 0; i < kids.Len(); i++ {
			walk(kids.Index(i), resources, depth+1)
		}
	}
	root := r.Trailer().Key("Root").Key("Pages")
	walk(root, lpdf.Value{}, 0)
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

	// Hooks for the page renderer (render.go), nil when extracting
	// text: onGlyph is called for each glyph shown, at its origin in user
	// space, with its size, writing direction and text; onImage for each
	// image XObject drawn, with the CTM that maps its unit square.
	onGlyph func(ox, oy, dx, dy, size float64, text string, f *pdfFont, invisible bool)
	onImage func(xo lpdf.Value, ctm matrix)

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
	if contents.Kind() != lpdf.Stream && contents.Kind() != lpdf.Array {
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
func (x *pdfExtractor) interpret(strm, resources lpdf.Value, ctm matrix, depth int) {
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
				form := xo.Kind() == lpdf.Stream && xo.Key("Subtype").Name() == "Form"
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
					if res.Kind() != lpdf.Dict {
						res = resources
					}
					x.interpret(xo, res, m.mul(g.ctm), depth+1)
				case x.onImage != nil && xo.Kind() == lpdf.Stream && xo.Key("Subtype").Name() == "Image":
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
