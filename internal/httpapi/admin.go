package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sort"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/openapi"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// adminRoutes is the Admin API's route table (compat-notes §2.3).
// Account routes need only the token; an x-workspace-id sent with them must
// still be valid. Every other route needs x-workspace-id.
func (a *api) adminRoutes() *table {
	t := newTable("Admin")
	// GET /v1/admin/workspaces/preferences/{key} is served by the patterns
	// of the workspace's GET …/{id}/<name> routes (preferences.go).
	pref := a.workspace(getPreference(a.Admin.GetWorkspacePreference))
	t.serve("GET /v1/admin/workspaces/{id}/{key}", a.workspacePaths(t.op("GET /v1/admin/workspaces/preferences/{key}", "getWorkspacePreference", nil, pref)))
	workspaceGet := func(name, id string, h http.Handler) {
		p := "GET /v1/admin/workspaces/{id}/" + name
		t.serve(p, withPreference(name, pref, t.op(p, id, nil, h)))
	}
	t.handle("POST /v1/admin/workspaces/preferences/{key}", "setWorkspacePreference", setPreferenceSchema, a.workspace(setPreference(a.Admin.SetWorkspacePreference)))
	t.handle("GET /v1/admin/account/me", "getAccount", nil, a.account(a.getAccount))
	t.handle("PUT /v1/admin/account/me", "updateAccount", updateAccountSchema, a.account(a.updateAccount))
	t.handle("POST /v1/admin/account/me", "deleteAccount", emptyBodySchema, a.account(a.deleteAccount))
	t.handle("POST /v1/admin/account/pats", "createPersonalAccessToken", createPATSchema, a.account(a.createPAT))
	t.handle("GET /v1/admin/account/pats", "listPersonalAccessTokens", nil, a.account(a.listPATs))
	t.handle("DELETE /v1/admin/account/pats/{id}", "deletePersonalAccessToken", emptyBodySchema, a.account(a.deletePAT))
	t.handle("POST /v1/admin/account/preferences/{key}", "setAccountPreference", setPreferenceSchema, a.account(setPreference(a.Admin.SetAccountPreference)))
	t.handle("GET /v1/admin/account/preferences/{key}", "getAccountPreference", nil, a.account(getPreference(a.Admin.GetAccountPreference)))

	t.handle("POST /v1/admin/workspaces", "createWorkspace", createWorkspaceSchema, a.account(a.createWorkspace))
	t.handle("GET /v1/admin/workspaces", "listWorkspaces", nil, a.account(a.listWorkspaces))
	t.handle("GET /v1/admin/workspaces/{id}", "getWorkspace", nil, a.account(a.getWorkspace))
	t.handle("GET /v1/admin/workspaces/public", "listPublicWorkspaces", nil, a.account(a.listPublicWorkspaces))
	workspaceGet("public", "getPublicWorkspace", a.account(a.getPublicWorkspace))
	t.handle("PUT /v1/admin/workspaces/{id}", "updateWorkspace", updateWorkspaceSchema, a.account(a.updateWorkspace))
	t.handle("DELETE /v1/admin/workspaces/{id}", "deleteWorkspace", emptyBodySchema, a.account(a.deleteWorkspace))
	workspaceGet("audit-records", "getAuditRecords", a.account(a.getAuditRecords))

	t.handle("GET /v1/admin/workspace-members", "listWorkspaceMembers", nil, a.workspace(a.listMembers))
	t.handle("GET /v1/admin/workspace-members/me", "getWorkspaceMember", nil, a.workspace(a.getMyMember))
	t.handle("POST /v1/admin/workspace-members", "createWorkspaceMember", addMemberSchema, a.workspace(a.addMember))
	t.handle("PUT /v1/admin/workspace-members/{id}", "updateWorkspaceMember", updateMemberSchema, a.workspace(a.updateMember))
	t.handle("DELETE /v1/admin/workspace-members/{id}", "deleteWorkspaceMember", emptyBodySchema, a.workspace(a.removeMember))

	t.handle("POST /v1/admin/bots", "createBot", createBotSchema, a.workspace(a.createBot))
	t.handle("GET /v1/admin/bots", "listBots", nil, a.workspace(a.listBots))
	t.handle("GET /v1/admin/bots/{id}", "getBot", nil, a.ownBot(a.getBot))
	t.handle("PUT /v1/admin/bots/{id}", "updateBot", updateBotSchema, a.ownBotTags(a.workspace(a.updateBot)))
	t.handle("DELETE /v1/admin/bots/{id}", "deleteBot", emptyBodySchema, a.workspace(a.deleteBot))
	t.handle("GET /v1/admin/bots/{id}/logs", "getBotLogs", nil, a.workspace(a.getBotLogs))
	t.handle("GET /v1/admin/bots/{id}/analytics", "getBotAnalytics", nil, a.workspace(a.getBotAnalytics))
	t.handle("GET /v1/admin/bots/{id}/webchat", "getBotWebchat", nil, a.workspace(a.getBotWebchat))
	// A conversation live, for the console (watch.go): this server's operation.
	t.handle("GET /v1/admin/bots/{id}/conversations/{conversationId}/listen", "watchBotConversation", nil, a.workspace(a.watchConversation))
	t.handle("GET /v1/admin/bots/{id}/fetch", "getBotFetchHosts", nil, a.workspace(a.getFetchHosts))
	t.handle("PUT /v1/admin/bots/{id}/fetch", "setBotFetchHosts", fetchHostsSchema, a.workspace(a.setFetchHosts))
	t.handle("GET /v1/admin/bots/{id}/versions", "listBotVersions", nil, a.workspace(a.listBotVersions))
	t.handle("POST /v1/admin/bots/{id}/versions", "createBotVersion", createBotVersionSchema, a.workspace(a.createBotVersion))
	t.handle("GET /v1/admin/bots/{id}/versions/{versionId}", "getBotVersion", nil, a.workspace(a.getBotVersion))
	t.handle("POST /v1/admin/bots/{id}/versions/deploy", "deployBotVersion", deployBotVersionSchema, a.workspace(a.deployBotVersion))
	t.handle("GET /v1/admin/bots/{id}/versions/{versionId}/content", "getBotVersionContent", nil, a.h(a.botVersionContent))
	t.handle("POST /v1/admin/introspect", "introspect", introspectSchema, secured{a.h(a.introspect), openapi.Token})
	t.handle("POST /v1/admin/bots/{id}/signing-secrets/rotate", "rotateBotSigningSecrets", emptyBodySchema, a.workspace(a.rotateSigningSecret))
	// A person's data (privacy.go): this server's own operations.
	t.handle("GET /v1/admin/bots/{id}/users/{userId}/export", "exportBotUserData", nil, a.workspace(a.exportBotUser))
	t.handle("DELETE /v1/admin/bots/{id}/users/{userId}", "eraseBotUser", emptyBodySchema, a.workspace(a.eraseBotUser))
	// Moving a bot (botarchive.go): this server's own operations.
	t.handle("POST /v1/admin/bots/{id}/export", "exportBot", nil, a.workspace(a.exportBot))
	t.handle("POST /v1/admin/bots/import", "importBot", nil, a.workspace(a.importBot))

	a.integrationRoutes(t)
	a.pluginRoutes(t)
	t.handle("GET /v1/admin/hub/integrations/{id}", "getPublicIntegrationById", nil, a.workspace(a.getPublicIntegrationByID))
	t.handle("GET /v1/admin/hub/integrations/{name}/{version}", "getPublicIntegration", nil, a.workspace(a.getPublicIntegration))

	t.handle("POST /v1/admin/bots/baks", "createBotApiKey", createBotKeySchema, a.workspace(a.createBotKey))
	t.handle("GET /v1/admin/bots/baks", "listBotApiKeys", nil, a.workspace(a.listBotKeys))
	t.handle("DELETE /v1/admin/bots/baks/{id}", "deleteBotApiKey", emptyBodySchema, a.workspace(a.deleteBotKey))

	// Quotas and usages (quotas.go).
	workspaceGet("quotas", "listWorkspaceQuotas", a.account(a.listQuotas))
	t.handle("PUT /v1/admin/workspaces/{id}/quotas", "setWorkspaceQuotas", setQuotasSchema, a.account(a.setQuotas))
	workspaceGet("quota", "getWorkspaceQuota", a.account(a.getQuota))
	workspaceGet("usages", "listWorkspaceUsages", a.account(a.listUsages))
	t.handle("GET /v1/admin/workspaces/{id}/usages/by-bot", "breakDownWorkspaceUsageByBot", nil, a.account(a.usageByBot))
	t.handle("GET /v1/admin/usages/{id}", "getUsage", nil, a.account(a.getUsage))
	t.handle("GET /v1/admin/usages/{id}/daily-activity", "listUsageActivityDaily", nil, a.account(a.listUsageActivityDaily))
	t.handle("GET /v1/admin/workspaces/usages/quota-completion", "getAllWorkspaceQuotaCompletion", nil, a.account(a.quotaCompletion))

	// Billing, which this server does not do (billing.go).
	t.handle("GET /v1/admin/workspaces/{id}/billing/invoices", "listWorkspaceInvoices", nil, a.account(a.listWorkspaceInvoices))
	t.handle("GET /v1/admin/workspaces/{id}/billing/upcoming-invoice", "getUpcomingInvoice", nil, a.account(a.getUpcomingInvoice))
	t.handle("POST /v1/admin/workspaces/{id}/billing/invoices/charge-unpaid", "chargeWorkspaceUnpaidInvoices", chargeUnpaidSchema, a.account(a.chargeWorkspaceUnpaidInvoices))
	t.handle("PUT /v1/admin/quotas/ai-spend", "changeAISpendQuota", changeAISpendSchema, a.workspace(a.changeAISpendQuota))
	return t
}

type actorFunc func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error

// authenticate checks the bearer token, then x-workspace-id when required
// or present. Both failures are 401 (spec sections 5 and 7).
func (a *api) authenticate(r *http.Request, needWorkspace bool) (*platform.Actor, error) {
	ws := r.Header.Get("x-workspace-id")
	if ws == "" && needWorkspace {
		// Check the token first, so a bad token is reported as such.
		if _, err := a.Admin.Authenticate(r.Context(), bearer(r), ""); err != nil {
			return nil, err
		}
		return nil, platform.Errorf(platform.TypeUnauthorized, "x-workspace-id header is required")
	}
	return a.Admin.Authenticate(r.Context(), bearer(r), ws)
}

// ownBot serves getBot to the workspace's members, and to a bot's own API
// key for that bot (as a viewer sees it, without its secrets): the official
// clients read the bot they run as (@botpress/cognitive finds the bot's
// integrations so).
func (a *api) ownBot(f actorFunc) http.Handler {
	members := a.workspace(f)
	return secured{a.h(func(w http.ResponseWriter, r *http.Request) error {
		_, ws, isKey, err := a.ownKey(w, r, "reads its own bot only")
		if !isKey {
			members.ServeHTTP(w, r)
			return nil
		}
		if err != nil {
			return err
		}
		return f(w, r, &platform.Actor{Member: platform.Member{WorkspaceID: ws, Role: platform.RoleViewer}})
	}), openapi.Workspace}
}

// ownKey authenticates the bot API key r carries, which must be of the bot
// r's path names (else 403: it "refused"), and counts the request against
// its limits. isKey is false when r carries no bot API key.
func (a *api) ownKey(w http.ResponseWriter, r *http.Request, refused string) (key platform.Token, workspaceID string, isKey bool, err error) {
	key, ws, isKey, err := a.Admin.AuthenticateBotKey(r.Context(), bearer(r))
	if !isKey || err != nil {
		return key, ws, isKey, err
	}
	if key.OwnerID != r.PathValue("id") || (r.Header.Get("x-bot-id") != "" && r.Header.Get("x-bot-id") != key.OwnerID) {
		return key, ws, true, platform.Errorf(platform.TypeForbidden, "a bot API key %s", refused)
	}
	noteCaller(r, ws, key.OwnerID)
	return key, ws, true, a.admit(w, who{token: bearer(r), bot: key.OwnerID})
}

// ownBotTags serves updateBot for a bot's own API key, which may set the
// bot's tags and nothing else (the agent kit's runtime keeps its bot's
// tags so); members go on to members.
func (a *api) ownBotTags(members http.Handler) http.Handler {
	return secured{a.h(func(w http.ResponseWriter, r *http.Request) error {
		key, ws, isKey, err := a.ownKey(w, r, "changes its own bot only")
		if !isKey {
			members.ServeHTTP(w, r)
			return nil
		}
		if err != nil {
			return err
		}
		var body map[string]json.RawMessage
		if err := decode(r, &body); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(body)) {
			if k != "tags" {
				return platform.Errorf(platform.TypeForbidden, "%s: a bot API key may change its bot's tags only", k)
			}
		}
		var tags map[string]*string
		if err := json.Unmarshal(body["tags"], &tags); err != nil && len(body["tags"]) > 0 {
			return platform.Invalid("tags", "must be an object of strings")
		}
		b, err := a.Admin.UpdateOwnBotTags(r.Context(), key.ID, ws, key.OwnerID, tags)
		if err != nil {
			return err
		}
		act := &platform.Actor{Member: platform.Member{WorkspaceID: ws, Role: platform.RoleViewer}}
		writeJSON(w, http.StatusOK, map[string]any{"bot": toBot(act, b, a.Admin, byAlias(r), a.Admin.Installed(r.Context(), b))})
		return nil
	}), openapi.Workspace}
}

func (a *api) account(f actorFunc) http.Handler { return a.withActor(false, f) }

func (a *api) workspace(f actorFunc) http.Handler { return a.withActor(true, f) }

func (a *api) withActor(needWorkspace bool, f actorFunc) http.Handler {
	auth := openapi.Account
	if needWorkspace {
		auth = openapi.Workspace
	}
	return secured{a.h(func(w http.ResponseWriter, r *http.Request) error {
		act, err := a.authenticate(r, needWorkspace)
		if err != nil {
			return err
		}
		noteCaller(r, act.Member.WorkspaceID, "")
		if err := a.admit(w, who{token: bearer(r)}); err != nil {
			return err
		}
		return f(w, r, act)
	}), auth}
}

var (
	emptyBodySchema     = schema("empty-body.json", `{"type":"object","additionalProperties":false}`)
	updateAccountSchema = schema("update-account.json", `{"type":"object","additionalProperties":false,"properties":{
		"displayName":{"type":"string","maxLength":100},"profilePicture":{"type":"string"},"refresh":{"type":"boolean"}}}`)
	createPATSchema = schema("create-pat.json", `{"type":"object","additionalProperties":false,"required":["note"],"properties":{"note":{"type":"string"}}}`)
)

func (a *api) getAccount(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	acc, err := a.Admin.GetAccount(r.Context(), act)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"account": accountJSON(acc)})
	return nil
}

func (a *api) updateAccount(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in admin.AccountUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	acc, err := a.Admin.UpdateAccount(r.Context(), act, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"account": accountJSON(acc)})
	return nil
}

func (a *api) deleteAccount(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.DeleteAccount(r.Context(), act); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

// accountJSON is the official Account (emailVerified: accounts here are
// made by their owners or the operator).
func accountJSON(acc platform.Account) map[string]any {
	out := map[string]any{"id": acc.ID, "email": acc.Email, "displayName": acc.DisplayName, "emailVerified": true,
		"createdAt": platform.FormatTime(acc.CreatedAt)}
	if acc.ProfilePicture != "" {
		out["profilePicture"] = acc.ProfilePicture
	}
	return out
}

func (a *api) createPAT(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ Note string }
	if err := decode(r, &in); err != nil {
		return err
	}
	t, value, err := a.Admin.CreatePAT(r.Context(), act, in.Note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"pat": toToken(t, value)})
	return nil
}

func (a *api) listPATs(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	ts, err := a.Admin.ListPATs(r.Context(), act)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"pats": tokensJSON(ts)})
	return nil
}

func tokensJSON(ts []platform.Token) []tokenJSON {
	out := make([]tokenJSON, len(ts))
	for i, t := range ts {
		out[i] = toToken(t, "")
	}
	return out
}

func (a *api) deletePAT(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.DeletePAT(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

var createWorkspaceSchema = schema("create-workspace.json", `{"type":"object","additionalProperties":false,"required":["name"],
	"properties":{"name":{"type":"string"},"billingVersion":{"enum":["v4"]}}}`)

func (a *api) createWorkspace(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ Name, BillingVersion string }
	if err := decode(r, &in); err != nil {
		return err
	}
	ws, err := a.Admin.CreateWorkspace(r.Context(), act, in.Name, in.BillingVersion)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspace(ws))
	return nil
}

// page reads nextToken and pageSize (1 to 100).
func page(q query, def int) (store.Page, error) { return pageUpTo(q, def, 100) }

// pageUpTo is page with pageSize from 1 to max.
func pageUpTo(q query, def, max int) (store.Page, error) {
	n, err := q.integer("pageSize")
	if err != nil {
		return store.Page{}, err
	}
	size, err := admin.PageSizeUpTo(n, def, max)
	return store.Page{Token: q.str("nextToken"), Limit: size}, err
}

func (a *api) listWorkspaces(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	wss, next, err := a.Admin.ListWorkspaces(r.Context(), act, store.WorkspaceFilter{Page: p, Handle: q.str("handle")})
	if err != nil {
		return err
	}
	out := make([]workspaceJSON, len(wss))
	for i, ws := range wss {
		out[i] = toWorkspace(ws)
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspaces": out, "meta": metaJSON{next}})
	return nil
}

// publicWorkspaceJSON is a public workspace as every account sees it.
type publicWorkspaceJSON struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
	About          string   `json:"about"`
	ProfilePicture string   `json:"profilePicture"`
	ContactEmail   string   `json:"contactEmail"`
	Website        string   `json:"website"`
	SocialAccounts []string `json:"socialAccounts"`
	Handle         string   `json:"handle"`
}

func toPublicWorkspace(w platform.Workspace) publicWorkspaceJSON {
	social := w.SocialAccounts
	if social == nil {
		social = []string{}
	}
	return publicWorkspaceJSON{w.ID, w.Name, platform.FormatTime(w.CreatedAt), platform.FormatTime(w.UpdatedAt),
		w.About, w.ProfilePicture, w.ContactEmail, w.Website, social, w.Handle}
}

func (a *api) getPublicWorkspace(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	ws, err := a.Admin.PublicWorkspace(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPublicWorkspace(ws))
	return nil
}

func (a *api) listPublicWorkspaces(w http.ResponseWriter, r *http.Request, _ *platform.Actor) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	wss, next, err := a.Admin.ListPublicWorkspaces(r.Context(), store.PublicWorkspaceFilter{Page: p, IDs: q.list("workspaceIds"), Search: q.str("search")})
	if err != nil {
		return err
	}
	out := make([]publicWorkspaceJSON, len(wss))
	for i, ws := range wss {
		out[i] = toPublicWorkspace(ws)
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspaces": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) getWorkspace(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	ws, err := a.Admin.GetWorkspace(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspace(ws))
	return nil
}

var updateWorkspaceSchema = schema("update-workspace.json", `{"type":"object","additionalProperties":false,"properties":{
	"name":{"type":"string"},"plan":{"type":"string"},"spendingLimit":{"type":"integer"},"about":{"type":"string"},"profilePicture":{"type":"string"},
	"contactEmail":{"type":"string"},"website":{"type":"string"},"socialAccounts":{"type":"array","items":{"type":"string"},"maxItems":5},
	"isPublic":{"type":"boolean"},"handle":{"type":"string"}}}`)

func (a *api) updateWorkspace(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in admin.WorkspaceUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	ws, err := a.Admin.UpdateWorkspace(r.Context(), act, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspace(ws))
	return nil
}

func (a *api) deleteWorkspace(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.DeleteWorkspace(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) listMembers(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	p, err := page(newQuery(r), 20)
	if err != nil {
		return err
	}
	ms, next, err := a.Admin.ListMembers(r.Context(), act, p)
	if err != nil {
		return err
	}
	out := make([]memberJSON, len(ms))
	for i, m := range ms {
		out[i] = toMember(m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) getMyMember(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	writeJSON(w, http.StatusOK, toMember(act.Member))
	return nil
}

const roleEnum = `{"enum":["viewer","billing","developer","manager","administrator","owner"]}`

var (
	addMemberSchema = schema("add-member.json", `{"type":"object","additionalProperties":false,"required":["email","role"],
		"properties":{"email":{"type":"string"},"role":`+roleEnum+`,"sendEmail":{"type":"boolean"}}}`)
	updateMemberSchema = schema("update-member.json", `{"type":"object","additionalProperties":false,"properties":{"role":`+roleEnum+`}}`)
)

func (a *api) addMember(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct {
		Email string
		Role  platform.Role
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	m, err := a.Admin.AddMember(r.Context(), act, in.Email, in.Role)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toMember(m))
	return nil
}

func (a *api) updateMember(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ Role *platform.Role }
	if err := decode(r, &in); err != nil {
		return err
	}
	m, err := a.Admin.UpdateMember(r.Context(), act, r.PathValue("id"), in.Role)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toMember(m))
	return nil
}

func (a *api) removeMember(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.RemoveMember(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }
