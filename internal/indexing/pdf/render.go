package parse

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
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

// PDFPageCount returns the number of pages of a PDF, counted by the same
// page-tree walk as parsing. An unreadable file gives the parser's error.
func PDFPageCount(content []byte) (int, error) {
	n := 0
	err := withPDF(content, func(r *pdf.Reader, x *pdfExtractor) {
		n = len(x.pageTree(r))
	})
	return n, err
}

// RenderPDFPages renders the given 1-based pages of a PDF, in the order
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
func RenderPDFPages(content []byte, pages []int) ([]PageImage, error) {
	var out []PageImage
	err := withPDF(content, func(r *pdf.Reader, x *pdfExtractor) {
		tree := x.pageTree(r)
		rd := &renderer{x: x, encrypted: r.Trailer().Key("Encrypt").Kind() != pdf.Null, faces: map[faceKey]font.Face{}}
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

// withPDF opens a PDF as parsePDF does and calls fn, turning the limits'
// aborts and the library's panics into errors.
func withPDF(content []byte, fn func(r *pdf.Reader, x *pdfExtractor)) (err error) {
	src := newPDFSource(content)
	costs, err := scanPDF(src)
	if err != nil {
		return err
	}
	src.stmCost = costs
	defer func() {
		if r := recover(); r != nil {
			if a, ok := r.(pdfAbort); ok {
				err = a.err
			} else {
				err = fmt.Errorf("the PDF could not be read: it is damaged (%v)", r)
			}
		}
	}()
	r, err := pdf.NewReader(src, src.size)
	if err != nil {
		var a pdfAbort
		if errors.As(err, &a) {
			return a.err
		}
		return pdfOpenError(err)
	}
	fn(r, &pdfExtractor{src: src})
	return nil
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
	xo   pdf.Value
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
func mediaBox(page pdf.Value) (x0, y0, x1, y1 float64) {
	v := page
	for i := 0; i <= maxPDFTreeDepth && v.Kind() == pdf.Dict; i++ {
		if box := v.Key("MediaBox"); box.Kind() == pdf.Array {
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
func (c *pageCanvas) image(xo pdf.Value, ctm matrix) {
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
func (c *pageCanvas) paint(xo pdf.Value, m matrix) {
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

// imageFilters returns the names of an image's filters.
func imageFilters(xo pdf.Value) []string {
	f := xo.Key("Filter")
	switch f.Kind() {
	case pdf.Name:
		return []string{f.Name()}
	case pdf.Array:
		var names []string
		for i := 0; i < f.Len() && i < 8; i++ {
			names = append(names, f.Index(i).Name())
		}
		return names
	}
	return nil
}

// imageSize returns an image's declared size, or false when it is
// missing or over the limits.
func (rd *renderer) imageSize(xo pdf.Value) (w, h int, ok bool) {
	w64, h64 := xo.Key("Width").Int64(), xo.Key("Height").Int64()
	if w64 <= 0 || h64 <= 0 || w64 > maxImagePixels || h64 > maxImagePixels || w64*h64 > maxImagePixels {
		return 0, 0, false
	}
	return int(w64), int(h64), true
}

// scanJPEG returns a JPEG image that could stand for the page: DCTDecode
// only, not a mask, no Decode array, not CMYK.
func (rd *renderer) scanJPEG(xo pdf.Value) *pendingJPEG {
	if f := imageFilters(xo); len(f) != 1 || f[0] != "DCTDecode" || xo.Key("ImageMask").Bool() ||
		xo.Key("Decode").Kind() != pdf.Null || xo.Key("SMask").Kind() != pdf.Null {
		return nil
	}
	data := rd.rawStream(xo)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.ColorModel == color.CMYKModel || cfg.Width*cfg.Height > maxImagePixels {
		return nil
	}
	return &pendingJPEG{xo: xo, data: data, w: cfg.Width, h: cfg.Height}
}

// rawStream returns the data of a stream as stored in the file, before
// its filters: the library decodes only some filters, and says where a
// stream's data starts only in Value.String ("<<dict>>@offset"). Nil for
// an encrypted file, or when the data is not within the file.
func (rd *renderer) rawStream(v pdf.Value) []byte {
	if rd.encrypted || v.Kind() != pdf.Stream {
		return nil
	}
	s := v.String()
	i := strings.LastIndexByte(s, '@')
	if i < 0 || !strings.HasSuffix(s[:i], ">>") {
		return nil
	}
	off, err := strconv.ParseInt(s[i+1:], 10, 64)
	n := v.Key("Length").Int64()
	src := rd.x.src
	if err != nil || off < 0 || n <= 0 || off > src.size || n > src.size-off {
		return nil
	}
	return src.data[off : off+n]
}

// decodeImage decodes an image XObject to be drawn through m (unit square
// to pixels), or returns nil. Sampled images much larger than their place
// on the page are decimated as they are read.
func (rd *renderer) decodeImage(xo pdf.Value, m matrix) image.Image {
	img := rd.decodeRaster(xo, m)
	if img == nil {
		return nil
	}
	if sm := xo.Key("SMask"); sm.Kind() == pdf.Stream {
		if mask := rd.decodeRaster(sm, m); mask != nil {
			return withAlpha(img, mask)
		}
	}
	return img
}

func (rd *renderer) decodeRaster(xo pdf.Value, m matrix) image.Image {
	if xo.Key("ImageMask").Bool() {
		return nil
	}
	w, h, ok := rd.imageSize(xo)
	if !ok {
		return nil
	}
	filters := imageFilters(xo)
	switch {
	case len(filters) == 1 && filters[0] == "DCTDecode":
		data := rd.rawStream(xo)
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width*cfg.Height > maxImagePixels || !rd.spend(cfg.Width*cfg.Height) {
			return nil
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			return nil
		}
		return img
	case len(filters) == 0 || len(filters) == 1 && filters[0] == "FlateDecode":
		if !rd.spend(w * h) {
			return nil
		}
		return rd.decodeSamples(xo, w, h, len(filters) == 1, m)
	}
	return nil
}

// spend counts image pixels decoded, and reports whether they are within
// the limit.
func (rd *renderer) spend(pixels int) bool {
	if rd.pixels+pixels > maxRenderPixels {
		return false
	}
	rd.pixels += pixels
	return true
}

// withAlpha returns img with the gray levels of mask, scaled to its size,
// as its alpha channel.
func withAlpha(img, mask image.Image) *image.RGBA {
	b, mb := img.Bounds(), mask.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Rect, img, b.Min, draw.Src)
	for y := range b.Dy() {
		my := mb.Min.Y + y*mb.Dy()/b.Dy()
		p := out.Pix[y*out.Stride:]
		for x := range b.Dx() {
			mx := mb.Min.X + x*mb.Dx()/b.Dx()
			var a uint32
			switch m := mask.(type) {
			case *image.RGBA:
				a = uint32(m.Pix[m.PixOffset(mx, my)])
			case *image.YCbCr:
				a = uint32(m.Y[m.YOffset(mx, my)])
			default:
				a = uint32(color.GrayModel.Convert(m.At(mx, my)).(color.Gray).Y)
			}
			for i := range 3 {
				p[4*x+i] = byte(uint32(p[4*x+i]) * a / 255)
			}
			p[4*x+3] = byte(a)
		}
	}
	return out
}

// imageColors is an image's color space.
type imageColors struct {
	n       int  // components
	kind    byte // 'g' gray, 'r' RGB, 'k' CMYK, 'i' indexed
	palette []byte
}

func imageColorSpace(v pdf.Value, indexed bool) (imageColors, bool) {
	switch v.Kind() {
	case pdf.Name:
		switch v.Name() {
		case "DeviceGray", "CalGray":
			return imageColors{n: 1, kind: 'g'}, true
		case "DeviceRGB", "CalRGB":
			return imageColors{n: 3, kind: 'r'}, true
		case "DeviceCMYK":
			return imageColors{n: 4, kind: 'k'}, true
		}
	case pdf.Array:
		switch v.Index(0).Name() {
		case "CalGray", "CalRGB":
			return imageColorSpace(v.Index(0), indexed)
		case "ICCBased":
			switch v.Index(1).Key("N").Int64() {
			case 1:
				return imageColors{n: 1, kind: 'g'}, true
			case 3:
				return imageColors{n: 3, kind: 'r'}, true
			case 4:
				return imageColors{n: 4, kind: 'k'}, true
			}
		case "Indexed":
			if indexed {
				return imageColors{}, false
			}
			base, ok := imageColorSpace(v.Index(1), true)
			hival := int(v.Index(2).Int64())
			if !ok || hival < 0 || hival > 255 {
				return imageColors{}, false
			}
			var lookup []byte
			switch t := v.Index(3); t.Kind() {
			case pdf.String:
				lookup = []byte(t.RawString())
			case pdf.Stream:
				lookup, _ = readStream(t, 4096)
			}
			pal := make([]byte, 3*(hival+1))
			comp := make([]byte, base.n)
			for i := range hival + 1 {
				for j := range comp {
					comp[j] = 0
					if k := i*base.n + j; k < len(lookup) {
						comp[j] = lookup[k]
					}
				}
				pal[3*i], pal[3*i+1], pal[3*i+2] = base.rgb(comp)
			}
			return imageColors{n: 1, kind: 'i', palette: pal}, true
		}
	}
	return imageColors{}, false
}

// rgb converts one pixel's components (0-255) to RGB.
func (cs imageColors) rgb(c []byte) (r, g, b byte) {
	switch cs.kind {
	case 'g':
		return c[0], c[0], c[0]
	case 'r':
		return c[0], c[1], c[2]
	case 'k':
		k := int(c[3])
		return byte(255 - min(255, int(c[0])+k)), byte(255 - min(255, int(c[1])+k)), byte(255 - min(255, int(c[2])+k))
	case 'i':
		i := 3 * int(c[0])
		if i+2 >= len(cs.palette) {
			i = len(cs.palette) - 3
		}
		return cs.palette[i], cs.palette[i+1], cs.palette[i+2]
	}
	return 0, 0, 0
}

// decodeSamples decodes an unfiltered or FlateDecode image.
func (rd *renderer) decodeSamples(xo pdf.Value, w, h int, flate bool, m matrix) image.Image {
	bpc := int(xo.Key("BitsPerComponent").Int64())
	cs, ok := imageColorSpace(xo.Key("ColorSpace"), false)
	if !ok || bpc != 1 && bpc != 2 && bpc != 4 && bpc != 8 && bpc != 16 || cs.kind == 'i' && bpc == 16 {
		return nil
	}
	rowBytes := (w*cs.n*bpc + 7) / 8
	if rowBytes > 1<<24 {
		return nil
	}

	var r io.Reader
	parms := xo.Key("DecodeParms")
	if parms.Kind() == pdf.Array {
		parms = parms.Index(0)
	}
	switch pred := parms.Key("Predictor").Int64(); {
	case flate && pred >= 10:
		// The library reads only the PNG Up predictor, and wrongly for
		// more than one byte per pixel: inflate the raw data here.
		colors, pbpc, columns := int64(1), int64(8), int64(1)
		if v := parms.Key("Colors"); v.Kind() == pdf.Integer {
			colors = v.Int64()
		}
		if v := parms.Key("BitsPerComponent"); v.Kind() == pdf.Integer {
			pbpc = v.Int64()
		}
		if v := parms.Key("Columns"); v.Kind() == pdf.Integer {
			columns = v.Int64()
		}
		if colors != int64(cs.n) || pbpc != int64(bpc) || columns != int64(w) {
			return nil
		}
		raw := rd.rawStream(xo)
		if raw == nil {
			return nil
		}
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil
		}
		r = &pngPredictor{r: zr, bpp: max(1, cs.n*bpc/8), prev: make([]byte, 1+rowBytes), cur: make([]byte, 1+rowBytes)}
	case pred > 1:
		return nil // the TIFF predictor
	default:
		rc := xo.Reader()
		defer rc.Close()
		r = rc
	}

	invert := make([]bool, cs.n)
	if d := xo.Key("Decode"); cs.kind != 'i' && d.Len() >= 2*cs.n {
		for i := range invert {
			invert[i] = d.Index(2*i).Float64() > d.Index(2*i+1).Float64()
		}
	}

	// Decimate to about twice the image's size on the page.
	step := func(n int, l float64) int {
		return max(1, int(float64(n)/max(1, min(2*l, 2*maxRenderSide))))
	}
	kx, ky := step(w, math.Hypot(m[0], m[1])), step(h, math.Hypot(m[2], m[3]))
	ow, oh := (w+kx-1)/kx, (h+ky-1)/ky
	img := image.NewRGBA(image.Rect(0, 0, ow, oh))
	fillWhite(img.Pix) // where the data ends early
	row := make([]byte, rowBytes)
	comp := make([]byte, cs.n)
	maxV := 1<<bpc - 1
	if bpc == 16 {
		maxV = 255
	}
	for y := 0; y < h; y++ {
		if y&255 == 255 {
			rd.checkDeadline()
		}
		if _, err := io.ReadFull(r, row); err != nil {
			break
		}
		if y%ky != 0 {
			continue
		}
		p := img.Pix[(y/ky)*img.Stride:]
		for ox := range ow {
			for i := range comp {
				idx := ox*kx*cs.n + i
				var v int
				switch bpc {
				case 8:
					v = int(row[idx])
				case 16:
					v = int(row[2*idx])
				default:
					bit := idx * bpc
					v = int(row[bit/8]>>(8-bpc-bit%8)) & maxV
				}
				if cs.kind != 'i' {
					v = v * 255 / maxV
					if invert[i] {
						v = 255 - v
					}
				}
				comp[i] = byte(v)
			}
			p[4*ox], p[4*ox+1], p[4*ox+2] = cs.rgb(comp)
		}
	}
	return img
}

// pngPredictor undoes the PNG predictors, one filter-type byte before
// each row.
type pngPredictor struct {
	r         io.Reader
	bpp       int
	prev, cur []byte
	pend      []byte
}

func (p *pngPredictor) Read(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if len(p.pend) == 0 {
			if _, err := io.ReadFull(p.r, p.cur); err != nil {
				if n > 0 {
					return n, nil
				}
				return 0, err
			}
			cur, prev := p.cur[1:], p.prev[1:]
			switch p.cur[0] {
			case 1: // Sub
				for i := p.bpp; i < len(cur); i++ {
					cur[i] += cur[i-p.bpp]
				}
			case 2: // Up
				for i := range cur {
					cur[i] += prev[i]
				}
			case 3: // Average
				for i := range cur {
					a := 0
					if i >= p.bpp {
						a = int(cur[i-p.bpp])
					}
					cur[i] += byte((a + int(prev[i])) / 2)
				}
			case 4: // Paeth
				for i := range cur {
					var a, c int
					if i >= p.bpp {
						a, c = int(cur[i-p.bpp]), int(prev[i-p.bpp])
					}
					cur[i] += byte(paeth(a, int(prev[i]), c))
				}
			}
			p.prev, p.cur = p.cur, p.prev
			p.pend = p.prev[1:]
		}
		k := copy(b, p.pend)
		n += k
		b, p.pend = b[k:], p.pend[k:]
	}
	return n, nil
}

func paeth(a, b, c int) int {
	p := a + b - c
	pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
