package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// The Runtime API's workflows (docs/runtime-api.md#workflows).
func (a *api) runtimeWorkflowRoutes(m *http.ServeMux) {
	rt := a.RuntimeAPI
	m.Handle("POST /v1/chat/workflows", a.caller(writer(rtCreate(rtWorkflowSchema, "workflow", rt.CreateWorkflow, runtimeapi.WorkflowJSON))))
	m.Handle("POST /v1/chat/workflows/get-or-create", a.caller(writer(rtGetOrCreate(rtWorkflowSchema, "workflow", rt.GetOrCreateWorkflow, runtimeapi.WorkflowJSON))))
	m.Handle("GET /v1/chat/workflows", a.caller(a.rtListWorkflows))
	m.Handle("GET /v1/chat/workflows/{id}", a.caller(rtGet("workflow", rt.Workflow, runtimeapi.WorkflowJSON)))
	m.Handle("PUT /v1/chat/workflows/{id}", a.caller(writer(rtUpdate(rtWorkflowUpdateSchema, "workflow", rt.UpdateWorkflow, runtimeapi.WorkflowJSON))))
	m.Handle("DELETE /v1/chat/workflows/{id}", a.caller(writer(rtDelete(rt.DeleteWorkflow))))
}

var (
	rtWorkflowSchema = schema("runtime-workflow.json", `{"type":"object","additionalProperties":false,"required":["name","status"],"properties":{
		"name":{"type":"string"},"input":{"type":"object"},"parentWorkflowId":{"type":"string"},"conversationId":{"type":"string"},
		"userId":{"type":"string"},"timeoutAt":{"type":"string"},"tags":`+tagsSchema+`,"status":{"type":"string"},"eventId":{"type":"string"},
		"discriminateByTags":`+discriminateSchema+`,"discriminateByStatusGroup":{"type":"string"}}}`)
	rtWorkflowUpdateSchema = schema("runtime-workflow-update.json", `{"type":"object","additionalProperties":false,"properties":{
		"output":{"type":"object"},"timeoutAt":{"type":"string"},"status":{"type":"string"},"failureReason":{"type":"string"},
		"tags":{"type":"object","additionalProperties":{"type":["string","null"]}},"userId":{"type":"string"},"eventId":{"type":"string"}}}`)
)

func (a *api) rtListWorkflows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	tags, err := q.tags()
	if err != nil {
		return err
	}
	ws, next, err := a.RuntimeAPI.ListWorkflows(r.Context(), c.BotID, runtimeapi.WorkflowFilter{Page: p, Name: q.str("name"),
		ConversationID: q.str("conversationId"), UserID: q.str("userId"), ParentWorkflowID: q.str("parentWorkflowId"),
		Statuses: q.list("statuses"), Tags: tags})
	if err != nil {
		return err
	}
	writeList(w, "workflows", ws, next, runtimeapi.WorkflowJSON)
	return nil
}
