package main

// The web chat through the real server on each database: getBotWebchat's
// embed codes and its errors, a bot's allowed origins set through
// updateBot (checked, normalised, answered by the Chat API's
// CORS), the widget's script and a bot's full-page chat. The browser test
// (webchat_browser_test.go) embeds the widget in a page of another origin.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestWebchat(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"embed_codes", testWebchatCodes},
		{"allowed_origins", testWebchatOrigins},
		{"page", testWebchatPage},
		{"cli", testWebchatCLI},
	})
}

func testWebchatCodes(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "webchat codes")
	bot := adm.createBot(map[string]any{"name": `Shop "<b>"`})
	id := str(t, bot, "id")
	hook := str(t, bot, "integrations", "chat", "webhookId")
	script := s.URL + "/webchat/v1/inject.js"
	chatURL := str(t, bot, "integrations", "chat", "webhookUrl")
	for kind, want := range map[string][]string{
		"preconfigured": {`<script src="` + script + `" data-chat-url="` + chatURL + `" data-bot-name="Shop &#34;&lt;b&gt;&#34;" defer></script>`},
		"configurable":  {`<script src="` + script + `" defer></script>`, `botplatformWebchat.init({`, `chatUrl: "` + chatURL + `"`, `botName: "Shop \"\u003cb\u003e\""`},
		"fullscreen":    {`<!doctype html>`, `<title>Chat with Shop &#34;&lt;b&gt;&#34;</title>`, `data-chat-url="` + chatURL + `"`, `data-mode="fullscreen"`},
		"sharableUrl":   {s.URL + "/webchat/" + hook},
	} {
		code, _ := adm.get("/v1/admin/bots/" + id + "/webchat?type=" + kind).ok()["code"].(string)
		for _, w := range want {
			if !strings.Contains(code, w) {
				t.Errorf("%s code lacks %s:\n%s", kind, w, code)
			}
		}
	}
	adm.get("/v1/admin/bots/"+id+"/webchat?type=floating").fail(400, "InvalidQuery", "type", "preconfigured, configurable, fullscreen, sharableUrl")
	adm.get("/v1/admin/bots/"+id+"/webchat").fail(400, "InvalidQuery", "type: is required")
	adm.get("/v1/admin/bots/bot_nope/webchat?type=preconfigured").fail(404, "ResourceNotFound", "bot_nope")
	// A viewer reads it like the bot; another workspace does not find it.
	viewer, _ := adm.addMember("viewer")
	viewer.get("/v1/admin/bots/" + id + "/webchat?type=sharableUrl").ok()
	other := s.newWorkspace(t, "webchat other")
	other.get("/v1/admin/bots/"+id+"/webchat?type=sharableUrl").fail(404, "ResourceNotFound")
	s.as(t, "bp_pat_wrong", adm.ws).get("/v1/admin/bots/"+id+"/webchat?type=sharableUrl").fail(401, "Unauthorized")
}

func testWebchatOrigins(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "webchat origins")
	field := "integrations.chat.configuration.allowedOrigins"
	// None at creation; set through updateBot, normalised.
	bot := adm.createBot(map[string]any{"name": "shop"})
	id := str(t, bot, "id")
	if o := field2(t, map[string]any{"bot": bot}); o != nil {
		t.Errorf("a new bot allows %v; want none", o)
	}
	setOrigins(adm, id, "HTTPS://Shop.Example.com:443/", "http://localhost:3000")
	key := str(t, bot, "integrations", "chat", "configuration", "encryptionKey")
	got := adm.get("/v1/admin/bots/" + id).ok()
	if o := jsonOf(t, field2(t, got)); !sameList(o, "https://shop.example.com", "http://localhost:3000") {
		t.Errorf("allowedOrigins after createBot: %v", o)
	}
	// Bad origins are refused naming the entry; nothing changes.
	for _, bad := range []any{"https://a.example", []any{"https://ok.example", "https://shop.example.com/cart"}, []any{"shop.example.com"}, []any{7}} {
		r := adm.put("/v1/admin/bots/"+id, map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"allowedOrigins": bad}}}})
		r.fail(400, "InvalidPayload", field)
	}
	adm.put("/v1/admin/bots/"+id, map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"allowedOrigins": []any{"https://ok.example", "ftp//x"}}}}}).
		fail(400, "InvalidPayload", field+"[1]")
	if o := jsonOf(t, field2(t, adm.get("/v1/admin/bots/"+id).ok())); !sameList(o, "https://shop.example.com", "http://localhost:3000") {
		t.Errorf("allowedOrigins after refused updates: %v", o)
	}
	// The Chat API answers them.
	chatPath := strings.TrimPrefix(str(t, bot, "integrations", "chat", "webhookUrl"), s.URL)
	anon := s.as(t, "", "")
	allow := func(origin string) string {
		return anon.raw(http.MethodOptions, chatPath+"/users", nil, "Origin", origin, "Access-Control-Request-Method", "POST").Header.Get("Access-Control-Allow-Origin")
	}
	if allow("https://shop.example.com") != "https://shop.example.com" || allow("https://evil.example") != "" {
		t.Errorf("CORS: shop %q, evil %q", allow("https://shop.example.com"), allow("https://evil.example"))
	}
	// Replaced through updateBot (the key is kept), then cleared with null.
	upd := setOrigins(adm, id, "https://evil.example")
	if k := str(t, upd, "bot", "integrations", "chat", "configuration", "encryptionKey"); k != key {
		t.Errorf("the encryption key changed with the origins")
	}
	if allow("https://evil.example") != "https://evil.example" || allow("https://shop.example.com") != "" {
		t.Errorf("after the update the old origin is still allowed or the new one not")
	}
	adm.put("/v1/admin/bots/"+id, map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"allowedOrigins": nil}}}}).ok()
	if allow("https://evil.example") != "" {
		t.Errorf("null did not clear the origins")
	}
}

// field2 is the bot's allowedOrigins in a getBot answer.
func field2(t *testing.T, got map[string]any) any {
	t.Helper()
	cfg, _ := field(t, got, "bot", "integrations", "chat", "configuration").(map[string]any)
	return cfg["allowedOrigins"]
}

func sameList(v any, want ...string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i, w := range want {
		if list[i] != w {
			return false
		}
	}
	return true
}

func testWebchatPage(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "webchat page")
	bot := adm.createBot(map[string]any{"name": "<i>Shop</i>"})
	hook := str(t, bot, "integrations", "chat", "webhookId")
	setOrigins(adm, str(t, bot, "id"), "https://shop.example.com")
	page := adm.get("/webchat/" + hook)
	if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", page.Status, page.Header.Get("Content-Type"))
	}
	body := string(page.Body)
	for _, want := range []string{`<title>Chat with &lt;i&gt;Shop&lt;/i&gt;</title>`, `src="` + s.URL + `/webchat/v1/inject.js"`,
		`data-chat-url="` + s.URL + `/chat/` + hook + `"`, `data-mode="fullscreen"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s:\n%s", want, body)
		}
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src " + s.URL + ";", "connect-src " + s.URL + ";", "frame-ancestors 'self' https://shop.example.com"} {
		if !strings.Contains(csp, want) || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("page CSP %q: want %q and no unsafe-inline", csp, want)
		}
	}
	adm.get("/webchat/nope").fail(404, "ResourceNotFound")
	js := adm.get("/webchat/v1/inject.js")
	if js.Status != 200 || js.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") ||
		js.Header.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
		t.Errorf("script: %d %v", js.Status, js.Header)
	}
}

// TestWebchatConfiguredChatURL: with --chat-url set, embed codes name it;
// the script stays at the address the Admin API was called at.
func TestWebchatConfiguredChatURL(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", "--chat-url", "https://chat.example/talk")
	adm := s.owner(t)
	bot := adm.createBot(map[string]any{"name": "shop"})
	hook := str(t, bot, "integrations", "chat", "webhookId")
	code, _ := adm.get("/v1/admin/bots/" + str(t, bot, "id") + "/webchat?type=preconfigured").ok()["code"].(string)
	if !strings.Contains(code, `src="`+s.URL+`/webchat/v1/inject.js"`) || !strings.Contains(code, `data-chat-url="https://chat.example/talk/`+hook+`"`) {
		t.Errorf("code %s: want the configured chat URL and the request's script address", code)
	}
}

// testWebchatCLI: `botplatform bots webchat` prints the embed code, after
// setting the allowed origins when asked.
func testWebchatCLI(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "webchat cli")
	bot := adm.createBot(map[string]any{"name": "kiosk"})
	id, chatURL := str(t, bot, "id"), str(t, bot, "integrations", "chat", "webhookUrl")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	out, errOut, err := adm.cliRun(ctx, "", "bots", "webchat", "kiosk", "--allow", "https://Kiosk.example.com, http://localhost:3000")
	if err != nil || !strings.HasPrefix(out, `<script src="`+s.URL+`/webchat/v1/inject.js" data-chat-url="`+chatURL+`"`) ||
		!strings.Contains(errOut, "https://kiosk.example.com, http://localhost:3000") {
		t.Fatalf("bots webchat --allow: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	if o := field2(t, adm.get("/v1/admin/bots/"+id).ok()); !sameList(jsonOf(t, o), "https://kiosk.example.com", "http://localhost:3000") {
		t.Errorf("allowed origins after the CLI: %v", o)
	}
	var js struct{ Code string }
	if err := json.Unmarshal([]byte(adm.cliOK("bots", "webchat", id, "--type", "sharableUrl", "--json")), &js); err != nil || js.Code != s.URL+"/webchat/"+str(t, bot, "integrations", "chat", "webhookId") {
		t.Errorf("bots webchat --type sharableUrl --json: %+v %v", js, err)
	}
	if _, errOut, err := adm.cliRun(ctx, "", "bots", "webchat", "kiosk", "--allow", "none"); err != nil || !strings.Contains(errOut, "none") {
		t.Errorf("--allow none: %v %s", err, errOut)
	}
	if o := field2(t, adm.get("/v1/admin/bots/"+id).ok()); o != nil && len(o.([]any)) != 0 {
		t.Errorf("allowed origins after --allow none: %v", o)
	}
	if _, _, err := adm.cliRun(ctx, "", "bots", "webchat", "kiosk", "--allow", "https://kiosk.example.com/path"); err == nil || !strings.Contains(err.Error(), "allowedOrigins[0]") {
		t.Errorf("a bad origin: %v; want an error naming allowedOrigins[0]", err)
	}
	if _, _, err := adm.cliRun(ctx, "", "bots", "webchat", "kiosk", "--type", "popup"); err == nil || !strings.Contains(err.Error(), "type: must be one of") {
		t.Errorf("a bad type: %v", err)
	}
}
