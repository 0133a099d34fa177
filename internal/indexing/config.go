package indexing

import (
	"encoding/json"
	"slices"

	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/platform"
)

// IndexingMetadataKey is where a file's indexing object is kept in its
// metadata (spec 4.1.1: "The configuration is stored in the file's
// metadata").
const IndexingMetadataKey = "indexing"

// config is a file's indexing.configuration (spec 4.1.1). The HTTP
// layer's schema checks shapes and bounds at upsert.
type config struct {
	Parsing struct {
		Mode                   string `json:"mode"` // standard (default) or agent
		MinimumParagraphLength int    `json:"minimumParagraphLength"`
		SmartCleanup           bool   `json:"smartCleanup"`
	} `json:"parsing"`
	Chunking struct {
		MaximumChunkLength    int  `json:"maximumChunkLength"`
		EmbeddedContextLevels int  `json:"embeddedContextLevels"`
		EmbedBreadcrumb       bool `json:"embedBreadcrumb"`
	} `json:"chunking"`
	Summarization struct {
		Enable                bool   `json:"enable"`
		ModelType             string `json:"modelType"`
		MinimumInputLength    int    `json:"minimumInputLength"`
		OutputTokenLimit      int    `json:"outputTokenLimit"`
		GenerateMasterSummary bool   `json:"generateMasterSummary"`
	} `json:"summarization"`
	Vision struct {
		TranscribePages pages `json:"transcribePages"`
		IndexPages      pages `json:"indexPages"`
	} `json:"vision"`
	Stack string `json:"stack"`
}

// pages is a vision option: true (every page) or a list of page numbers.
type pages struct {
	All  bool
	List []int
}

func (p *pages) UnmarshalJSON(b []byte) error {
	*p = pages{}
	if string(b) == "true" {
		p.All = true
		return nil
	}
	if string(b) == "false" || string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &p.List)
}

// set reports whether the option asks for any page.
func (p pages) set() bool { return p.All || len(p.List) > 0 }

// maxVisionPages bounds the pages a vision option covers (spec 4.1.1).
const maxVisionPages = 100

// pick returns the pages of a document of n pages the option covers, in
// order, at most maxVisionPages: every page (the first 100) for true, else
// the listed pages that exist, the first 100 of them.
func (p pages) pick(n int) []int {
	var out []int
	if p.All {
		for i := 1; i <= n && len(out) < maxVisionPages; i++ {
			out = append(out, i)
		}
		return out
	}
	seen := map[int]bool{}
	for _, pg := range p.List {
		if pg >= 1 && pg <= n && !seen[pg] && len(out) < maxVisionPages {
			seen[pg] = true
			out = append(out, pg)
		}
	}
	slices.Sort(out)
	return out
}

// Defaults of the summarization options.
const (
	defaultMinimumInputLength = 1000
	defaultOutputTokenLimit   = 1000
)

// Stacks: realtime-v1 (the default) reports indexingStack v2, legacy v1.
const (
	StackRealtime = "realtime-v1"
	StackLegacy   = "legacy"
)

func configOf(f platform.File) config {
	raw, _ := json.Marshal(f.Metadata[IndexingMetadataKey])
	return configFrom(raw)
}

// configFrom reads an indexing object ({"configuration": {...}}), filling
// the defaults.
func configFrom(raw json.RawMessage) config {
	var c config
	var wrapper struct {
		Configuration json.RawMessage `json:"configuration"`
	}
	if json.Unmarshal(raw, &wrapper) == nil && len(wrapper.Configuration) > 0 {
		_ = json.Unmarshal(wrapper.Configuration, &c)
	}
	if c.Stack == "" {
		c.Stack = StackRealtime
	}
	if c.Summarization.ModelType == "" {
		c.Summarization.ModelType = platform.ModelBalanced
	}
	if c.Summarization.MinimumInputLength == 0 {
		c.Summarization.MinimumInputLength = defaultMinimumInputLength
	}
	if c.Summarization.OutputTokenLimit == 0 {
		c.Summarization.OutputTokenLimit = defaultOutputTokenLimit
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
