package doc

import (
	"strings"
	"unicode/utf8"
)

// The text helpers every parser shares: white space, list items, and the
// block list that drops empty blocks.

// CollapseSpace replaces every run of white space in s with one space and
// trims both ends. It returns s itself when nothing needs changing.
func CollapseSpace(s string) string {
	clean := true
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			clean = false
			break
		}
		sp := asciiSpace[c]
		if sp && (prevSpace || c != ' ') {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if IsSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// IsSpace reports white space, including the no-break and zero-width kinds
// that editors put in text.
func IsSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace[r]
	}
	switch r {
	case 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x200B, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Blocks accumulates blocks, dropping empty ones.
type Blocks []Block

// Add appends a block unless its text is empty, trimmed of white space;
// lists and code keep the indentation of their first line. NUL characters
// are dropped: they carry no text, and PostgreSQL refuses them.
func (l *Blocks) Add(kind string, level int, text string, page int) {
	if strings.IndexByte(text, 0) >= 0 {
		text = strings.ReplaceAll(text, "\x00", "")
	}
	if kind == Code || kind == List {
		if strings.TrimSpace(text) == "" {
			return
		}
		text = strings.TrimRight(text, " \t\r\n")
		for strings.HasPrefix(text, "\n") || strings.HasPrefix(text, "\r\n") {
			text = text[strings.IndexByte(text, '\n')+1:]
		}
	} else {
		text = strings.TrimSpace(text)
	}
	if text == "" {
		return
	}
	*l = append(*l, Block{Kind: kind, Level: level, Text: text, Page: page})
}

// MaxListIndent caps the nesting shown in list blocks, so that deeply
// nested input does not make output that grows with the square of it.
const MaxListIndent = 8

// ListIndent returns the indentation of a list item nested depth deep.
func ListIndent(depth int) string {
	return strings.Repeat("  ", min(depth, MaxListIndent))
}

// ListItem reports whether line looks like a list item, and returns its
// indentation (tabs count as 4 spaces) and the item normalised to "- text"
// for bullets or "N. text" / "N) text" for numbered items.
func ListItem(line string) (indent int, item string, ok bool) {
	i := 0
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			indent++
			continue
		case '\t':
			indent += 4
			continue
		}
		break
	}
	rest := line[i:]
	for _, bullet := range []string{"- ", "* ", "+ ", "• ", "◦ ", "▪ ", "– "} {
		if strings.HasPrefix(rest, bullet) {
			text := CollapseSpace(rest[len(bullet):])
			if text == "" {
				return 0, "", false
			}
			return indent, "- " + text, true
		}
	}
	// "1. x", "12) x", "a. x" (one letter only, so that a sentence such as
	// "Mr. Smith" is not taken for an item).
	j := 0
	for j < len(rest) && j < 4 && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 && len(rest) > 0 && (rest[0] >= 'a' && rest[0] <= 'z') {
		j = 1
	}
	if j == 0 || j+1 >= len(rest) || (rest[j] != '.' && rest[j] != ')') || rest[j+1] != ' ' {
		return 0, "", false
	}
	text := CollapseSpace(rest[j+2:])
	if text == "" {
		return 0, "", false
	}
	return indent, rest[:j+1] + " " + text, true
}
