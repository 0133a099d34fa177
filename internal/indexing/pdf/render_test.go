package pdf

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	lpdf "github.com/ledongthuc/pdf"

	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
)

// onePage is a one-page PDF drawing content, with Helvetica as /F1 and
// the given image XObjects as /Im1, /Im2...
func onePage(mediaBox, content string, images ...string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"", // the page
		pdfStream("", content),
		helvetica,
	}
	var xobjs []string
	for i, im := range images {
		objs = append(objs, im)
		xobjs = append(xobjs, fmt.Sprintf("/Im%d %d 0 R", i+1, len(objs)))
	}
	if mediaBox != "" {
		mediaBox = "/MediaBox " + mediaBox
	}
	objs[2] = fmt.Sprintf("<< /Type /Page /Parent 2 0 R %s /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << %s >> >> >>",
		mediaBox, strings.Join(xobjs, " "))
	return pdfFile(objs...)
}

func zlibBytes(b []byte) string {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.String()
}

// flateRGB is a w×h image XObject of one color, Flate-compressed.
func flateRGB(w, h int, c color.RGBA) string {
	px := bytes.Repeat([]byte{c.R, c.G, c.B}, w*h)
	return pdfStream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode", w, h), zlibBytes(px))
}

func jpegBytes(t testing.TB, w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func dctImage(data []byte, w, h int) string {
	return pdfStream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", w, h), string(data))
}

func renderOne(t *testing.T, content []byte, page int) (PageImage, image.Image) {
	t.Helper()
	got, err := RenderPages(content, []int{page})
	if err != nil || len(got) != 1 {
		t.Fatalf("RenderPages: %d pages, %v", len(got), err)
	}
	var img image.Image
	switch got[0].MIME {
	case "image/png":
		img, err = png.Decode(bytes.NewReader(got[0].Data))
	case "image/jpeg":
		img, err = jpeg.Decode(bytes.NewReader(got[0].Data))
	default:
		t.Fatalf("MIME %q", got[0].MIME)
	}
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != got[0].Width || b.Dy() != got[0].Height {
		t.Fatalf("image is %v, PageImage says %dx%d", b, got[0].Width, got[0].Height)
	}
	return got[0], img
}

// darkPixels counts the pixels of r darker than mid-gray.
func darkPixels(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g := color.GrayModel.Convert(img.At(x, y)).(color.Gray); g.Y < 128 {
				n++
			}
		}
	}
	return n
}

func near(a, b [3]uint8) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d < -8 || d > 8 {
			return false
		}
	}
	return true
}

func rgbAt(img image.Image, x, y int) [3]uint8 {
	c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
	return [3]uint8{c.R, c.G, c.B}
}

func TestRenderPDFText(t *testing.T) {
	// US Letter at 2 px per point; the text's baseline is at y = (792-700)*2.
	content := onePage("", "BT /F1 24 Tf 72 700 Td (Hello, world) Tj ET "+
		"q BT /F1 12 Tf 3 Tr 72 400 Td (invisible OCR layer) Tj ET Q "+
		"BT /F1 12 Tf 0 1 -1 0 560 300 Tm (Up) Tj ET")
	pi, img := renderOne(t, content, 1)
	if pi.MIME != "image/png" || pi.Width != 1224 || pi.Height != 1584 || pi.Page != 1 {
		t.Fatalf("got %s %dx%d page %d", pi.MIME, pi.Width, pi.Height, pi.Page)
	}
	if n := darkPixels(img, image.Rect(144, 184-48, 144+330, 184+12)); n < 500 {
		t.Errorf("%d dark pixels where the text is", n)
	}
	if n := darkPixels(img, image.Rect(144+360, 184-48, 1224, 184+12)); n != 0 {
		t.Errorf("%d dark pixels after the text", n)
	}
	if n := darkPixels(img, image.Rect(0, 400, 1000, 1584)); n != 0 {
		t.Errorf("%d dark pixels in the blank part (or the invisible text)", n)
	}
	// Rotated text: its glyphs drawn upright where they are.
	if n := darkPixels(img, image.Rect(1100, 1584-700, 1224, 1584-560)); n == 0 {
		t.Error("no dark pixels where the rotated text is")
	}

	// Another MediaBox, inherited, with an offset origin; a bold font.
	content = pdfFile(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [100 100 2100 1100] >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		pdfStream("", "BT /F1 100 Tf 200 1000 Td (Bold) Tj ET"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
	)
	pi, img = renderOne(t, content, 1)
	if pi.Width != 1600 || pi.Height != 800 {
		t.Fatalf("got %dx%d, want 1600x800 (scale 0.8)", pi.Width, pi.Height)
	}
	if n := darkPixels(img, image.Rect(80, 80-70, 80+230, 80)); n < 2000 {
		t.Errorf("%d dark pixels where the text is", n)
	}
	if n := darkPixels(img, image.Rect(0, 100, 1600, 800)); n != 0 {
		t.Errorf("%d dark pixels in the blank part", n)
	}
}

func TestRenderPDFImages(t *testing.T) {
	red := color.RGBA{255, 0, 0, 255}
	// A 4×4 red image on 100×100 pt at (200, 300), drawn twice: once
	// flipped (negative height), once rotated by 90°; and text.
	content := onePage("", "q 100 0 0 100 200 300 cm /Im1 Do Q "+
		"q 50 0 0 -50 50 150 cm /Im1 Do Q "+
		"q 0 50 -50 0 500 600 cm /Im1 Do Q "+
		"BT /F1 12 Tf 72 750 Td (Caption) Tj ET",
		flateRGB(4, 4, red))
	pi, img := renderOne(t, content, 1)
	if pi.MIME != "image/png" {
		t.Fatalf("MIME %s", pi.MIME)
	}
	for _, p := range []image.Point{{500, 884}, {405, 790}, {595, 980}, {150, 1334}, {950, 334}} {
		if c := rgbAt(img, p.X, p.Y); c != [3]uint8{255, 0, 0} {
			t.Errorf("at %v: %v, want red", p, c)
		}
	}
	for _, p := range []image.Point{{395, 884}, {605, 884}, {500, 775}, {500, 995}, {600, 300}} {
		if c := rgbAt(img, p.X, p.Y); c != [3]uint8{255, 255, 255} {
			t.Errorf("at %v: %v, want white", p, c)
		}
	}
	if darkPixels(img, image.Rect(144, 60, 300, 84)) == 0 {
		t.Error("no caption")
	}

	// Sample formats: Flate with PNG predictors, 1-bit gray with an
	// inverting Decode array, indexed color, and a scan-like JPEG that is
	// not the whole page.
	rows := func(filter byte, px []byte) string { // px: one row, repeated
		var b []byte
		for range 3 {
			b = append(b, filter)
			b = append(b, px...)
		}
		return string(b)
	}
	green := rows(0, []byte{0, 200, 0, 0, 200, 0}) // None
	// Sub: deltas from the pixel to the left.
	sub := []byte{0, 0, 255, 0, 0, 0}
	var predicted []byte
	predicted = append(predicted, 1)
	predicted = append(predicted, sub...)
	for range 2 {
		predicted = append(predicted, 2, 0, 0, 0, 0, 0, 0) // Up: same as above
	}
	images := []string{
		pdfStream("/Subtype /Image /Width 2 /Height 3 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode "+
			"/DecodeParms << /Predictor 15 /Colors 3 /Columns 2 >>", zlibBytes([]byte(green))),
		pdfStream("/Subtype /Image /Width 2 /Height 3 /ColorSpace [/ICCBased 11 0 R] /BitsPerComponent 8 /Filter [/FlateDecode] "+
			"/DecodeParms [<< /Predictor 15 /Colors 3 /Columns 2 >>]", zlibBytes(predicted)),
		pdfStream("/Subtype /Image /Width 8 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 1 /Decode [1 0]", "\x00\xff"),
		pdfStream("/Subtype /Image /Width 2 /Height 1 /ColorSpace [/Indexed /DeviceRGB 1 <FF00FF 00FFFF>] /BitsPerComponent 8", "\x01\x00"),
		dctImage(jpegBytes(t, 16, 16, color.RGBA{0, 0, 255, 255}), 16, 16),
		pdfStream("/N 3", ""), // object 11, the ICC profile
		pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceRGB /BitsPerComponent 8 /SMask 13 0 R",
			string(bytes.Repeat([]byte{255, 0, 0}, 16))),
		pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
			zlibBytes(bytes.Repeat([]byte{0, 0, 255, 255}, 4))), // object 13: transparent on the left
	}
	content = onePage("", "q 100 0 0 100 0 692 cm /Im1 Do Q q 100 0 0 100 100 692 cm /Im2 Do Q "+
		"q 100 0 0 100 200 692 cm /Im3 Do Q q 100 0 0 100 300 692 cm /Im4 Do Q q 100 0 0 100 400 692 cm /Im5 Do Q "+
		"BT /F1 48 Tf 500 730 Td (HH) Tj ET q 100 0 0 100 500 692 cm /Im7 Do Q", images...)
	_, img = renderOne(t, content, 1)
	for _, tt := range []struct {
		x, y int
		want [3]uint8
	}{
		{100, 100, [3]uint8{0, 200, 0}},    // PNG predictor None: green
		{250, 100, [3]uint8{0, 0, 255}},    // Sub, then Up: blue
		{350, 100, [3]uint8{0, 0, 255}},    // blue
		{500, 50, [3]uint8{255, 255, 255}}, // 1-bit row 0: 0 inverted: white
		{500, 150, [3]uint8{0, 0, 0}},      // row 1: black
		{650, 100, [3]uint8{0, 255, 255}},  // indexed: 1 then 0
		{750, 100, [3]uint8{255, 0, 255}},
		{1170, 50, [3]uint8{255, 0, 0}}, // soft mask: opaque on the right
	} {
		if c := rgbAt(img, tt.x, tt.y); !near(c, tt.want) {
			t.Errorf("at (%d, %d): %v, want %v", tt.x, tt.y, c, tt.want)
		}
	}
	if c := rgbAt(img, 900, 100); c[2] < 200 || c[0] > 60 || c[1] > 60 {
		t.Errorf("JPEG: %v, want blue", c)
	}
	// Through the transparent half of the soft-masked image, the text
	// drawn before it shows; none of it is red.
	left := image.Rect(1000, 0, 1070, 200) // bilinear blending beyond
	if darkPixels(img, left) < 200 {
		t.Error("the text under the transparent half of the image is hidden")
	}
	for y := left.Min.Y; y < left.Max.Y; y++ {
		for x := left.Min.X; x < left.Max.X; x++ {
			if c := rgbAt(img, x, y); int(c[0]) > int(c[1])+40 {
				t.Fatalf("at (%d, %d): %v, red in the transparent half", x, y, c)
			}
		}
	}
}

func TestRenderPDFScan(t *testing.T) {
	// Quarter-letter pages (306×396 px), for speed under the race detector.
	scan := jpegBytes(t, 200, 260, color.RGBA{90, 90, 90, 255})
	page := func(content string) []byte {
		return onePage("[0 0 153 198]", content, dctImage(scan, 200, 260))
	}
	for name, content := range map[string]string{
		"full page":          "q 153 0 0 198 0 0 cm /Im1 Do Q",
		"OCR layer":          "q 153 0 0 198 0 0 cm /Im1 Do Q BT 3 Tr /F1 12 Tf 10 150 Td (Scanned words) Tj ET",
		"92% of the page":    "q 1 0 0 1 0 -8 cm 153 0 0 190 0 0 cm /Im1 Do Q",
		"spaces, no glyphs":  "BT /F1 12 Tf 10 150 Td (   ) Tj ET q 153 0 0 198 0 0 cm /Im1 Do Q",
		"nothing else drawn": "q 153 0 0 198 0 0 cm /Im1 Do Q /Nope Do",
	} {
		pi, _ := renderOne(t, page(content), 1)
		if pi.MIME != "image/jpeg" || !bytes.Equal(pi.Data, scan) || pi.Width != 200 || pi.Height != 260 {
			t.Errorf("%s: got %s %dx%d, %d bytes; want the JPEG unchanged", name, pi.MIME, pi.Width, pi.Height, len(pi.Data))
		}
	}
	for name, content := range map[string]string{
		"text over it":    "q 153 0 0 198 0 0 cm /Im1 Do Q BT /F1 12 Tf 10 150 Td (Stamp) Tj ET",
		"text under it":   "BT /F1 12 Tf 10 150 Td (Hidden) Tj ET q 153 0 0 198 0 0 cm /Im1 Do Q",
		"half the page":   "q 153 0 0 99 0 0 cm /Im1 Do Q",
		"twice":           "q 153 0 0 198 0 0 cm /Im1 Do Q q 25 0 0 25 0 0 cm /Im1 Do Q",
		"upside down":     "q 153 0 0 -198 0 198 cm /Im1 Do Q",
		"rotated 90°":     "q 0 198 -153 0 153 0 cm /Im1 Do Q",
		"another image 1": "q 153 0 0 198 0 0 cm /Im1 Do Q q 10 0 0 10 0 0 cm /Im2 Do Q",
	} {
		content := onePage("[0 0 153 198]", content, dctImage(scan, 200, 260), flateRGB(1, 1, color.RGBA{255, 0, 0, 255}))
		pi, img := renderOne(t, content, 1)
		if pi.MIME != "image/png" || pi.Width != 306 || pi.Height != 396 {
			t.Errorf("%s: got %s %dx%d, want a PNG", name, pi.MIME, pi.Width, pi.Height)
			continue
		}
		// The scan is painted (it is gray 90, lighter than the test's
		// dark threshold).
		if c := rgbAt(img, 153, 375); c[0] < 70 || c[0] > 110 {
			t.Errorf("%s: %v at the foot of the page, want the scan's gray", name, c)
		}
	}
}

// TestRawStreamFormat checks how the PDF library shows where a stream's
// data is ("<<dict>>@offset"), which rawStream relies on to read JPEG data.
func TestRawStreamFormat(t *testing.T) {
	data := "\xff\xd8 raw bytes \x00@>> endstream-ish"
	content := onePage("", "/Im1 Do", pdfStream("/Subtype /Image /Filter /DCTDecode /Note (a@b>>)", data))
	err := withPDF(content, func(r *lpdf.Reader, x *pdfExtractor) {
		xo := x.pageTree(r)[0].resources.Key("XObject").Key("Im1")
		rd := &renderer{x: x}
		if s := xo.String(); !strings.HasPrefix(s, "<<") || !strings.Contains(s, ">>@") {
			t.Errorf("stream shown as %q", s)
		}
		if got := rd.rawStream(xo); string(got) != data {
			t.Errorf("rawStream = %q, want %q", got, data)
		}
		rd.encrypted = true
		if got := rd.rawStream(xo); got != nil {
			t.Errorf("rawStream of an encrypted file = %q", got)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRenderPDFPagesList(t *testing.T) {
	hand := fixture(t, "handmade.pdf")
	if n, err := PageCount(hand); n != 3 || err != nil {
		t.Errorf("PageCount(handmade) = %d, %v", n, err)
	}
	if n, err := PageCount(fixture(t, "libreoffice.pdf")); n != 2 || err != nil {
		t.Errorf("PageCount(libreoffice) = %d, %v", n, err)
	}
	got, err := RenderPages(hand, []int{3, 0, 1, 9, 3, -1})
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, p := range got {
		nums = append(nums, p.Page)
		img, err := png.Decode(bytes.NewReader(p.Data))
		if err != nil || p.MIME != "image/png" {
			t.Fatalf("page %d: %s, %v", p.Page, p.MIME, err)
		}
		if darkPixels(img, img.Bounds()) < 1000 {
			t.Errorf("page %d: no text drawn", p.Page)
		}
	}
	if !slices.Equal(nums, []int{3, 1}) {
		t.Errorf("pages %v, want [3 1]", nums)
	}
	if got, err := RenderPages(hand, nil); len(got) != 0 || err != nil {
		t.Errorf("no pages asked: %d, %v", len(got), err)
	}
	// Encrypted with an empty user password: rendered.
	if got, err := RenderPages(fixture(t, "owner_only_aes128.pdf"), []int{1}); len(got) != 1 || err != nil {
		t.Errorf("owner_only_aes128: %d pages, %v", len(got), err)
	}
	noPages := pdfFile("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>")
	if n, err := PageCount(noPages); n != 0 || err != nil {
		t.Errorf("no pages: %d, %v", n, err)
	}
}

func TestRenderPDFLibreOffice(t *testing.T) {
	pi, img := renderOne(t, fixture(t, "libreoffice.pdf"), 1)
	t.Logf("libreoffice.pdf page 1: %s %dx%d, %d bytes", pi.MIME, pi.Width, pi.Height, len(pi.Data))
	if pi.MIME != "image/png" || pi.Width != 1224 || pi.Height != 1584 {
		t.Errorf("got %s %dx%d, want a US Letter PNG 1224x1584", pi.MIME, pi.Width, pi.Height)
	}
	if n := darkPixels(img, img.Bounds()); n < 5000 {
		t.Errorf("%d dark pixels", n)
	}
}

func TestRenderPDFErrors(t *testing.T) {
	good := fixture(t, "handmade.pdf")
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty", nil, "the PDF could not be read: the file is not a PDF"},
		{"not a PDF", []byte("hello\n%%EOF"), "the PDF could not be read: the file is not a PDF"},
		{"truncated", good[:len(good)/2], "the PDF could not be read: "},
		{"header only", []byte("%PDF-1.4\n%%EOF\n"), "the PDF could not be read: "},
		{"encrypted", fixture(t, "encrypted_rc4.pdf"), "the PDF is encrypted"},
	}
	for _, tt := range tests {
		got, err := RenderPages(tt.content, []int{1})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || got != nil {
			t.Errorf("%s: %d pages, error = %v, want prefix %q", tt.name, len(got), err, tt.want)
		}
		if _, err := PageCount(tt.content); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: PageCount error = %v", tt.name, err)
		}
	}

	// A page damaged midway keeps what was drawn before the damage; images
	// that cannot be decoded are left out.
	content := onePage("", "BT /F1 24 Tf 72 700 Td (Before) Tj ET /Im1 Do /Im2 Do /Im3 Do /Im4 Do (unterminated",
		pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode", "not zlib"),
		pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", "not a jpeg"),
		pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /Lab /BitsPerComponent 8", strings.Repeat("x", 48)),
		pdfStream("/Subtype /Image /Width 100000 /Height 100000 /ColorSpace /DeviceGray /BitsPerComponent 8", "x"),
	)
	_, img := renderOne(t, content, 1)
	if darkPixels(img, image.Rect(144, 136, 300, 196)) == 0 {
		t.Error("the text before the damage is missing")
	}
}

// TestRenderPDFHostile renders pages that try to make the renderer work
// without end: it must finish in bounded time.
func TestRenderPDFHostile(t *testing.T) {
	big := flateRGB(4, 4, color.RGBA{255, 0, 0, 255})
	tests := map[string][]byte{
		// A form that draws a full-page image, huge text and itself, many
		// times (on a small page, for speed under the race detector).
		"form recursion": pdfFile(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 200 200] >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources 5 0 R >>",
			pdfStream("", strings.Repeat("/X Do ", 50)),
			"<< /Font << /F1 6 0 R >> /XObject << /X 7 0 R /Im 8 0 R >> >>",
			helvetica,
			pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources 5 0 R",
				"q 200 0 0 200 0 0 cm /Im Do Q BT /F1 190 Tf 0 10 Td (WWWWWWWWWW) Tj ET /X Do /X Do"),
			big,
		),
		"huge glyphs": onePage("[0 0 200 200]", "BT /F1 190 Tf 0 10 Td "+strings.Repeat("(MMMMMMMMMM) Tj -1900 0 Td ", 2000)+"ET"),
		"huge scale":  onePage("", "q 1e30 0 0 1e30 0 0 cm /Im1 Do Q q 0 0 0 0 0 0 cm /Im1 Do Q", big),
	}
	for name, content := range tests {
		start := time.Now()
		got, err := RenderPages(content, []int{1})
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %d pages, %v", name, len(got), err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// TestRenderPDFRandomInput renders damaged copies of the fixtures and
// random bytes: it must return, without panicking.
func TestRenderPDFRandomInput(t *testing.T) {
	old := Timeout
	Timeout = 10 * time.Second
	defer func() { Timeout = old }()
	withImages := onePage("", "q 100 0 0 100 200 300 cm /Im1 Do Q q 612 0 0 792 0 0 cm /Im2 Do Q BT /F1 24 Tf 72 700 Td (Hello) Tj ET",
		flateRGB(4, 4, color.RGBA{255, 0, 0, 255}), dctImage(jpegBytes(t, 32, 32, color.RGBA{0, 0, 255, 255}), 32, 32))
	seeds := [][]byte{fixture(t, "handmade.pdf"), fixture(t, "libreoffice.pdf"), withImages}
	rng := rand.New(rand.NewPCG(3, 4))
	n := 80
	if testing.Short() {
		n = 20
	}
	rendered := 0
	damagedPDFs(t, rng, seeds, n, func(data []byte) {
		got, _ := RenderPages(data, []int{1, 2, 3})
		rendered += len(got)
		_, _ = PageCount(data)
	})
	t.Logf("%d inputs, %d pages rendered", n, rendered)

	// Damaged content and images in an intact file (a small page, for
	// speed under the race detector).
	content := "q 50 0 0 50 20 30 cm /Im1 Do Q q 200 0 0 200 0 0 cm /Im2 Do Q q 50 0 0 50 0 0 cm /Im3 Do Q " +
		"BT /F1 24 Tf 10 150 Td [(Hel) -20 (lo)] TJ 0 1 -1 0 100 100 Tm (Up) Tj ET"
	red := bytes.Repeat([]byte{255, 0, 0}, 16)
	scan := jpegBytes(t, 32, 32, color.RGBA{0, 0, 255, 255})
	for i := range n {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("damaged content %d panicked: %v", i, r)
				}
			}()
			page := onePage("[0 0 200 200]", string(parsetest.Mutate(rng, []byte(content), i)),
				pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
					string(parsetest.Mutate(rng, []byte(zlibBytes(red)), i+1))),
				dctImage(parsetest.Mutate(rng, scan, i+2), 32, 32),
				pdfStream("/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode "+
					"/DecodeParms << /Predictor 15 /Columns 4 >>", string(parsetest.Mutate(rng, []byte(zlibBytes(bytes.Repeat([]byte{4, 1, 2, 3, 4}, 4))), i+3))))
			if got, err := RenderPages(page, []int{1}); len(got) != 1 || err != nil {
				t.Errorf("damaged content %d: %d pages, %v", i, len(got), err)
			}
		}()
	}
}

func FuzzRenderPDF(f *testing.F) {
	old := Timeout
	Timeout = 5 * time.Second // mutated fixtures can make the library spin until the time limit
	defer func() { Timeout = old }()
	f.Add(fixture(f, "handmade.pdf"))
	f.Add(onePage("", "q 100 0 0 100 200 300 cm /Im1 Do Q", flateRGB(4, 4, color.RGBA{255, 0, 0, 255})))
	// Every page asked for that the file has comes back once, as a
	// PNG or a JPEG, with its size.
	f.Fuzz(func(t *testing.T, data []byte) {
		pages, err := RenderPages(data, []int{2, 1, 2})
		if err != nil {
			return
		}
		n, err := PageCount(data)
		if err != nil || len(pages) != min(n, 2) {
			t.Fatalf("%d pages rendered of %d (%v)", len(pages), n, err)
		}
		for i, p := range pages {
			if p.Page != 2-i && n >= 2 || p.MIME != "image/png" && p.MIME != "image/jpeg" || len(p.Data) == 0 || p.Width < 1 || p.Height < 1 {
				t.Fatalf("page %d: %d %s %dx%d, %d bytes", i, p.Page, p.MIME, p.Width, p.Height, len(p.Data))
			}
		}
	})
}

func TestRenderPDFConcurrent(t *testing.T) {
	content := onePage("[0 0 200 100]", "BT /F1 12 Tf 10 50 Td (Concurrent) Tj ET q 20 0 0 20 150 50 cm /Im1 Do Q",
		flateRGB(2, 2, color.RGBA{0, 0, 255, 255}))
	want, err := RenderPages(content, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := RenderPages(content, []int{1})
			if err != nil || len(got) != 1 || !bytes.Equal(got[0].Data, want[0].Data) {
				t.Errorf("concurrent render differs: %v", err)
			}
		})
	}
	wg.Wait()
}
