// Package pdftest writes small PDF files for tests.
package pdftest

import (
	"bytes"
	"fmt"
	"strings"
)

// File writes a PDF whose objects are objs (object i+1 is objs[i]; the
// catalog must be object 1), with a correct cross-reference table.
func File(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Stream is a stream object with dict's entries and data.
func Stream(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// Helvetica is a font dictionary of the standard Helvetica font.
const Helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

// TextPages writes a PDF of US Letter pages, one per entry, each drawing
// its paragraphs in Helvetica 12 pt, one line each, 40 pt apart from the
// top.
func TextPages(pages ...[]string) []byte { return TextPagesIn("[0 0 612 792]", pages...) }

// TextPagesIn is TextPages with pages of the given MediaBox (the text is
// drawn at the same places: a small box shows part of it, and renders
// fast).
func TextPagesIn(mediaBox string, pages ...[]string) []byte {
	n := len(pages)
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	font := 3 + 2*n
	esc := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	for i, paras := range pages {
		page, content := 3+2*i, 4+2*i
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		var c strings.Builder
		for j, p := range paras {
			fmt.Fprintf(&c, "BT /F1 12 Tf 72 %d Td (%s) Tj ET\n", 740-40*j, esc.Replace(p))
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox %s /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", mediaBox, content, font),
			Stream("", c.String()))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return File(append(objs, Helvetica)...)
}

// Scan writes a one-page PDF of US Letter size whose only content is the
// given JPEG (w×h pixels, RGB), drawn over the whole page as /Im1: a
// scanned page, with no text.
func Scan(jpeg []byte, w, h int) []byte {
	return File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>",
		Stream("", "q 612 0 0 792 0 0 cm /Im1 Do Q"),
		Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", w, h), string(jpeg)),
	)
}
