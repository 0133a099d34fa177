package openapi

// The Admin API (compat-notes §2.3, docs/admin-api.md).

var usageParams = []parameter{
	required(query("type", enum("file_storage_bytes", "knowledgebase_vector_storage", "file_max_size_bytes", "ai_spend", "table_rows"), "the quota or usage")),
	query("period", str, "the month of ai_spend usage (YYYY-MM); the current one by default"),
}

var _ = describe(map[string]op{
	"getAccount": {summary: "The caller's account", result: wrap("account", ref("Account"))},
	"createPersonalAccessToken": {summary: "Create a personal access token", returns: "the token, with its value",
		result: wrap("pat", ref("Token"))},
	"listPersonalAccessTokens":  {summary: "The caller's personal access tokens", result: wrap("pats", array(ref("Token")))},
	"deletePersonalAccessToken": {summary: "Delete a personal access token", result: empty},

	"createWorkspace": {summary: "Create a workspace", result: ref("Workspace"), errs: []int{409}},
	"listWorkspaces": {summary: "The workspaces the caller is a member of", result: list("workspaces", ref("Workspace")),
		params: with(page, query("handle", str, "only the workspace of this handle"))},
	"getWorkspace":    {summary: "A workspace", result: ref("Workspace")},
	"updateWorkspace": {summary: "Update a workspace", result: ref("Workspace"), errs: []int{409}},
	"deleteWorkspace": {summary: "Delete a workspace, its bots and their data", result: empty},
	"getAuditRecords": {summary: "The workspace's audit log, newest first (administrators and the owner)",
		params: []parameter{query("nextToken", str, "the meta.nextToken of the previous page"),
			query("pageSize", obj{"type": "integer", "minimum": 1, "maximum": 1000}, "how many records a page has at most (default 100)")},
		returns: "actions outside the official client's enum are UNKNOWN, their name first in value (docs/data.md#audit-log)",
		result:  list("records", ref("AuditRecord")), errs: []int{403}},

	"listWorkspaceMembers":  {summary: "The members of the workspace", result: list("members", ref("Member")), params: page},
	"getWorkspaceMember":    {summary: "The caller's membership of the workspace", result: ref("Member")},
	"createWorkspaceMember": {summary: "Add a member to the workspace", result: ref("Member"), errs: []int{404, 409}},
	"updateWorkspaceMember": {summary: "Change a member's role", result: ref("Member")},
	"deleteWorkspaceMember": {summary: "Remove a member from the workspace", result: empty},

	"createBot": {summary: "Create a bot", returns: "the bot, with its signing secret", result: wrap("bot", ref("Bot")), errs: []int{403}},
	"listBots": {summary: "The workspace's bots", result: list("bots", ref("BotSummary")), params: with(page,
		query("dev", boolean, "true: development bots only; otherwise production bots only"),
		tagFilter,
		query("integrationNames", array(str), "only bots with one of these integrations"),
		query("pluginNames", array(str), "only bots with one of these plugins"),
		query("sortField", enum("createdAt", "updatedAt"), ""),
		query("sortDirection", enum("asc", "desc"), ""))},
	"getBot":    {summary: "A bot", result: wrap("bot", ref("Bot"))},
	"updateBot": {summary: "Update or deploy a bot", result: wrap("bot", ref("Bot"))},
	"deleteBot": {summary: "Delete a bot and its data", result: empty},
	"getBotLogs": {summary: "A bot's logs", params: []parameter{
		required(query("timeStart", date, "from this time")),
		query("timeEnd", date, "to this time"),
		query("level", str, ""), query("userId", str, ""), query("conversationId", str, ""), query("workflowId", str, ""),
		query("messageContains", str, "only lines containing this text"),
		query("nextToken", str, "the nextToken of the previous page")},
		returns: "a page of logs; nextToken is at the top level, not in meta",
		result: props(obj{"logs": array(props(obj{"timestamp": date, "level": str, "message": str, "workflowId": str, "userId": str,
			"conversationId": str}, "timestamp", "level", "message")), "nextToken": str}, "logs")},
	"getBotAnalytics": {summary: "A bot's daily figures", params: []parameter{
		required(query("startDate", date, "")), required(query("endDate", date, ""))},
		result: wrap("records", array(props(obj{"startDateTimeUtc": date, "endDateTimeUtc": date, "returningUsers": integer,
			"newUsers": integer, "sessions": integer, "messages": integer, "userMessages": integer, "botMessages": integer,
			"events": integer, "eventTypes": object, "customEvents": object, "llm": object}, "startDateTimeUtc", "endDateTimeUtc")))},
	"getBotFetchHosts": {summary: "The hosts a bot's code may fetch from (this server's; docs/bot-code.md#fetch)",
		result: wrap("hosts", array(str))},
	"setBotFetchHosts": {summary: "Set the hosts a bot's code may fetch from (this server's)", result: wrap("hosts", array(str))},
	"introspect": {summary: "Where a bot lives and who the token acts as",
		result: props(obj{"workspaceId": str, "botId": str, "userId": str}, "workspaceId", "botId", "userId"), errs: []int{404}},
	"rotateBotSigningSecrets": {summary: "Give a bot a new signing secret", result: wrap("newSigningSecret", str)},

	"getPublicIntegrationById": {summary: "An integration of the hub (only the built-in chat integration here)",
		result: wrap("integration", object)},
	"getPublicIntegration": {summary: "An integration of the hub by name and version (chat, 1.0.0 or latest)",
		result: wrap("integration", object)},

	"createBotApiKey": {summary: "Create a bot API key", returns: "the key, with its value (not wrapped)", result: ref("Token"),
		errs: []int{404}},
	"listBotApiKeys": {summary: "A bot's API keys", params: []parameter{required(query("botId", str, ""))},
		result: wrap("baks", array(ref("Token")))},
	"deleteBotApiKey": {summary: "Delete a bot API key", result: empty},

	"listWorkspaceQuotas": {summary: "The workspace's quotas", result: wrap("quotas", array(ref("Quota")))},
	"setWorkspaceQuotas": {summary: "Set storage quotas in bytes; null returns one to the plan's (this server's)",
		returns: "every quota, as listWorkspaceQuotas", result: wrap("quotas", array(ref("Quota")))},
	"getWorkspaceQuota": {summary: "One quota of the workspace", params: usageParams[:1], result: wrap("quota", ref("Quota"))},
	"listWorkspaceUsages": {summary: "The workspace's usage of one quota", params: usageParams,
		result: wrap("usages", array(ref("Usage")))},
	"breakDownWorkspaceUsageByBot": {summary: "AI spending of the month by bot, most first (ai_spend only)", params: usageParams,
		result: wrap("data", array(props(obj{"botId": str, "value": number}, "botId", "value")))},
	"getUsage":           {summary: "The usage of a workspace, or a bot's AI spending", params: usageParams, result: wrap("usage", ref("Usage"))},
	"changeAISpendQuota": {summary: "Set the workspace's monthly AI spending limit (US dollars)", result: empty},
})
