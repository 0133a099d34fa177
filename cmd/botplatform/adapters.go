package main

import (
	"context"
	"encoding/json"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/cognitive"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sdkbot"
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

// botChecker checks what a deploy brings for the executors that will run
// it: a Node bundle with the Node host, a script with the embedded VM, a
// url with the SDK bots' caller, recurring events with the dispatcher.
type botChecker struct {
	vm  *botruntime.Runtime
	sdk *sdkbot.Caller
}

var _ admin.BotChecker = botChecker{}

func (c botChecker) CheckCode(ctx context.Context, code string) (platform.CodeDefinition, error) {
	if sdkbot.IsNodeBundle(code) {
		return c.sdk.CheckCode(ctx, code)
	}
	return platform.CodeDefinition{}, c.vm.CheckCode(ctx, code)
}

func (botChecker) CheckRecurring(spec json.RawMessage) error { return dispatch.CheckRecurring(spec) }

func (c botChecker) CheckURL(url string) error { return c.sdk.CheckURL(url) }

// llmActions runs the actions of the built-in LLM integration (the llm
// interface) with the LLM API's service, charged to
// the calling bot's workspace.
type llmActions struct{ svc *cognitive.Service }

var _ dispatch.Integration = llmActions{}

func (m llmActions) Action(ctx context.Context, b *dispatch.Bot, action string, input json.RawMessage) (json.RawMessage, error) {
	return m.svc.Action(ctx, cognitive.Caller{WorkspaceID: b.WorkspaceID, BotID: b.ID}, action, input)
}
