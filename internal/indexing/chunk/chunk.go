// Package chunk cuts a parsed document into the passages that are embedded,
// stored and searched.
//
// # What both stacks do
//
//   - Blocks whose text is empty or only whitespace are dropped; the text of
//     every other block is trimmed of surrounding whitespace. A block of an
//     unknown kind is treated as a paragraph.
//   - Every heading is its own passage, of subtype "title" (level 1) or
//     "subtitle" (any deeper level), and becomes part of the breadcrumb of
//     the passages after it until a heading of the same or a higher level
//     (a smaller Level number) replaces it. A heading's own breadcrumb holds
//     only the headings that enclose it. Whitespace inside a heading is
//     collapsed to single spaces.
//   - parsing.minimumParagraphLength (MinParagraph): a paragraph shorter
//     than it (in characters) is merged with the next block when that block
//     is a paragraph too, joined by a blank line ("\n\n"); the merged
//     paragraph is merged again while it is still too short. A short
//     paragraph followed by a heading, by another kind of block or by the
//     end of the document stays as it is. 0 turns merging off.
//   - No passage's content is longer than chunking.maximumChunkLength
//     (MaxChunk, default 1000) characters (Unicode code points). A longer
//     block is cut into pieces, each as long as the limit allows: lists,
//     tables and code blocks between lines when a line break falls within
//     the limit; otherwise, and for other blocks, after the last sentence
//     end within the limit (".", "!", "?" or "…", possibly followed by
//     closing quotes or brackets, then a space or line break; a blank line
//     inside a paragraph counts as a sentence end too); otherwise at the
//     last space or line break; a word is cut in the middle only when it is
//     longer than the limit by itself. Whitespace at the cut is dropped.
//     The limit applies to the passage content, not to the context added to
//     the embedded text.
//   - A passage's page is the page of the block it starts with (0 for
//     formats without pages), and passages are numbered from 0 in reading
//     order. The output depends only on the document and the options.
//
// # realtime-v1 (the default stack)
//
//   - Packing: the blocks between two headings are packed greedily, in
//     order, into as few passages as the limit allows without cutting a
//     block that fits: a block joins the current passage (after a blank
//     line, "\n\n", which counts as 2 characters) when the result stays
//     within the limit; otherwise it starts a new passage. Blocks of any
//     kind (paragraph, list, table, code, blockquote) are packed together;
//     the passage's subtype is the kind of its first block. A block longer
//     than the limit is cut as above: its pieces are passages of their own,
//     and the following blocks may be packed after its last piece. A
//     heading always closes the current passage.
//   - The embedded text carries context, in this order: when
//     chunking.embedBreadcrumb is on, the full heading path joined by " > "
//     ("Guide > Setup > Linux") and a line break; then, when
//     chunking.embeddedContextLevels is n > 0, the nearest n enclosing
//     headings (fewer when there are fewer), outermost first, each followed
//     by a line break; then the passage content. With both options on,
//     the nearest headings appear twice, in the path and on their own
//     lines. A passage with no enclosing heading is embedded as its content
//     alone.
//
// # legacy
//
//   - No packing: each block (after MinParagraph merging) is one passage,
//     or several when it is longer than the limit.
//   - The embedded text is the passage content alone: embedBreadcrumb and
//     embeddedContextLevels are ignored. The breadcrumb is still recorded
//     with each passage.
package chunk

import (
	"strings"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Stacks.
const (
	StackRealtime = "realtime-v1"
	StackLegacy   = "legacy"
)

// DefaultMaxChunk is the content limit in characters when Options.MaxChunk
// is 0.
const DefaultMaxChunk = 1000

// Passage subtypes beyond the block kinds.
const (
	Title    = "title"
	Subtitle = "subtitle"
)

// Options are the parts of a file's indexing configuration that shape its
// passages.
type Options struct {
	// MinParagraph is parsing.minimumParagraphLength: a paragraph shorter
	// than this many characters is merged with the next paragraph. 0 turns
	// merging off.
	MinParagraph int
	// MaxChunk is chunking.maximumChunkLength, the most characters a
	// passage's content holds; DefaultMaxChunk when 0 or less.
	MaxChunk int
	// ContextLevels is chunking.embeddedContextLevels: how many of the
	// nearest enclosing headings are added to the embedded text
	// (realtime-v1 only).
	ContextLevels int
	// Breadcrumb is chunking.embedBreadcrumb: add the heading path to the
	// embedded text (realtime-v1 only).
	Breadcrumb bool
	// Stack is StackRealtime (also when empty or unknown) or StackLegacy.
	Stack string
}

// Passage is one searchable piece of a file.
type Passage struct {
	// Content is the passage's own text, which search returns.
	Content string
	// Embed is the text to embed: Content with the context the options
	// ask for in front of it.
	Embed string
	// Type is the passage's meta.type when it is not a chunk of the
	// document ("summary", "image"); Chunk leaves it empty.
	Type string
	// Image and ImageType are a page's image and its MIME type, for a
	// passage of type "image"; Chunk leaves them empty.
	Image     []byte
	ImageType string
	// Subtype is title, subtitle, paragraph, blockquote, list, table or
	// code.
	Subtype string
	// Page is the page of the passage's first block, 0 if none.
	Page int
	// Position is the passage's 0-based order in the file.
	Position int
	// Breadcrumb holds the enclosing headings, outermost first. Passages
	// of one section share the slice (with its capacity capped at its
	// length): treat it as read-only.
	Breadcrumb []string
}

// unit is a non-empty block, trimmed, with its length in runes.
type unit struct {
	kind  string
	level int
	text  string
	page  int
	n     int
}

type heading struct {
	level int
	text  string
}

// Chunk cuts d into passages as the package comment describes.
func Chunk(d doc.Document, o Options) []Passage {
	c := chunker{max: o.MaxChunk, legacy: o.Stack == StackLegacy, levels: o.ContextLevels, crumb: o.Breadcrumb}
	if c.max <= 0 {
		c.max = DefaultMaxChunk
	}
	if c.levels < 0 {
		c.levels = 0
	}
	units := merge(normalize(d.Blocks), o.MinParagraph)
	c.out = make([]Passage, 0, len(units)/2+1)
	c.setSection(nil)
	for _, u := range units {
		if u.kind == doc.Heading {
			c.flush()
			if len(c.stack) > 0 && c.stack[len(c.stack)-1].level >= u.level {
				for len(c.stack) > 0 && c.stack[len(c.stack)-1].level >= u.level {
					c.stack = c.stack[:len(c.stack)-1]
				}
				c.setSection(c.stack)
			}
			sub := Subtitle
			if u.level == 1 {
				sub = Title
			}
			c.emitSplit(u, sub)
			c.stack = append(c.stack, heading{u.level, u.text})
			c.setSection(c.stack)
			continue
		}
		if c.legacy {
			c.emitSplit(u, u.kind)
			continue
		}
		c.add(u)
	}
	c.flush()
	return c.out
}

type chunker struct {
	max    int
	legacy bool
	levels int
	crumb  bool

	out    []Passage
	stack  []heading
	bc     []string // breadcrumb of the current section
	prefix string   // context put before the content in Embed

	// The open passage (realtime-v1): its parts, their total length in
	// runes with separators, its first block's kind and page.
	parts []string
	n     int
	kind  string
	page  int
}

// setSection records a new heading path.
func (c *chunker) setSection(stack []heading) {
	bc := make([]string, len(stack))
	for i, h := range stack {
		bc[i] = h.text
	}
	c.bc = bc[:len(bc):len(bc)]
	c.prefix = ""
	if c.legacy || len(bc) == 0 {
		return
	}
	var b strings.Builder
	if c.crumb {
		b.WriteString(strings.Join(bc, " > "))
		b.WriteByte('\n')
	}
	from := len(bc) - c.levels
	if from < 0 {
		from = 0
	}
	for _, h := range bc[from:] {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	c.prefix = b.String()
}

func (c *chunker) emit(content, subtype string, page int) {
	embed := content
	if c.prefix != "" {
		embed = c.prefix + content
	}
	c.out = append(c.out, Passage{
		Content:    content,
		Embed:      embed,
		Subtype:    subtype,
		Page:       page,
		Position:   len(c.out),
		Breadcrumb: c.bc,
	})
}

// emitSplit emits u as one passage, or as several when it is too long.
func (c *chunker) emitSplit(u unit, subtype string) {
	if u.n <= c.max {
		c.emit(u.text, subtype, u.page)
		return
	}
	rest, _ := split(u.text, u.n, c.max, lineKind(u.kind), func(piece string) {
		c.emit(piece, subtype, u.page)
	})
	c.emit(rest, subtype, u.page)
}

// add packs u into the open passage (realtime-v1).
func (c *chunker) add(u unit) {
	if len(c.parts) > 0 && c.n+2+u.n <= c.max {
		c.parts = append(c.parts, u.text)
		c.n += 2 + u.n
		return
	}
	c.flush()
	text, n := u.text, u.n
	if n > c.max {
		text, n = split(text, n, c.max, lineKind(u.kind), func(piece string) {
			c.emit(piece, u.kind, u.page)
		})
	}
	c.parts = append(c.parts, text)
	c.n, c.kind, c.page = n, u.kind, u.page
}

// flush emits the open passage, if any.
func (c *chunker) flush() {
	switch len(c.parts) {
	case 0:
		return
	case 1:
		c.emit(c.parts[0], c.kind, c.page)
	default:
		c.emit(strings.Join(c.parts, "\n\n"), c.kind, c.page)
	}
	clear(c.parts)
	c.parts = c.parts[:0]
	c.n = 0
}

func lineKind(kind string) bool {
	return kind == doc.List || kind == doc.Table || kind == doc.Code
}

var knownKinds = map[string]bool{
	doc.Heading: true, doc.Paragraph: true, doc.List: true,
	doc.Table: true, doc.Code: true, doc.Blockquote: true,
}

// normalize drops empty blocks, trims the others and counts their runes.
func normalize(blocks []doc.Block) []unit {
	units := make([]unit, 0, len(blocks))
	for _, b := range blocks {
		text := strings.TrimSpace(b.Text)
		if text == "" {
			continue
		}
		kind, level := b.Kind, 0
		if !knownKinds[kind] {
			kind = doc.Paragraph
		}
		if kind == doc.Heading {
			text = collapse(text)
			level = max(b.Level, 1)
		}
		units = append(units, unit{kind: kind, level: level, text: text, page: b.Page, n: utf8.RuneCountInString(text)})
	}
	return units
}

// collapse replaces each run of whitespace in s, which is trimmed, by one
// space.
func collapse(s string) string {
	prevSpace := false
	for _, r := range s {
		if isSpace(r) && (r != ' ' || prevSpace) {
			return strings.Join(strings.FieldsFunc(s, isSpace), " ")
		}
		prevSpace = r == ' '
	}
	return s
}

// merge joins each paragraph shorter than minLen to the paragraph after it.
func merge(units []unit, minLen int) []unit {
	if minLen <= 0 {
		return units
	}
	out := units[:0]
	for i := 0; i < len(units); i++ {
		u := units[i]
		if u.kind == doc.Paragraph {
			var b *strings.Builder
			for u.n < minLen && i+1 < len(units) && units[i+1].kind == doc.Paragraph {
				if b == nil {
					b = &strings.Builder{}
					b.WriteString(u.text)
				}
				i++
				b.WriteString("\n\n")
				b.WriteString(units[i].text)
				u.n += 2 + units[i].n
			}
			if b != nil {
				u.text = b.String()
			}
		}
		out = append(out, u)
	}
	return out
}

// split cuts s, of n runes (n > limit), into pieces of at most limit runes. It
// passes every piece but the last to emit and returns the last with its
// length in runes.
func split(s string, n, limit int, lines bool, emit func(string)) (string, int) {
	for n > limit {
		cut, runes := cutPoint(s, limit, lines)
		emit(strings.TrimRightFunc(s[:cut], isSpace))
		s = s[cut:]
		n -= runes
		for len(s) > 0 {
			r, size := utf8.DecodeRuneInString(s)
			if !isSpace(r) {
				break
			}
			s = s[size:]
			n--
		}
	}
	return s, n
}

// cutPoint returns where to cut s, which has more than limit runes and starts
// with a non-space, as a byte offset, and the number of runes before it.
func cutPoint(s string, limit int, lines bool) (int, int) {
	var (
		line, lineN int  // last line break within the limit
		sent, sentN int  // last sentence end
		word, wordN int  // last whitespace
		term        bool // a sentence terminator, maybe with closers, precedes
		nl          bool // a line break, maybe with other spaces, precedes
	)
	i, runes := 0, 0
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if isSpace(r) {
			// The piece s[:i] (runes long) ends here.
			if i > 0 {
				word, wordN = i, runes
				if term {
					sent, sentN = i, runes
				}
				if r == '\n' {
					if lines {
						line, lineN = i, runes
					} else if nl {
						// A blank line ends a sentence too.
						sent, sentN = i, runes
					}
				}
			}
			term = false
			nl = nl || r == '\n'
		} else {
			nl = false
			switch r {
			case '.', '!', '?', '…':
				term = true
			case '"', '\'', ')', ']', '»', '”', '’':
				// A closer keeps a sentence end open.
			default:
				term = false
			}
		}
		if runes == limit {
			break
		}
		i += size
		runes++
	}
	switch {
	case line > 0:
		return line, lineN
	case sent > 0:
		return sent, sentN
	case word > 0:
		return word, wordN
	}
	return i, runes
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0x85, 0xA0, 0x2028, 0x2029, 0x3000:
		return true
	}
	if r < 0x1680 {
		return false
	}
	return r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x202f || r == 0x205f
}

// Split cuts text into pieces of at most limit characters (DefaultMaxChunk
// when 0 or less), at line breaks, sentence ends or spaces as Chunk does,
// for text that is not a document's block (summaries, transcriptions).
func Split(text string, limit int) []string {
	if limit <= 0 {
		limit = DefaultMaxChunk
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var out []string
	last, _ := split(text, utf8.RuneCountInString(text), limit, false, func(p string) { out = append(out, p) })
	if last != "" {
		out = append(out, last)
	}
	return out
}
