package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
)

// The hub holds the built-in integrations (chat, which every bot has;
// webchat, the official web chat's channel, which agents install; and
// openai, which a bot installs to call the operator's models through the
// llm interface, docs/llm.md: any version asked for is this one, so that a
// bot written for the hosted openai integration deploys as it is) and the
// integrations workspaces deployed public or unlisted
// (docs/integrations.md). `bp deploy` and `bp dev` look a bot's declared
// integrations up in the workspace (getIntegrationByName), then here.

// chatVersion is the built-in chat integration's version; "latest" names
// it too.
const chatVersion = "1.0.0"

// builtinIntegrations are the hub's built-in integrations, as shown.
func builtinIntegrations() []map[string]any {
	return []map[string]any{chatIntegration(), webchatIntegration(), llmIntegration()}
}

func (a *api) getPublicIntegration(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	name, version := r.PathValue("name"), r.PathValue("version")
	switch {
	case name == admin.ChatIntegrationID:
		// Any version: bots pin the hosted chat's (chat@0.7.5, chat@1.x);
		// this server's chat is the one it has.
		writeJSON(w, http.StatusOK, map[string]any{"integration": chatIntegration()})
	case name == platform.WebchatIntegrationID:
		// Any version, as for chat: agents pin webchat@0.3.0.
		writeJSON(w, http.StatusOK, map[string]any{"integration": webchatIntegration()})
	case name == platform.LLMIntegration:
		writeJSON(w, http.StatusOK, map[string]any{"integration": llmIntegration()})
	default:
		i, err := a.Admin.HubVersion(r.Context(), admin.Integrations, name, version)
		return a.writeHub(w, r, integrationDefs, i, err)
	}
	return nil
}

func (a *api) getPublicIntegrationByID(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	switch id := r.PathValue("id"); id {
	case admin.ChatIntegrationID:
		writeJSON(w, http.StatusOK, map[string]any{"integration": chatIntegration()})
	case platform.WebchatIntegrationID:
		writeJSON(w, http.StatusOK, map[string]any{"integration": webchatIntegration()})
	case platform.LLMIntegrationID:
		writeJSON(w, http.StatusOK, map[string]any{"integration": llmIntegration()})
	default:
		i, err := a.Admin.HubVersionByID(r.Context(), admin.Integrations, id)
		return a.writeHub(w, r, integrationDefs, i, err)
	}
	return nil
}

const (
	llmTitle       = "OpenAI-compatible models"
	llmDescription = "The language models of this server's OpenAI-compatible model server, through the llm interface (built in)"
)

// llmIntegration is the built-in LLM integration as the hub shows it: the
// llm interface's two actions.
func llmIntegration() map[string]any {
	empty := map[string]any{}
	obj := func(props map[string]any, required ...string) map[string]any {
		o := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	str, num, anyObj := map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "object"}
	tokens := obj(map[string]any{"maxTokens": num, "costPer1MTokens": num}, "maxTokens", "costPer1MTokens")
	model := obj(map[string]any{"id": str, "name": str, "description": str, "tags": map[string]any{"type": "array", "items": str}, "input": tokens, "output": tokens},
		"id", "name", "description", "tags", "input", "output")
	toolCall := obj(map[string]any{"id": str, "type": map[string]any{"type": "string", "enum": []string{"function"}},
		"function": obj(map[string]any{"name": str, "arguments": map[string]any{"type": []string{"object", "null"}}}, "name", "arguments")}, "id", "type", "function")
	message := obj(map[string]any{"role": map[string]any{"type": "string", "enum": []string{"user", "assistant"}},
		"type":      map[string]any{"type": "string", "enum": []string{"text", "tool_calls", "tool_result", "multipart"}},
		"toolCalls": map[string]any{"type": "array", "items": toolCall}, "toolResultCallId": str, "content": empty}, "role", "content")
	usage := obj(map[string]any{"inputTokens": num, "inputCost": num, "outputTokens": num, "outputCost": num}, "inputTokens", "inputCost", "outputTokens", "outputCost")
	actions := map[string]any{
		"generateContent": map[string]any{"title": "Generate content", "description": "Generate content with one of the server's models",
			"input": map[string]any{"schema": obj(map[string]any{"model": obj(map[string]any{"id": str}, "id"), "systemPrompt": str,
				"messages": map[string]any{"type": "array", "items": message}, "responseFormat": map[string]any{"type": "string", "enum": []string{"text", "json_object"}},
				"maxTokens": num, "temperature": num, "topP": num, "stopSequences": map[string]any{"type": "array", "items": str},
				"tools": map[string]any{"type": "array", "items": anyObj}, "toolChoice": anyObj, "reasoningEffort": str, "userId": str, "debug": map[string]any{"type": "boolean"}, "meta": anyObj},
				"messages")},
			"output": map[string]any{"schema": obj(map[string]any{"id": str, "provider": str, "model": str,
				"choices": map[string]any{"type": "array", "items": obj(map[string]any{"type": str, "content": empty, "toolCalls": map[string]any{"type": "array", "items": toolCall},
					"role": str, "index": num, "stopReason": str}, "type", "content", "role", "index", "stopReason")},
				"usage": usage, "botpress": obj(map[string]any{"cost": num}, "cost")}, "id", "provider", "model", "choices", "usage", "botpress")}},
		"listLanguageModels": map[string]any{"title": "List language models", "description": "The models of the server's model server",
			"input":  map[string]any{"schema": obj(empty)},
			"output": map[string]any{"schema": obj(map[string]any{"models": map[string]any{"type": "array", "items": model}}, "models")}},
	}
	return map[string]any{
		"id": platform.LLMIntegrationID, "name": platform.LLMIntegration, "version": platform.LLMIntegrationVersion,
		"title": llmTitle, "description": llmDescription,
		"createdAt": "2026-12-01T00:00:00.000Z", "updatedAt": "2026-12-01T00:00:00.000Z",
		"public": true, "visibility": "public", "lifecycleStatus": "published", "dev": false, "verificationStatus": "approved", "url": "", "iconUrl": "", "readmeUrl": "",
		"identifier": empty, "configuration": map[string]any{"schema": obj(empty), "identifier": map[string]any{"required": false}},
		"configurations": empty, "channels": empty, "states": empty, "events": empty, "actions": actions,
		"user":     map[string]any{"tags": empty, "creation": map[string]any{"enabled": false, "requiredTags": []string{}}},
		"entities": map[string]any{"modelRef": map[string]any{"title": "Model", "schema": obj(map[string]any{"id": str}, "id")}},
		"interfaces": map[string]any{"llm": map[string]any{"id": "intver_01llminterface00000000000", "name": "llm", "version": "11.0.0",
			"entities": map[string]any{"modelRef": map[string]any{"name": "modelRef"}},
			"actions":  map[string]any{"generateContent": map[string]any{"name": "generateContent"}, "listLanguageModels": map[string]any{"name": "listLanguageModels"}},
			"events":   empty, "channels": empty}},
		"secrets": empty, "meta": map[string]any{"installs": 0, "views": 0},
		"ownerWorkspace": map[string]any{"id": "", "handle": "botplatform", "name": "botplatform"},
	}
}

// chatIntegration is the built-in chat integration as the hub shows it.
func chatIntegration() map[string]any {
	i := chatAPIIntegration(map[string]any{}, map[string]any{}, map[string]any{"custom": map[string]any{"schema": map[string]any{"type": "object"}}}, nil)
	i["id"], i["name"], i["version"], i["title"] = admin.ChatIntegrationID, "chat", chatVersion, "Chat"
	i["description"] = "The built-in Chat API: users talk to the bot over HTTP and server-sent events."
	return i
}

// webchatIntegration is the built-in webchat integration as the hub shows
// it: the web chat's channel, events and actions (webchat@0.3's).
func webchatIntegration() map[string]any {
	str := map[string]any{"type": "string"}
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	conv := obj(map[string]any{"conversationId": str}, "conversationId")
	action := func(title, description string, input map[string]any, output map[string]any) map[string]any {
		return map[string]any{"title": title, "description": description, "input": map[string]any{"schema": input}, "output": map[string]any{"schema": output}}
	}
	none := obj(map[string]any{})
	actions := map[string]any{
		"getUserData": action("Get User Data", "The data the web chat gave the user (userData)", obj(map[string]any{"userId": str}, "userId"),
			obj(map[string]any{"userData": map[string]any{"type": "object", "additionalProperties": str}})),
		"showWebchat":   action("Show Webchat", "Show the web chat's window", conv, none),
		"hideWebchat":   action("Hide Webchat", "Hide the web chat's window", conv, none),
		"toggleWebchat": action("Toggle Webchat", "Show or hide the web chat's window", conv, none),
		"configWebchat": action("Configure Webchat", "Change the web chat's configuration during a conversation",
			obj(map[string]any{"conversationId": str, "config": str}, "conversationId", "config"), none),
		"customEvent": action("Send Custom Event", "Send a custom event to the web chat's page",
			obj(map[string]any{"conversationId": str, "event": str}, "conversationId", "event"), none),
	}
	events := map[string]any{
		"conversationStarted": map[string]any{"title": "Conversation Started", "description": "The web chat opened a conversation",
			"schema": obj(map[string]any{"userId": str, "conversationId": str}, "userId", "conversationId")},
		"trigger": map[string]any{"title": "Custom Trigger", "description": "The web chat's page sent an event (sendEvent); its data is the payload",
			"schema": obj(map[string]any{"origin": map[string]any{"type": "string", "enum": []string{"website"}}, "userId": str, "conversationId": str,
				"payload": map[string]any{"type": "object"}}, "origin", "userId", "conversationId", "payload")},
	}
	tag := map[string]any{}
	i := chatAPIIntegration(map[string]any{"userId": tag}, map[string]any{"id": tag}, events, actions)
	i["id"], i["name"], i["version"], i["title"] = platform.WebchatIntegrationID, platform.WebchatIntegrationID, platform.WebchatIntegrationVersion, "Webchat"
	i["description"] = "The official web chat's channel on this server's Chat API (built in)"
	return i
}

// chatAPIIntegration is what the hub shows of the built-in integrations
// the Chat API serves: its channel of every message type, with conversation
// and user tags, events, and the chat actions with more.
func chatAPIIntegration(convTags, userTags, events, more map[string]any) map[string]any {
	empty := map[string]any{}
	text := map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}}
	// The message types of the Chat API (chat-api.md); text's schema in
	// full, the others' as objects.
	messages := map[string]any{"text": text}
	for _, t := range []string{"markdown", "image", "audio", "video", "file", "location", "carousel", "card", "dropdown", "choice", "bloc"} {
		messages[t] = map[string]any{"schema": map[string]any{"type": "object"}}
	}
	str := map[string]any{"type": "string"}
	sendEvent := map[string]any{"title": "Send Custom Event", "description": "Send a custom event from the bot to the conversation's listeners",
		"input": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"conversationId", "payload"},
			"properties": map[string]any{"conversationId": str, "payload": map[string]any{"type": "object"}}}},
		"output": map[string]any{"schema": map[string]any{"type": "object"}}}
	typing := func(title string) map[string]any {
		return map[string]any{"title": title, "description": "The typing-indicator interface's action: the web chat shows or hides that the bot is writing",
			"input": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"conversationId"},
				"properties": map[string]any{"conversationId": str, "messageId": str, "timeout": map[string]any{"type": "number"}}}},
			"output": map[string]any{"schema": map[string]any{"type": "object"}}}
	}
	actions := map[string]any{"sendEvent": sendEvent, "startTypingIndicator": typing("Start typing indicator"),
		"stopTypingIndicator": typing("Stop typing indicator")}
	for k, v := range more {
		actions[k] = v
	}
	return map[string]any{
		"createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z",
		"public": true, "visibility": "public", "lifecycleStatus": "published", "dev": false, "verificationStatus": "approved", "url": "", "iconUrl": "", "readmeUrl": "",
		"identifier": empty, "configuration": map[string]any{"schema": map[string]any{"type": "object", "properties": empty}, "identifier": map[string]any{"required": false}},
		"configurations": empty, "channels": map[string]any{"channel": map[string]any{"title": "Chat", "messages": messages,
			"conversation": map[string]any{"tags": convTags, "creation": map[string]any{"enabled": false, "requiredTags": []string{}}},
			"message":      map[string]any{"tags": empty}}},
		"states": empty, "events": events, "actions": actions,
		"user":     map[string]any{"tags": userTags, "creation": map[string]any{"enabled": false, "requiredTags": []string{}}},
		"entities": empty, "interfaces": empty, "secrets": empty, "meta": map[string]any{"installs": 0, "views": 0},
		"ownerWorkspace": map[string]any{"id": "", "handle": "botplatform", "name": "botplatform"},
	}
}
