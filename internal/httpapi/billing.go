package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/platform"
)

// Billing, which this server does not do: a workspace has no invoices, its
// upcoming one is empty and nothing is charged. The answers have the
// official shapes so that the official client and console code work.

func (a *api) listWorkspaceInvoices(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := a.Admin.Billing(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"invoices": []any{}})
	return nil
}

func (a *api) getUpcomingInvoice(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := a.Admin.Billing(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": 0, "lineItems": []any{}})
	return nil
}

var chargeUnpaidSchema = schema("charge-unpaid-invoices.json", `{"type":"object","additionalProperties":false,
	"properties":{"invoiceIds":{"type":"array","items":{"type":"string"},"minItems":1}}}`)

type failedInvoiceJSON struct {
	ID           string `json:"id"`
	Amount       int    `json:"amount"`
	FailedReason string `json:"failedReason"`
}

// chargeWorkspaceUnpaidInvoices charges nothing: each invoice asked for
// is failed, as none exists.
func (a *api) chargeWorkspaceUnpaidInvoices(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ InvoiceIds []string }
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := a.Admin.Billing(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	failed := make([]failedInvoiceJSON, len(in.InvoiceIds))
	for i, id := range in.InvoiceIds {
		failed[i] = failedInvoiceJSON{id, 0, "no such invoice: this server does not bill"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"chargedInvoices": []any{}, "failedInvoices": failed})
	return nil
}
