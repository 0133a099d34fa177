package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// WebhookLimit bounds a webhook's body (spec section 8).
const WebhookLimit = 100 << 20

// WebhookToCode bounds the body of a webhook handed to an integration's
// code: its process receives it in one message (docs/integrations.md).
const WebhookToCode = 32 << 20

// Webhooks delivers what providers send to installed integrations'
// webhook URLs (<public URL>/webhooks/<webhook id>[/<path>]) to the
// integrations' code (package integration), whose answer goes back.
type Webhooks interface {
	// Webhook finds the installation with the webhook id
	// (platform.ErrNotFound when none has), lets admit refuse its bot
	// (the rate limits), reads the request with read and hands it to the
	// integration's code.
	Webhook(ctx context.Context, webhookID string, admit func(botID string) error, read func() (WebhookRequest, error)) (WebhookAnswer, error)
}

// WebhookRequest is a webhook as received.
type WebhookRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// WebhookAnswer is the integration's answer to it.
type WebhookAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// hopHeaders are not relayed from an integration's answer: the server
// frames the response itself.
var hopHeaders = map[string]bool{"connection": true, "content-length": true, "transfer-encoding": true, "keep-alive": true, "upgrade": true, "trailer": true}

// integrationWebhook serves any method at /webhooks/<id> and below.
func (a *api) integrationWebhook(w http.ResponseWriter, r *http.Request) error {
	rest := strings.TrimPrefix(r.URL.Path, "/webhooks/")
	id, sub, _ := strings.Cut(rest, "/")
	if id == "" {
		return platform.Errorf(platform.TypeResourceNotFound, "no webhook id: an installed integration's webhook URL is /webhooks/<webhook id>")
	}
	admit := func(botID string) error { return a.admit(w, who{bot: botID, address: clientAddress(r)}) }
	read := func() (WebhookRequest, error) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return WebhookRequest{}, err // a body past WebhookLimit: 413
		}
		if len(body) > WebhookToCode {
			return WebhookRequest{}, platform.Errorf(platform.TypePayloadTooLarge, "the webhook's body is %d bytes; an integration's code receives at most %d", len(body), WebhookToCode)
		}
		return WebhookRequest{Method: r.Method, Path: "/" + sub, Query: r.URL.RawQuery, Header: r.Header, Body: body}, nil
	}
	ans, err := a.Webhooks.Webhook(r.Context(), id, admit, read)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.Errorf(platform.TypeResourceNotFound, "webhook %q not found: no installed integration has it", id)
	}
	if err != nil {
		return err
	}
	for k, v := range ans.Header {
		if !hopHeaders[strings.ToLower(k)] {
			w.Header()[http.CanonicalHeaderKey(k)] = v
		}
	}
	status := ans.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(ans.Body)
	return nil
}
