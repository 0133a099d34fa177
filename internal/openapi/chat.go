package openapi

// The Chat API (compat-notes §1, docs/chat-api.md): operation ids are the
// chat client's names with the prefix "chat".

var chatPage = []parameter{query("nextToken", str, "the meta.nextToken of the previous page")}

var _ = describe(map[string]op{
	"chatProbe": {summary: "The connection probe the chat client sends before its first call",
		returns: "a greeting, when the webhook id is a bot's", media: "text/plain", result: str, errs: []int{429}},
	"chatHello": {summary: "The connection probe, without its trailing slash",
		returns: "a greeting, when the webhook id is a bot's", media: "text/plain", result: str, errs: []int{429}},

	"chatCreateUser": {summary: "Create a chat user", status: 201, returns: "the user and the key to send as x-user-key",
		result: props(obj{"user": ref("ChatUser"), "key": str}, "user", "key"), errs: []int{401, 409, 429}},
	"chatGetOrCreateUser": {summary: "The user of the x-user-key, created if new (a key the caller signed)", status: 201,
		result: wrap("user", ref("ChatUser"))},
	"chatGetUser":    {summary: "The caller", result: wrap("user", ref("ChatUser"))},
	"chatUpdateUser": {summary: "Change the caller's name, picture or profile", result: wrap("user", ref("ChatUser"))},
	"chatDeleteUser": {summary: "Delete the caller", result: empty},

	"chatCreateConversation": {summary: "Start a conversation", status: 201, result: wrap("conversation", ref("ChatConversation")),
		errs: []int{409}},
	"chatGetOrCreateConversation": {summary: "The conversation of that id, started if new", status: 201,
		result: wrap("conversation", ref("ChatConversation"))},
	"chatListConversations": {summary: "The conversations the caller owns, each with its newest message (lastMessage)", params: chatPage,
		result: list("conversations", ref("ChatConversation"))},
	"chatGetConversation":    {summary: "A conversation the caller takes part in", result: wrap("conversation", ref("ChatConversation"))},
	"chatDeleteConversation": {summary: "Delete a conversation the caller owns", result: empty},
	"chatListMessages":       {summary: "A conversation's messages", params: chatPage, result: list("messages", ref("ChatMessage"))},
	"chatListenConversation": {summary: "A conversation's signals, as Server-Sent Events",
		description: "Each signal is a message event whose data is {type, data}: message_created, event_created, participant_added, " +
			"participant_removed or message_deleted; data: ping is sent after a silence. The conversation id is sent unescaped " +
			"(it may hold slashes); send Accept: text/event-stream.",
		media: "text/event-stream", result: str, returns: "the stream"},
	"chatListParticipants": {summary: "A conversation's participants", params: chatPage,
		result: list("participants", ref("ChatUser"))},
	"chatAddParticipant": {summary: "Add a participant to a conversation the caller owns",
		result: wrap("participant", ref("ChatUser"))},
	"chatGetParticipant": {summary: "A participant of a conversation the caller owns",
		result: wrap("participant", ref("ChatUser"))},
	"chatRemoveParticipant": {summary: "Remove a participant from a conversation the caller owns", result: empty},

	"chatCreateMessage": {summary: "Send a message to a conversation", status: 201, result: wrap("message", ref("ChatMessage"))},
	"chatGetMessage":    {summary: "A message", result: wrap("message", ref("ChatMessage"))},
	"chatDeleteMessage": {summary: "Delete a message the caller sent", result: empty},
	"chatCreateEvent":   {summary: "Send a custom event to a conversation", status: 201, result: wrap("event", ref("ChatEvent"))},
	"chatGetEvent":      {summary: "An event", result: wrap("event", ref("ChatEvent"))},

	// The official web chat's (docs/webchat.md#the-official-web-chat).
	"chatInitialize": {summary: "Open the web chat: a conversation's signals, the first of which is init",
		description: "init carries {conversation, messages (newest first), participants, user with its userKey}. Without x-user-key " +
			"a new user is created; with x-admin-secret (the bot's encryption key), userId names the user. A conversationId the " +
			"user takes part in is reopened; one that names no conversation starts a new one. Then the conversation's signals: " +
			"message_created, message_updated, typing_started, typing_stopped, participant_added, participant_removed, custom, and, from the webchat integration's actions, webchat_visibility and webchat_config.",
		params: []parameter{query("conversationId", str, "the conversation to reopen"), query("userId", str, "the user to open it for (with x-admin-secret)")},
		media:  "text/event-stream", result: str, returns: "the stream", errs: []int{401, 403}},
	"chatGenerateUserKey": {summary: "A user key for the user of that id (x-admin-secret: the bot's encryption key)",
		result: props(obj{"key": str}, "key"), errs: []int{401}},
	"chatUpdateMessage": {summary: "Change the payload or metadata of a message the caller sent; signals message_updated",
		result: wrap("message", ref("ChatMessage")), errs: []int{403}},
	"chatAddMessageFeedback": {summary: "Give feedback on a message (positive or negative, with a comment); the bot reads it in the message's tags chat:feedback and chat:feedbackComment",
		result: empty},
	"chatRemoveMessageFeedback": {summary: "Remove the feedback on a message", result: empty},
	"chatCreateFile": {summary: "A file for the caller to upload (PUT its content to uploadUrl): images, audio, video, PDF, text or office documents, at most 25 MB, never indexed, expiring (30 days unless sooner)",
		status: 201, result: wrap("file", ref("File")), errs: []int{413}},
})
