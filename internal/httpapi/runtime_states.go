package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// The Runtime API's states (docs/runtime-api.md#states).
func (a *api) runtimeStateRoutes(t *table) {
	const p = "/v1/chat/states/{type}/{id}/{name}"
	t.handle("GET "+p, "getState", nil, a.caller(a.rtGetState))
	t.handle("POST "+p, "setState", rtSetStateSchema, a.caller(writer(a.rtSetState)))
	t.handle("PATCH "+p, "patchState", rtStateSchema, a.caller(writer(a.rtPatchState)))
	t.handle("POST "+p+"/get-or-set", "getOrSetState", rtStateSchema, a.caller(writer(a.rtGetOrSetState)))
	t.handle("POST "+p+"/expiry", "setStateExpiry", rtStateExpirySchema, a.caller(writer(a.rtSetStateExpiry)))
}

const stateExpiry = `"expiry":{"type":["number","null"]}`

var (
	rtSetStateSchema = schema("runtime-set-state.json", `{"type":"object","additionalProperties":false,"required":["payload"],
		"properties":{"payload":{"type":["object","null"]},`+stateExpiry+`}}`)
	rtStateSchema = schema("runtime-state.json", `{"type":"object","additionalProperties":false,"required":["payload"],
		"properties":{"payload":{"type":"object"},`+stateExpiry+`}}`)
	rtStateExpirySchema = schema("runtime-state-expiry.json", `{"type":"object","additionalProperties":false,"required":["expiry"],
		"properties":{`+stateExpiry+`}}`)
)

func stateKey(r *http.Request) runtimeapi.StateKey {
	return runtimeapi.StateKey{Type: r.PathValue("type"), ID: r.PathValue("id"), Name: r.PathValue("name")}
}

func (a *api) rtGetState(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	st, err := a.RuntimeAPI.GetState(r.Context(), c.BotID, stateKey(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": runtimeapi.StateJSON(st), "meta": map[string]bool{"cached": false}})
	return nil
}

func (a *api) rtSetState(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in runtimeapi.StateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := a.RuntimeAPI.SetState(r.Context(), c.BotID, c.WorkspaceID, stateKey(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": runtimeapi.StateJSON(st)})
	return nil
}

func (a *api) rtGetOrSetState(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in runtimeapi.StateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	st, _, err := a.RuntimeAPI.GetOrSetState(r.Context(), c.BotID, c.WorkspaceID, stateKey(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": runtimeapi.StateJSON(st), "meta": map[string]bool{"cached": false}})
	return nil
}

func (a *api) rtPatchState(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in runtimeapi.StateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := a.RuntimeAPI.PatchState(r.Context(), c.BotID, c.WorkspaceID, stateKey(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": runtimeapi.StateJSON(st)})
	return nil
}

func (a *api) rtSetStateExpiry(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		Expiry json.RawMessage `json:"expiry"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := a.RuntimeAPI.SetStateExpiry(r.Context(), c.BotID, stateKey(r), in.Expiry)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": runtimeapi.StateJSON(st)})
	return nil
}
