package main

import (
	"net/url"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestPlugins: a workspace deploys plugin versions (their dependencies
// resolved to versions), serves their code, publishes them to the hub; a
// bot installs one with its configuration checked and its interface backed
// by one of the bot's integrations; what is installed is not deleted; and
// another workspace, a viewer, bad configurations and dangling references
// are refused naming the field, leaving what is stored as it was.
func TestPlugins(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackend(t, backend)
			owner := s.owner(t)
			stranger := s.as(t, s.issueToken(t, uniqueEmail("stranger")), "")
			stranger = stranger.in(str(t, stranger.post("/v1/admin/workspaces", map[string]any{"name": "elsewhere"}).ok(), "id"))
			viewer, _ := owner.addMember("viewer")
			owner.put("/v1/admin/workspaces/"+owner.ws, map[string]any{"handle": "acme"}).ok()

			// The interface the plugin depends on, in the hub.
			llm := owner.post("/v1/admin/interfaces", map[string]any{"name": "llm", "version": "4.0.0", "public": true,
				"actions": map[string]any{"generateContent": map[string]any{"input": map[string]any{"schema": map[string]any{"type": "object"}},
					"output": map[string]any{"schema": map[string]any{"type": "object"}}}}}).ok()["interface"].(map[string]any)

			def := map[string]any{
				"name": "acme/personality", "version": "0.1.0", "title": "Personality", "description": "Rewrites the bot's replies",
				"code": map[string]any{"node": "module.exports = { node: true }", "browser": "export default { browser: true }"},
				"configuration": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"tone"},
					"properties": map[string]any{"tone": map[string]any{"type": "string", "enum": []string{"warm", "dry"}}}}},
				"states":       map[string]any{"history": map[string]any{"type": "conversation", "schema": map[string]any{"type": "object"}}},
				"conversation": map[string]any{"tags": map[string]any{"persona": map[string]any{"title": "Persona"}}},
				"dependencies": map[string]any{"interfaces": map[string]any{"llm": map[string]any{"name": "llm", "version": "^4.0.0"}}},
			}
			viewer.post("/v1/admin/plugins", def).fail(403, "Forbidden")
			owner.post("/v1/admin/plugins", map[string]any{"name": "acme/x", "version": "0.1.0", "code": map[string]any{"node": "x"}}).
				fail(400, "InvalidPayload", "code")
			bad := map[string]any{}
			for k, v := range def {
				bad[k] = v
			}
			bad["dependencies"] = map[string]any{"interfaces": map[string]any{"llm": map[string]any{"name": "llm", "version": "^9.0.0"}}}
			owner.post("/v1/admin/plugins", bad).fail(400, "ReferenceNotFound", "dependencies.interfaces.llm")

			p := owner.post("/v1/admin/plugins", def).ok()["plugin"].(map[string]any)
			id := str(t, p, "id")
			deps := p["dependencies"].(map[string]any)["interfaces"].(map[string]any)["llm"].(map[string]any)
			if deps["id"] != llm["id"] || deps["version"] != "4.0.0" || p["visibility"] != "private" || p["conversation"].(map[string]any)["tags"] == nil {
				t.Fatalf("created: %v", p)
			}
			owner.post("/v1/admin/plugins", def).fail(409, "AlreadyExists", "acme/personality")
			for platformName, want := range map[string]string{"node": "module.exports = { node: true }", "browser": "export default { browser: true }"} {
				if got := owner.get("/v1/admin/plugins/" + id + "/code/" + platformName).ok()["code"]; got != want {
					t.Errorf("getPluginCode %s = %q", platformName, got)
				}
			}
			owner.get("/v1/admin/plugins/"+id+"/code/deno").fail(400, "InvalidPayload", "platform")
			if got := owner.get("/v1/admin/plugins/" + url.PathEscape("acme/personality") + "/latest").ok()["plugin"].(map[string]any)["id"]; got != id {
				t.Fatalf("getPluginByName latest = %v", got)
			}
			if list := owner.get("/v1/admin/plugins").ok()["plugins"].([]any); len(list) != 1 {
				t.Fatalf("listPlugins = %v", list)
			}
			// Private: another workspace finds nothing, in the hub or by id.
			stranger.get("/v1/admin/plugins/"+id).fail(404, "ResourceNotFound")
			stranger.get("/v1/admin/hub/plugins/"+id).fail(404, "ResourceNotFound")
			stranger.get("/v1/admin/hub/plugins/"+id+"/code/node").fail(404, "ResourceNotFound")

			// A bot installs it, its llm interface backed by the built-in openai integration.
			botID := owner.createBot(map[string]any{"name": "persona-bot"})["id"].(string)
			path := "/v1/admin/bots/" + botID
			install := func(c client, extra map[string]any) *response {
				t.Helper()
				entry := map[string]any{"id": id, "enabled": true, "configuration": map[string]any{"tone": "warm"},
					"interfaces": map[string]any{"llm": map[string]any{"integrationId": platform.LLMIntegrationID}}}
				for k, v := range extra {
					entry[k] = v
				}
				return c.put(path, map[string]any{"plugins": map[string]any{"persona": entry}})
			}
			install(owner, nil).fail(400, "ReferenceNotFound", "plugins.persona.interfaces.llm", "install it first")
			owner.put(path, map[string]any{"integrations": map[string]any{"openai": map[string]any{"integrationId": platform.LLMIntegrationID, "enabled": true}}}).ok()
			install(owner, map[string]any{"configuration": map[string]any{"tone": "loud"}}).fail(400, "InvalidPayload", "plugins.persona.configuration", "tone")
			install(owner, map[string]any{"interfaces": map[string]any{}}).fail(400, "InvalidPayload", "plugins.persona.interfaces.llm", "llm@4.0.0")
			install(owner, map[string]any{"integrations": map[string]any{"slack": map[string]any{"integrationId": "x", "integrationAlias": "slack"}}}).
				fail(400, "InvalidPayload", "plugins.persona.integrations.slack")
			install(owner, map[string]any{"id": "intver_nothere0000000000000000"}).fail(400, "ReferenceNotFound", "plugins.persona.id")
			install(viewer, nil).fail(403, "Forbidden")
			bot := install(owner, nil).ok()["bot"].(map[string]any)
			got := bot["plugins"].(map[string]any)["persona"].(map[string]any)
			backing := got["interfaces"].(map[string]any)["llm"].(map[string]any)
			if got["id"] != id || got["name"] != "acme/personality" || got["version"] != "0.1.0" || got["title"] != "Personality" ||
				got["configuration"].(map[string]any)["tone"] != "warm" || backing["integrationAlias"] != "openai" ||
				backing["integrationId"] != platform.LLMIntegrationID || backing["interfaceId"] != llm["id"] || backing["integrationInterfaceAlias"] != "llm" {
				t.Fatalf("the bot's plugin: %v", got)
			}
			// Stored, as getBot shows it.
			if again := owner.get(path).ok()["bot"].(map[string]any)["plugins"].(map[string]any)["persona"].(map[string]any); again["configuration"].(map[string]any)["tone"] != "warm" {
				t.Fatalf("getBot's plugin: %v", again)
			}
			// A change keeps what it leaves out (the interface's backing included).
			if got := owner.put(path, map[string]any{"plugins": map[string]any{"persona": map[string]any{"id": id, "enabled": false}}}).ok()["bot"].(map[string]any)["plugins"].(map[string]any)["persona"].(map[string]any); got["enabled"] != false || got["interfaces"].(map[string]any)["llm"] == nil {
				t.Fatalf("after enabled: false: %v", got)
			}
			// The integration backing it stays while the plugin relies on it.
			owner.put(path, map[string]any{"integrations": map[string]any{"openai": nil}}).fail(400, "InvalidPayload", "plugins.persona.interfaces.llm", "openai")
			owner.del("/v1/admin/plugins/"+id).fail(409, "ReferenceConstraint", "installed in 1 bot")
			// Another workspace's bot cannot install a private plugin.
			strangerBot := stranger.createBot(map[string]any{"name": "copycat"})["id"].(string)
			stranger.put("/v1/admin/bots/"+strangerBot, map[string]any{"plugins": map[string]any{"p": map[string]any{"id": id}}}).
				fail(400, "ReferenceNotFound", "plugins.p.id")

			// Published: the hub shows it to every workspace, its code too.
			owner.put("/v1/admin/plugins/"+id, map[string]any{"visibility": "public"}).ok()
			hub := stranger.get("/v1/admin/hub/plugins/" + url.PathEscape("acme/personality") + "/0.1.0").ok()["plugin"].(map[string]any)
			if hub["id"] != id || hub["visibility"] != "public" {
				t.Fatalf("getPublicPlugin: %v", hub)
			}
			if got := stranger.get("/v1/admin/hub/plugins/" + id + "/code/browser").ok()["code"]; got != "export default { browser: true }" {
				t.Fatalf("getPublicPluginCode = %v", got)
			}
			if list := stranger.get("/v1/admin/hub/plugins").ok()["plugins"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != id {
				t.Fatalf("listPublicPlugins = %v", list)
			}
			stranger.get("/v1/admin/hub/plugins/" + id).ok()

			// Removed from the bot, the version can go.
			if got := owner.put(path, map[string]any{"plugins": map[string]any{"persona": nil}}).ok()["bot"].(map[string]any)["plugins"].(map[string]any); len(got) != 0 {
				t.Fatalf("after removal: %v", got)
			}
			stranger.del("/v1/admin/plugins/"+id).fail(404, "ResourceNotFound")
			owner.del("/v1/admin/plugins/" + id).ok()
			owner.get("/v1/admin/plugins/"+id).fail(404, "ResourceNotFound")
		})
	}
}
