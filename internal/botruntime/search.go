package botruntime

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// searchFiles searches the bot's indexed files: all of them, or those of
// the knowledge bases named (files tagged kbId). The prelude records the
// knowledge bases and the passages in event.kb.
func (c *call) searchFiles(in []byte) (any, error) {
	var a struct {
		Query            string                     `json:"query"`
		Tags             map[string]json.RawMessage `json:"tags"`
		Limit            int                        `json:"limit"`
		KnowledgeBaseIDs []string                   `json:"knowledgeBaseIds"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	if c.r.search == nil {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "search is not available on this server")
	}
	if strings.TrimSpace(a.Query) == "" {
		return nil, platform.Invalid("query", "is required")
	}
	if a.Limit == 0 {
		a.Limit = 10
	}
	if a.Limit < 1 || a.Limit > 50 {
		return nil, platform.Invalid("limit", "must be between 1 and 50")
	}
	q := SearchQuery{BotID: c.bot.ID, Text: a.Query, Limit: a.Limit, Tags: map[string][]string{}}
	for k, raw := range a.Tags {
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			q.Tags[k] = []string{one}
		case json.Unmarshal(raw, &many) == nil:
			q.Tags[k] = many
		default:
			return nil, platform.Invalid("tags."+k, "must be a string or a list of strings")
		}
	}
	included := []string{}
	if len(a.KnowledgeBaseIDs) > 0 {
		for _, id := range a.KnowledgeBaseIDs {
			if _, err := c.r.store.GetKnowledgeBase(c.ctx, c.bot.ID, id); errors.Is(err, platform.ErrNotFound) {
				return nil, platform.NotFound("knowledge base", id)
			} else if err != nil {
				return nil, err
			}
			included = append(included, id)
		}
		q.Tags[platform.KnowledgeBaseTag] = included
	} else {
		kbs, _, err := c.r.store.ListKnowledgeBases(c.ctx, c.bot.ID, nil, store.Page{Limit: 100})
		if err != nil {
			return nil, err
		}
		for _, kb := range kbs {
			included = append(included, kb.ID)
		}
	}
	results, err := c.r.search.Search(c.ctx, q)
	if err != nil {
		return nil, err
	}
	passages := make([]map[string]any, 0, len(results))
	for _, r := range results {
		meta := map[string]any{"type": r.Passage.Type, "position": r.Passage.Position}
		if r.Passage.Subtype != "" {
			meta["subtype"] = r.Passage.Subtype
		}
		if r.Passage.PageNumber > 0 {
			meta["pageNumber"] = r.Passage.PageNumber
		}
		passages = append(passages, map[string]any{"content": r.Passage.Content, "score": r.Score, "meta": meta,
			"file": map[string]any{"id": r.File.ID, "key": r.File.Key, "tags": r.File.Tags}})
	}
	return map[string]any{"passages": passages, "knowledgeBases": included}, nil
}
