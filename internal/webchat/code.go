package webchat

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// Kinds are the kinds of embed code getBotWebchat hands out.
var Kinds = []string{"preconfigured", "configurable", "fullscreen", "sharableUrl"}

// Widgets are the chat widgets an embed code can show: this server's own,
// or the official web chat (official.go).
var Widgets = []string{"botplatform", "official"}

// Embed is what an embed code is made of: absolute URLs.
type Embed struct {
	ScriptURL string // the widget's script
	ChatURL   string // the bot's Chat API (its webhookUrl)
	PageURL   string // the bot's full-page chat on this server
	BotName   string
	Official  bool // the official web chat's codes (ScriptURL and PageURL its own)
}

// Code is the embed code of kind (one of Kinds; "" for another).
func Code(kind string, e Embed) string {
	attr := func(s string) string { return `"` + html.EscapeString(s) + `"` }
	tag := `<script src=` + attr(e.ScriptURL) + ` data-chat-url=` + attr(e.ChatURL) + ` data-bot-name=` + attr(e.BotName)
	// What differs between the two widgets: the global the script defines,
	// its options beyond chatUrl and botName, and the full page's body.
	global, options := "botplatformWebchat", `
      color: '#2563eb',    // the bubble's and the header's colour
      greeting: '',        // a first line shown above the conversation
      position: 'right',   // or 'left'`
	body := "<body>\n  " + tag + ` data-mode="fullscreen"></script>`
	if e.Official {
		global, options = "botplatformOfficialWebchat", `
      color: '#2563eb',    // the bubble's colour
      position: 'right',   // or 'left'`
		body = "<body style=\"margin:0\">\n  <iframe src=" + attr(e.PageURL) + ` title="Chat" style="position:fixed;inset:0;width:100%;height:100%;border:0"></iframe>`
	}
	switch kind {
	case "preconfigured":
		return tag + " defer></script>\n"
	case "configurable":
		js := func(s string) string { b, _ := json.Marshal(s); return string(b) } // escapes <, > and &
		return `<script src=` + attr(e.ScriptURL) + ` defer></script>
<script>
  window.addEventListener('load', function () {
    window.` + global + `.init({
      chatUrl: ` + js(e.ChatURL) + `,
      botName: ` + js(e.BotName) + `,` + options + `
      open: false          // true: the chat is open when the page loads
    })
  })
</script>
`
	case "fullscreen":
		return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Chat with ` + html.EscapeString(e.BotName) + `</title>
</head>
` + body + `
</body>
</html>
`
	case "sharableUrl":
		return e.PageURL
	}
	return ""
}

// origin is the scheme://host[:port] of an absolute URL.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "'self'"
	}
	return strings.ToLower(p.Scheme) + "://" + p.Host
}
