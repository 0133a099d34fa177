package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

// The routes the official web chat's client (@botpress/webchat-client)
// calls beyond the chat client's: the stream that opens a conversation,
// user keys made with the admin secret, message updates and feedback
// (docs/webchat.md#the-official-web-chat).
func (a *api) webchatClientRoutes(t *table, p string) {
	t.handle("GET "+p+"/initialize", "chatInitialize", nil, a.chatBot(a.initialize))
	t.handle("POST "+p+"/users/key", "chatGenerateUserKey", generateUserKeySchema, a.chatBot(a.generateUserKey))
	t.handle("PUT "+p+"/messages/{id}", "chatUpdateMessage", chat.UpdateMessageSchema, a.chatUser(a.updateMessage))
	t.handle("PUT "+p+"/messages/{id}/feedback", "chatAddMessageFeedback", feedbackSchema, a.chatUser(a.addFeedback))
	t.handle("DELETE "+p+"/messages/{id}/feedback", "chatRemoveMessageFeedback", emptyBodySchema, a.chatUser(a.removeFeedback))
	t.handle("POST "+p+"/files", "chatCreateFile", chatFileSchema, a.chatUser(a.createChatFile))
}

var (
	generateUserKeySchema = schema("generate-user-key.json", `{"type":"object","additionalProperties":false,"required":["id"],
		"properties":{"id":{"type":"string","minLength":1},"expiresAt":{"type":"number"}}}`)
	chatFileSchema = schema("chat-create-file.json", `{"type":"object","additionalProperties":false,"required":["key","size"],
		"properties":{"key":{"type":"string","minLength":1},"size":{"type":"integer","minimum":0},
		"accessPolicies":{"type":"array","items":{"enum":["integrations","public_content"]}},"index":{"type":"boolean"},
		"contentType":{"type":"string"},"tags":{"type":"object","additionalProperties":{"type":"string"}},"expiresAt":{"type":"string"}}}`)
	feedbackSchema = schema("message-feedback.json", `{"type":"object","additionalProperties":false,"required":["value"],
		"properties":{"value":{"enum":["positive","negative"]},"comment":{"type":"string"}}}`)
)

// adminSecret checks the request's x-admin-secret, when it has one: it
// must be the bot's secret.
func adminSecret(r *http.Request, b *chat.Webhook) (bool, error) {
	s := r.Header.Get("x-admin-secret")
	if s == "" {
		return false, nil
	}
	if !b.IsSecret(s) {
		return false, platform.Errorf(platform.TypeUnauthorized, "x-admin-secret: not this bot's secret")
	}
	return true, nil
}

// initialize opens the web chat: an event stream whose first signal, init,
// carries the user (and its key), the conversation, its latest messages
// and participants; then the conversation's signals as the web chat names
// them.
func (a *api) initialize(w http.ResponseWriter, r *http.Request, b *chat.Webhook) error {
	admin, err := adminSecret(r, b)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	userID := q.Get("userId")
	if userID != "" && !admin {
		return platform.Errorf(platform.TypeUnauthorized, "userId: naming the user needs the admin secret (x-admin-secret)")
	}
	in, err := a.Chat.Initialize(r.Context(), b, r.Header.Get("x-user-key"), userID, q.Get("conversationId"))
	if err != nil {
		return err
	}
	if err := a.admit(w, who{bot: b.ID, chatUser: in.User.ID}); err != nil {
		return err
	}
	sub, err := a.Chat.Hub().Subscribe(in.Conversation.ID, in.User.ID)
	if err != nil {
		return err
	}
	// A message sent between reading them and subscribing comes again:
	// a new stream gets the last second's messages replayed (chat.Hub).
	first, err := json.Marshal(chat.InitSignal(in))
	if err != nil {
		sub.Close()
		return err
	}
	setRoute(r, r.Pattern, true)
	return a.stream(w, r, sub, first, a.Chat.WebchatFrames(r.Context(), b.ID))
}

func (a *api) generateUserKey(w http.ResponseWriter, r *http.Request, b *chat.Webhook) error {
	admin, err := adminSecret(r, b)
	if err != nil {
		return err
	}
	if !admin {
		return platform.Errorf(platform.TypeUnauthorized, "generating a user key needs the admin secret (x-admin-secret)")
	}
	var in struct {
		ID        string   `json:"id"`
		ExpiresAt *float64 `json:"expiresAt"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	var exp time.Time
	if in.ExpiresAt != nil {
		exp = time.UnixMilli(int64(*in.ExpiresAt))
		if !exp.After(time.Now()) {
			return platform.Invalid("expiresAt", "must be in the future")
		}
	}
	key, err := a.Chat.UserKey(b, in.ID, exp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": key})
	return nil
}

func (a *api) updateMessage(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct {
		Payload  json.RawMessage `json:"payload"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	m, err := a.Chat.UpdateMessage(r.Context(), b, u, r.PathValue("id"), in.Payload, in.Metadata)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": chat.MessageJSON(m)})
	return nil
}

func (a *api) addFeedback(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct {
		Value   string  `json:"value"`
		Comment *string `json:"comment"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if _, err := a.Chat.SetFeedback(r.Context(), b, u, r.PathValue("id"), in.Value, in.Comment); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) removeFeedback(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if _, err := a.Chat.SetFeedback(r.Context(), b, u, r.PathValue("id"), "", nil); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

// createChatFile creates a file for a chat user to upload (the web chat's
// attachments): {file} with its uploadUrl, to which the content is PUT, and
// its url. chat.Service.Upload applies the chat's rules (what may be
// uploaded, where it is kept, whose it is, when it expires); the Files API
// stores it.
func (a *api) createChatFile(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in files.UpsertInput
	if err := decode(r, &in); err != nil {
		return err
	}
	in, c, err := a.Chat.Upload(r.Context(), b, u, in)
	if err != nil {
		return err
	}
	f, err := a.Files.Upsert(r.Context(), c, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"file": a.toFile(f, c)})
	return nil
}
