package indexing

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse"
	"github.com/botplatform/botplatform/internal/platform"
)

// The AI-assisted options of indexing.configuration (spec 4.1.1) run
// between parsing and chunking (cleanup, agent parsing, vision) and after
// chunking (summaries). Each model call goes through a meter: it is
// refused once the workspace's AI Spend for the month reaches its
// spending limit, and recorded with its tokens and cost.

// Purposes of model calls, as recorded in AI Spend.
const (
	PurposeAgentParsing  = "agent_parsing"
	PurposeSmartCleanup  = "smart_cleanup"
	PurposeSummarization = "summarization"
	PurposeTranscription = "vision_transcription"
	PurposePageIndexing  = "vision_indexing"
)

// Limits of smartCleanup (spec 4.1.1): the first 30 pages or 20 KB of
// text, whichever comes first.
const (
	cleanupMaxPages = 30
	cleanupMaxBytes = 20 << 10
)

// agentPartBytes bounds the text of one agent-parsing call (a PDF goes
// page by page; other files in parts of whole blocks up to this size).
const agentPartBytes = 12 << 10

// meter makes the model calls of one file's indexing.
type meter struct {
	s *Service
	f platform.File
}

// errNoModel is returned by a meter when no model server is configured.
var errNoModel = errors.New("no model server is configured")

// complete makes one metered call.
func (m *meter) complete(ctx context.Context, purpose string, r ai.Request) (string, error) {
	if m.s.cfg.Model == nil {
		return "", errNoModel
	}
	if err := m.s.spendLeft(ctx, m.f.WorkspaceID); err != nil {
		return "", err
	}
	resp, err := m.s.cfg.Model.Complete(ctx, r)
	if err != nil {
		return "", failf("%s: %v", purposeName(purpose), err)
	}
	u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: m.f.WorkspaceID, BotID: m.f.BotID, FileID: m.f.ID,
		Purpose: purpose, Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		Cost: m.s.cfg.AI.Cost(resp.Model, resp.InputTokens, resp.OutputTokens), CreatedAt: m.s.clock.Now()}
	if err := m.s.store.RecordAIUsage(ctx, u); err != nil {
		// The call was made and answered: use its answer rather than
		// make it again; the spend goes unrecorded.
		m.s.log.Error("indexing: recording AI Spend", "file", m.f.ID, "purpose", purpose, "cost_nanodollars", u.Cost, "err", err)
	}
	return strings.TrimSpace(resp.Text), nil
}

func purposeName(p string) string {
	switch p {
	case PurposeAgentParsing:
		return "agent parsing"
	case PurposeSmartCleanup:
		return "smart cleanup"
	case PurposeSummarization:
		return "summarization"
	case PurposeTranscription:
		return "page transcription"
	case PurposePageIndexing:
		return "page indexing"
	}
	return p
}

// spendLeft returns a failure when the workspace's AI Spend this month has
// reached its spending limit.
func (s *Service) spendLeft(ctx context.Context, workspaceID string) error {
	w, err := s.store.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	return s.spendLeftOf(ctx, w)
}

// spendLeftOf is spendLeft for a workspace already read.
func (s *Service) spendLeftOf(ctx context.Context, w platform.Workspace) error {
	left, limit, err := aispend.SpendLeftOf(ctx, s.store, w, s.clock.Now())
	if err != nil {
		return err
	}
	if left == 0 {
		spent, _, err := aispend.Spent(ctx, s.store, w.ID, aispend.MonthOf(s.clock.Now()))
		if err != nil {
			return err
		}
		return failf("AI Spend limit reached: this workspace spent $%.2f this month and its monthly spending limit is $%.0f; raise spendingLimit or index again next month",
			aispend.Dollars(spent), aispend.Dollars(limit))
	}
	return nil
}

// assist runs the options that work on the parsed document, in order:
// smart cleanup (PDF), agent parsing.
func assist(ctx context.Context, m *meter, cfg config, typ string, d doc.Document) (doc.Document, error) {
	var err error
	if typ == parse.TypePDF && cfg.Parsing.SmartCleanup {
		if d, err = smartCleanup(ctx, m, d); err != nil {
			return d, err
		}
	}
	if cfg.Parsing.Mode == "agent" {
		if d, err = agentParse(ctx, m, typ, d); err != nil {
			return d, err
		}
	}
	return d, nil
}

// ---------------------------------------------------------------- cleanup

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

// ---------------------------------------------------------------- agent

// agentParse has the model restructure the extracted text (a PDF page by
// page, other files in parts of at most agentPartBytes): headings, lists
// and tables recovered, reading order fixed. Its Markdown answer is parsed
// into the blocks that are then chunked.
func agentParse(ctx context.Context, m *meter, typ string, d doc.Document) (doc.Document, error) {
	var parts [][]doc.Block
	if typ == parse.TypePDF {
		parts = byPage(d.Blocks)
	} else {
		var cur []doc.Block
		size := 0
		for _, b := range d.Blocks {
			if len(cur) > 0 && size+len(b.Text) > agentPartBytes {
				parts, cur, size = append(parts, cur), nil, 0
			}
			cur = append(cur, b)
			size += len(b.Text)
		}
		if len(cur) > 0 {
			parts = append(parts, cur)
		}
	}
	var out []doc.Block
	for _, part := range parts {
		text, err := m.complete(ctx, PurposeAgentParsing, ai.Request{ModelType: ai.Balanced, System: agentPrompt, Prompt: markdownOf(part)})
		if errors.Is(err, errNoModel) {
			return d, failf("agent parsing needs a model server (--ai-url); none is configured")
		}
		if err != nil {
			return d, err
		}
		out = append(out, blocksOf(text, part[0].Page)...)
	}
	return doc.Document{Blocks: out}, nil
}

const agentPrompt = `You restructure text extracted from a document so that it can be indexed for search. ` +
	`Recover its structure: headings (#, ##, ###), paragraphs, lists (-), tables (| cells |) and code blocks, ` +
	`in reading order. Keep every fact and the document's own words; do not summarize, translate or add anything. ` +
	`Answer with the restructured document only, in Markdown.`

// ---------------------------------------------------------------- helpers

// byPage groups blocks by page, in order.
func byPage(blocks []doc.Block) [][]doc.Block {
	var out [][]doc.Block
	for i, b := range blocks {
		if i == 0 || b.Page != blocks[i-1].Page {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], b)
	}
	return out
}

// markdownOf writes blocks as Markdown, for a model to read.
func markdownOf(blocks []doc.Block) string {
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString("\n\n")
		}
		switch bl.Kind {
		case doc.Heading:
			b.WriteString(strings.Repeat("#", max(1, min(bl.Level, 6))) + " " + bl.Text)
		case doc.Code:
			b.WriteString("```\n" + bl.Text + "\n```")
		case doc.Blockquote:
			b.WriteString("> " + strings.ReplaceAll(bl.Text, "\n", "\n> "))
		default:
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// blocksOf parses a model's Markdown answer into blocks of the given page.
func blocksOf(markdown string, page int) []doc.Block {
	markdown = strings.TrimSpace(markdown)
	// Models often wrap a whole answer in a fence.
	if strings.HasPrefix(markdown, "```") && strings.HasSuffix(markdown, "```") {
		if _, body, ok := strings.Cut(markdown, "\n"); ok {
			markdown = strings.TrimSuffix(body, "```")
		}
	}
	d, err := parse.Parse(parse.TypeMarkdown, "", []byte(markdown))
	if err != nil {
		return []doc.Block{{Kind: doc.Paragraph, Text: markdown, Page: page}}
	}
	for i := range d.Blocks {
		d.Blocks[i].Page = page
	}
	return d.Blocks
}

// sectionTitle is a heading's text for a prompt, or the file's key.
func sectionTitle(path []string, key string) string {
	if len(path) == 0 {
		return key
	}
	return strings.Join(path, " > ")
}
