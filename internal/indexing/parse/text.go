package parse

import (
	"strings"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// parseText cuts plain text into paragraphs at blank lines. The lines of a
// paragraph are joined with a space, except list-like lines ("- x", "* x",
// "1. x", "a) x"), which make list blocks with one item per line; an
// indented line after an item continues that item.
func parseText(s string) []doc.Block {
	var out doc.Blocks
	var para, list strings.Builder
	lines := 0 // in the paragraph
	flushPara := func() {
		if para.Len() > 0 {
			out.Add(doc.Paragraph, 0, para.String(), 0)
			para.Reset()
		}
		lines = 0
	}
	flushList := func() {
		if list.Len() > 0 {
			out.Add(doc.List, 0, list.String(), 0)
			list.Reset()
		}
	}
	for len(s) > 0 {
		var line string
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			line, s = s, ""
		} else {
			line = s[:i]
			if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			s = s[i+1:]
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			flushPara()
			flushList()
			continue
		}
		if c := rule(trimmed); c != 0 {
			// A setext underline makes the one line above it a heading;
			// any other rule just separates.
			if para.Len() > 0 && lines == 1 && (c == '=' || c == '-') {
				level := 1
				if c == '-' {
					level = 2
				}
				out.Add(doc.Heading, level, para.String(), 0)
				para.Reset()
			}
			flushPara()
			flushList()
			continue
		}
		if indent, item, ok := doc.ListItem(line); ok {
			flushPara()
			if list.Len() > 0 {
				list.WriteByte('\n')
			}
			// The indentation shown is capped as in other formats' lists
			// (listIndent: two columns a level).
			for range min(indent, 2*doc.MaxListIndent) {
				list.WriteByte(' ')
			}
			list.WriteString(item)
			continue
		}
		if list.Len() > 0 && (line[0] == ' ' || line[0] == '\t') {
			// Continuation of the last item.
			list.WriteByte(' ')
			list.WriteString(doc.CollapseSpace(trimmed))
			continue
		}
		flushList()
		if para.Len() > 0 {
			para.WriteByte(' ')
		}
		para.WriteString(doc.CollapseSpace(trimmed))
		lines++
	}
	flushPara()
	flushList()
	return out
}

// rule returns the character of a line made of three or more of one of
// = - * _ ~ # (a heading underline or a separator), or 0.
func rule(line string) byte {
	if len(line) < 3 || !strings.ContainsRune("=-*_~#", rune(line[0])) {
		return 0
	}
	for i := 1; i < len(line); i++ {
		if line[i] != line[0] && line[i] != ' ' {
			return 0
		}
	}
	return line[0]
}
