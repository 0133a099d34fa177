package pdf

import (
	"bytes"
	"slices"
	"strings"

	"math"
	"unicode"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

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

	var out doc.Blocks
	var list []string
	var indents []float64
	listPage := 0
	flushList := func() {
		if len(list) > 0 {
			out.Add(doc.List, 0, strings.Join(list, "\n"), listPage)
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
			out.Add(doc.Heading, min(level, 6), text, p.page)
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
			list = append(list, doc.ListIndent(len(indents)-1)+text)
			continue
		}
		flushList()
		out.Add(doc.Paragraph, 0, text, p.page)
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
		return doc.CollapseSpace(strings.Map(func(r rune) rune {
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
	if _, item, ok := doc.ListItem(line); ok && item[0] >= '0' && item[0] <= '9' {
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
