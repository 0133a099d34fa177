package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/webchat"
)

// The chat widget for websites (docs/webchat.md): its script and a bot's
// full-page chat, and the embed codes of getBotWebchat (routed in
// admin.go).

func (a *api) webchatRoutes() *table {
	t := newTable("Webchat")
	t.handle("GET "+webchat.ScriptPath, "getWebchatScript", nil, http.HandlerFunc(webchat.ServeScript))
	t.handle("GET "+webchat.PagePath+"{webhook}", "getWebchatPage", nil, a.h(a.webchatPage))
	return t
}

// getBotWebchat answers the embed code of the kind the query's type names.
func (a *api) getBotWebchat(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	kind := newQuery(r).str("type")
	if !slices.Contains(webchat.Kinds, kind) {
		what := "is required:"
		if kind != "" {
			what = "must be"
		}
		return platform.Errorf(platform.TypeInvalidQuery, "type: %s one of %s", what, strings.Join(webchat.Kinds, ", "))
	}
	b, err := a.Admin.GetBot(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	var hook string
	for _, in := range b.Integrations {
		if in.IntegrationID == platform.ChatIntegrationID {
			hook = in.WebhookID
		}
	}
	base, chatURL := a.webchatBases(r)
	code := webchat.Code(kind, webchat.Embed{ScriptURL: base + webchat.ScriptPath, ChatURL: chatURL + "/" + hook,
		PageURL: base + webchat.PagePath + hook, BotName: b.Name})
	writeJSON(w, http.StatusOK, map[string]string{"code": code})
	return nil
}

// webchatPage serves a bot's full-page chat (getBotWebchat's sharableUrl).
func (a *api) webchatPage(w http.ResponseWriter, r *http.Request) error {
	hook := r.PathValue("webhook")
	b, err := a.Chat.Webhook(r.Context(), hook)
	if err != nil {
		return err
	}
	name, err := a.Chat.BotName(r.Context(), b)
	if err != nil {
		return err
	}
	base, chatURL := a.webchatBases(r)
	return webchat.ServePage(w, r, webchat.Page{BotName: name, ChatURL: chatURL + "/" + hook, ScriptURL: base + webchat.ScriptPath, Frames: b.Origins})
}

// webchatBases are the absolute base URLs of the server and of its Chat
// API that embed codes name: the configured ones, else the request's.
func (a *api) webchatBases(r *http.Request) (base, chatURL string) {
	base = strings.TrimRight(a.PublicURL, "/")
	if base == "" {
		base = requestOrigin(r)
	}
	chatURL = strings.TrimRight(a.ChatURL, "/")
	if chatURL == "" {
		chatURL = requestOrigin(r) + strings.TrimRight(a.ChatPath, "/")
	}
	return base, chatURL
}
