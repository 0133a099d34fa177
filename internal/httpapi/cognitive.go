package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/cognitive"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

// CognitiveLimit bounds a /v2/cognitive request: images travel in it as
// data URLs.
const CognitiveLimit = 32 << 20

// The LLM API (docs/llm.md): a bot's calls of the operator's models, with
// the Runtime API's authentication (a bot API key, or a token with
// x-bot-id).
func (a *api) cognitiveRoutes() *table {
	t := newTable("Cognitive")
	t.handle("POST /v2/cognitive/generate-text", "generateText", generateTextSchema, a.caller(a.generateText))
	t.handle("POST /v2/cognitive/generate-text-stream", "generateTextStream", generateTextSchema, a.caller(a.generateTextStream))
	t.handle("GET /v2/cognitive/models", "listLanguageModels", nil, a.caller(a.listCognitiveModels))
	return t
}

// generateTextSchema is cognitive's CognitiveRequest.
var generateTextSchema = schema("generate-text.json", `{"type":"object","additionalProperties":false,"required":["messages"],
	"properties":{
		"messages":{"type":"array","minItems":1,"items":{"type":"object","additionalProperties":false,"required":["role"],"properties":{
			"role":{"enum":["user","assistant","system"]},
			"content":{"anyOf":[{"type":"string"},{"type":"null"},{"type":"array","items":{"type":"object","additionalProperties":false,"required":["type"],"properties":{
				"type":{"enum":["text","image","audio"]},"text":{"type":"string"},"url":{"type":"string"},"mimeType":{"type":"string"}}}}]},
			"type":{"enum":["text","tool_calls","tool_result","multipart"]},
			"toolCalls":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["id","function"],"properties":{
				"id":{"type":"string"},"type":{"const":"function"},
				"function":{"type":"object","additionalProperties":false,"required":["name"],"properties":{
					"name":{"type":"string"},"arguments":{"type":["object","null"]}}}}}},
			"toolResultCallId":{"type":"string"}}}},
		"model":{"anyOf":[{"type":"string","minLength":1},{"type":"array","items":{"type":"string","minLength":1}}]},
		"temperature":{"type":"number","minimum":0,"maximum":2},
		"systemPrompt":{"type":"string"},
		"maxTokens":{"type":"integer","minimum":1},
		"stopSequences":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},
		"stream":{"type":"boolean"},
		"responseFormat":{"enum":["text","json","json_object"]},
		"reasoningEffort":{"enum":["low","medium","high","dynamic","none"]},
		"search":{"anyOf":[{"type":"boolean"},{"type":"object"}]},
		"tools":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name"],"properties":{
			"name":{"type":"string","minLength":1},"description":{"type":"string"},"parameters":{"type":"object"},"strict":{"type":"boolean"}}}},
		"toolControl":{"type":"object","additionalProperties":false,"required":["mode"],"properties":{
			"mode":{"enum":["auto","none","required","specific"]},"toolName":{"type":"string"},"parallel":{"type":"boolean"}}},
		"options":{"type":"object"},
		"meta":{"type":"object"}}}`)

// cognitiveRequest reads an LLM call: its caller, who must be one who may
// spend the workspace's money (the developer role, or the bot's own key),
// and its body.
func cognitiveRequest(r *http.Request, c *files.Caller) (cognitive.Caller, cognitive.Request, error) {
	var req cognitive.Request
	if !c.CanWrite {
		return cognitive.Caller{}, req, platform.Errorf(platform.TypeForbidden, "calling a model needs the developer role or a bot API key")
	}
	err := decode(r, &req)
	return cognitive.Caller{WorkspaceID: c.WorkspaceID, BotID: c.BotID}, req, err
}

func (a *api) generateText(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	caller, req, err := cognitiveRequest(r, c)
	if err != nil {
		return err
	}
	resp, err := a.Cognitive.GenerateText(r.Context(), caller, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// generateTextStream answers with NDJSON: a line for each piece of the
// answer as the model server sends it, then a last line that is finished
// (with the tool calls and the metadata, or the error that ended it).
func (a *api) generateTextStream(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	caller, req, err := cognitiveRequest(r, c)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	started := false
	err = a.Cognitive.GenerateTextStream(r.Context(), caller, req, func(ch cognitive.Chunk) error {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "application/x-ndjson")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		b, err := json.Marshal(ch)
		if err != nil {
			return err
		}
		_ = rc.SetWriteDeadline(time.Now().Add(a.StreamWriteTimeout))
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return rc.Flush()
	})
	if started {
		return nil // the stream's last line says how it ended; or the client left
	}
	return err
}

func (a *api) listCognitiveModels(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	writeJSON(w, http.StatusOK, map[string]any{"models": a.Cognitive.Models()})
	return nil
}
