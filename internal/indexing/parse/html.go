package parse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// skipTags are elements whose content is not document text.
var skipTags = map[string]bool{
	"script": true, "style": true, "nav": true, "head": true, "noscript": true,
	"template": true, "svg": true, "math": true, "iframe": true, "object": true,
	"canvas": true, "select": true, "button": true, "dialog": true,
}

// blockTags are elements that break the text flow: text on either side of
// them belongs to different paragraphs.
var blockTags = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Body: true,
	atom.Center: true, atom.Dd: true, atom.Details: true, atom.Dir: true,
	atom.Div: true, atom.Dl: true, atom.Dt: true, atom.Fieldset: true,
	atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.Header: true, atom.Hgroup: true, atom.Hr: true, atom.Html: true,
	atom.Legend: true, atom.Main: true, atom.Menu: true, atom.P: true,
	atom.Section: true, atom.Summary: true, atom.Caption: true,
	atom.Tr: true, atom.Td: true, atom.Th: true, atom.Li: true,
}

// parseHTML reads an HTML document, in the character set its content type
// or its <meta> declares (UTF-8 when neither does).
func parseHTML(content []byte, contentType string) ([]doc.Block, error) {
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, nil
	}
	var r io.Reader = bytes.NewReader(content)
	if !strings.Contains(strings.ToLower(contentType), "charset=utf-8") {
		var err error
		r, err = charset.NewReader(r, contentType)
		if err != nil {
			return nil, fmt.Errorf("the HTML file could not be decoded: %v", err)
		}
	}
	root, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("the HTML file could not be read: %v", err)
	}
	w := htmlWalker{}
	w.walk(root)
	w.flush()
	return w.out, nil
}

type htmlWalker struct {
	out   doc.Blocks
	buf   strings.Builder // inline text of the current paragraph
	quote int             // depth of <blockquote>
}

// flush ends the current paragraph.
func (w *htmlWalker) flush() {
	if w.buf.Len() == 0 {
		return
	}
	kind := doc.Paragraph
	if w.quote > 0 {
		kind = doc.Blockquote
	}
	w.out.Add(kind, 0, doc.CollapseSpace(w.buf.String()), 0)
	w.buf.Reset()
}

func skipped(n *html.Node) bool {
	if skipTags[n.Data] {
		return true
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && (a.Key == "hidden" || a.Key == "aria-hidden" && a.Val == "true") {
			return true
		}
	}
	return false
}

func (w *htmlWalker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.buf.WriteString(n.Data)
		return
	case html.ElementNode:
		if skipped(n) {
			return
		}
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			w.flush()
			w.out.Add(doc.Heading, int(n.Data[1]-'0'), nodeText(n), 0)
			return
		case atom.Ul, atom.Ol:
			w.flush()
			var lines []string
			listLines(n, 0, &lines)
			w.out.Add(doc.List, 0, strings.Join(lines, "\n"), 0)
			return
		case atom.Pre:
			w.flush()
			var b strings.Builder
			rawText(n, &b)
			s := strings.TrimPrefix(b.String(), "\n")
			w.out.Add(doc.Code, 0, strings.TrimRight(s, " \t\r\n"), 0)
			return
		case atom.Table:
			w.flush()
			w.table(n)
			return
		case atom.Blockquote:
			w.flush()
			start := len(w.out)
			w.quote++
			w.children(n)
			w.flush()
			w.quote--
			w.mergeQuotes(start)
			return
		case atom.Img:
			return
		case atom.Br:
			w.buf.WriteByte(' ')
			return
		}
		if blockTags[n.DataAtom] {
			w.flush()
			w.children(n)
			w.flush()
			return
		}
		w.children(n)
		return
	case html.DocumentNode:
		w.children(n)
	}
}

// mergeQuotes joins the adjacent quote paragraphs emitted from index start
// on into one block, a line each.
func (w *htmlWalker) mergeQuotes(start int) {
	out := w.out[:start]
	for _, b := range w.out[start:] {
		if n := len(out); n > start && b.Kind == doc.Blockquote && out[n-1].Kind == doc.Blockquote {
			out[n-1].Text += "\n" + b.Text
			continue
		}
		out = append(out, b)
	}
	w.out = out
}

func (w *htmlWalker) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

// table emits a caption paragraph (if any) and the table's rows, one per
// line, cells separated by " | ". Nested tables are flattened into their
// cell.
func (w *htmlWalker) table(t *html.Node) {
	var rows []string
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || skipped(c) {
				continue
			}
			switch c.DataAtom {
			case atom.Caption:
				w.out.Add(doc.Paragraph, 0, nodeText(c), 0)
			case atom.Tr:
				var cells []string
				nonEmpty := false
				for cell := c.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.Type == html.ElementNode && (cell.DataAtom == atom.Td || cell.DataAtom == atom.Th) {
						s := nodeText(cell)
						nonEmpty = nonEmpty || s != ""
						cells = append(cells, s)
					}
				}
				if nonEmpty {
					rows = append(rows, strings.Join(cells, " | "))
				}
			case atom.Thead, atom.Tbody, atom.Tfoot:
				visit(c)
			}
		}
	}
	visit(t)
	w.out.Add(doc.Table, 0, strings.Join(rows, "\n"), 0)
}

// listLines renders the items of a <ul>/<ol>, nested lists indented.
func listLines(list *html.Node, depth int, lines *[]string) {
	num := 1
	if list.DataAtom == atom.Ol {
		for _, a := range list.Attr {
			if a.Key == "start" {
				if v, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil {
					num = v
				}
			}
		}
	}
	indent := doc.ListIndent(depth)
	for li := list.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || skipped(li) {
			continue
		}
		if li.DataAtom == atom.Ul || li.DataAtom == atom.Ol {
			// A list directly inside a list (invalid but common).
			listLines(li, depth+1, lines)
			continue
		}
		if li.DataAtom != atom.Li {
			continue
		}
		marker := "- "
		if list.DataAtom == atom.Ol {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		var b strings.Builder
		var nested []*html.Node
		textTo(li, &b, func(n *html.Node) bool {
			if n.DataAtom == atom.Ul || n.DataAtom == atom.Ol {
				nested = append(nested, n)
				return true
			}
			return false
		})
		if s := doc.CollapseSpace(b.String()); s != "" {
			*lines = append(*lines, indent+marker+s)
		}
		for _, sub := range nested {
			listLines(sub, depth+1, lines)
		}
	}
}

// nodeText returns the collapsed text of n.
func nodeText(n *html.Node) string {
	var b strings.Builder
	textTo(n, &b, nil)
	return doc.CollapseSpace(b.String())
}

// textTo writes the text under n to b, with a space around block elements;
// elements for which skip returns true are left out.
func textTo(n *html.Node, b *strings.Builder, skip func(*html.Node) bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			if skipped(c) || skip != nil && skip(c) {
				continue
			}
			block := blockTags[c.DataAtom] || c.DataAtom == atom.Pre || c.DataAtom == atom.Br
			if block {
				b.WriteByte(' ')
			}
			textTo(c, b, skip)
			if block {
				b.WriteByte(' ')
			}
		}
	}
}

// rawText writes the text under n verbatim (for <pre>).
func rawText(n *html.Node, b *strings.Builder) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			if c.DataAtom == atom.Br {
				b.WriteByte('\n')
				continue
			}
			if !skipped(c) {
				rawText(c, b)
			}
		}
	}
}
