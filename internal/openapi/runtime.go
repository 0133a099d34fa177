package openapi

// The Runtime API (docs/runtime-api.md): what bot code calls, by bot API
// key or by a token with x-bot-id.

// listParams are what the lists of users, conversations and messages take.
var listParams = with(page, tagFilter,
	query("afterDate", date, "only those created (or updated, by rangeField) after this time"),
	query("beforeDate", date, "only those created (or updated, by rangeField) before this time"))

var sortParams = []parameter{
	query("sortField", enum("createdAt", "updatedAt"), ""),
	query("rangeField", enum("createdAt", "updatedAt"), "the date afterDate and beforeDate apply to; the sortField if both are given"),
	query("sortDirection", enum("asc", "desc"), ""),
}

func created(key, schema string) obj {
	return props(obj{key: ref(schema), "meta": props(obj{"created": boolean}, "created")}, key, "meta")
}

func stateResult(cached bool) obj {
	if !cached {
		return wrap("state", ref("State"))
	}
	return props(obj{"state": ref("State"), "meta": props(obj{"cached": boolean}, "cached")}, "state", "meta")
}

var _ = describe(map[string]op{
	"callAction": {summary: "Run one of the bot's actions", errs: []int{403},
		result: props(obj{"output": object, "meta": props(obj{"cached": boolean}, "cached")}, "output", "meta")},

	"createUser":      {summary: "Create a user", status: 201, result: wrap("user", ref("User"))},
	"getOrCreateUser": {summary: "The user with these tags, created if none", result: created("user", "User")},
	"listUsers": {summary: "The bot's users", result: list("users", ref("User")),
		params: with(listParams, with(sortParams, query("conversationId", str, "only participants of this conversation"))...)},
	"getUser":    {summary: "A user", result: wrap("user", ref("User"))},
	"updateUser": {summary: "Change a user", result: wrap("user", ref("User"))},
	"deleteUser": {summary: "Delete a user", result: empty},

	"createConversation":      {summary: "Create a conversation", status: 201, result: wrap("conversation", ref("Conversation"))},
	"getOrCreateConversation": {summary: "The conversation with these tags, created if none", result: created("conversation", "Conversation")},
	"listConversations": {summary: "The bot's conversations", result: list("conversations", ref("Conversation")),
		params: with(listParams, with(sortParams,
			query("participantIds", array(str), "only conversations with all these participants"),
			query("channel", str, ""), query("integrationName", str, ""),
			query("minMessageCount", integer, ""), query("maxMessageCount", integer, ""))...)},
	"getConversation":    {summary: "A conversation", result: wrap("conversation", ref("Conversation"))},
	"updateConversation": {summary: "Change a conversation", result: wrap("conversation", ref("Conversation"))},
	"deleteConversation": {summary: "Delete a conversation", result: empty},
	"addParticipant":     {summary: "Add a participant to a conversation", result: wrap("participant", ref("User"))},
	"listParticipants":   {summary: "A conversation's participants", params: page, result: list("participants", ref("User"))},
	"getParticipant":     {summary: "A participant of a conversation", result: wrap("participant", ref("User"))},
	"removeParticipant":  {summary: "Remove a participant from a conversation", result: empty},

	"createMessage":      {summary: "Send a message", status: 201, result: wrap("message", ref("Message"))},
	"getOrCreateMessage": {summary: "The message with these tags, sent if none", result: created("message", "Message")},
	"importMessages":     {summary: "Record past messages", result: wrap("messages", array(ref("Message")))},
	"listMessages": {summary: "The bot's messages", result: list("messages", ref("Message")),
		params: with(listParams, query("conversationId", str, "only this conversation's"))},
	"getMessage":    {summary: "A message", result: wrap("message", ref("Message"))},
	"updateMessage": {summary: "Change a message", result: wrap("message", ref("Message"))},
	"deleteMessage": {summary: "Delete a message", result: empty},
	"listTagValues": {summary: "The values of a tag key", result: list("tags", props(obj{"value": str}, "value")),
		params: with(page, required(query("type", enum("user", "conversation", "message"), "what the tag is on")))},

	"getState":       {summary: "A state", result: stateResult(true)},
	"setState":       {summary: "Set a state (null payload: delete it)", result: stateResult(false)},
	"patchState":     {summary: "Merge into a state", result: stateResult(false)},
	"getOrSetState":  {summary: "A state, set to the payload if it has none", result: stateResult(true)},
	"setStateExpiry": {summary: "Change when a state expires (null: never)", result: stateResult(false)},

	"createEvent": {summary: "Create an event for the bot's handlers, now or scheduled", status: 201, result: wrap("event", ref("Event"))},
	"getEvent":    {summary: "An event", result: wrap("event", ref("Event"))},
	"listEvents": {summary: "The bot's events", result: list("events", ref("Event")), params: with(page,
		query("type", str, ""), query("conversationId", str, ""), query("userId", str, ""), query("messageId", str, ""),
		query("workflowId", str, ""), query("status", enum("pending", "scheduled", "processed", "failed", "ignored", "canceled"), ""))},
	"cancelScheduledEvent": {summary: "Cancel a scheduled event", result: empty},

	"createWorkflow":      {summary: "Create a workflow", status: 201, result: wrap("workflow", ref("Workflow"))},
	"getOrCreateWorkflow": {summary: "The workflow with these tags, created if none", result: created("workflow", "Workflow")},
	"listWorkflows": {summary: "The bot's workflows", result: list("workflows", ref("Workflow")), params: with(page, tagFilter,
		query("name", str, ""), query("conversationId", str, ""), query("userId", str, ""), query("parentWorkflowId", str, ""),
		query("statuses", array(str), "only workflows in one of these statuses"))},
	"getWorkflow":    {summary: "A workflow", result: wrap("workflow", ref("Workflow"))},
	"updateWorkflow": {summary: "Change a workflow", result: wrap("workflow", ref("Workflow"))},
	"deleteWorkflow": {summary: "Delete a workflow", result: empty},

	"trackAnalytics":     {summary: "Count a custom analytics figure", result: empty},
	"captureObservation": {summary: "Record an observation of the bot's work", result: empty},
})
