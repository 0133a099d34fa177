package webchat

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestCheckOrigins(t *testing.T) {
	got, err := CheckOrigins("o", []any{"HTTPS://Shop.Example.com:443/", "http://127.0.0.1:8080", "*", "https://*.example.org",
		"http://shop.example.com:80", "https://shop.example.com", "https://[::1]:8443"})
	if err != nil {
		t.Fatal(err)
	}
	want := "https://shop.example.com http://127.0.0.1:8080 * https://*.example.org http://shop.example.com https://[::1]:8443"
	if strings.Join(got, " ") != want {
		t.Errorf("normalised: %q\nwant        %q", strings.Join(got, " "), want)
	}
	for _, tc := range []struct {
		in    any
		field string
	}{
		{"https://a.example", "o"},
		{[]any{"https://ok.example", "https://shop.example.com/path"}, "o[1]"},
		{[]any{"shop.example.com"}, "o[0]"},
		{[]any{"https://shop.example.com?x=1"}, "o[0]"},
		{[]any{"https://user@shop.example.com"}, "o[0]"},
		{[]any{"https://shop.example.com:99999"}, "o[0]"},
		{[]any{"https://sh*p.example.com"}, "o[0]"},
		{[]any{"https://"}, "o[0]"},
		{[]any{42}, "o[0]"},
		{[]any{"*://x"}, "o[0]"},
	} {
		_, err := CheckOrigins("o", tc.in)
		pe, ok := err.(*platform.Error)
		if !ok || pe.Type != platform.TypeInvalidPayload || !strings.HasPrefix(pe.Message, tc.field+":") {
			t.Errorf("CheckOrigins(%v): %v; want InvalidPayload naming %s", tc.in, err, tc.field)
		}
	}
	many := make([]any, MaxOrigins+1)
	for i := range many {
		many[i] = "https://a.example"
	}
	if _, err := CheckOrigins("o", many); err == nil {
		t.Errorf("%d origins accepted", len(many))
	}
}

func TestAllowed(t *testing.T) {
	list := []string{"https://shop.example.com", "https://*.example.org", "http://127.0.0.1:8080"}
	for origin, want := range map[string]bool{
		"https://shop.example.com": true, "https://SHOP.example.com:443": true, "http://shop.example.com": false,
		"https://a.example.org": true, "https://a.b.example.org": true, "https://example.org": false, "https://badexample.org": false,
		"https://a.example.org:8443": false, "http://127.0.0.1:8080": true, "http://127.0.0.1:8081": false,
		"null": false, "": false, "*": false,
	} {
		if got := Allowed(list, origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
	if !Allowed([]string{"*"}, "https://any.example") || Allowed([]string{"*"}, "null") || Allowed(nil, "https://shop.example.com") {
		t.Errorf("* allows any origin (not null); none allows none")
	}
}

func TestCode(t *testing.T) {
	e := Embed{ScriptURL: "https://bots.example/webchat/v1/inject.js", ChatURL: "https://bots.example/chat/hook1",
		PageURL: "https://bots.example/webchat/hook1", BotName: `Shop "<b>"</script>`}
	for _, kind := range Kinds {
		code := Code(kind, e)
		if code == "" {
			t.Fatalf("%s: no code", kind)
		}
		if strings.Contains(code, "<b>") || strings.Contains(code, `"</script>`) {
			t.Errorf("%s: the bot's name is not escaped:\n%s", kind, code)
		}
	}
	if c := Code("preconfigured", e); !strings.HasPrefix(c, `<script src="https://bots.example/webchat/v1/inject.js" data-chat-url="https://bots.example/chat/hook1"`) {
		t.Errorf("preconfigured: %s", c)
	}
	if c := Code("sharableUrl", e); c != e.PageURL {
		t.Errorf("sharableUrl: %s", c)
	}
	if Code("other", e) != "" {
		t.Errorf("an unknown kind has a code")
	}
}

func TestScriptAndPage(t *testing.T) {
	w := httptest.NewRecorder()
	ServeScript(w, httptest.NewRequest("GET", ScriptPath, nil))
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(w.Body.String(), "botplatformWebchat") {
		t.Fatalf("script: %d %v", w.Code, w.Header())
	}
	if strings.Contains(w.Body.String(), ".innerHTML") {
		t.Errorf("the widget sets innerHTML")
	}
	w = httptest.NewRecorder()
	err := ServePage(w, httptest.NewRequest("GET", PagePath+"hook1", nil), Page{BotName: "<i>x</i>", ChatURL: "https://chat.example/chat/hook1",
		ScriptURL: "https://bots.example/webchat/v1/inject.js", Frames: []string{"https://shop.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src https://bots.example;", "connect-src https://chat.example;", "frame-ancestors 'self' https://shop.example.com"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(w.Body.String(), "<i>") {
		t.Errorf("the page does not escape the bot's name:\n%s", w.Body)
	}
}

// The official web chat's codes, page and files: the bot's name escaped,
// the page framed only by the bot's origins, running only the served
// script, its files public.
func TestOfficial(t *testing.T) {
	e := Embed{ScriptURL: "https://bots.example/webchat/official/v1/inject.js", ChatURL: "https://bots.example/chat/hook1",
		PageURL: "https://bots.example/webchat/official/hook1", BotName: `Shop "<b>"</script>`, Official: true}
	for _, kind := range Kinds {
		code := Code(kind, e)
		if code == "" || strings.Contains(code, "<b>") || strings.Contains(code, `"</script>`) || strings.Contains(code, "/webchat/v1/") {
			t.Errorf("%s:\n%s", kind, code)
		}
	}
	if c := Code("configurable", e); !strings.Contains(c, "window.botplatformOfficialWebchat.init(") {
		t.Errorf("configurable: %s", c)
	}
	if c := Code("fullscreen", e); !strings.Contains(c, `<iframe src="https://bots.example/webchat/official/hook1"`) {
		t.Errorf("fullscreen: %s", c)
	}

	w := httptest.NewRecorder()
	err := ServeOfficialPage(w, httptest.NewRequest("GET", OfficialPagePath+"hook1", nil), OfficialPage{BotName: "<i>x</i>",
		APIURL: "https://chat.example/chat", ClientID: "hook1", AssetsURL: "https://bots.example/webchat/official/v1/",
		UploadURL: "https://bots.example", Frames: nil})
	if err != nil {
		t.Fatal(err)
	}
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src https://bots.example;", "connect-src https://chat.example https://bots.example;", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src 'unsafe-inline'") || strings.Contains(w.Body.String(), "<i>") {
		t.Errorf("page %q:\n%s", csp, w.Body)
	}
	for _, name := range []string{"inject.js", "webchat.js", "webchat.css", "NOTICES.txt"} {
		w := httptest.NewRecorder()
		if err := ServeOfficialAsset(w, httptest.NewRequest("GET", OfficialAssetsPath+name, nil), name); err != nil || w.Code != 200 ||
			w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Body.Len() == 0 {
			t.Errorf("%s: %v %d %v", name, err, w.Code, w.Header())
		}
	}
	if err := ServeOfficialAsset(httptest.NewRecorder(), httptest.NewRequest("GET", OfficialAssetsPath+"x", nil), "../official.go"); err == nil {
		t.Errorf("another file is served")
	}
}
