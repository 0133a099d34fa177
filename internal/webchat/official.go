package webchat

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"path"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// The official web chat (@botpress/webchat, MIT), built from its npm
// package by scripts/webchat-official into official/ and served from the
// binary: a bot's full page at OfficialPagePath<webhookId>, and a script
// that puts it behind a bubble on any page (OfficialScriptPath).

// OfficialPagePath is the path of a bot's official full-page chat, before
// its webhook id.
const OfficialPagePath = "/webchat/official/"

// OfficialAssetsPath is where the official web chat's files are served:
// inject.js, webchat.js, webchat.css and NOTICES.txt (the licences of what
// webchat.js holds).
const OfficialAssetsPath = "/webchat/official/v1/"

// OfficialScriptPath is the embed script of the official web chat.
const OfficialScriptPath = OfficialAssetsPath + "inject.js"

//go:embed official/webchat.js official/webchat.css official/NOTICES.txt
var officialFiles embed.FS

//go:embed assets/official-inject.js
var officialInject []byte

type asset struct {
	body        []byte
	etag, ctype string
}

var officialAssets = func() map[string]asset {
	out := map[string]asset{"inject.js": {officialInject, etag(officialInject), "text/javascript; charset=utf-8"}}
	for name, ctype := range map[string]string{"webchat.js": "text/javascript; charset=utf-8", "webchat.css": "text/css; charset=utf-8",
		"NOTICES.txt": "text/plain; charset=utf-8"} {
		b, err := officialFiles.ReadFile("official/" + name)
		if err != nil {
			panic(err)
		}
		out[name] = asset{b, etag(b), ctype}
	}
	return out
}()

// ServeOfficialAsset serves one of the official web chat's files (name as
// under OfficialAssetsPath) to any page, as ServeScript does.
func ServeOfficialAsset(w http.ResponseWriter, r *http.Request, name string) error {
	a, ok := officialAssets[name]
	if !ok {
		return platform.Errorf(platform.TypeResourceNotFound, "no file %q of the official web chat", path.Clean(name))
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("ETag", a.etag)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	return nil
}

// OfficialPage is what a bot's official full-page chat shows.
type OfficialPage struct {
	BotName   string
	APIURL    string   // the Chat API's base, without the webhook id
	ClientID  string   // the bot's chat webhook id
	AssetsURL string   // the absolute OfficialAssetsPath
	UploadURL string   // the origin uploads go to (the Files API's)
	Frames    []string // the origins that may show the page in a frame (the bot's allowed origins)
}

var officialTemplate = template.Must(template.New("official").Parse(pageHead + `<link rel="stylesheet" href="{{.AssetsURL}}webchat.css">
</head>
<body>
<script src="{{.AssetsURL}}webchat.js" data-api-url="{{.APIURL}}" data-client-id="{{.ClientID}}" data-bot-name="{{.BotName}}"></script>
</body>
</html>
`))

// ServeOfficialPage answers a bot's official full-page chat: only the
// official web chat's script runs, and it talks only to the Chat API and
// the Files API's uploads. The component sets styles of its own, hence
// 'unsafe-inline' for styles (never for scripts).
func ServeOfficialPage(w http.ResponseWriter, r *http.Request, p OfficialPage) error {
	return servePage(w, officialTemplate, p, "default-src 'none'; script-src "+origin(p.AssetsURL)+"; style-src "+origin(p.AssetsURL)+
		" 'unsafe-inline'; connect-src "+origin(p.APIURL)+" "+origin(p.UploadURL)+"; img-src https: http: data: blob:; media-src https: http: data: blob:"+
		"; font-src "+origin(p.AssetsURL)+" data:; base-uri 'none'; form-action 'none'; frame-ancestors "+frameAncestors(p.Frames))
}

// frameAncestors is the frame-ancestors source list of a bot's pages: its
// allowed origins, or none.
func frameAncestors(origins []string) string {
	if len(origins) == 0 {
		return "'none'"
	}
	frames := "'self'"
	for _, o := range origins {
		frames += " " + o // checked origins: no spaces or quotes
	}
	return frames
}
