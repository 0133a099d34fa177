package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/openapi"
	"github.com/botplatform/botplatform/internal/platform"
)

// Who a Chat API request comes from: the webhook's bot, and the chat user
// its x-user-key names, or, without one, its client address.

type chatBotFunc func(w http.ResponseWriter, r *http.Request, b *chat.Webhook) error
type chatUserFunc func(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error

// chatBot serves a request without a user key (createUser, the hello
// probe), counted by its client address.
func (a *api) chatBot(f chatBotFunc) http.Handler {
	return a.h(func(w http.ResponseWriter, r *http.Request) error {
		b, err := a.webhook(r)
		if err != nil {
			return err
		}
		if err := a.admit(w, who{bot: b.ID, address: clientAddress(r)}); err != nil {
			return err
		}
		return f(w, r, b)
	})
}

// webhook is the bot whose Chat API the request calls.
func (a *api) webhook(r *http.Request) (*chat.Webhook, error) {
	id := r.PathValue("webhook")
	if b := corsWebhook(r, id); b != nil {
		noteCaller(r, "", b.ID)
		return b, nil
	}
	b, err := a.Chat.Webhook(r.Context(), id)
	if err != nil {
		return nil, err
	}
	noteCaller(r, "", b.ID)
	return b, nil
}

// webhookUser is the bot whose Chat API the request calls and the chat
// user its x-user-key names (b nil when the webhook is not found; err
// when the key does not let the request in). The webhook and the user are
// read in one query, unless the webhook was found already (by cors).
func (a *api) webhookUser(r *http.Request, getOrCreate bool) (*chat.Webhook, platform.ChatUser, error) {
	id, key := r.PathValue("webhook"), r.Header.Get("x-user-key")
	if b := corsWebhook(r, id); b != nil {
		noteCaller(r, "", b.ID)
		u, err := a.Chat.Authenticate(r.Context(), b, key, getOrCreate)
		return b, u, err
	}
	b, u, err := a.Chat.WebhookUser(r.Context(), id, key, getOrCreate)
	if b != nil {
		noteCaller(r, "", b.ID)
	}
	return b, u, err
}

// corsWebhook is the webhook id that cors already found for the request
// (nil if it did not look it up).
func corsWebhook(r *http.Request, id string) *chat.Webhook {
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok && rt.webhook != nil && rt.webhook.WebhookID == id {
		return rt.webhook
	}
	return nil
}

// chatUser serves a request of an existing chat user (x-user-key).
func (a *api) chatUser(f chatUserFunc) http.Handler { return a.withChatUser(false, f) }

// chatUserOrNew is chatUser for getOrCreateUser: a valid x-user-key whose
// user does not exist yet creates it.
func (a *api) chatUserOrNew(f chatUserFunc) http.Handler { return a.withChatUser(true, f) }

func (a *api) withChatUser(getOrCreate bool, f chatUserFunc) http.Handler {
	return secured{a.h(func(w http.ResponseWriter, r *http.Request) error {
		b, u, err := a.webhookUser(r, getOrCreate)
		if b == nil {
			return err
		}
		if err != nil {
			// Unauthenticated after all: counted by address, so that keys
			// cannot be tried at full speed.
			if lerr := a.admit(w, who{address: clientAddress(r)}); lerr != nil {
				return lerr
			}
			return err
		}
		if err := a.admit(w, who{bot: b.ID, chatUser: u.ID}); err != nil {
			return err
		}
		return f(w, r, b, u)
	}), openapi.ChatUser}
}
