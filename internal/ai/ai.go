// Package ai calls language models for the AI-assisted indexing options
// (agent parsing, smart cleanup, summaries, vision) through any server that
// speaks the OpenAI chat completions protocol, and prices each call for AI
// Spend.
package ai

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Model types of indexing.configuration (summarization.modelType).
const (
	Inexpensive = platform.ModelInexpensive
	Balanced    = platform.ModelBalanced
	Accurate    = platform.ModelAccurate
)

// Image is an image sent with a request (vision).
type Image struct {
	MIME string // image/png, image/jpeg
	Data []byte
}

// Request is one chat completion: a system prompt, the user's text and
// images, and a bound on the answer's length.
type Request struct {
	ModelType string // Inexpensive, Balanced or Accurate
	System    string
	Prompt    string
	Images    []Image
	MaxTokens int // 0: the server's default
}

// Response is the model's answer and what it cost in tokens.
type Response struct {
	Text         string
	Model        string // the model name used (the configured one)
	InputTokens  int64
	OutputTokens int64
}

// Model completes requests.
type Model interface {
	Complete(ctx context.Context, r Request) (Response, error)
}

// Price is what a model costs, in US dollars per million tokens (declared
// in platform, so configuration can read a price table without this client).
type Price = platform.ModelPrice

// Config configures the OpenAI-compatible client.
type Config struct {
	URL    string            // API base, e.g. http://127.0.0.1:11434/v1
	Key    string            // bearer token; empty for servers that need none
	Models map[string]string // model type -> model name
	// Servers are more model servers by name: a model name ending in
	// @<name> is that server's model (the part before the @).
	Servers map[string]Server
	// Aliases map the model ids bots ask for (the LLM API's) to model
	// names, beyond best, auto and fast.
	Aliases map[string]string
	Prices  map[string]Price // model name (as configured, @server included) -> price
	Timeout time.Duration    // per HTTP request; 0: --ai-timeout's default
}

// Server is a model server beside Config.URL's.
type Server struct {
	URL, Key string
}

// Nanodollars is an amount of US dollars × 10^9 (AI Spend is counted in
// these, so that a cheap call still costs something countable).
type Nanodollars = int64

// Cost prices a call of model with the given tokens by the price table;
// a model without a price costs nothing.
func (c Config) Cost(model string, in, out int64) Nanodollars {
	p, ok := c.Prices[model]
	if !ok {
		return 0
	}
	// dollars per million tokens = nanodollars per 1000 tokens... per token:
	// p × 10^9 / 10^6 = p × 1000 nanodollars.
	return int64(float64(in)*p.Input*1000 + float64(out)*p.Output*1000 + 0.5)
}
