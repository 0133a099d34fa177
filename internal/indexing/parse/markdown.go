package parse

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// markdown is safe for concurrent use: goldmark parsers keep no state
// between calls.
var markdown = goldmark.New(goldmark.WithExtensions(
	extension.Table,
	extension.Strikethrough,
	extension.TaskList,
))

// parseMarkdown walks the CommonMark (+ GFM tables) syntax tree of src.
func parseMarkdown(src []byte) []doc.Block {
	if markdownTooHard(src) {
		// goldmark's time grows with the square of container nesting on
		// a line, and of unclosed links in a paragraph: a crafted file
		// could take minutes. No real document looks like that; read it
		// as plain text.
		return parseText(string(src))
	}
	src = flattenIndent(src)
	w := mdWalker{src: src}
	if meta, rest, ok := frontMatter(src); ok {
		// YAML or TOML front matter (title, tags...) is kept as a
		// paragraph of its own.
		w.out.Add(doc.Paragraph, 0, meta, 0)
		src = rest
		w.src = src
	}
	root := markdown.Parser().Parse(text.NewReader(src))
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		w.block(n)
	}
	return w.out
}

type mdWalker struct {
	src []byte
	out doc.Blocks
	buf strings.Builder
}

func (w *mdWalker) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		w.out.Add(doc.Heading, n.Level, w.inline(n), 0)
	case *ast.Paragraph, *ast.TextBlock:
		w.out.Add(doc.Paragraph, 0, w.inline(n), 0)
	case *ast.List:
		var lines []string
		w.list(n, 0, &lines)
		w.out.Add(doc.List, 0, strings.Join(lines, "\n"), 0)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		w.out.Add(doc.Code, 0, w.lines(n), 0)
	case *ast.Blockquote:
		var parts []string
		w.plain(n, &parts)
		w.out.Add(doc.Blockquote, 0, strings.Join(parts, "\n"), 0)
	case *ast.HTMLBlock:
		w.out.Add(doc.Paragraph, 0, htmlFragmentText(w.lines(n)), 0)
	case *east.Table:
		w.out.Add(doc.Table, 0, w.table(n), 0)
	case *ast.ThematicBreak:
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			w.block(c)
		}
	}
}

// Thresholds of markdownTooHard.
const (
	maxMarkdownNesting  = 32
	maxMarkdownLinkWork = 200_000_000 // "](" count times paragraph length
)

// markdownTooHard reports whether src has a line that opens more than
// maxMarkdownNesting containers (quotes, list items), or a paragraph with
// so many unclosed-looking links that goldmark would take too long.
func markdownTooHard(src []byte) bool {
	paraLen, links := 0, 0
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i+1], src[i+1:]
		} else {
			src = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			paraLen, links = 0, 0
			continue
		}
		paraLen += len(line)
		links += bytes.Count(line, []byte("]("))
		if links*paraLen > maxMarkdownLinkWork {
			return true
		}
		if containerDepth(line) > maxMarkdownNesting {
			return true
		}
	}
	return false
}

// containerDepth counts the block quote and list markers that open a line.
func containerDepth(line []byte) int {
	return containerPrefix(line, nil)
}

// containerPrefix walks the container markers (block quotes, list items)
// that open a line and the white space around them, calling f (when not
// nil) for each run of white space (marker nil, width its columns, a tab
// counting 4) and each marker (width 0); it returns the number of markers.
func containerPrefix(line []byte, f func(marker []byte, width int)) int {
	depth, i := 0, 0
	for {
		start, width := i, 0
		for ; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
			if width++; line[i] == '\t' {
				width += 3
			}
		}
		if f != nil && i > start {
			f(nil, width)
		}
		if i >= len(line) {
			return depth
		}
		start = i
		switch c := line[i]; {
		case c == '>':
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || line[j] != '.' && line[j] != ')' || line[j+1] != ' ' && line[j+1] != '\t' {
				return depth
			}
			i = j + 1
		default:
			return depth
		}
		if f != nil {
			f(line[start:i], 0)
		}
		depth++
	}
}

// maxMarkdownIndent bounds the white space, in columns, in the container
// prefix of a Markdown line (before its text, quote and list markers
// aside). goldmark's time grows with the cube of list nesting, which
// indentation alone can make as deep as a line is long: a 9 MB list
// nested 3,000 deep took minutes and a gigabyte. Past the bound a list
// is flattened: its deeper items become siblings at that depth.
const maxMarkdownIndent = 128

// flattenIndent returns src with the white space of every line's
// container prefix cut to maxMarkdownIndent columns in all (each run
// after a list marker keeps at least one space, so the marker stays one);
// src itself when no line needs it.
func flattenIndent(src []byte) []byte {
	var out []byte
	copied := 0
	for off := 0; off < len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
			end = off + i
		}
		line := src[off:end]
		width := 0
		containerPrefix(line, func(_ []byte, w int) { width += w })
		if width > maxMarkdownIndent {
			if out == nil {
				out = make([]byte, 0, len(src))
			}
			out = append(out, src[copied:off]...)
			out = appendFlattened(out, line)
			copied = end
		}
		off = end + 1
	}
	if out == nil {
		return src
	}
	return append(out, src[copied:]...)
}

// appendFlattened appends line with the white space of its container
// prefix cut to maxMarkdownIndent columns.
func appendFlattened(out, line []byte) []byte {
	room, n, afterMarker := maxMarkdownIndent, 0, false
	containerPrefix(line, func(marker []byte, width int) {
		if marker != nil {
			out = append(out, marker...)
			n += len(marker)
			afterMarker = marker[0] != '>'
			return
		}
		keep := min(width, room)
		if afterMarker {
			keep = max(keep, 1)
		}
		room -= min(keep, room)
		for range keep {
			out = append(out, ' ')
		}
		for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
			n++
		}
		afterMarker = false
	})
	return append(out, line[n:]...)
}

// frontMatter splits off a leading block fenced by "---" (YAML) or "+++"
// (TOML) lines.
func frontMatter(src []byte) (meta string, rest []byte, ok bool) {
	s := string(src)
	var fence string
	switch {
	case strings.HasPrefix(s, "---\n"), strings.HasPrefix(s, "---\r\n"):
		fence = "---"
	case strings.HasPrefix(s, "+++\n"), strings.HasPrefix(s, "+++\r\n"):
		fence = "+++"
	default:
		return "", src, false
	}
	_, body, _ := strings.Cut(s, "\n")
	for off := 0; off < len(body); {
		line, _, _ := strings.Cut(body[off:], "\n")
		next := off + len(line) + 1
		if l := strings.TrimRight(line, " \t\r"); l == fence || fence == "---" && l == "..." {
			return strings.TrimSpace(strings.ReplaceAll(body[:off], "\r\n", "\n")), src[len(s)-len(body)+min(next, len(body)):], true
		}
		off = next
	}
	return "", src, false
}

// list renders a list's items one per line, "- item" or "N. item", nested
// lists indented by two spaces per level.
func (w *mdWalker) list(l *ast.List, depth int, lines *[]string) {
	num := l.Start
	indent := doc.ListIndent(depth)
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "- "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		var parts []string
		var nested []ast.Node
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			if sub, ok := c.(*ast.List); ok {
				nested = append(nested, sub)
				continue
			}
			w.plain(c, &parts)
		}
		*lines = append(*lines, indent+marker+doc.CollapseSpace(strings.Join(parts, " ")))
		for _, sub := range nested {
			w.list(sub.(*ast.List), depth+1, lines)
		}
	}
}

// plain appends the plain text of the blocks in n to parts, one entry per
// leaf block.
func (w *mdWalker) plain(n ast.Node, parts *[]string) {
	var s string
	switch n := n.(type) {
	case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
		s = w.inline(n)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		s = strings.TrimRight(w.lines(n), "\n")
	case *ast.HTMLBlock:
		s = htmlFragmentText(w.lines(n))
	case *ast.List:
		var lines []string
		w.list(n, 0, &lines)
		s = strings.Join(lines, "\n")
	case *east.Table:
		s = w.table(n)
	case *ast.ThematicBreak:
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			w.plain(c, parts)
		}
		return
	}
	if s = strings.TrimSpace(s); s != "" {
		*parts = append(*parts, s)
	}
}

func (w *mdWalker) table(t *east.Table) string {
	var rows []string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, w.inline(c))
		}
		if strings.TrimSpace(strings.Join(cells, "")) != "" {
			rows = append(rows, strings.Join(cells, " | "))
		}
	}
	return strings.Join(rows, "\n")
}

// lines returns a block's source lines verbatim (code, raw HTML).
func (w *mdWalker) lines(n ast.Node) string {
	var b strings.Builder
	segs := n.Lines()
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		b.Write(seg.Value(w.src))
	}
	return strings.TrimRight(b.String(), "\n")
}

// inline returns the plain text of n's inline content, formatting dropped
// (a link keeps its text, an image its alt text).
func (w *mdWalker) inline(n ast.Node) string {
	w.buf.Reset()
	w.inlineTo(n, false)
	return doc.CollapseSpace(w.buf.String())
}

func (w *mdWalker) inlineTo(n ast.Node, code bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(w.src)
			if !code && !c.IsRaw() {
				v = unescapeMarkdown(v)
			}
			w.buf.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				w.buf.WriteByte(' ')
			}
		case *ast.String:
			v := c.Value
			if !code && !c.IsRaw() && !c.IsCode() {
				v = unescapeMarkdown(v)
			}
			w.buf.Write(v)
		case *ast.CodeSpan:
			w.inlineTo(c, true)
		case *ast.AutoLink:
			w.buf.Write(c.Label(w.src))
		case *ast.RawHTML:
			// Inline tags carry no text of their own; a <br> separates.
			if segs := c.Segments; segs.Len() > 0 {
				seg := segs.At(0)
				v := seg.Value(w.src)
				if len(v) >= 3 && (v[1] == 'b' || v[1] == 'B') && (v[2] == 'r' || v[2] == 'R') {
					w.buf.WriteByte(' ')
				}
			}
		case *east.TaskCheckBox:
			if c.IsChecked {
				w.buf.WriteString("[x] ")
			} else {
				w.buf.WriteString("[ ] ")
			}
		default:
			w.inlineTo(c, code)
		}
	}
}

func unescapeMarkdown(v []byte) []byte {
	for _, c := range v {
		if c == '\\' || c == '&' {
			v = util.UnescapePunctuations(v)
			v = util.ResolveNumericReferences(v)
			return util.ResolveEntityNames(v)
		}
	}
	return v
}

// htmlFragmentText returns the text of an HTML fragment, tags, comments,
// scripts and styles dropped.
func htmlFragmentText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return doc.CollapseSpace(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			if skipTags[string(name)] {
				skip++
			}
			b.WriteByte(' ')
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipTags[string(name)] && skip > 0 {
				skip--
			}
			b.WriteByte(' ')
		}
	}
}
