package httpapi

import (
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

// Storage quotas of a workspace: listWorkspaceQuotas, getWorkspaceQuota and
// listWorkspaceUsages of the official client, and setWorkspaceQuotas.

func (a *api) quotaRoutes(m *http.ServeMux) {
	m.Handle("GET /v1/admin/workspaces/{id}/quotas", a.account(a.listQuotas))
	m.Handle("PUT /v1/admin/workspaces/{id}/quotas", a.account(a.setQuotas))
	m.Handle("GET /v1/admin/workspaces/{id}/quota", a.account(a.getQuota))
	m.Handle("GET /v1/admin/workspaces/{id}/usages", a.account(a.listUsages))
}

type quotaJSON struct {
	Period string `json:"period"`
	Value  int64  `json:"value"`
	Type   string `json:"type"`
}

func (a *api) quotas(r *http.Request, act *admin.Actor) ([]files.Quota, string, error) {
	qs, err := a.Files.Quotas(r.Context(), act, r.PathValue("id"))
	return qs, files.Period(time.Now()), err
}

func (a *api) listQuotas(w http.ResponseWriter, r *http.Request, act *admin.Actor) error {
	qs, period, err := a.quotas(r, act)
	if err != nil {
		return err
	}
	writeQuotas(w, qs, period)
	return nil
}

func writeQuotas(w http.ResponseWriter, qs []files.Quota, period string) {
	out := make([]quotaJSON, len(qs))
	for i, q := range qs {
		out[i] = quotaJSON{period, q.Limit, q.Type}
	}
	writeJSON(w, http.StatusOK, map[string]any{"quotas": out})
}

// pick returns the quota of the type named by the type query parameter.
func pick(qs []files.Quota, r *http.Request) (files.Quota, error) {
	typ := r.URL.Query().Get("type")
	for _, q := range qs {
		if q.Type == typ {
			return q, nil
		}
	}
	return files.Quota{}, platform.Errorf(platform.ErrInvalidQuery, "type: must be one of %s, %s, %s", files.QuotaFileStorage, files.QuotaVectorStorage, files.QuotaMaxFileSize)
}

func (a *api) getQuota(w http.ResponseWriter, r *http.Request, act *admin.Actor) error {
	qs, period, err := a.quotas(r, act)
	if err != nil {
		return err
	}
	q, err := pick(qs, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"quota": quotaJSON{period, q.Limit, q.Type}})
	return nil
}

func (a *api) listUsages(w http.ResponseWriter, r *http.Request, act *admin.Actor) error {
	qs, period, err := a.quotas(r, act)
	if err != nil {
		return err
	}
	q, err := pick(qs, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"usages": []map[string]any{{
		"id": r.PathValue("id"), "period": period, "value": q.Usage, "quota": q.Limit, "type": q.Type,
	}}})
	return nil
}

var setQuotasSchema = schema("set-quotas.json", `{"type":"object","additionalProperties":false,"properties":{
	"file_storage_bytes":{"type":["integer","null"],"minimum":0},
	"knowledgebase_vector_storage":{"type":["integer","null"],"minimum":0},
	"file_max_size_bytes":{"type":["integer","null"],"minimum":0}}}`)

// setQuotas sets storage limits in bytes; null returns a limit to the
// workspace plan's default.
func (a *api) setQuotas(w http.ResponseWriter, r *http.Request, act *admin.Actor) error {
	var in map[string]*int64
	if err := decode(r, setQuotasSchema, &in); err != nil {
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
	qs, err := a.Files.SetQuotas(r.Context(), act, r.PathValue("id"), u)
	if err != nil {
		return err
	}
	writeQuotas(w, qs, files.Period(time.Now()))
	return nil
}
