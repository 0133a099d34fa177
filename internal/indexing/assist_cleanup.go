package indexing

import (
	"context"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Limits of smartCleanup (spec 4.1.1): the first 30 pages or 20 KB of
// text, whichever comes first.
const (
	cleanupMaxPages = 30
	cleanupMaxBytes = 20 << 10
)

// smartCleanup cleans the text of the first 30 pages or 20 KB of a PDF,
// whichever comes first (whole blocks; the rest is left as is): with the
// model when one is configured, page by page; else by rules (cleanRules).
func smartCleanup(ctx context.Context, m *meter, d doc.Document) (doc.Document, error) {
	n, size := 0, 0
	for _, b := range d.Blocks {
		if b.Page > cleanupMaxPages || size+len(b.Text) > cleanupMaxBytes {
			break
		}
		size += len(b.Text)
		n++
	}
	head, rest := d.Blocks[:n], d.Blocks[n:]
	var cleaned []doc.Block
	if m.s.cfg.Model == nil {
		cleaned = cleanRules(head)
	} else {
		for _, page := range byPage(head) {
			out, err := m.complete(ctx, PurposeSmartCleanup, ai.Request{ModelType: ai.Inexpensive, System: cleanupPrompt, Prompt: markdownOf(page)})
			if err != nil {
				return d, err
			}
			cleaned = append(cleaned, blocksOf(out, page[0].Page)...)
		}
	}
	return doc.Document{Blocks: append(cleaned, rest...)}, nil
}

const cleanupPrompt = `You clean text extracted from a PDF page before it is indexed for search. ` +
	`Mend words broken by hyphens or spacing, remove running headers, footers, page numbers and stray symbols, ` +
	`join lines broken inside sentences, and keep every other word as it is. Do not summarize, translate or add anything. ` +
	`Answer with the cleaned text only, in Markdown (headings with #, lists with -, tables with |).`

var (
	inlineHyphen = regexp.MustCompile(`(\p{Ll})- (\p{Ll})`)
	letterSpaced = regexp.MustCompile(`(?:^|\s)((?:\p{L} ){3,}\p{L})(?:$|\s|[.,;:!?])`)
	controlChars = regexp.MustCompile(`[\p{Cc}\p{Co}\x{FFFD}&&[^\n\t]]`)
)

// cleanRules is the built-in cleanup: Unicode compatibility forms folded
// (ligatures such as "ﬁ", full-width letters), control characters dropped,
// words hyphenated across a line that the layout joined with a space
// ("exam- ple") mended, letter-spaced words ("S U M M A R Y") closed up,
// a paragraph cut by a page break joined with its end on the next page
// (the first does not end a sentence and the next starts in lower case),
// and running headers and footers dropped: the first or last paragraph of
// a page with others, short, whose text (digits aside) is also the first
// or last paragraph of another page. (Standard parsing already drops those
// recurring on at least 3 pages and 30% of them.)
func cleanRules(blocks []doc.Block) []doc.Block {
	running := runningLines(blocks)
	out := make([]doc.Block, 0, len(blocks))
	for i, b := range blocks {
		if running[i] {
			continue
		}
		t := norm.NFKC.String(b.Text)
		t = controlChars.ReplaceAllString(t, "")
		t = inlineHyphen.ReplaceAllString(t, "$1$2")
		t = letterSpaced.ReplaceAllStringFunc(t, func(s string) string {
			lead := s[:len(s)-len(strings.TrimLeft(s, " \t\n"))]
			return lead + strings.ReplaceAll(strings.TrimLeft(s, " \t\n"), " ", "")
		})
		b.Text = strings.TrimSpace(t)
		if b.Text == "" {
			continue
		}
		if k := len(out) - 1; k >= 0 && b.Kind == doc.Paragraph && out[k].Kind == doc.Paragraph &&
			b.Page == out[k].Page+1 && !endsSentence(out[k].Text) && startsLowerCase(b.Text) {
			out[k].Text += " " + b.Text
			continue
		}
		out = append(out, b)
	}
	return out
}

// runningLines marks the running headers and footers of cleanRules.
func runningLines(blocks []doc.Block) map[int]bool {
	key := func(s string) string {
		return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return ' '
			}
			return unicode.ToLower(r)
		}, s)), " ")
	}
	var edges []int // indexes of the first and last paragraphs of pages
	start := 0
	for i := range blocks {
		if i+1 < len(blocks) && blocks[i+1].Page == blocks[i].Page {
			continue
		}
		if i > start { // a page of at least two blocks: blocks[start..i]
			edges = append(edges, start, i)
		}
		start = i + 1
	}
	pages := map[string]map[int]bool{}
	for _, i := range edges {
		b := blocks[i]
		if b.Kind != doc.Paragraph || utf8.RuneCountInString(b.Text) > 120 {
			continue
		}
		k := key(b.Text)
		if pages[k] == nil {
			pages[k] = map[int]bool{}
		}
		pages[k][b.Page] = true
	}
	out := map[int]bool{}
	for _, i := range edges {
		if k := key(blocks[i].Text); k != "" && len(pages[k]) >= 2 && blocks[i].Kind == doc.Paragraph {
			out[i] = true
		}
	}
	return out
}

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(`.!?:;"'”’)…`, r)
}

func startsLowerCase(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}
