package cognitive

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/botplatform/botplatform/internal/platform"
)

// The llm interface's actions, as the built-in LLM integration answers them
// (callAction "openai:generateContent" and "openai:listLanguageModels"):
// what @botpress/cognitive 0.5 and
// @botpress/zai 2 call when they find an integration that implements it.

// Action runs an action of the llm interface for the calling bot.
func (s *Service) Action(ctx context.Context, c Caller, action string, input json.RawMessage) (json.RawMessage, error) {
	switch action {
	case "listLanguageModels":
		return json.Marshal(map[string]any{"models": s.Models()})
	case "generateContent":
		var in GenerateContentInput
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, platform.Invalid("input", "generateContent takes the llm interface's input: %v", err)
		}
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		resp, err := s.generateText(ctx, c, req, platform.LLMIntegration+":generateContent")
		if e, ok := platform.AsError(err); ok && e.Metadata["subtype"] == UpstreamFailed {
			// As an integration's action fails: a Runtime error, whose
			// subtype makes @botpress/cognitive 0.5 fall back to another
			// model (a 503 would make it give up).
			return nil, &platform.Error{Type: platform.TypeRuntime, Message: e.Message, Metadata: e.Metadata}
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(contentOutput(resp))
	}
	return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the %s integration has the actions generateContent and listLanguageModels", action, platform.LLMIntegration)
}

// GenerateContentInput is the llm interface's generateContent input.
type GenerateContentInput struct {
	Model          *struct{ ID string }  `json:"model"`
	SystemPrompt   string                `json:"systemPrompt"`
	Messages       []Message             `json:"messages"`
	ResponseFormat string                `json:"responseFormat"`
	MaxTokens      int                   `json:"maxTokens"`
	Temperature    *float64              `json:"temperature"`
	TopP           *float64              `json:"topP"`
	StopSequences  []string              `json:"stopSequences"`
	Tools          []GenerateContentTool `json:"tools"`
	ToolChoice     *struct {
		Type         string `json:"type"` // auto, specific, any, none
		FunctionName string `json:"functionName"`
	} `json:"toolChoice"`
	ReasoningEffort string `json:"reasoningEffort"`
}

// GenerateContentTool is a tool of the llm interface's input.
type GenerateContentTool struct {
	Type     string `json:"type"`
	Function struct {
		Name            string          `json:"name"`
		Description     string          `json:"description"`
		ArgumentsSchema json.RawMessage `json:"argumentsSchema"`
	} `json:"function"`
}

// request is in as a generate-text request.
func (in GenerateContentInput) request() (Request, error) {
	if len(in.Messages) == 0 && in.SystemPrompt == "" {
		return Request{}, platform.Invalid("input.messages", "is required")
	}
	req := Request{Messages: in.Messages, SystemPrompt: in.SystemPrompt, MaxTokens: in.MaxTokens, Temperature: in.Temperature,
		TopP: in.TopP, ResponseFormat: in.ResponseFormat, ReasoningEffort: in.ReasoningEffort}
	if in.Model != nil && in.Model.ID != "" {
		req.Model, _ = json.Marshal(in.Model.ID)
	}
	if len(in.StopSequences) > 0 {
		req.StopSequences, _ = json.Marshal(in.StopSequences)
	}
	for i, t := range in.Tools {
		if t.Function.Name == "" {
			return Request{}, platform.Invalid(fmt.Sprintf("input.tools.%d.function.name", i), "is required")
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.ArgumentsSchema})
	}
	if tc := in.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto", "none":
			req.ToolControl = &ToolControl{Mode: tc.Type}
		case "any":
			req.ToolControl = &ToolControl{Mode: "required"}
		case "specific":
			req.ToolControl = &ToolControl{Mode: "specific", ToolName: tc.FunctionName}
		}
	}
	return req, nil
}

// contentOutput is resp as the llm interface's generateContent output.
func contentOutput(resp Response) map[string]any {
	md := resp.Metadata
	choice := map[string]any{"role": "assistant", "type": "text", "content": resp.Output, "index": 0, "stopReason": md.StopReason}
	if len(resp.ToolCalls) > 0 {
		calls := make([]map[string]any, len(resp.ToolCalls))
		for i, tc := range resp.ToolCalls {
			calls[i] = map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Input}}
		}
		choice["type"], choice["toolCalls"] = "tool_calls", calls
		if resp.Output == "" {
			choice["content"] = nil
		}
	}
	return map[string]any{
		"id": platform.NewID("gen_"), "provider": md.Provider, "model": md.Model, "choices": []any{choice},
		"usage":    map[string]any{"inputTokens": md.Usage.InputTokens, "inputCost": md.Usage.InputCost, "outputTokens": md.Usage.OutputTokens, "outputCost": md.Usage.OutputCost},
		"botpress": map[string]any{"cost": md.Cost},
	}
}
