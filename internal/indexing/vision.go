package indexing

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/pdf"
	"github.com/botplatform/botplatform/internal/platform"
)

// Vision (PDF only; spec 4.1.1): the pages asked for (true: every page),
// the first 100 of them, are rendered (pdf.RenderPages) and sent to
// the model as images.
//
//   - transcribePages: the model transcribes each page; the transcription
//     is indexed as the page's passages (subtype "page", cut at
//     maximumChunkLength, standalone: never packed with other text), and
//     the page's extracted text is not indexed. Other pages are indexed as
//     text.
//   - indexPages: each page is indexed as an image: one passage of type
//     "image", subtype "page", whose content is the model's description of
//     the page (what search matches) and whose image is kept and linked
//     from the passage's meta.sourceUrl. The images count as File Storage
//     on top of the file's size; an indexing whose images would pass the
//     workspace's File Storage quota fails with that reason.

const transcribePrompt = `You transcribe a page of a document from its image, for a search index. ` +
	`Write all of its text in reading order, as Markdown (headings with #, lists with -, tables with |); ` +
	`describe figures and charts in one sentence each, in brackets. Do not summarize or add anything. ` +
	`Answer with the transcription only.`

const describePrompt = `You describe a page of a document from its image, for a search index. ` +
	`Say what the page shows and contains: its title, the subjects and facts it presents, its figures, charts, ` +
	`tables and pictures, in plain sentences, at most 300 words. Answer with the description only.`

// vision runs the vision options on a PDF: it returns the document without
// the transcribed pages' text, and the passages the options add.
func vision(ctx context.Context, m *meter, cfg config, key string, content []byte, d doc.Document) (doc.Document, []chunk.Passage, error) {
	if !cfg.vision() {
		return d, nil, nil
	}
	if m.s.cfg.Model == nil {
		return d, nil, failf("vision needs a model server (--ai-url); none is configured")
	}
	n, err := pdf.PageCount(content)
	if err != nil {
		return d, nil, failf("%v", err)
	}
	transcribe, index := cfg.Vision.TranscribePages.pick(n), cfg.Vision.IndexPages.pick(n)
	pages := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(transcribe), index...))))
	rendered, err := pdf.RenderPages(content, pages)
	if err != nil {
		return d, nil, failf("%v", err)
	}
	images := map[int]pdf.PageImage{}
	for _, img := range rendered {
		images[img.Page] = img
	}
	// read sends a page's image to the model with a prompt.
	read := func(pg int, purpose, system string) (string, error) {
		img := images[pg]
		return m.complete(ctx, purpose, ai.Request{ModelType: ai.Accurate, System: system,
			Prompt: fmt.Sprintf("Page %d of %s.", pg, key), Images: []ai.Image{{MIME: img.MIME, Data: img.Data}}})
	}
	var out []chunk.Passage
	transcribed := map[int]bool{}
	for _, pg := range transcribe {
		if _, ok := images[pg]; !ok {
			continue
		}
		text, err := read(pg, PurposeTranscription, transcribePrompt)
		if err != nil {
			return d, nil, err
		}
		transcribed[pg] = true
		for _, part := range chunk.Split(markdownText(text), cfg.Chunking.MaximumChunkLength) {
			out = append(out, chunk.Passage{Content: part, Embed: part, Subtype: "page", Page: pg})
		}
	}
	var extra int64
	for _, pg := range index {
		img, ok := images[pg]
		if !ok {
			continue
		}
		desc, err := read(pg, PurposePageIndexing, describePrompt)
		if err != nil {
			return d, nil, err
		}
		parts := chunk.Split(desc, cfg.Chunking.MaximumChunkLength)
		if len(parts) == 0 {
			parts = []string{fmt.Sprintf("Page %d", pg)}
		}
		extra += int64(len(img.Data))
		out = append(out, chunk.Passage{Content: parts[0], Embed: fmt.Sprintf("Page %d. %s", pg, parts[0]), Type: platform.PassageImage,
			Subtype: "page", Page: pg, Image: img.Data, ImageType: img.MIME})
	}
	if extra > 0 {
		room := int64(math.MaxInt64)
		if m.s.cfg.StorageRoom != nil {
			if room, err = m.s.cfg.StorageRoom(ctx, m.f.WorkspaceID); err != nil {
				return d, nil, err
			}
		}
		if extra > room+m.f.ExtraBytes {
			return d, nil, failf("File Storage quota exceeded: the page images of vision.indexPages take %d bytes and the workspace has %d left", extra, room+m.f.ExtraBytes)
		}
	}
	slices.SortStableFunc(out, func(a, b chunk.Passage) int { return a.Page - b.Page })
	if len(transcribed) > 0 {
		kept := d.Blocks[:0:0]
		for _, b := range d.Blocks {
			if !transcribed[b.Page] {
				kept = append(kept, b)
			}
		}
		d.Blocks = kept
	}
	return d, out, nil
}

// vision reports whether a vision option is set.
func (c config) vision() bool {
	return c.Vision.TranscribePages.set() || c.Vision.IndexPages.set()
}

// markdownText is a model's Markdown answer as the plain text of its
// blocks, a paragraph each.
func markdownText(md string) string {
	var texts []string
	for _, b := range blocksOf(md, 0) {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n\n")
}

// mergeByPage inserts the vision passages (in page order) among the
// document's passages: after those of their page and before the next's.
func mergeByPage(ps, extra []chunk.Passage) []chunk.Passage {
	if len(extra) == 0 {
		return ps
	}
	out := make([]chunk.Passage, 0, len(ps)+len(extra))
	i := 0
	for _, e := range extra {
		for i < len(ps) && ps[i].Page <= e.Page {
			out = append(out, ps[i])
			i++
		}
		out = append(out, e)
	}
	return append(out, ps[i:]...)
}
