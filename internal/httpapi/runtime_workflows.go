package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/runtimeapi"
)

// The Runtime API's workflows (docs/runtime-api.md#workflows).
func (a *api) runtimeWorkflowRoutes(t *table) {
	rt := a.RuntimeAPI
	t.handle("POST /v1/chat/workflows", "createWorkflow", rtWorkflowSchema, a.caller(writer(rtCreate("workflow", rt.CreateWorkflow, runtimeapi.WorkflowJSON))))
	t.handle("POST /v1/chat/workflows/get-or-create", "getOrCreateWorkflow", rtWorkflowSchema, a.caller(writer(rtGetOrCreate("workflow", rt.GetOrCreateWorkflow, runtimeapi.WorkflowJSON))))
	t.handle("GET /v1/chat/workflows", "listWorkflows", nil, a.caller(a.rtListWorkflows))
	t.handle("GET /v1/chat/workflows/{id}", "getWorkflow", nil, a.caller(rtGet("workflow", rt.Workflow, runtimeapi.WorkflowJSON)))
	t.handle("PUT /v1/chat/workflows/{id}", "updateWorkflow", rtWorkflowUpdateSchema, a.caller(writer(rtUpdate("workflow", rt.UpdateWorkflow, runtimeapi.WorkflowJSON))))
	t.handle("DELETE /v1/chat/workflows/{id}", "deleteWorkflow", nil, a.caller(writer(rtDelete(rt.DeleteWorkflow))))
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
