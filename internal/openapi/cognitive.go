package openapi

// The LLM API (docs/llm.md): a bot's model calls, by bot API key or by a
// token with x-bot-id.

var cognitiveUsage = props(obj{"inputTokens": integer, "inputCost": number, "outputTokens": integer, "outputCost": number},
	"inputTokens", "inputCost", "outputTokens", "outputCost")

var cognitiveMetadata = props(obj{
	"provider": str, "model": str, "usage": cognitiveUsage, "cost": number, "cached": boolean, "latency": integer, "ttft": integer,
	"stopReason": enum("stop", "max_tokens", "content_filter", "tool_calls", "other"),
	"warnings":   array(props(obj{"type": enum("parameter_ignored", "provider_limitation", "fallback_used"), "message": str}, "type", "message")),
}, "provider", "model", "usage", "cost")

var cognitiveToolCalls = array(props(obj{"id": str, "name": str, "input": object}, "id", "name", "input"))

var _ = describe(map[string]op{
	"generateText": {summary: "Generate text with the operator's models", errs: []int{403, 503},
		description: "best, auto and fast map to the accurate, balanced and inexpensive models of --ai-model-*; another id names a configured model, with or without a provider; an id not served falls back to the balanced model with a warning",
		result:      props(obj{"output": str, "reasoning": str, "toolCalls": cognitiveToolCalls, "metadata": cognitiveMetadata}, "output", "metadata")},
	"generateTextStream": {summary: "Generate text, streamed as it comes", errs: []int{403, 503}, media: "application/x-ndjson",
		description: "one JSON object a line: {output, reasoning, created} for each piece of the answer, then {finished: true, toolCalls, metadata, created}, or {finished: true, error} when the model server failed mid-answer",
		result:      props(obj{"output": str, "reasoning": str, "toolCalls": cognitiveToolCalls, "created": integer, "finished": boolean, "metadata": cognitiveMetadata, "error": str}, "created")},
	"listLanguageModels": {summary: "The models this server's model server serves, with their aliases and prices",
		result: wrap("models", array(props(obj{"id": str, "name": str, "description": str, "aliases": array(str), "tags": array(str),
			"input":  props(obj{"maxTokens": integer, "costPer1MTokens": number}, "maxTokens", "costPer1MTokens"),
			"output": props(obj{"maxTokens": integer, "costPer1MTokens": number}, "maxTokens", "costPer1MTokens"), "lifecycle": str},
			"id", "name", "tags", "input", "output")))},
})
