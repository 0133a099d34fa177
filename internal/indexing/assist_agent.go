package indexing

import (
	"context"
	"errors"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse"
)

// agentPartBytes bounds the text of one agent-parsing call (a PDF goes
// page by page; other files in parts of whole blocks up to this size).
const agentPartBytes = 12 << 10

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
