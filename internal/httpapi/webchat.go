package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/chat"
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
	t.handle("GET "+webchat.OfficialAssetsPath+"{file}", "getOfficialWebchatFile", nil, a.h(func(w http.ResponseWriter, r *http.Request) error {
		return webchat.ServeOfficialAsset(w, r, r.PathValue("file"))
	}))
	t.handle("GET "+webchat.OfficialPagePath+"{webhook}", "getOfficialWebchatPage", nil, a.h(a.officialWebchatPage))
	return t
}

// getBotWebchat answers the embed code of the kind the query's type names.
func (a *api) getBotWebchat(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	q := newQuery(r)
	kind := q.str("type")
	if !slices.Contains(webchat.Kinds, kind) {
		what := "is required:"
		if kind != "" {
			what = "must be"
		}
		return platform.Errorf(platform.TypeInvalidQuery, "type: %s one of %s", what, strings.Join(webchat.Kinds, ", "))
	}
	widget := q.str("widget")
	if widget == "" {
		widget = webchat.Widgets[0]
	}
	if !slices.Contains(webchat.Widgets, widget) {
		return platform.Errorf(platform.TypeInvalidQuery, "widget: must be one of %s", strings.Join(webchat.Widgets, ", "))
	}
	b, err := a.Admin.GetBot(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	// The chat integration's webhook; the official web chat's is the
	// webchat integration's, when the bot installed it.
	var hook string
	for _, in := range b.Integrations {
		if in.IntegrationID == platform.ChatIntegrationID && hook == "" ||
			in.IntegrationID == platform.WebchatIntegrationID && in.Enabled && widget == "official" {
			hook = in.WebhookID
		}
	}
	base, chatURL := a.webchatBases(r)
	e := webchat.Embed{ScriptURL: base + webchat.ScriptPath, ChatURL: chatURL + "/" + hook, PageURL: base + webchat.PagePath + hook, BotName: b.Name}
	if widget == "official" {
		e.Official, e.ScriptURL, e.PageURL = true, base+webchat.OfficialScriptPath, base+webchat.OfficialPagePath+hook
	}
	code := webchat.Code(kind, e)
	writeJSON(w, http.StatusOK, map[string]string{"code": code})
	return nil
}

// webchatPage serves a bot's full-page chat (getBotWebchat's sharableUrl).
func (a *api) webchatPage(w http.ResponseWriter, r *http.Request) error {
	p, err := a.chatPage(r)
	if err != nil {
		return err
	}
	return webchat.ServePage(w, r, webchat.Page{BotName: p.name, ChatURL: p.chatURL + "/" + p.hook, ScriptURL: p.base + webchat.ScriptPath,
		Frames: p.b.Origins})
}

// officialWebchatPage serves a bot's full page of the official web chat
// (getBotWebchat's codes with widget=official frame it).
func (a *api) officialWebchatPage(w http.ResponseWriter, r *http.Request) error {
	p, err := a.chatPage(r)
	if err != nil {
		return err
	}
	return webchat.ServeOfficialPage(w, r, webchat.OfficialPage{BotName: p.name, APIURL: p.chatURL, ClientID: p.hook,
		AssetsURL: p.base + webchat.OfficialAssetsPath, UploadURL: a.Files.BaseURL(), Frames: p.b.Origins})
}

// chatPageOf is what a bot's chat page is made of.
type chatPageOf struct {
	b             *chat.Webhook
	hook, name    string
	base, chatURL string
}

// chatPage reads the bot of the chat page r asks for, by its webhook id.
func (a *api) chatPage(r *http.Request) (chatPageOf, error) {
	p := chatPageOf{hook: r.PathValue("webhook")}
	var err error
	if p.b, err = a.Chat.Webhook(r.Context(), p.hook); err != nil {
		return p, err
	}
	if p.name, err = a.Chat.BotName(r.Context(), p.b); err != nil {
		return p, err
	}
	p.base, p.chatURL = a.webchatBases(r)
	return p, nil
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
