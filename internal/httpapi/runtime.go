package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

// The Runtime API: what runs bot code on demand. The Files API's
// authentication applies (a bot API key, or a token with x-bot-id).
func (a *api) runtimeRoutes() *table {
	t := newTable("Runtime")
	t.handle("POST /v1/chat/actions", "callAction", callActionSchema, a.caller(a.callAction))
	a.runtimeChatRoutes(t)
	a.runtimeStateRoutes(t)
	a.runtimeEventRoutes(t)
	a.runtimeWorkflowRoutes(t)
	a.runtimeTelemetryRoutes(t)
	return t
}

var callActionSchema = schema("call-action.json", `{"type":"object","additionalProperties":false,"required":["type"],
	"properties":{"type":{"type":"string","minLength":1},"input":{"type":"object"}}}`)

func (a *api) callAction(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if !c.CanWrite {
		return platform.Errorf(platform.TypeForbidden, "calling an action needs the developer role or a bot API key")
	}
	var body struct {
		Type  string          `json:"type"`
		Input json.RawMessage `json:"input"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	out, err := a.Actions.CallAction(r.Context(), c.BotID, body.Type, body.Input)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"output": out, "meta": map[string]any{"cached": false}})
	return nil
}
