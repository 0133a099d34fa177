package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// The Runtime API's events (docs/runtime-api.md#events): events a bot
// creates for its own handlers.
func (a *api) runtimeEventRoutes(t *table) {
	rt := a.RuntimeAPI
	t.handle("POST /v1/chat/events", "createEvent", rtEventSchema, a.caller(writer(rtCreate("event", rt.CreateEvent, runtimeapi.EventJSON))))
	t.handle("GET /v1/chat/events/{id}", "getEvent", nil, a.caller(rtGet("event", rt.Event, runtimeapi.EventJSON)))
	t.handle("GET /v1/chat/events", "listEvents", nil, a.caller(a.rtListEvents))
	t.handle("DELETE /v1/chat/events/scheduled/{id}", "cancelScheduledEvent", nil, a.caller(writer(a.rtCancelScheduledEvent)))
}

var rtEventSchema = schema("runtime-event.json", `{"type":"object","additionalProperties":false,"required":["type","payload"],"properties":{
	"type":{"type":"string","minLength":1,"maxLength":200},"payload":{"type":"object"},
	"schedule":{"type":"object","additionalProperties":false,"properties":{"dateTime":{"type":"string"},"delay":{"type":"number"}}},
	"conversationId":{"type":"string","minLength":1},"userId":{"type":"string","minLength":1},
	"messageId":{"type":"string","minLength":1},"workflowId":{"type":"string","minLength":1}}}`)

func (a *api) rtListEvents(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	status, err := q.enum("status", platform.EventPending, platform.EventScheduled, platform.EventProcessed, platform.EventFailed,
		platform.EventIgnored, platform.EventCanceled)
	if err != nil {
		return err
	}
	evs, next, err := a.RuntimeAPI.ListEvents(r.Context(), c.BotID, runtimeapi.EventFilter{Page: p, Type: q.str("type"),
		ConversationID: q.str("conversationId"), UserID: q.str("userId"), MessageID: q.str("messageId"), WorkflowID: q.str("workflowId"), Status: status})
	if err != nil {
		return err
	}
	writeList(w, "events", evs, next, runtimeapi.EventJSON)
	return nil
}

func (a *api) rtCancelScheduledEvent(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if _, err := a.RuntimeAPI.CancelScheduledEvent(r.Context(), c.BotID, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}
