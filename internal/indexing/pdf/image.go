package pdf

import (
	"bytes"
	"compress/zlib"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"strconv"
	"strings"

	lpdf "github.com/ledongthuc/pdf"
	"golang.org/x/image/draw"
)

// imageFilters returns the names of an image's filters.
func imageFilters(xo lpdf.Value) []string {
	f := xo.Key("Filter")
	switch f.Kind() {
	case lpdf.Name:
		return []string{f.Name()}
	case lpdf.Array:
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
func (rd *renderer) imageSize(xo lpdf.Value) (w, h int, ok bool) {
	w64, h64 := xo.Key("Width").Int64(), xo.Key("Height").Int64()
	if w64 <= 0 || h64 <= 0 || w64 > maxImagePixels || h64 > maxImagePixels || w64*h64 > maxImagePixels {
		return 0, 0, false
	}
	return int(w64), int(h64), true
}

// scanJPEG returns a JPEG image that could stand for the page: DCTDecode
// only, not a mask, no Decode array, not CMYK.
func (rd *renderer) scanJPEG(xo lpdf.Value) *pendingJPEG {
	if f := imageFilters(xo); len(f) != 1 || f[0] != "DCTDecode" || xo.Key("ImageMask").Bool() ||
		xo.Key("Decode").Kind() != lpdf.Null || xo.Key("SMask").Kind() != lpdf.Null {
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
func (rd *renderer) rawStream(v lpdf.Value) []byte {
	if rd.encrypted || v.Kind() != lpdf.Stream {
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
func (rd *renderer) decodeImage(xo lpdf.Value, m matrix) image.Image {
	img := rd.decodeRaster(xo, m)
	if img == nil {
		return nil
	}
	if sm := xo.Key("SMask"); sm.Kind() == lpdf.Stream {
		if mask := rd.decodeRaster(sm, m); mask != nil {
			return withAlpha(img, mask)
		}
	}
	return img
}

func (rd *renderer) decodeRaster(xo lpdf.Value, m matrix) image.Image {
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

func imageColorSpace(v lpdf.Value, indexed bool) (imageColors, bool) {
	switch v.Kind() {
	case lpdf.Name:
		switch v.Name() {
		case "DeviceGray", "CalGray":
			return imageColors{n: 1, kind: 'g'}, true
		case "DeviceRGB", "CalRGB":
			return imageColors{n: 3, kind: 'r'}, true
		case "DeviceCMYK":
			return imageColors{n: 4, kind: 'k'}, true
		}
	case lpdf.Array:
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
			case lpdf.String:
				lookup = []byte(t.RawString())
			case lpdf.Stream:
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
func (rd *renderer) decodeSamples(xo lpdf.Value, w, h int, flate bool, m matrix) image.Image {
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
	if parms.Kind() == lpdf.Array {
		parms = parms.Index(0)
	}
	switch pred := parms.Key("Predictor").Int64(); {
	case flate && pred >= 10:
		// The library reads only the PNG Up predictor, and wrongly for
		// more than one byte per pixel: inflate the raw data here.
		colors, pbpc, columns := int64(1), int64(8), int64(1)
		if v := parms.Key("Colors"); v.Kind() == lpdf.Integer {
			colors = v.Int64()
		}
		if v := parms.Key("BitsPerComponent"); v.Kind() == lpdf.Integer {
			pbpc = v.Int64()
		}
		if v := parms.Key("Columns"); v.Kind() == lpdf.Integer {
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
