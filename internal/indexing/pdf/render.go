package pdf

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	lpdf "github.com/ledongthuc/pdf"
	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/f64"
	"golang.org/x/image/math/fixed"
)

// PageImage is a rendered PDF page.
type PageImage struct {
	Page          int    // 1-based
	MIME          string // "image/png" or "image/jpeg"
	Data          []byte
	Width, Height int // pixels
}

// Limits on rendering.
const (
	maxRenderSide   = 1600       // pixels, the longer side of a page
	maxRenderScale  = 2          // pixels per point
	maxImagePixels  = 40_000_000 // pixels of one image
	maxRenderPixels = 400_000_000
	maxPageImages   = 500  // images drawn on one page
	maxGlyphPixels  = 1600 // font size, in pixels
	maxPageInk      = 20   // area drawn on a page, in page areas
)

// PageCount returns the number of pages of a PDF, counted by the same
// page-tree walk as parsing. An unreadable file gives the parser's error.
func PageCount(content []byte) (int, error) {
	n := 0
	err := withPDF(content, func(r *lpdf.Reader, x *pdfExtractor) {
		n = len(x.pageTree(r))
	})
	return n, err
}

// RenderPages renders the given 1-based pages of a PDF, in the order
// given; pages that do not exist, and repeats, are skipped.
//
// A page is rendered on white, its MediaBox (inherited, 612×792 by
// default) scaled by min(2, 1600/longer side). What is drawn:
//   - text, in black, each glyph at its position and size in a Go font
//     (bold when the PDF font's name says Bold); glyphs of rotated text
//     are drawn upright at their own positions; invisible text (render
//     mode 3 or 7, the OCR layer of scanned pages) is not drawn;
//   - image XObjects, under any affine CTM: DCTDecode (JPEG), and
//     FlateDecode (with or without PNG predictors) or unfiltered samples
//     of 1 to 16 bits in DeviceGray, DeviceRGB, DeviceCMYK, Cal*, ICCBased
//     or Indexed color, with their soft masks. Stencil masks, color-key
//     masks, other filters (JBIG2, CCITT, JPX, LZW), inline images and
//     images over 40 M pixels are not drawn.
//
// Vector graphics (paths, fills, strokes, shadings), clipping, colors of
// text and annotations are not drawn, and /Rotate is ignored; characters
// the Go fonts lack (CJK) are drawn as boxes.
//
// A page that draws nothing but one upright JPEG covering at least 90% of
// it (a scan) comes back as that JPEG, unchanged; other pages as PNG. A
// damaged page shows what was drawn before the damage; an unreadable file
// gives the same error as parsing.
func RenderPages(content []byte, pages []int) ([]PageImage, error) {
	var out []PageImage
	err := withPDF(content, func(r *lpdf.Reader, x *pdfExtractor) {
		tree := x.pageTree(r)
		rd := &renderer{x: x, encrypted: r.Trailer().Key("Encrypt").Kind() != lpdf.Null, faces: map[faceKey]font.Face{}}
		seen := map[int]bool{}
		for _, n := range pages {
			if n < 1 || n > len(tree) || seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, rd.render(n, tree[n-1]))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type renderer struct {
	x         *pdfExtractor
	encrypted bool
	pixels    int // image pixels decoded so far
	faces     map[faceKey]font.Face
}

type faceKey struct {
	bold bool
	size int // quarter pixels
}

func (rd *renderer) checkDeadline() {
	if time.Now().After(rd.x.src.deadline) {
		panic(pdfAbort{pdfTimeoutError()})
	}
}

// pageCanvas is one page being rendered.
type pageCanvas struct {
	rd      *renderer
	img     *image.RGBA
	dev     matrix // user space to pixels
	scale   float64
	glyphs  int     // glyphs seen
	text    int     // glyphs drawn
	images  int     // images drawn
	ink     float64 // area drawn, in pixels
	colored bool
	pending *pendingJPEG
}

// pendingJPEG is the first thing drawn on a page, a JPEG, painted only
// when something else is drawn: alone, it is the page.
type pendingJPEG struct {
	xo   lpdf.Value
	full matrix
	data []byte
	w, h int
}

func (rd *renderer) render(num int, p pdfPage) PageImage {
	x0, y0, x1, y1 := mediaBox(p.v)
	scale := min(maxRenderScale, maxRenderSide/max(x1-x0, y1-y0))
	w := max(1, int(math.Round((x1-x0)*scale)))
	h := max(1, int(math.Round((y1-y0)*scale)))
	c := &pageCanvas{
		rd:    rd,
		img:   image.NewRGBA(image.Rect(0, 0, w, h)),
		dev:   matrix{scale, 0, 0, -scale, -x0 * scale, y1 * scale},
		scale: scale,
	}
	fillWhite(c.img.Pix)
	x := rd.x
	x.onGlyph, x.onImage = c.glyph, c.image
	x.page(num, p)
	x.onGlyph, x.onImage = nil, nil
	x.lines, x.total = nil, 0
	if j := c.pending; j != nil && c.images == 1 && c.text == 0 && c.coverage(j.full) >= 0.9 {
		return PageImage{Page: num, MIME: "image/jpeg", Data: bytes.Clone(j.data), Width: j.w, Height: j.h}
	}
	c.flush()
	var out image.Image = c.img
	if !c.colored {
		g := image.NewGray(c.img.Rect)
		for i := range g.Pix {
			g.Pix[i] = c.img.Pix[4*i]
		}
		out = g
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		panic(err) // writing to memory does not fail
	}
	return PageImage{Page: num, MIME: "image/png", Data: buf.Bytes(), Width: w, Height: h}
}

func fillWhite(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = 0xFF
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// mediaBox returns the page's MediaBox, inherited from the page tree, or
// US Letter when there is none or it is unusable.
func mediaBox(page lpdf.Value) (x0, y0, x1, y1 float64) {
	v := page
	for i := 0; i <= maxPDFTreeDepth && v.Kind() == lpdf.Dict; i++ {
		if box := v.Key("MediaBox"); box.Kind() == lpdf.Array {
			if box.Len() == 4 {
				a, b, c, d := box.Index(0).Float64(), box.Index(1).Float64(), box.Index(2).Float64(), box.Index(3).Float64()
				x0, y0, x1, y1 = min(a, c), min(b, d), max(a, c), max(b, d)
				if w, h := x1-x0, y1-y0; w >= 1 && h >= 1 && w <= 1e6 && h <= 1e6 && math.Abs(x0)+math.Abs(y0) <= 1e7 {
					return x0, y0, x1, y1
				}
			}
			break
		}
		v = v.Key("Parent")
	}
	return 0, 0, 612, 792
}

// glyph draws one glyph shown by the interpreter.
func (c *pageCanvas) glyph(ox, oy, dx, dy, size float64, text string, f *pdfFont, invisible bool) {
	if invisible || strings.TrimSpace(text) == "" {
		return
	}
	c.glyphs++
	if c.glyphs&255 == 0 {
		c.rd.checkDeadline()
	}
	px := size * c.scale * f.scale * 1000 // Type 3 fonts have their own FontMatrix
	if !(px >= 1 && px <= maxGlyphPixels) {
		return
	}
	x, y := c.dev.apply(ox, oy)
	b := c.img.Rect
	if !(x < float64(b.Max.X) && y > 0 && y < float64(b.Max.Y)+px && x+px*float64(utf8.RuneCountInString(text)) > 0) {
		return // off the page, or not a number
	}
	face := c.rd.face(f.base, px)
	if face == nil || !c.spend(px*px*float64(utf8.RuneCountInString(text))) {
		return
	}
	c.flush()
	c.text++
	d := font.Drawer{Dst: c.img, Src: image.Black, Face: face, Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}}
	d.DrawString(text)
}

var goFonts struct {
	once          sync.Once
	regular, bold *opentype.Font
}

// face returns a Go font face for a PDF font and a size in pixels.
func (rd *renderer) face(base string, px float64) font.Face {
	goFonts.once.Do(func() {
		goFonts.regular, _ = opentype.Parse(goregular.TTF)
		goFonts.bold, _ = opentype.Parse(gobold.TTF)
	})
	k := faceKey{strings.Contains(strings.ToLower(base), "bold"), int(math.Round(px * 4))}
	if f, ok := rd.faces[k]; ok {
		return f
	}
	fnt := goFonts.regular
	if k.bold {
		fnt = goFonts.bold
	}
	if fnt == nil {
		return nil
	}
	f, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: float64(k.size) / 4, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil
	}
	if len(rd.faces) >= 256 {
		clear(rd.faces)
	}
	rd.faces[k] = f
	return f
}

// image draws an image XObject into the unit square mapped by ctm.
func (c *pageCanvas) image(xo lpdf.Value, ctm matrix) {
	full := ctm.mul(c.dev)
	if !c.visible(full) {
		return
	}
	c.flush()
	c.images++
	minX, minY, maxX, maxY := corners(full)
	b := c.img.Rect
	if c.images > maxPageImages || !c.spend((min(maxX, float64(b.Max.X))-max(minX, 0))*(min(maxY, float64(b.Max.Y))-max(minY, 0))) {
		return
	}
	c.rd.checkDeadline()
	if c.images == 1 && c.text == 0 {
		if j := c.rd.scanJPEG(xo); j != nil {
			j.full = full
			c.pending = j
			return
		}
	}
	c.paint(xo, full)
}

// visible reports whether the unit square mapped by m (to pixels) is a
// proper parallelogram that overlaps the page.
func (c *pageCanvas) visible(m matrix) bool {
	for _, v := range m {
		if math.IsNaN(v) || math.Abs(v) > 1e6 {
			return false
		}
	}
	if math.Abs(m[0]*m[3]-m[1]*m[2]) < 1e-6 {
		return false
	}
	minX, minY, maxX, maxY := corners(m)
	b := c.img.Rect
	return maxX > 0 && maxY > 0 && minX < float64(b.Max.X) && minY < float64(b.Max.Y)
}

func corners(m matrix) (minX, minY, maxX, maxY float64) {
	minX, minY, maxX, maxY = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range [4][2]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		x, y := m.apply(p[0], p[1])
		minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
	}
	return
}

// coverage returns the share of the page an upright, unrotated image
// mapped by m covers (0 for other images).
func (c *pageCanvas) coverage(m matrix) float64 {
	if !(m[0] > 0 && m[3] < 0) || math.Abs(m[1]) > 1e-6*m[0] || math.Abs(m[2]) > -1e-6*m[3] {
		return 0
	}
	minX, minY, maxX, maxY := corners(m)
	b := c.img.Rect
	w := min(maxX, float64(b.Max.X)) - max(minX, 0)
	h := min(maxY, float64(b.Max.Y)) - max(minY, 0)
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h / float64(b.Dx()*b.Dy())
}

// spend adds area to the ink drawn on the page, and reports whether it
// is within the limit.
func (c *pageCanvas) spend(area float64) bool {
	c.ink += area
	return c.ink <= maxPageInk*float64(c.img.Rect.Dx()*c.img.Rect.Dy())
}

// flush paints the pending JPEG.
func (c *pageCanvas) flush() {
	if j := c.pending; j != nil {
		c.pending = nil
		c.paint(j.xo, j.full)
	}
}

// paint decodes an image and draws it through m, from its unit square to
// pixels. An image that cannot be decoded is left out.
func (c *pageCanvas) paint(xo lpdf.Value, m matrix) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(pdfAbort); ok {
				panic(r)
			}
		}
	}()
	src := c.rd.decodeImage(xo, m)
	c.rd.checkDeadline()
	if src == nil {
		return
	}
	b := src.Bounds()
	// Image space: the first row is the top of the unit square.
	s2d := translate(-float64(b.Min.X), -float64(b.Min.Y)).mul(matrix{1 / float64(b.Dx()), 0, 0, -1 / float64(b.Dy()), 0, 1}).mul(m)
	draw.ApproxBiLinear.Transform(c.img, f64.Aff3{s2d[0], s2d[2], s2d[4], s2d[1], s2d[3], s2d[5]}, src, b, draw.Over, nil)
	c.colored = true
	c.rd.checkDeadline()
}
