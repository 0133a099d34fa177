package openapi

// The objects responses carry. They list the fields the server always or
// sometimes sends (compat-notes §1.5, §2.2, §2.3, docs/runtime-api.md,
// docs/tables.md); objects may carry more.

func schemas() obj {
	tagMap := mapOf(str)
	tagDefs := wrap("tags", mapOf(props(obj{"title": str, "description": str})))
	return obj{
		"Error": errorSchema,
		"Meta":  props(obj{"nextToken": obj{"type": "string", "description": "absent on the last page"}}),

		// Admin.
		"Account": props(obj{"id": str, "email": str, "displayName": str, "emailVerified": boolean, "profilePicture": str, "createdAt": date},
			"id", "email", "emailVerified", "createdAt"),
		"Token": props(obj{"id": str, "createdAt": date, "note": str,
			"value": obj{"type": "string", "description": "the token itself, shown only when it is created"}}, "id", "createdAt", "note"),
		"Workspace": props(obj{"id": str, "name": str, "ownerId": str, "createdAt": date, "updatedAt": date, "botCount": integer,
			"billingVersion": str, "plan": str, "blocked": boolean, "spendingLimit": integer, "about": str, "profilePicture": str,
			"contactEmail": str, "website": str, "socialAccounts": array(str), "isPublic": boolean, "handle": str,
			"activeTrialId": nullable(str)},
			"id", "name", "ownerId", "createdAt", "updatedAt", "botCount", "billingVersion", "plan", "blocked", "spendingLimit", "isPublic"),
		"Member": props(obj{"id": str, "userId": str, "email": str, "displayName": str,
			"role": enum("viewer", "billing", "developer", "manager", "administrator", "owner"), "createdAt": date},
			"id", "userId", "email", "role", "createdAt"),
		"Bot": props(obj{"id": str, "createdAt": date, "updatedAt": date, "signingSecret": str, "integrations": mapOf(object),
			"plugins": mapOf(object), "maxExecutionTime": integer, "user": tagDefs, "conversation": tagDefs, "message": tagDefs,
			"states": mapOf(object), "configuration": props(obj{"data": object, "schema": object}), "events": mapOf(object),
			"recurringEvents": mapOf(object), "subscriptions": props(obj{"events": nullable(mapOf(object))}), "actions": mapOf(object),
			"tags": tagMap, "name": str, "description": str, "deployedAt": date, "dev": boolean, "secrets": array(str),
			"createdBy": str, "alwaysAlive": boolean, "status": str, "medias": array(props(obj{"url": str, "name": str})),
			"type": str, "blocked": boolean, "authentication": str, "layers": array(str),
			"url": obj{"type": "string", "description": "where a bot written with @botpress/sdk is served"}},
			"id", "createdAt", "updatedAt", "signingSecret", "integrations", "plugins", "user", "conversation", "message", "states",
			"configuration", "events", "recurringEvents", "subscriptions", "actions", "tags", "name", "dev", "secrets", "alwaysAlive",
			"status", "medias", "type"),
		"BotVersion": props(obj{"id": str, "name": str, "description": str, "createdAt": date, "createdBy": str,
			"current": obj{"type": "boolean", "description": "in listBotVersions: true on the versions the bot runs now (this server's)"}}, "id", "name"),
		"BotSummary": props(obj{"id": str, "createdAt": date, "updatedAt": date, "name": str, "deployedAt": date, "tags": tagMap, "type": str},
			"id", "createdAt", "updatedAt", "name", "tags", "type"),
		"AuditRecord": props(obj{"id": str, "recordedAt": date, "userId": nullable(str), "userEmail": nullable(str),
			"resourceId": nullable(str), "resourceName": nullable(str), "value": nullable(str), "action": str},
			"id", "recordedAt", "userId", "resourceId", "action"),
		"Quota": props(obj{"period": str, "value": integer, "type": str}, "period", "value", "type"),
		"Usage": props(obj{"id": str, "period": str, "value": obj{"type": "number", "description": "bytes, or US dollars for ai_spend"},
			"quota": integer, "type": str}, "id", "period", "value", "quota", "type"),

		// Files.
		"File": props(obj{"id": str, "botId": str, "key": str, "url": str, "size": nullable(integer), "contentType": str,
			"tags": tagMap, "metadata": object, "createdAt": date, "updatedAt": date,
			"accessPolicies": array(enum("public_content", "integrations")), "index": boolean,
			"status":             enum("upload_pending", "upload_failed", "upload_completed", "indexing_pending", "indexing_failed", "indexing_completed"),
			"failedStatusReason": str, "expiresAt": date, "owner": props(obj{"type": str, "id": str, "name": str, "alias": str}),
			"indexingStack": str,
			"uploadUrl":     obj{"type": "string", "description": "where to PUT the content; only for callers that may change files"}},
			"id", "botId", "key", "url", "size", "contentType", "tags", "metadata", "createdAt", "updatedAt", "accessPolicies", "index",
			"status", "owner"),
		"PassageMeta": props(obj{"type": str, "subtype": str, "position": integer, "pageNumber": integer, "sourceUrl": str}),
		"Passage":     props(obj{"id": str, "content": str, "meta": ref("PassageMeta")}, "id", "content", "meta"),
		"SearchPassage": props(obj{"content": str, "score": number, "meta": ref("PassageMeta"),
			"file":    props(obj{"id": str, "key": str, "contentType": str, "metadata": object, "tags": tagMap, "createdAt": date, "updatedAt": date}),
			"context": array(object),
			// explain: with explain=true only (this server's; docs/indexing.md).
			"explain": props(obj{"score": number, "fullText": object, "vector": object, "vectorWeight": number,
				"words": array(object), "relatedWords": array(object), "missingWords": array(str)})}, "content", "score", "meta", "file"),
		"KnowledgeBase": props(obj{"id": str, "name": str, "tags": tagMap, "createdAt": date}, "id", "name", "createdAt"),

		"PublicWorkspace": props(obj{"id": str, "name": str, "createdAt": date, "updatedAt": date, "about": str, "profilePicture": str,
			"contactEmail": str, "website": str, "socialAccounts": array(str), "handle": str}, "id", "name", "createdAt", "updatedAt"),

		// Chat API.
		"ChatUser": props(obj{"id": str, "name": str, "pictureUrl": str, "profile": str, "data": object,
			"attributes": obj{"type": "object", "additionalProperties": str}, "createdAt": date, "updatedAt": date},
			"id", "createdAt", "updatedAt"),
		"ChatConversation": props(obj{"id": str, "createdAt": date, "updatedAt": date, "lastMessage": ref("ChatMessage")}, "id", "createdAt", "updatedAt"),
		"ChatMessage": props(obj{"id": str, "createdAt": date, "payload": object, "userId": str, "conversationId": str,
			"metadata": object, "feedback": props(obj{"value": obj{"enum": []string{"positive", "negative"}}, "comment": str}, "value")},
			"id", "createdAt", "payload", "userId", "conversationId"),
		"ChatEvent": props(obj{"id": str, "createdAt": date, "payload": object, "conversationId": str, "userId": str},
			"id", "createdAt", "payload", "conversationId", "userId"),

		// Runtime API.
		"User": props(obj{"id": str, "createdAt": date, "updatedAt": date, "tags": tagMap, "name": str, "pictureUrl": str},
			"id", "createdAt", "updatedAt", "tags"),
		"Conversation": props(obj{"id": str, "createdAt": date, "updatedAt": date, "channel": str, "integration": str, "tags": tagMap,
			"messageCount": integer}, "id", "createdAt", "updatedAt", "channel", "integration", "tags"),
		"Message": props(obj{"id": str, "createdAt": date, "updatedAt": date, "type": str, "payload": object,
			"direction": enum("incoming", "outgoing"), "userId": str, "conversationId": str, "tags": tagMap},
			"id", "createdAt", "updatedAt", "type", "payload", "direction", "userId", "conversationId", "tags"),
		"Event": props(obj{"id": str, "createdAt": date, "type": str, "payload": object,
			"status": enum("pending", "scheduled", "processed", "failed", "ignored", "canceled"), "failureReason": nullable(str),
			"conversationId": str, "userId": str, "messageId": str}, "id", "createdAt", "type", "payload", "status", "failureReason"),
		"State": props(obj{"id": str, "createdAt": date, "updatedAt": date, "botId": str, "name": str,
			"type": enum("conversation", "user", "bot"), "payload": object, "conversationId": str, "userId": str,
			"expiry": number, "expiresAt": date}, "id", "createdAt", "updatedAt", "botId", "name", "type", "payload"),
		"Workflow": props(obj{"id": str, "name": str, "status": str, "input": object, "output": object, "createdAt": date,
			"updatedAt": date, "timeoutAt": date, "tags": tagMap, "parentWorkflowId": str, "conversationId": str, "userId": str,
			"failureReason": str, "completedAt": date}, "id", "name", "status", "input", "output", "createdAt", "updatedAt", "timeoutAt", "tags"),

		// Tables.
		"Table": props(obj{"id": str, "name": str, "factor": number, "frozen": boolean, "keyColumn": nullable(str), "schema": object,
			"tags": tagMap, "isComputeEnabled": boolean, "createdAt": date, "updatedAt": date},
			"id", "name", "factor", "frozen", "keyColumn", "schema", "tags", "isComputeEnabled", "createdAt", "updatedAt"),
		"Row": props(obj{"id": integer, "createdAt": date, "updatedAt": date, "computed": object, "stale": array(str)},
			"id", "createdAt", "updatedAt"),
		"TableJob": props(obj{"id": str, "botId": str, "tableId": str, "type": str, "status": str, "progress": number,
			"inputFileId": nullable(str), "outputFileId": nullable(str), "createdAt": date, "updatedAt": date},
			"id", "botId", "tableId", "type", "status", "progress", "createdAt", "updatedAt"),
	}
}
