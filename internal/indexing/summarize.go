package indexing

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// Summaries (summarization.enable): every section of the document (a
// heading and what follows up to the next heading of the same or a higher
// level; the text before the first heading is a section too) at least
// minimumInputLength characters long gets a summary of at most
// outputTokenLimit tokens, indexed as a standalone passage of type
// "summary"; generateMasterSummary adds one for the whole file. With a
// model server the model of summarization.modelType writes them (an input
// over summaryPartBytes is summarized in parts, then the parts' summaries
// together); without one, the built-in extractive summarizer picks the
// section's most representative sentences.

// summaryPartBytes bounds the text of one summarization call.
const summaryPartBytes = 48 << 10

// tokenChars is the characters per token assumed to bound built-in
// summaries by outputTokenLimit.
const tokenChars = 4

// summary is a summary to index.
type summary struct {
	text       string
	breadcrumb []string
	page       int
}

// summaries returns the summaries of d's sections and, if asked, of the
// whole file.
func summaries(ctx context.Context, m *meter, cfg config, key string, d doc.Document) ([]summary, error) {
	var out []summary
	min := cfg.Summarization.MinimumInputLength
	for _, sec := range sections(d.Blocks) {
		text := markdownOf(sec.blocks)
		if utf8.RuneCountInString(text) < min {
			continue
		}
		s, err := summarize(ctx, m, cfg, sectionTitle(sec.path, key), text)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, summary{s, sec.path, sec.blocks[0].Page})
		}
	}
	if cfg.Summarization.GenerateMasterSummary && len(d.Blocks) > 0 {
		s, err := summarize(ctx, m, cfg, key, markdownOf(d.Blocks))
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, summary{s, nil, d.Blocks[0].Page})
		}
	}
	return out, nil
}

type section struct {
	path   []string // the headings down to this section's
	blocks []doc.Block
}

// sections lists the sections of blocks: one per heading (with the
// sections under it), and the blocks before the first heading.
func sections(blocks []doc.Block) []section {
	var out []section
	first := len(blocks)
	var stack []string // heading texts by level
	for i, b := range blocks {
		if b.Kind != doc.Heading {
			continue
		}
		first = min(first, i)
		lvl := max(b.Level, 1)
		for len(stack) < lvl-1 {
			stack = append(stack, "")
		}
		stack = append(stack[:lvl-1], b.Text)
		end := len(blocks)
		for j := i + 1; j < len(blocks); j++ {
			if blocks[j].Kind == doc.Heading && max(blocks[j].Level, 1) <= lvl {
				end = j
				break
			}
		}
		var path []string
		for _, h := range stack {
			if h != "" {
				path = append(path, h)
			}
		}
		out = append(out, section{path, blocks[i:end]})
	}
	if first > 0 {
		out = append([]section{{nil, blocks[:first]}}, out...)
	}
	return out
}

// summarize writes one summary of text (titled title, for the model).
func summarize(ctx context.Context, m *meter, cfg config, title, text string) (string, error) {
	limit := cfg.Summarization.OutputTokenLimit
	if m.s.cfg.Model == nil {
		return extractive(text, limit*tokenChars), nil
	}
	if len(text) > summaryPartBytes {
		var parts []string
		for _, p := range splitText(text, summaryPartBytes) {
			s, err := summarize(ctx, m, cfg, title, p)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return summarize(ctx, m, cfg, title, strings.Join(parts, "\n\n"))
	}
	return m.complete(ctx, PurposeSummarization, ai.Request{
		ModelType: cfg.Summarization.ModelType, MaxTokens: limit,
		System: fmt.Sprintf(`You summarize a section of a document for a search index. Write a faithful, self-contained summary `+
			`of the facts it states, in the document's language, in at most %d tokens. Answer with the summary only.`, limit),
		Prompt: "Section: " + title + "\n\n" + text,
	})
}

// splitText cuts text into parts of at most n bytes, at paragraph breaks
// where it can (at UTF-8 boundaries always).
func splitText(text string, n int) []string {
	var out []string
	for len(text) > n {
		cut := strings.LastIndex(text[:n], "\n\n")
		if cut <= 0 {
			cut = n
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(text[:cut]))
		text = strings.TrimSpace(text[cut:])
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

var sentenceEnd = regexp.MustCompile(`[.!?…]["”’)]*\s+|\n+`)

// extractive is the built-in summary: the sentences of text that best
// represent it (Luhn's method: a sentence scores by how frequent in the
// text its content words are, longer words counting as content), about one
// in five of them, at least one and at most eight, in the text's order,
// within maxChars.
func extractive(text string, maxChars int) string {
	var sents []string
	for _, s := range splitKeep(text) {
		s = strings.TrimSpace(strings.TrimLeft(s, "#>-|* "))
		if utf8.RuneCountInString(s) >= 20 {
			sents = append(sents, s)
		}
	}
	if len(sents) == 0 {
		return ""
	}
	freq := map[string]int{}
	words := make([][]string, len(sents))
	for i, s := range sents {
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if utf8.RuneCountInString(w) >= 4 {
				words[i] = append(words[i], w)
				freq[w]++
			}
		}
	}
	score := make([]float64, len(sents))
	for i, ws := range words {
		for _, w := range ws {
			score[i] += float64(freq[w] - 1)
		}
		score[i] /= math.Sqrt(float64(len(ws) + 1))
	}
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	k := min(max(len(sents)/5, 1), 8)
	pick := make([]bool, len(sents))
	size := 0
	for _, i := range order {
		if k == 0 {
			break
		}
		if size > 0 && size+len(sents[i])+1 > maxChars {
			continue
		}
		pick[i] = true
		size += len(sents[i]) + 1
		k--
	}
	var b strings.Builder
	for i, s := range sents {
		if pick[i] {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) > maxChars {
		out = chunk.Split(out, maxChars)[0]
	}
	return out
}

// splitKeep splits text into sentences, keeping each one's end mark.
func splitKeep(text string) []string {
	var out []string
	last := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(text, -1) {
		out = append(out, text[last:loc[1]])
		last = loc[1]
	}
	if last < len(text) {
		out = append(out, text[last:])
	}
	return out
}
