package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
)

// auditRecordJSON is a record as getAuditRecords answers it: null where
// the record has nothing (the server acting, no resource).
type auditRecordJSON struct {
	ID           string       `json:"id"`
	RecordedAt   string       `json:"recordedAt"`
	UserID       *string      `json:"userId"`
	UserEmail    *string      `json:"userEmail"`
	ResourceID   *string      `json:"resourceId"`
	ResourceName *string      `json:"resourceName"`
	Value        *string      `json:"value"`
	Action       audit.Action `json:"action"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toAuditRecord(r audit.Record) auditRecordJSON {
	action, value := r.Wire()
	return auditRecordJSON{ID: r.ID, RecordedAt: platform.FormatTime(r.RecordedAt), UserID: orNull(r.UserID), UserEmail: orNull(r.UserEmail),
		ResourceID: orNull(r.ResourceID), ResourceName: orNull(r.ResourceName), Value: orNull(value), Action: action}
}

// getAuditRecords is a page of the workspace's audit log, newest first:
// 100 records unless pageSize (1 to 1000) says otherwise.
func (a *api) getAuditRecords(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	p, err := pageUpTo(newQuery(r), 100, 1000)
	if err != nil {
		return err
	}
	recs, next, err := a.Admin.AuditRecords(r.Context(), act, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	out := make([]auditRecordJSON, len(recs))
	for i, rec := range recs {
		out[i] = toAuditRecord(rec)
	}
	writeJSON(w, http.StatusOK, map[string]any{"records": out, "meta": metaJSON{next}})
	return nil
}
