package main

import (
	"context"

	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/store"
)

// botSearch lets bot code search its bot's files with the indexing
// service: the runtime declares its own search types, so that it does not
// depend on indexing.
type botSearch struct{ idx *indexing.Service }

var _ botruntime.Searcher = botSearch{}

func (b botSearch) Search(ctx context.Context, q botruntime.SearchQuery) ([]botruntime.SearchResult, error) {
	found, err := b.idx.Search(ctx, indexing.Query{Visibility: store.FileVisibility{BotID: q.BotID, All: true},
		Text: q.Text, Tags: q.Tags, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]botruntime.SearchResult, len(found))
	for i, r := range found {
		out[i] = botruntime.SearchResult{Passage: r.Passage, Score: r.Score, File: r.File}
	}
	return out, nil
}
