package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/platform"
)

// Search and passages of indexed files (compat-notes §2.2).

// maxSearchLimit caps searchFiles' limit.
const maxSearchLimit = 50

func (a *api) searchFiles(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	text := q.str("query")
	if text == "" {
		return platform.Errorf(platform.TypeInvalidQuery, "query: is required")
	}
	if len(text) > 4096 {
		return platform.Errorf(platform.TypeInvalidQuery, "query: at most 4096 characters")
	}
	sq := indexing.Query{Visibility: c.Visibility(), Text: text, Limit: 10, ContextDepth: 1}
	var err error
	if sq.Tags, sq.NotTags, err = q.tagFilter(); err != nil {
		return err
	}
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"limit", &sq.Limit, 1, maxSearchLimit}, {"contextDepth", &sq.ContextDepth, 0, 10}} {
		n, err := q.integer(p.name)
		if err != nil {
			return err
		}
		if n != nil {
			if *n < p.min || *n > p.max {
				return platform.Errorf(platform.TypeInvalidQuery, "%s: must be between %d and %d", p.name, p.min, p.max)
			}
			*p.dst = *n
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"consolidate", &sq.Consolidate}, {"includeBreadcrumb", &sq.IncludeBreadcrumb}, {"withContext", &sq.WithContext},
		{"explain", &sq.Explain}} { // explain: this server's (docs/indexing.md#why-a-passage-ranked-where-it-did)
		v, err := q.boolean(b.name)
		if err != nil {
			return err
		}
		if v != nil {
			*b.dst = *v
		}
	}
	results, err := a.Indexing.Search(r.Context(), sq)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(results))
	for _, res := range results {
		p := map[string]any{
			"content": res.Passage.Content, "score": res.Score, "meta": a.passageMeta(res.Passage, res.File),
			"file": map[string]any{
				"id": res.File.ID, "key": res.File.Key, "contentType": res.File.ContentType, "metadata": res.File.Metadata,
				"tags": res.File.Tags, "createdAt": platform.FormatTime(res.File.CreatedAt), "updatedAt": platform.FormatTime(res.File.UpdatedAt),
			},
		}
		if res.Context != nil {
			p["context"] = res.Context
		}
		if res.Explain != nil {
			p["explain"] = explainJSON(res.Score, res.Explain)
		}
		out = append(out, p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"passages": out})
	return nil
}

// explainJSON is a passage's explain object: the parts of its fused score.
func explainJSON(score float64, e *indexing.Explanation) map[string]any {
	words := func(ms []indexing.WordMatch) []map[string]any {
		out := make([]map[string]any, len(ms))
		for i, m := range ms {
			out[i] = map[string]any{"word": m.Word, "source": m.Source, "weight": m.Weight, "score": m.Score}
			if m.For != "" {
				out[i]["for"] = m.For
			}
		}
		return out
	}
	out := map[string]any{"score": score, "fullText": nil, "vector": nil, "vectorWeight": e.VectorWeight,
		"words": words(e.Words), "relatedWords": words(e.Related), "missingWords": e.Missing}
	if t := e.FullText; t != nil {
		out["fullText"] = map[string]any{"rank": t.Rank, "score": t.Score, "answerBoost": t.Boosted, "fused": t.Fused}
	}
	if v := e.Vector; v != nil {
		out["vector"] = map[string]any{"rank": v.Rank, "similarity": v.Similarity, "fused": v.Fused}
	}
	return out
}

// passageMeta is a passage's meta; a page indexed as an image links its
// image (sourceUrl, signed like the file's content url).
func (a *api) passageMeta(p platform.Passage, f platform.File) map[string]any {
	m := map[string]any{"type": p.Type, "position": p.Position}
	if p.ImageType != "" {
		m["sourceUrl"] = a.Files.PassageImageURL(f, p.ID)
	}
	if p.Subtype != "" {
		m["subtype"] = p.Subtype
	}
	if p.PageNumber > 0 {
		m["pageNumber"] = p.PageNumber
	}
	return m
}

func (a *api) listFilePassages(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	if n, err := q.integer("limit"); err != nil {
		return err
	} else if n != nil {
		if *n < 1 || *n > 200 {
			return platform.Errorf(platform.TypeInvalidQuery, "limit: must be between 1 and 200")
		}
		p.Limit = *n
	}
	f, ps, next, err := a.Files.Passages(r.Context(), c, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(ps))
	for _, x := range ps {
		out = append(out, map[string]any{"id": x.ID, "content": x.Content, "meta": a.passageMeta(x, f)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"passages": out, "meta": metaJSON{next}})
	return nil
}

var setPassagesSchema = schema("set-passages.json", `{"type":"object","additionalProperties":false,"required":["passages"],
	"properties":{"passages":{"type":"array","maxItems":10000,"items":{"type":"object","additionalProperties":false,"required":["content"],
		"properties":{"content":{"type":"string","minLength":1},"type":{"enum":["title","subtitle","paragraph","blockquote","list","table","code","image"]},
		"pageNumber":{"type":"integer","minimum":1}}}}}}`)

func (a *api) setFilePassages(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var body struct {
		Passages []platform.OwnPassage `json:"passages"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if err := a.Files.SetPassages(r.Context(), c, r.PathValue("id"), body.Passages); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}
