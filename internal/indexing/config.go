package indexing

import (
	"encoding/json"

	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/platform"
)

// IndexingMetadataKey is where a file's indexing object is kept in its
// metadata (spec 4.1.1: "The configuration is stored in the file's
// metadata").
const IndexingMetadataKey = "indexing"

// config is the part of indexing.configuration the standard pipeline uses.
type config struct {
	Parsing struct {
		MinimumParagraphLength int `json:"minimumParagraphLength"`
	} `json:"parsing"`
	Chunking struct {
		MaximumChunkLength    int  `json:"maximumChunkLength"`
		EmbeddedContextLevels int  `json:"embeddedContextLevels"`
		EmbedBreadcrumb       bool `json:"embedBreadcrumb"`
	} `json:"chunking"`
	Stack string `json:"stack"`
}

// Stacks: realtime-v1 (the default) reports indexingStack v2, legacy v1.
const (
	StackRealtime = "realtime-v1"
	StackLegacy   = "legacy"
)

func configOf(f platform.File) config {
	var c config
	raw, _ := json.Marshal(f.Metadata[IndexingMetadataKey])
	var wrapper struct {
		Configuration json.RawMessage `json:"configuration"`
	}
	if json.Unmarshal(raw, &wrapper) == nil && len(wrapper.Configuration) > 0 {
		_ = json.Unmarshal(wrapper.Configuration, &c)
	}
	if c.Stack == "" {
		c.Stack = StackRealtime
	}
	return c
}

func (c config) options() chunk.Options {
	return chunk.Options{
		MinParagraph: c.Parsing.MinimumParagraphLength, MaxChunk: c.Chunking.MaximumChunkLength,
		ContextLevels: c.Chunking.EmbeddedContextLevels, Breadcrumb: c.Chunking.EmbedBreadcrumb, Stack: c.Stack,
	}
}

func (c config) indexingStack() string {
	if c.Stack == StackLegacy {
		return "v1"
	}
	return "v2"
}
