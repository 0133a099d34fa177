package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// The Runtime API's analytics and observations, and the Admin API's
// introspect (docs/runtime-api.md#analytics-and-observations).
func (a *api) runtimeTelemetryRoutes(t *table) {
	t.handle("POST /v1/chat/analytics", "trackAnalytics", rtAnalyticsSchema, a.caller(writer(a.rtTrackAnalytics)))
	t.handle("POST /v1/chat/observations", "captureObservation", rtObservationSchema, a.caller(writer(a.rtCaptureObservation)))
}

var (
	rtAnalyticsSchema = schema("runtime-analytics.json", `{"type":"object","additionalProperties":false,"required":["name","count"],
		"properties":{"name":{"type":"string"},"count":{"type":"number"}}}`)
	rtObservationSchema = schema("runtime-observation.json", `{"type":"object","additionalProperties":false,"required":["name","data"],"properties":{
		"id":{"type":"string"},"name":{"type":"string"},"data":{"type":"object"},"messageId":{"type":"string"},"eventId":{"type":"string"},
		"conversationId":{"type":"string"},"userId":{"type":"string"},"errorId":{"type":"string"},"traceId":{"type":"string"}}}`)
	introspectSchema = schema("introspect.json", `{"type":"object","additionalProperties":false,"required":["botId"],
		"properties":{"botId":{"type":"string","minLength":1}}}`)
)

func (a *api) rtTrackAnalytics(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		Name  string  `json:"name"`
		Count float64 `json:"count"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := a.RuntimeAPI.TrackAnalytics(r.Context(), c.BotID, in.Name, in.Count); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (a *api) rtCaptureObservation(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in runtimeapi.Observation
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := a.RuntimeAPI.CaptureObservation(r.Context(), c.BotID, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

// introspect tells a token's holder where a bot lives: its workspace, and
// who the token acts as (the account of a personal access token; the bot
// itself for a bot API key).
func (a *api) introspect(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		BotID string `json:"botId"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := a.Files.Authorize(r.Context(), bearer(r), files.Headers{BotID: in.BotID})
	if err != nil {
		return err
	}
	if err := a.admit(w, who{token: bearer(r), bot: c.BotID}); err != nil {
		return err
	}
	userID := in.BotID
	if act, err := a.Admin.Authenticate(r.Context(), bearer(r), c.WorkspaceID); err == nil {
		userID = act.Account.ID
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspaceId": c.WorkspaceID, "botId": in.BotID, "userId": userID})
	return nil
}
