package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
)

// The hub holds one integration here: the built-in chat, which every bot
// has. `bp deploy` and `bp dev` look a bot's declared integrations up in
// the hub (getPublicIntegration) after the workspace (getIntegrationByName,
// which finds nothing: a workspace has no integrations of its own here).

// chatVersion is the built-in chat integration's version; "latest" names
// it too.
const chatVersion = "1.0.0"

func (a *api) getPublicIntegration(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	name, version := r.PathValue("name"), r.PathValue("version")
	if name != admin.ChatIntegrationID || (version != chatVersion && version != "latest") {
		return platform.Errorf(platform.TypeResourceNotFound, "integration %q version %q not found: this server's hub has the built-in chat integration only (chat@%s)", name, version, chatVersion)
	}
	writeJSON(w, http.StatusOK, map[string]any{"integration": chatIntegration()})
	return nil
}

func (a *api) getPublicIntegrationByID(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	if id := r.PathValue("id"); id != admin.ChatIntegrationID {
		return platform.Errorf(platform.TypeResourceNotFound, "integration %q not found: this server's hub has the built-in chat integration only (id %q)", id, admin.ChatIntegrationID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"integration": chatIntegration()})
	return nil
}

// chatIntegration is the built-in chat integration as the hub shows it.
func chatIntegration() map[string]any {
	empty := map[string]any{}
	text := map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}}
	return map[string]any{
		"id": admin.ChatIntegrationID, "name": "chat", "version": chatVersion, "title": "Chat",
		"description": "The built-in Chat API: users talk to the bot over HTTP and server-sent events.",
		"createdAt":   "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z",
		"public": true, "dev": false, "verificationStatus": "approved", "url": "", "iconUrl": "", "readmeUrl": "",
		"identifier": empty, "configuration": map[string]any{"schema": map[string]any{"type": "object", "properties": empty}, "identifier": map[string]any{"required": false}},
		"configurations": empty, "channels": map[string]any{"channel": map[string]any{"title": "Chat", "messages": map[string]any{"text": text},
			"conversation": map[string]any{"tags": empty, "creation": map[string]any{"enabled": false, "requiredTags": []string{}}},
			"message":      map[string]any{"tags": empty}}},
		"states": empty, "events": map[string]any{"custom": map[string]any{"schema": map[string]any{"type": "object"}}}, "actions": empty,
		"user":     map[string]any{"tags": empty, "creation": map[string]any{"enabled": false, "requiredTags": []string{}}},
		"entities": empty, "interfaces": empty, "secrets": empty, "meta": map[string]any{"installs": 0, "views": 0},
		"ownerWorkspace": map[string]any{"id": "", "handle": "botplatform", "name": "botplatform"},
	}
}
