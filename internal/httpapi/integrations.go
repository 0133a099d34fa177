package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// Integrations a workspace deploys, and the hub (docs/integrations.md).

var (
	createIntegrationSchema  = integrationSchema(false)
	updateIntegrationSchema  = integrationSchema(true)
	createInterfaceSchema    = interfaceSchema(false)
	updateInterfaceSchema    = interfaceSchema(true)
	handleAvailabilitySchema = schema("checkHandleAvailability", `{"type":"object","additionalProperties":false,"required":["handle"],
		"properties":{"handle":{"type":"string","minLength":1,"maxLength":50}}}`)
)

// integrationSchema is the body of createIntegration (update false) and
// updateIntegration, as the official definition has it: in an update, map
// entries may be null (removed).
func integrationSchema(update bool) *jsonbody.Schema {
	props := definitionProps(update)
	if update {
		props["maxExecutionTime"] = obj{"type": "integer", "minimum": 1, "maximum": 900}
	}
	var required []string
	name := "updateIntegration"
	if !update {
		required, name = []string{"name", "version"}, "createIntegration"
	}
	src, _ := json.Marshal(strict(props, required...))
	return schema(name, string(src))
}

// interfaceSchema is the body of createInterface and updateInterface: an
// integration's definition less what runs (code, configuration, secrets…),
// with a name template.
func interfaceSchema(update bool) *jsonbody.Schema {
	all := definitionProps(update)
	props := obj{"nameTemplate": strict(obj{"script": obj{"type": "string", "maxLength": 2000}, "language": obj{"type": "string", "maxLength": 200}}, "script", "language")}
	for _, k := range []string{"entities", "events", "actions", "attributes", "sdkVersion", "icon", "readme", "title", "description", "public"} {
		props[k] = all[k]
	}
	// An interface's channels declare message types only.
	messages := all["channels"].(obj)["additionalProperties"]
	if update {
		messages = messages.(obj)["anyOf"].([]any)[0]
	}
	channel := maps.Clone(messages.(obj))
	channel["properties"] = obj{"title": obj{"type": "string", "maxLength": 64}, "description": obj{"type": "string", "maxLength": 256},
		"messages": channel["properties"].(obj)["messages"]}
	channel["required"] = []string{"messages"}
	props["channels"] = obj{"type": "object", "additionalProperties": channel}
	if update {
		props["channels"] = obj{"type": "object", "additionalProperties": obj{"anyOf": []any{channel, obj{"type": "null"}}}}
	}
	var required []string
	name := "updateInterface"
	if !update {
		props["name"], props["version"] = all["name"], all["version"]
		required, name = []string{"name", "version"}, "createInterface"
	}
	src, _ := json.Marshal(strict(props, required...))
	return schema(name, string(src))
}

// definitionProps are the properties of an integration's definition in a
// request body; in an update, map entries may be null.
func definitionProps(update bool) obj {
	str := func(max int) obj {
		o := obj{"type": "string"}
		if max > 0 {
			o["maxLength"] = max
		}
		return o
	}
	boolean := obj{"type": "boolean"}
	anyObject := obj{"type": "object"}
	nullable := func(s obj) obj {
		if !update {
			return s
		}
		return obj{"anyOf": []any{s, obj{"type": "null"}}}
	}
	mapOf := func(v obj) obj { return obj{"type": "object", "additionalProperties": nullable(v)} }
	titled := func(props obj, required ...string) obj {
		// "ui": what definitions of @botpress/sdk 0.x carry for the Studio's
		// forms; accepted, and not kept.
		props["title"], props["description"], props["ui"] = str(64), str(256), anyObject
		return strict(props, required...)
	}
	schemaDef := strict(obj{"schema": anyObject, "ui": anyObject}, "schema")
	tagDefs := mapOf(titled(obj{}))
	attributes := mapOf(str(200))
	configuration := titled(obj{"schema": anyObject, "identifier": strict(obj{"required": boolean, "linkTemplateScript": str(2000)})})
	creation := strict(obj{"enabled": boolean, "requiredTags": obj{"type": "array", "items": str(0)}}, "enabled", "requiredTags")
	aliases := mapOf(strict(obj{"name": str(200)}, "name"))
	props := obj{
		"name":           str(200),
		"version":        str(200),
		"title":          obj{"type": "string", "minLength": 1, "maxLength": 64},
		"description":    str(256),
		"url":            nullable(str(0)),
		"sdkVersion":     str(200),
		"icon":           str(0),
		"readme":         str(0),
		"code":           str(0),
		"dev":            boolean,
		"public":         boolean,
		"visibility":     obj{"type": "string", "enum": []string{"public", "private", "unlisted"}},
		"secrets":        obj{"type": "object", "additionalProperties": obj{"anyOf": []any{str(20000), obj{"type": "null"}}}},
		"layers":         obj{"type": "array", "items": str(0)},
		"configuration":  configuration,
		"configurations": mapOf(configuration),
		"states": mapOf(strict(obj{"type": obj{"type": "string", "enum": []string{"conversation", "user", "integration"}},
			"schema": anyObject, "ui": anyObject}, "type", "schema")),
		"events": mapOf(titled(obj{"schema": anyObject, "attributes": attributes}, "schema")),
		"actions": mapOf(titled(obj{"billable": boolean, "cacheable": boolean, "input": schemaDef, "output": schemaDef,
			"attributes": attributes}, "input", "output")),
		"entities":   mapOf(titled(obj{"schema": anyObject}, "schema")),
		"attributes": attributes,
		"identifier": strict(obj{"fallbackHandlerScript": str(2000), "extractScript": str(2000)}),
		"channels": mapOf(titled(obj{
			"messages":     mapOf(schemaDef),
			"conversation": strict(obj{"creation": creation, "tags": tagDefs}),
			"message":      strict(obj{"tags": tagDefs}),
		})),
		"user": strict(obj{"creation": creation, "tags": tagDefs}),
		"interfaces": mapOf(strict(obj{"id": str(36), "entities": aliases, "actions": aliases, "events": aliases, "channels": aliases},
			"id")),
		"extraOperations": mapOf(strict(obj{"enabled": boolean}, "enabled")),
	}
	return props
}

// definitions is how one kind of versioned definition shows in the Admin
// API: integrations, or the interfaces they implement.
type definitions struct {
	kind admin.Kind
	key  string // the answer's key: "integration", "interface"
	// render shows a version; owners, when set, as the hub shows it.
	render func(i platform.Integration, owners ownerLookup) map[string]any
	// summary shows a version in a listing.
	summary func(i platform.Integration, owners ownerLookup) map[string]any
}

var (
	integrationDefs = definitions{admin.Integrations, "integration", toIntegration, integrationSummary}
	interfaceDefs   = definitions{admin.Interfaces, "interface", toInterface, interfaceSummary}
)

func (a *api) integrationRoutes(t *table) {
	d := integrationDefs
	t.handle("POST /v1/admin/integrations", "createIntegration", createIntegrationSchema, a.workspace(a.createVersion(d, false)))
	t.handle("POST /v1/admin/integrations/validate", "validateIntegrationCreation", createIntegrationSchema, a.workspace(a.createVersion(d, true)))
	t.handle("GET /v1/admin/integrations", "listIntegrations", nil, a.workspace(a.listVersions(d)))
	t.handle("GET /v1/admin/integrations/{id}", "getIntegration", nil, a.workspace(a.getVersion(d)))
	t.handle("GET /v1/admin/integrations/{name}/{version}", "getIntegrationByName", nil, a.workspace(a.getVersionByName(d)))
	t.handle("PUT /v1/admin/integrations/{id}", "updateIntegration", updateIntegrationSchema, a.workspace(a.updateVersion(d, false)))
	t.handle("PUT /v1/admin/integrations/{id}/validate", "validateIntegrationUpdate", updateIntegrationSchema, a.workspace(a.updateVersion(d, true)))
	t.handle("GET /v1/admin/integrations/{id}/logs", "getIntegrationLogs", nil, a.workspace(a.getIntegrationLogs))
	t.handle("DELETE /v1/admin/integrations/{id}", "deleteIntegration", emptyBodySchema, a.workspace(a.deleteVersion(d)))
	t.handle("GET /v1/admin/hub/integrations", "listPublicIntegrations", nil, a.workspace(a.listPublicIntegrations))
	t.handle("PUT /v1/admin/workspaces/handle-availability", "checkHandleAvailability", handleAvailabilitySchema, a.workspace(a.checkHandleAvailability))

	d = interfaceDefs
	t.handle("POST /v1/admin/interfaces", "createInterface", createInterfaceSchema, a.workspace(a.createVersion(d, false)))
	t.handle("GET /v1/admin/interfaces", "listInterfaces", nil, a.workspace(a.listVersions(d)))
	t.handle("GET /v1/admin/interfaces/{id}", "getInterface", nil, a.workspace(a.getVersion(d)))
	t.handle("GET /v1/admin/interfaces/{name}/{version}", "getInterfaceByName", nil, a.workspace(a.getVersionByName(d)))
	t.handle("PUT /v1/admin/interfaces/{id}", "updateInterface", updateInterfaceSchema, a.workspace(a.updateVersion(d, false)))
	t.handle("DELETE /v1/admin/interfaces/{id}", "deleteInterface", emptyBodySchema, a.workspace(a.deleteVersion(d)))
	t.handle("GET /v1/admin/hub/interfaces", "listPublicInterfaces", nil, a.workspace(a.listPublicVersions(d)))
	t.handle("GET /v1/admin/hub/interfaces/{id}", "getPublicInterfaceById", nil, a.workspace(a.getPublicVersion(d)))
	t.handle("GET /v1/admin/hub/interfaces/{name}/{version}", "getPublicInterface", nil, a.workspace(a.getPublicVersionByName(d)))
}

func (a *api) createVersion(d definitions, dryRun bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		var in admin.IntegrationInput
		if err := decode(r, &in); err != nil {
			return err
		}
		i, err := a.Admin.CreateVersion(r.Context(), act, d.kind, in, dryRun)
		return d.written(w, i, err, dryRun)
	}
}

func (a *api) updateVersion(d definitions, dryRun bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		var in admin.IntegrationInput
		if err := decode(r, &in); err != nil {
			return err
		}
		i, err := a.Admin.UpdateVersion(r.Context(), act, d.kind, r.PathValue("id"), in, dryRun)
		return d.written(w, i, err, dryRun)
	}
}

// written answers a deployment: the version, or {} for a dry run (the
// validate… operations).
func (d definitions) written(w http.ResponseWriter, i platform.Integration, err error, dryRun bool) error {
	if err != nil {
		return err
	}
	if dryRun {
		writeJSON(w, http.StatusOK, struct{}{})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{d.key: d.render(i, nil)})
	return nil
}

func (a *api) getVersion(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		i, err := a.Admin.GetVersion(r.Context(), act, d.kind, r.PathValue("id"))
		return d.written(w, i, err, false)
	}
}

func (a *api) getVersionByName(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		i, err := a.Admin.GetVersionByName(r.Context(), act, d.kind, r.PathValue("name"), r.PathValue("version"))
		return d.written(w, i, err, false)
	}
}

func (a *api) getPublicVersion(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		i, err := a.Admin.HubVersionByID(r.Context(), d.kind, r.PathValue("id"))
		return a.writeHub(w, r, d, i, err)
	}
}

func (a *api) getPublicVersionByName(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		i, err := a.Admin.HubVersion(r.Context(), d.kind, r.PathValue("name"), r.PathValue("version"))
		return a.writeHub(w, r, d, i, err)
	}
}

// writeHub answers with a version as the hub shows it.
func (a *api) writeHub(w http.ResponseWriter, r *http.Request, d definitions, i platform.Integration, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{d.key: d.render(i, a.owners(r))})
	return nil
}

func (a *api) deleteVersion(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		if err := decode(r, &struct{}{}); err != nil {
			return err
		}
		if err := a.Admin.DeleteVersion(r.Context(), act, d.kind, r.PathValue("id")); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, struct{}{})
		return nil
	}
}

// integrationFilter reads listIntegrations' and listPublicIntegrations'
// query: limit (1 to 100, default 20), nextToken, name, version (or
// "latest"), dev.
func integrationFilter(r *http.Request) (admin.IntegrationFilter, error) {
	q := newQuery(r)
	n, err := q.integer("limit")
	if err != nil {
		return admin.IntegrationFilter{}, err
	}
	size, err := admin.PageSize(n, 20)
	if err != nil {
		return admin.IntegrationFilter{}, platform.Errorf(platform.TypeInvalidQuery, "limit: %v", err)
	}
	dev, err := q.boolean("dev")
	if err != nil {
		return admin.IntegrationFilter{}, err
	}
	return admin.IntegrationFilter{Token: q.str("nextToken"), Name: q.str("name"), Version: q.str("version"), Dev: dev, Limit: size}, nil
}

func (a *api) listVersions(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		f, err := integrationFilter(r)
		if err != nil {
			return err
		}
		if f.Dev == nil {
			no := false
			f.Dev = &no // the official listing: production versions unless dev=true
		}
		list, next, err := a.Admin.ListVersions(r.Context(), act, d.kind, f)
		if err != nil {
			return err
		}
		out := make([]map[string]any, len(list))
		for k, i := range list {
			out[k] = d.summary(i, nil)
		}
		writeJSON(w, http.StatusOK, map[string]any{d.key + "s": out, "meta": metaJSON{next}})
		return nil
	}
}

func (a *api) listPublicVersions(d definitions) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		f, err := integrationFilter(r)
		if err != nil {
			return err
		}
		list, next, err := a.Admin.ListHubVersions(r.Context(), d.kind, f)
		if err != nil {
			return err
		}
		owners := a.owners(r)
		out := make([]map[string]any, len(list))
		for k, i := range list {
			out[k] = d.summary(i, owners)
		}
		writeJSON(w, http.StatusOK, map[string]any{d.key + "s": out, "meta": metaJSON{next}})
		return nil
	}
}

func (a *api) listPublicIntegrations(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	f, err := integrationFilter(r)
	if err != nil {
		return err
	}
	var out []map[string]any
	// The built-in integrations head the first page.
	if f.Token == "" {
		for _, b := range builtinIntegrations() {
			if f.Name == "" || f.Name == b["name"] {
				s := map[string]any{}
				for _, k := range summaryFields {
					s[k] = b[k]
				}
				out = append(out, s)
			}
		}
	}
	list, next, err := a.Admin.ListHubVersions(r.Context(), admin.Integrations, f)
	if err != nil {
		return err
	}
	owners := a.owners(r)
	for _, i := range list {
		out = append(out, integrationSummary(i, owners))
	}
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"integrations": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) checkHandleAvailability(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ Handle string }
	if err := decode(r, &in); err != nil {
		return err
	}
	available, suggestions, usedBy, err := a.Admin.CheckHandleAvailability(r.Context(), act, in.Handle)
	if err != nil {
		return err
	}
	out := map[string]any{"available": available, "suggestions": suggestions}
	if usedBy != "" {
		out["usedBy"] = usedBy
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ownerLookup finds (and remembers, for one answer) the workspace that
// deployed an integration, as the hub shows it.
type ownerLookup func(workspaceID string) map[string]any

func (a *api) owners(r *http.Request) ownerLookup {
	seen := map[string]map[string]any{}
	return func(id string) map[string]any {
		if o, ok := seen[id]; ok {
			return o
		}
		o := map[string]any{"id": id, "handle": nil, "name": ""}
		if w, err := a.Admin.IntegrationOwner(r.Context(), id); err == nil {
			o["name"] = w.Name
			if w.Handle != "" {
				o["handle"] = w.Handle
			}
		}
		seen[id] = o
		return o
	}
}

// summaryFields are the fields of an integration in a listing.
var summaryFields = []string{"id", "name", "version", "createdAt", "updatedAt", "title", "description", "iconUrl", "public",
	"visibility", "verificationStatus", "lifecycleStatus", "ownerWorkspace", "meta"}

func integrationSummary(i platform.Integration, owners ownerLookup) map[string]any {
	full := toIntegration(i, owners)
	s := map[string]any{}
	for _, k := range summaryFields {
		if v, ok := full[k]; ok {
			s[k] = v
		}
	}
	return s
}

// toIntegration is an integration as the Admin API shows it; with owners,
// as the hub shows it (its owner workspace and counts). Secrets show by
// name only; the icon and readme as data: URLs of what was deployed.
func toIntegration(i platform.Integration, owners ownerLookup) map[string]any {
	sp := i.Spec
	raw := func(v json.RawMessage, def string) json.RawMessage {
		if len(v) == 0 {
			return json.RawMessage(def)
		}
		return v
	}
	secrets := slices.Sorted(maps.Keys(sp.Secrets))
	if secrets == nil {
		secrets = []string{}
	}
	dataURL := func(mime, b64 string) string {
		if b64 == "" {
			return ""
		}
		return "data:" + mime + ";base64," + b64
	}
	title := sp.Title
	if title == "" {
		title = i.Name
	}
	out := map[string]any{
		"id": i.ID, "name": i.Name, "version": i.Version, "dev": i.Dev,
		"createdAt": platform.FormatTime(i.CreatedAt), "updatedAt": platform.FormatTime(i.UpdatedAt),
		"title": title, "description": sp.Description, "url": sp.URL,
		"iconUrl": dataURL("image/svg+xml", sp.Icon), "readmeUrl": dataURL("text/markdown", sp.Readme),
		"public": i.Visibility == "public", "visibility": i.Visibility,
		"verificationStatus": "unapproved", "lifecycleStatus": "published",
		"identifier":     raw(sp.Identifier, `{}`),
		"configuration":  configurationJSON(sp.Configuration),
		"configurations": configurationsJSON(sp.Configurations),
		"channels":       raw(sp.Channels, `{}`),
		"states":         raw(sp.States, `{}`),
		"events":         raw(sp.Events, `{}`),
		"actions":        raw(sp.Actions, `{}`),
		"entities":       raw(sp.Entities, `{}`),
		"user":           withDefaults(sp.User, `{"tags":{},"creation":{"enabled":false,"requiredTags":[]}}`),
		"interfaces":     raw(sp.Interfaces, `{}`),
		"attributes":     raw(sp.Attributes, `{}`),
		"secrets":        secrets,
	}
	if sp.MaxExecutionTime != nil {
		out["maxExecutionTime"] = *sp.MaxExecutionTime
	}
	if owners != nil {
		out["ownerWorkspace"] = owners(i.WorkspaceID)
		out["meta"] = map[string]any{"installs": 0, "views": 0}
	}
	return out
}

// withDefaults is the stored object v with the top-level fields of def it
// lacks (the official Integration requires them).
func withDefaults(v json.RawMessage, def string) map[string]any {
	out := map[string]any{}
	_ = json.Unmarshal([]byte(def), &out)
	var got map[string]any
	if len(v) > 0 && json.Unmarshal(v, &got) == nil {
		for k, x := range got {
			out[k] = x
		}
	}
	return out
}

// configurationJSON is a configuration definition with the fields the
// official Integration requires: a schema, and identifier.required.
func configurationJSON(v json.RawMessage) map[string]any {
	c := withDefaults(v, `{"schema":{"type":"object","properties":{}},"identifier":{"required":false}}`)
	if id, ok := c["identifier"].(map[string]any); ok {
		if _, ok := id["required"]; !ok {
			id["required"] = false
		}
	}
	return c
}

func configurationsJSON(v json.RawMessage) map[string]any {
	out := map[string]any{}
	var all map[string]json.RawMessage
	if json.Unmarshal(v, &all) == nil {
		for k, c := range all {
			out[k] = configurationJSON(c)
		}
	}
	return out
}

// toInterface is an interface as the Admin API shows it; with owners, as
// the hub does.
func toInterface(i platform.Integration, owners ownerLookup) map[string]any {
	full := toIntegration(i, owners)
	out := map[string]any{"nameTemplate": nil}
	for _, k := range []string{"id", "createdAt", "updatedAt", "name", "version", "entities", "events", "actions", "channels", "attributes",
		"title", "description", "iconUrl", "readmeUrl", "public"} {
		if v, ok := full[k]; ok {
			out[k] = v
		}
	}
	if len(i.Spec.NameTemplate) > 0 {
		out["nameTemplate"] = i.Spec.NameTemplate
	} else {
		delete(out, "nameTemplate")
	}
	return out
}

func interfaceSummary(i platform.Integration, owners ownerLookup) map[string]any {
	full := toInterface(i, owners)
	out := map[string]any{}
	for _, k := range []string{"id", "createdAt", "updatedAt", "name", "version", "title", "description", "iconUrl", "readmeUrl", "public"} {
		if v, ok := full[k]; ok {
			out[k] = v
		}
	}
	return out
}
