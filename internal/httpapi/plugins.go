package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// Plugins a workspace deploys, and the hub's (docs/plugins.md).

var (
	createPluginSchema = pluginSchema(false)
	updatePluginSchema = pluginSchema(true)
	pluginDefs         = definitions{admin.Plugins, "plugin", toPlugin, pluginSummary}
)

// pluginSchema is the body of createPlugin and updatePlugin: an
// integration's definition less channels, entities and what runs on the
// platform (secrets, identifier…), plus conversation tags, its
// dependencies, and its code for Node.js and browsers.
func pluginSchema(update bool) *jsonbody.Schema {
	name := "createPlugin"
	if update {
		name = "updatePlugin"
	}
	src, _ := json.Marshal(pluginBody(update))
	return schema(name, string(src))
}

func pluginBody(update bool) obj {
	all := definitionProps(update)
	nullable := func(s obj) obj {
		if !update {
			return s
		}
		return obj{"anyOf": []any{s, obj{"type": "null"}}}
	}
	props := obj{}
	for _, k := range []string{"events", "actions", "attributes", "sdkVersion", "icon", "readme", "title", "description", "public", "visibility", "user"} {
		props[k] = all[k]
	}
	props["configuration"] = strict(obj{"title": obj{"type": "string", "maxLength": 64}, "description": obj{"type": "string", "maxLength": 256},
		"schema": obj{"type": "object"}}, "schema")
	props["states"] = obj{"type": "object", "additionalProperties": nullable(strict(obj{
		"type": obj{"type": "string", "enum": []string{"conversation", "user", "bot", "task"}}, "schema": obj{"type": "object"},
		"expiry": obj{"type": "number", "minimum": 1}}, "type", "schema"))}
	props["conversation"] = all["user"] // tags, as a user's
	props["message"] = all["user"]
	props["code"] = strict(obj{"node": obj{"type": "string"}, "browser": obj{"type": "string"}}, "node", "browser")
	ref := strict(obj{"id": obj{"type": "string"}, "name": obj{"type": "string"}, "version": obj{"type": "string"}})
	props["dependencies"] = strict(obj{"interfaces": obj{"type": "object", "additionalProperties": ref},
		"integrations": obj{"type": "object", "additionalProperties": ref}})
	if !update {
		props["name"], props["version"] = all["name"], all["version"]
		return strict(props, "name", "version", "code")
	}
	return strict(props)
}

func (a *api) pluginRoutes(t *table) {
	d := pluginDefs
	t.handle("POST /v1/admin/plugins", "createPlugin", createPluginSchema, a.workspace(a.createVersion(d, false)))
	t.handle("GET /v1/admin/plugins", "listPlugins", nil, a.workspace(a.listVersions(d)))
	t.handle("GET /v1/admin/plugins/{id}", "getPlugin", nil, a.workspace(a.getVersion(d)))
	t.handle("GET /v1/admin/plugins/{name}/{version}", "getPluginByName", nil, a.workspace(a.getVersionByName(d)))
	t.handle("PUT /v1/admin/plugins/{id}", "updatePlugin", updatePluginSchema, a.workspace(a.updateVersion(d, false)))
	t.handle("DELETE /v1/admin/plugins/{id}", "deletePlugin", emptyBodySchema, a.workspace(a.deleteVersion(d)))
	t.handle("GET /v1/admin/plugins/{id}/code/{platform}", "getPluginCode", nil, a.workspace(a.pluginCode(false)))
	t.handle("GET /v1/admin/hub/plugins", "listPublicPlugins", nil, a.workspace(a.listPublicVersions(d)))
	t.handle("GET /v1/admin/hub/plugins/{id}", "getPublicPluginById", nil, a.workspace(a.getPublicVersion(d)))
	t.handle("GET /v1/admin/hub/plugins/{name}/{version}", "getPublicPlugin", nil, a.workspace(a.getPublicVersionByName(d)))
	t.handle("GET /v1/admin/hub/plugins/{id}/code/{platform}", "getPublicPluginCode", nil, a.workspace(a.pluginCode(true)))
}

// pluginCode answers a plugin version's bundle for Node.js or browsers: of
// the workspace's own versions, or (hub) of the hub's.
func (a *api) pluginCode(hub bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		var p platform.Integration
		var err error
		if hub {
			p, err = a.Admin.HubVersionByID(r.Context(), admin.Plugins, r.PathValue("id"))
		} else {
			p, err = a.Admin.GetVersion(r.Context(), act, admin.Plugins, r.PathValue("id"))
		}
		if err != nil {
			return err
		}
		code, err := admin.PluginCode(p, r.PathValue("platform"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"code": code})
		return nil
	}
}

// toPlugin is a plugin version as the Admin API shows it, in the hub too
// (the official Plugin has no owner workspace).
func toPlugin(p platform.Integration, owners ownerLookup) map[string]any {
	full := toIntegration(p, owners)
	out := map[string]any{}
	for _, k := range []string{"id", "name", "version", "createdAt", "updatedAt", "states", "events", "actions", "attributes", "title", "description",
		"iconUrl", "readmeUrl", "public", "visibility", "lifecycleStatus"} {
		if v, ok := full[k]; ok {
			out[k] = v
		}
	}
	out["configuration"] = withDefaults(p.Spec.Configuration, `{"schema":{"type":"object","properties":{}}}`)
	out["user"] = withDefaults(p.Spec.User, `{"tags":{}}`)
	out["conversation"] = withDefaults(p.Spec.Conversation, `{"tags":{}}`)
	out["dependencies"] = withDefaults(p.Spec.Dependencies, `{"interfaces":{},"integrations":{}}`)
	return out
}

func pluginSummary(p platform.Integration, owners ownerLookup) map[string]any {
	full := toPlugin(p, owners)
	out := map[string]any{}
	for _, k := range []string{"id", "createdAt", "updatedAt", "name", "version", "title", "description", "iconUrl", "readmeUrl", "public",
		"visibility", "lifecycleStatus"} {
		if v, ok := full[k]; ok {
			out[k] = v
		}
	}
	return out
}

// botPluginJSON is a bot's plugin as getBot shows it: the installation and
// the version's description (installed: admin.Service.Installed).
func botPluginJSON(p platform.BotPlugin, installed map[string]platform.Integration) map[string]any {
	out := map[string]any{
		"id": p.PluginID, "name": p.Name, "version": p.Version, "enabled": p.Enabled, "configuration": p.Configuration,
		"interfaces": json.RawMessage(orEmpty(p.Interfaces)), "integrations": json.RawMessage(orEmpty(p.Integrations)),
		"createdAt": platform.FormatTime(p.CreatedAt), "updatedAt": platform.FormatTime(p.UpdatedAt),
		"title": p.Name, "description": "", "iconUrl": "", "readmeUrl": "", "public": false, "visibility": "private", "lifecycleStatus": "published",
	}
	if out["configuration"] == nil {
		out["configuration"] = map[string]any{}
	}
	if v, ok := installed[p.PluginID]; ok {
		full := toPlugin(v, nil)
		for _, k := range []string{"title", "description", "iconUrl", "readmeUrl", "public", "visibility"} {
			out[k] = full[k]
		}
	}
	return out
}
