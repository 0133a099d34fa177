// Package pdf reads PDF files for indexing: Parse extracts the text of the
// pages as doc blocks (lines, paragraphs, lists and headings rebuilt from
// the positions of the glyphs), and RenderPages draws pages as images for
// the vision options. The files are untrusted: the limits on work and time
// hold for any input, and a file that cannot be read yields an error a
// user can act on, never a panic.
//
// The PDF library (github.com/ledongthuc/pdf) reads the objects; around it,
// by seam:
//
//   - pdf.go: the entry points, the limits and the file source that counts
//     the work;
//   - xref.go, syntax.go: the cross-reference data and object streams,
//     scanned as the library will read them, to refuse the files that
//     would make it stall or crash; syntax.go reads tokens and objects;
//   - filter.go: stream filters and decryption for that scan;
//   - content.go: the content-stream lexer;
//   - extract.go: the page tree and the content-stream interpreter;
//   - font.go, cmap.go: fonts (codes to text, widths) and the CMap check;
//   - layout.go: lines to paragraphs, lists and headings;
//   - render.go, image.go: the page renderer and its image decoding.
package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	lpdf "github.com/ledongthuc/pdf"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Limits on the work one PDF may cause.
var (
	// Timeout bounds the time spent reading one PDF.
	Timeout = 3 * time.Minute
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

// Parse extracts the text of each page, with positions, and rebuilds
// lines, paragraphs (from vertical gaps and indentation), bulleted lists
// and headings (from font sizes larger than the body text).
func Parse(content []byte) ([]doc.Block, error) {
	var lines []pdfLine
	var noPages bool
	var dropped error
	err := withPDF(content, func(r *lpdf.Reader, x *pdfExtractor) {
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

// withPDF opens a PDF as Parse does and calls fn, turning the limits'
// aborts and the library's panics into errors.
func withPDF(content []byte, fn func(r *lpdf.Reader, x *pdfExtractor)) (err error) {
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
	r, err := lpdf.NewReader(src, src.size)
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

func (e pdfAbort) Error() string { return e.err.Error() }

func pdfOpenError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, lpdf.ErrInvalidPassword) || strings.Contains(strings.ToLower(msg), "encrypt"):
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
	s := &pdfSource{data: content, size: int64(len(content)), deadline: time.Now().Add(Timeout)}
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
	return fmt.Errorf("the PDF could not be read: it takes too long to process (over %v)", Timeout)
}
