package pdf

import (
	"bytes"
	"strings"

	"math"
	"unicode/utf8"

	lpdf "github.com/ledongthuc/pdf"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// font returns the font of a font dictionary, read once.
func (x *pdfExtractor) font(v lpdf.Value) *pdfFont {
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
	enc      lpdf.TextEncoding
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

func newPDFFont(v lpdf.Value) *pdfFont {
	f := &pdfFont{scale: 0.001, cache: map[int]string{}}
	if v.Kind() != lpdf.Dict {
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
			pf := lpdf.Font{V: v}
			f.enc = pf.Encoder()
		}()
	}
	subtype := v.Key("Subtype").Name()
	if subtype == "Type0" {
		f.twoByte = true
		enc := v.Key("Encoding").Name()
		if v.Key("ToUnicode").Kind() != lpdf.Stream && !strings.Contains(enc, "UCS2") && !strings.Contains(enc, "UTF16") {
			// Glyph ids with no way back to characters.
			f.noText = true
		}
		f.missing = 1000
		d := v.Key("DescendantFonts").Index(0)
		if dw := d.Key("DW"); dw.Kind() == lpdf.Integer || dw.Kind() == lpdf.Real {
			f.missing = dw.Float64()
		}
		f.cidW = map[int]float64{}
		w := d.Key("W")
		widths := 0 // CIDs are 16-bit: a valid W gives at most 65536 widths
		for i := 0; i < w.Len() && i < 100000; {
			c := int(w.Index(i).Int64())
			next := w.Index(i + 1)
			if next.Kind() == lpdf.Array {
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
	if base := v.Key("BaseFont").Name(); strings.Contains(base, "CMSY") && v.Key("ToUnicode").Kind() != lpdf.Stream {
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
func safeEncoding(v lpdf.Value) bool {
	if d := v.Key("Encoding").Key("Differences"); d.Len() > 5000 {
		return false
	}
	tu := v.Key("ToUnicode")
	if tu.Kind() != lpdf.Stream {
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

func safeDecode(enc lpdf.TextEncoding, raw string) (s string) {
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
		if r < 32 || r == utf8.RuneError || r == 0xAD || r >= 0xE000 && r <= 0xF8FF || doc.IsSpace(r) && r != ' ' {
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
		case r == '\t' || r == '\n' || r == '\r' || doc.IsSpace(r):
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
