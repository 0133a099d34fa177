package pdf

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	lpdf "github.com/ledongthuc/pdf"
)

// pdfObj is an object of a PDF built by classicPDF or xrefStreamPDF.
type pdfObj struct {
	num  int
	body string
}

// classicPDF writes objs with a cross-reference table; the trailer gets
// the entries in extra, where %XREF% stands for the table's offset.
func classicPDF(objs []pdfObj, extra string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	off := map[int]int{}
	last := 0
	for _, o := range objs {
		off[o.num] = b.Len()
		last = max(last, o.num)
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", o.num, o.body)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", last+1)
	for i := 1; i <= last; i++ {
		if o, ok := off[i]; ok {
			fmt.Fprintf(&b, "%010d 00000 n \n", o)
		} else {
			b.WriteString("0000000000 65535 f \n")
		}
	}
	extra = strings.ReplaceAll(extra, "%XREF%", fmt.Sprint(xref))
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", last+1, extra, xref)
	return b.Bytes()
}

// inObjStm places an object in an object stream: the cross-reference
// stream entry of type 2.
type inObjStm struct{ stream, index int }

// xrefStreamPDF writes objs and a cross-reference stream (object xnum)
// that also lists the objects in object streams of stm; extra goes into
// its dictionary, where %XREF% stands for its offset.
func xrefStreamPDF(objs []pdfObj, stm map[int]inObjStm, xnum int, extra string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	type entry struct{ typ, f2, f3 int }
	entries := map[int]entry{}
	for n, e := range stm {
		entries[n] = entry{2, e.stream, e.index}
	}
	for _, o := range objs {
		entries[o.num] = entry{1, b.Len(), 0}
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", o.num, o.body)
	}
	xref := b.Len()
	entries[xnum] = entry{1, xref, 0}
	last := slices.Max(slices.Collect(maps.Keys(entries)))
	var d bytes.Buffer
	for i := 0; i <= last; i++ {
		e, ok := entries[i]
		if !ok {
			e = entry{0, 0, 65535}
		}
		d.Write([]byte{byte(e.typ), byte(e.f2 >> 24), byte(e.f2 >> 16), byte(e.f2 >> 8), byte(e.f2), byte(e.f3 >> 8), byte(e.f3)})
	}
	extra = strings.ReplaceAll(extra, "%XREF%", fmt.Sprint(xref))
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d %s >>\nstream\n", xnum, last+1, d.Len(), extra)
	b.Write(d.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// objStmBody is an object stream holding objs; header, when set, replaces
// its list of object numbers and offsets.
func objStmBody(objs []pdfObj, header, extra string) string {
	var h, body strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&h, "%d %d ", o.num, body.Len())
		body.WriteString(o.body + "\n")
	}
	head := h.String()
	if header != "" {
		head = header
	}
	data := head + body.String()
	return fmt.Sprintf("<< /Type /ObjStm /N %d /First %d /Length %d %s >>\nstream\n%s\nendstream", len(objs), len(head), len(data), extra, data)
}

func streamObj(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

var (
	tCatalog = pdfObj{1, "<< /Type /Catalog /Pages 2 0 R >>"}
	tPages   = pdfObj{2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"}
	tPage    = pdfObj{3, "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >> >>"}
	tText    = pdfObj{4, streamObj("", "BT /F1 12 Tf 72 700 Td (Hello) Tj ET")}
	tFont    = pdfObj{5, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	tBasic   = []pdfObj{tCatalog, tPages, tPage, tText, tFont}
	// The catalog and the page tree root in object stream 10.
	tInStm = map[int]inObjStm{1: {10, 0}, 2: {10, 1}}
)

// pathologicalPDFs are files on which the PDF library, or the text
// extraction, stalled until Timeout, looped for ever or crashed the
// process (fatal out of memory, stack overflow), each with what reading it
// must now say (an error containing it, or "" for text).
func pathologicalPDFs() map[string]struct {
	data []byte
	want string
} {
	type tc = struct {
		data []byte
		want string
	}
	cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00> <ff> endcodespacerange " +
		"1000000000000 beginbfchar <48> <0048> endbfchar endcmap end end"
	tree := []pdfObj{tCatalog, {2, "<< /Type /Pages /Kids [2 0 R 2 0 R 3 0 R] >>"}, tPage, tText, tFont}
	return map[string]tc{
		// Stalled until Timeout: /Prev pointing back.
		"xref table loop":  {classicPDF(tBasic, "/Prev %XREF%"), "cross-reference sections form a loop"},
		"xref stream loop": {xrefStreamPDF(tBasic, nil, 9, "/Prev %XREF%"), "cross-reference sections form a loop"},
		// Fatal out-of-memory errors.
		"xref stream size": {bytes.Replace(xrefStreamPDF(tBasic, nil, 9, ""), []byte("/Size 10"), []byte("/Size 1000000000000"), 1), "declares 1000000000000 objects"},
		"xref table start": {bytes.Replace(classicPDF(tBasic, ""), []byte("xref\n0 6\n"), []byte("xref\n1000000000000 1\n0000000009 00000 n \n0 6\n"), 1), "numbers objects beyond"},
		// A loop of 10^9 entries of zero bytes.
		"xref stream W 0": {bytes.Replace(xrefStreamPDF(tBasic, nil, 9, "/Index [0 10 10 1000000000]"), []byte("/W [1 4 2]"), []byte("/W [0 0 0]"), 1), "numbers objects beyond"},
		// Stack overflows.
		"object stream in itself":           {xrefStreamPDF(tBasic[2:], map[int]inObjStm{1: {10, 0}, 2: {10, 1}, 10: {10, 2}}, 9, ""), "object stream is inside an object stream"},
		"object streams in each other":      {xrefStreamPDF(tBasic[2:], map[int]inObjStm{1: {10, 0}, 2: {10, 1}, 10: {11, 0}, 11: {10, 0}}, 9, ""), "object stream is inside an object stream"},
		"object stream count in itself":     {xrefStreamPDF(append(tBasic[2:], pdfObj{10, strings.Replace(objStmBody(tBasic[:2], "", ""), "/N 2", "/N 20 0 R", 1)}), map[int]inObjStm{1: {10, 0}, 2: {10, 1}, 20: {10, 2}}, 9, ""), "refer to each other in a loop"},
		"object stream extends into itself": {xrefStreamPDF(append(tBasic[2:], pdfObj{10, objStmBody(tBasic[:1], "", "/Extends 20 0 R")}), map[int]inObjStm{1: {10, 0}, 2: {10, 1}, 20: {10, 2}}, 9, ""), "loop"},
		"object stream extends itself":      {xrefStreamPDF(append(tBasic[2:], pdfObj{10, objStmBody(tBasic[:1], "", "/Extends 10 0 R")}), tInStm, 9, ""), "extend each other in a loop"},
		"object stream with huge N":         {xrefStreamPDF(append(tBasic[2:], pdfObj{10, strings.Replace(objStmBody([]pdfObj{{1, "<< /Type /Catalog /X [1 1] /Pages 20 0 R >>"}}, "", ""), "/N 1", "/N 4000000000000", 1)}), map[int]inObjStm{1: {10, 0}, 20: {10, 1}}, 9, ""), "declares 4000000000000 objects"},
		"object stream ends in hex":         {xrefStreamPDF(append(tBasic[2:], pdfObj{10, objStmBody([]pdfObj{tCatalog, {2, "<4142"}}, "", "")}), tInStm, 9, ""), "ends inside a hex string"},
		"page tree of repeated nodes":       {classicPDF(tree, ""), "too much work"},
		"ToUnicode with 10^12 entries":      {classicPDF([]pdfObj{tCatalog, tPages, tPage, tText, {5, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"}, {6, streamObj("", cmap)}}, ""), ""},
		"predictor of 10^11 columns":        {classicPDF([]pdfObj{tCatalog, tPages, tPage, {4, streamObj("/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 100000000000 >>", zlibBytes([]byte("BT /F1 12 Tf 72 700 Td (Hello) Tj ET")))}, tFont}, ""), "no text"},
		"valid, with an xref stream":        {xrefStreamPDF(tBasic, nil, 9, ""), ""},
		"valid, with an object stream":      {xrefStreamPDF(append(tBasic[2:], pdfObj{10, objStmBody(tBasic[:2], "", "")}), tInStm, 9, ""), ""},
		"damaged object stream":             {xrefStreamPDF(append(tBasic[2:], pdfObj{10, strings.Replace(objStmBody(tBasic[:2], "", ""), "/Length", "/Filter /FlateDecode /Length", 1)}), tInStm, 9, ""), "it is damaged"},
	}
}

// TestPDFPathological reads each file of pathologicalPDFs. A regression
// hangs (the test's timeout catches it) or crashes the test binary.
func TestPDFPathological(t *testing.T) {
	for name, tc := range pathologicalPDFs() {
		t.Run(name, func(t *testing.T) {
			blocks, err := Parse(tc.data)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want text", err)
			case tc.want == "" && (len(blocks) != 1 || blocks[0].Text != "Hello"):
				t.Fatalf("got %v, want Hello", blocks)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if _, err2 := RenderPages(tc.data, []int{1}); (err2 != nil) != (err != nil && !strings.Contains(err.Error(), "no text")) {
				t.Errorf("rendering: %v, parsing: %v", err2, err)
			}
		})
	}
}

// TestPDFFormDrawnOverAndOver: a form XObject that decodes to 30 MB,
// drawn 3000 times, was decoded and read 3000 times; a form that draws
// nothing is read once.
func TestPDFFormDrawnOverAndOver(t *testing.T) {
	page := func(form string) []byte {
		draws := strings.Repeat("/X1 Do ", 3000)
		return classicPDF([]pdfObj{tCatalog, tPages, tPage, {4, streamObj("", draws)}, tFont,
			{6, streamObj("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Filter /FlateDecode", form)}}, "")
	}
	_, err := Parse(page(zlibBytes(append(bytes.Repeat([]byte(" "), 30<<20), "BT /F1 12 Tf 72 700 Td (Hi) Tj ET"...))))
	if err == nil || !strings.Contains(err.Error(), "too much work") {
		t.Errorf("got %v, want too much work", err)
	}
	data := page(zlibBytes(append(bytes.Repeat([]byte(" "), 1<<20), "0 0 100 100 re f"...)))
	var work int64
	err = withPDF(data, func(r *lpdf.Reader, x *pdfExtractor) {
		for i, p := range x.pageTree(r) {
			x.page(i+1, p)
		}
		work = x.src.work
	})
	if err != nil || work > 4<<20 {
		t.Errorf("a blank form drawn 3000 times: %v, %d bytes of work", err, work)
	}
}
