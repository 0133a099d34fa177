package indexing

import (
	"context"
	"strings"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse"
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

// Markdown for the model (agent parsing, cleanup, summaries, vision).

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
