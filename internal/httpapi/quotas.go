package httpapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/tables"
)

// Quotas and usages of a workspace, as the official client reads them:
// listWorkspaceQuotas, getWorkspaceQuota, listWorkspaceUsages,
// breakDownWorkspaceUsageByBot, getUsage and changeAISpendQuota; and this
// server's setWorkspaceQuotas. Types: the storage quotas (internal/files)
// and ai_spend, whose quota is the workspace's monthly spending limit in US
// dollars and whose usage is the dollars spent in the month.

const typeAISpend = "ai_spend"

type quotaJSON struct {
	Period string `json:"period"`
	Value  int64  `json:"value"`
	Type   string `json:"type"`
}

// usageJSON's value is bytes (an integer) for storage, US dollars (a
// fraction) for ai_spend.
type usageJSON struct {
	ID     string `json:"id"`
	Period string `json:"period"`
	Value  any    `json:"value"`
	Quota  int64  `json:"quota"`
	Type   string `json:"type"`
}

// usageType returns the type query parameter, which must name a type this
// server keeps.
func (a *api) usageType(r *http.Request) (string, error) {
	typ := r.URL.Query().Get("type")
	known := []string{files.QuotaFileStorage, files.QuotaVectorStorage, files.QuotaMaxFileSize, typeAISpend, tables.QuotaTableRows}
	for _, k := range known {
		if typ == k {
			return typ, nil
		}
	}
	return "", platform.Errorf(platform.TypeInvalidQuery, "type: must be one of %s; got %q", strings.Join(known, ", "), typ)
}

// currentPeriod names the usage period of the quotas, by the server's clock.
func (a *api) currentPeriod() string { return aispend.CurrentMonth(a.Clock).String() }

// storageQuota returns the storage quota typ of workspace id.
func (a *api) storageQuota(r *http.Request, act *platform.Actor, id, typ string) (files.Quota, error) {
	qs, err := a.Files.Quotas(r.Context(), act, id)
	if err != nil {
		return files.Quota{}, err
	}
	for _, q := range qs {
		if q.Type == typ {
			return q, nil
		}
	}
	return files.Quota{}, platform.Errorf(platform.TypeInvalidQuery, "type: unknown quota %q", typ)
}

// aiSpendQuota is the workspace's spending limit, in whole US dollars.
func (a *api) aiSpendQuota(r *http.Request, act *platform.Actor, id string) (quotaJSON, error) {
	ws, err := a.Admin.GetWorkspace(r.Context(), act, id)
	if err != nil {
		return quotaJSON{}, err
	}
	return quotaJSON{a.currentPeriod(), ws.SpendingLimit, typeAISpend}, nil
}

// tableRowsQuota is the workspace's table rows quota and usage.
func (a *api) tableRowsQuota(r *http.Request, act *platform.Actor, id string) (files.Quota, error) {
	if _, err := a.Admin.GetWorkspace(r.Context(), act, id); err != nil {
		return files.Quota{}, err
	}
	limit, used, err := a.Tables.Quota(r.Context(), id)
	return files.Quota{Type: tables.QuotaTableRows, Limit: limit, Usage: used}, err
}

// allQuotas lists every quota of workspace id: storage, ai_spend, table rows.
func (a *api) allQuotas(r *http.Request, act *platform.Actor, id string) ([]quotaJSON, error) {
	qs, err := a.Files.Quotas(r.Context(), act, id)
	if err != nil {
		return nil, err
	}
	period := a.currentPeriod()
	out := make([]quotaJSON, 0, len(qs)+1)
	for _, q := range qs {
		out = append(out, quotaJSON{period, q.Limit, q.Type})
	}
	q, err := a.aiSpendQuota(r, act, id)
	if err != nil {
		return nil, err
	}
	rows, err := a.tableRowsQuota(r, act, id)
	if err != nil {
		return nil, err
	}
	return append(out, q, quotaJSON{period, rows.Limit, rows.Type}), nil
}

func (a *api) listQuotas(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	qs, err := a.allQuotas(r, act, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"quotas": qs})
	return nil
}

func (a *api) getQuota(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	typ, err := a.usageType(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var out quotaJSON
	switch typ {
	case typeAISpend:
		out, err = a.aiSpendQuota(r, act, id)
	case tables.QuotaTableRows:
		var q files.Quota
		q, err = a.tableRowsQuota(r, act, id)
		out = quotaJSON{a.currentPeriod(), q.Limit, q.Type}
	default:
		var q files.Quota
		q, err = a.storageQuota(r, act, id, typ)
		out = quotaJSON{a.currentPeriod(), q.Limit, q.Type}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"quota": out})
	return nil
}

// usage reads usage typ of id: a workspace, or for ai_spend a bot too.
// The period query parameter chooses the month of ai_spend; storage usage
// is always the current one.
func (a *api) usage(r *http.Request, act *platform.Actor, id, typ string) (usageJSON, error) {
	if typ == typeAISpend {
		u, err := a.Admin.AISpend(r.Context(), act, id, r.URL.Query().Get("period"))
		if err != nil {
			return usageJSON{}, err
		}
		return usageJSON{id, u.Month.String(), aispend.Dollars(u.Spent), u.Limit, typ}, nil
	}
	if strings.HasPrefix(id, platform.PrefixBot) {
		return usageJSON{}, platform.Errorf(platform.TypeInvalidQuery, "type: a bot's usage is kept for %s only; %s is the workspace's", typeAISpend, typ)
	}
	var q files.Quota
	var err error
	if typ == tables.QuotaTableRows {
		q, err = a.tableRowsQuota(r, act, id)
	} else {
		q, err = a.storageQuota(r, act, id, typ)
	}
	if err != nil {
		return usageJSON{}, err
	}
	return usageJSON{id, a.currentPeriod(), q.Usage, q.Limit, q.Type}, nil
}

// listUsages is listWorkspaceUsages: one usage, of the workspace.
func (a *api) listUsages(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	typ, err := a.usageType(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if strings.HasPrefix(id, platform.PrefixBot) {
		return platform.NotFound("workspace", id)
	}
	u, err := a.usage(r, act, id, typ)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"usages": []usageJSON{u}})
	return nil
}

// getUsage reads the usage of a workspace or of a bot (ai_spend only).
func (a *api) getUsage(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	typ, err := a.usageType(r)
	if err != nil {
		return err
	}
	u, err := a.usage(r, act, r.PathValue("id"), typ)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"usage": u})
	return nil
}

type botUsageJSON struct {
	BotID string  `json:"botId"`
	Value float64 `json:"value"`
}

// usageByBot is breakDownWorkspaceUsageByBot, kept for ai_spend: the
// dollars each bot spent in the month, most first.
func (a *api) usageByBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	typ, err := a.usageType(r)
	if err != nil {
		return err
	}
	if typ != typeAISpend {
		return platform.Errorf(platform.TypeInvalidQuery, "type: usage by bot is kept for %s only; %s is the workspace's", typeAISpend, typ)
	}
	byBot, _, err := a.Admin.AISpendByBot(r.Context(), act, r.PathValue("id"), r.URL.Query().Get("period"))
	if err != nil {
		return err
	}
	out := make([]botUsageJSON, 0, len(byBot))
	for bot, v := range byBot {
		out = append(out, botUsageJSON{bot, aispend.Dollars(v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return out[i].BotID < out[j].BotID
	})
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

var changeAISpendSchema = schema("change-ai-spend.json", `{"type":"object","additionalProperties":false,"required":["monthlySpendingLimit"],
	"properties":{"monthlySpendingLimit":{"type":"integer","minimum":0}}}`)

// changeAISpendQuota sets the spending limit (whole US dollars) of the
// x-workspace-id workspace, like updateWorkspace's spendingLimit; it needs
// the administrator role.
func (a *api) changeAISpendQuota(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ MonthlySpendingLimit int64 }
	if err := decode(r, &in); err != nil {
		return err
	}
	if _, err := a.Admin.UpdateWorkspace(r.Context(), act, act.Member.WorkspaceID, admin.WorkspaceUpdate{SpendingLimit: &in.MonthlySpendingLimit}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

var setQuotasSchema = schema("set-quotas.json", `{"type":"object","additionalProperties":false,"properties":{
	"file_storage_bytes":{"type":["integer","null"],"minimum":0},
	"knowledgebase_vector_storage":{"type":["integer","null"],"minimum":0},
	"file_max_size_bytes":{"type":["integer","null"],"minimum":0}}}`)

// setQuotas sets storage limits in bytes; null returns a limit to the
// workspace plan's default. It answers every quota, like listWorkspaceQuotas.
func (a *api) setQuotas(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in map[string]*int64
	if err := decode(r, &in); err != nil {
		return err
	}
	u := files.QuotaUpdate{Set: map[string]int64{}}
	for k, v := range in {
		if v == nil {
			u.Reset = append(u.Reset, k)
		} else {
			u.Set[k] = *v
		}
	}
	if _, err := a.Files.SetQuotas(r.Context(), act, r.PathValue("id"), u); err != nil {
		return err
	}
	return a.listQuotas(w, r, act)
}

type completionJSON struct {
	Type       string  `json:"type"`
	Completion float64 `json:"completion"`
}

// completionTypes are the quotas getAllWorkspaceQuotaCompletion weighs:
// those this server enforces that the official answer can name (its enum
// has no file_storage_bytes).
var completionTypes = []string{files.QuotaVectorStorage, files.QuotaMaxFileSize, typeAISpend, tables.QuotaTableRows}

// quotaCompletion is getAllWorkspaceQuotaCompletion: for each workspace the
// caller is a member of, its most used quota, as usage over quota (1 is
// full; 0 for a quota of 0 nothing uses), read as listWorkspaceUsages reads
// each.
func (a *api) quotaCompletion(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	out := map[string]completionJSON{}
	for next := ""; ; {
		wss, tok, err := a.Admin.ListWorkspaces(r.Context(), act, store.WorkspaceFilter{Page: store.Page{Token: next, Limit: 100}})
		if err != nil {
			return err
		}
		for _, ws := range wss {
			best := completionJSON{Type: completionTypes[0]}
			for _, typ := range completionTypes {
				u, err := a.usage(r, act, ws.ID, typ)
				if err != nil {
					return err
				}
				if c := completion(u); c > best.Completion {
					best = completionJSON{typ, c}
				}
			}
			out[ws.ID] = best
		}
		if next = tok; next == "" {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// completion is u's value over its quota.
func completion(u usageJSON) float64 {
	var v float64
	switch n := u.Value.(type) {
	case int64:
		v = float64(n)
	case float64:
		v = n
	}
	switch {
	case u.Quota > 0:
		return v / float64(u.Quota)
	case v > 0:
		return 1
	}
	return 0
}
