package platform

// Model types of indexing.configuration (summarization.modelType): the
// server is configured with one model name for each.
const (
	ModelInexpensive = "inexpensive"
	ModelBalanced    = "balanced"
	ModelAccurate    = "accurate"
)

// ModelTypes lists the model types, cheapest first.
var ModelTypes = []string{ModelInexpensive, ModelBalanced, ModelAccurate}

// ModelPrice is what a model costs, in US dollars per million tokens: an
// entry of AI Spend's price table (--ai-prices).
type ModelPrice struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}
