// Package webchat is the chat widget for websites: its script, served from the binary, the embed codes
// getBotWebchat hands out, the full-page chat of a bot's sharable URL, and the origins a bot allows to use
// its Chat API from a browser.
package webchat

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"time"
)

// ScriptPath is where the widget's script is served; embed codes name it,
// so it never moves.
const ScriptPath = "/webchat/v1/inject.js"

// PagePath is the path of a bot's full-page chat, before its webhook id.
const PagePath = "/webchat/"

//go:embed assets/inject.js
var script []byte

var scriptTag = etag(script)

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// ServeScript serves the widget's script to any page: it is public, so
// it is allowed everywhere (CORS, Cross-Origin-Resource-Policy). Pages
// load it at a fixed address: browsers keep it for an hour, then
// revalidate.
func ServeScript(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("ETag", scriptTag)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(script))
}

// Page is what a bot's full-page chat shows.
type Page struct {
	BotName   string
	ChatURL   string   // the bot's Chat API (webhookUrl)
	ScriptURL string   // the widget's script
	Frames    []string // the origins that may show the page in a frame (the bot's allowed origins)
}

// pageHead starts the pages of a bot's chat, up to the end of their head.
const pageHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Chat with {{.BotName}}</title>
`

var pageTemplate = template.Must(template.New("page").Parse(pageHead + `</head>
<body>
<script src="{{.ScriptURL}}" data-chat-url="{{.ChatURL}}" data-bot-name="{{.BotName}}" data-mode="fullscreen"></script>
</body>
</html>
`))

// ServePage answers a bot's full-page chat. The page runs only the
// widget's script (no inline script) and talks only to the Chat API.
func ServePage(w http.ResponseWriter, r *http.Request, p Page) error {
	return servePage(w, pageTemplate, p, "default-src 'none'; script-src "+origin(p.ScriptURL)+"; connect-src "+origin(p.ChatURL)+
		"; img-src https: http: data:; media-src https: http:; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "+
		frameAncestors(p.Frames))
}

// servePage answers a page of a bot's chat made of t and data, under the
// Content-Security-Policy csp.
func servePage(w http.ResponseWriter, t *template.Template, data any, csp string) error {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, err := w.Write(buf.Bytes())
	return err
}
