package main

// The chat widget embedded in a page of another origin (a second listener,
// another port), in a real browser (headless Chromium through chromedp):
// the page carries the embed code getBotWebchat returns and a strict
// Content-Security-Policy; the visitor opens the bubble, talks to an echo
// bot, picks a choice, reloads and finds the same conversation, and a
// hostile reply renders as text. A bot that does not allow the page's
// origin shows an error and receives nothing. Screenshots go to the
// artefacts directory (BOTPLATFORM_ARTIFACTS; docs/webchat/ holds copies).

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

// webchatEchoJS echoes text, and answers "menu" with a choice.
const webchatEchoJS = `bot.on.message('*', async ({ message, client }) => {
  const text = message.payload.text
  if (text === 'menu') {
    await client.createMessage({ conversationId: message.conversationId, payload: { type: 'choice', text: 'Pick a colour',
      options: [{ label: 'Red', value: 'red' }, { label: 'Blue', value: 'blue' }] } })
    return
  }
  if (text === 'card') {
    await client.createMessage({ conversationId: message.conversationId, payload: { type: 'card', title: 'Trail bike', subtitle: '<b>29er</b>',
      imageUrl: 'javascript:window.__pwned=1', actions: [{ action: 'url', label: 'Details', value: 'javascript:window.__pwned=1' },
        { action: 'url', label: 'Shop', value: 'https://shop.example.com/bikes' }, { action: 'postback', label: 'Buy', value: 'buy' }] } })
    return
  }
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'You said: ' + text } })
})
`

// site is the website the widget is embedded in: its own origin.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]string
	csps  map[string]string // a page's own Content-Security-Policy
}

func newSite(t *testing.T, csp string) *site {
	s := &site{pages: map[string]string{}, csps: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		page, ok := s.pages[r.URL.Path]
		policy, own := s.csps[r.URL.Path]
		s.mu.Unlock()
		if !own {
			policy = csp
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if policy != "" {
			w.Header().Set("Content-Security-Policy", policy)
		}
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) page(path, body string) {
	s.mu.Lock()
	s.pages[path] = body
	s.mu.Unlock()
}

// webchatCode is getBotWebchat's code of kind for a bot.
func webchatCode(t *testing.T, c client, botID, kind string) string {
	t.Helper()
	code, _ := c.get("/v1/admin/bots/" + botID + "/webchat?type=" + kind).ok()["code"].(string)
	if code == "" {
		t.Fatalf("getBotWebchat(%s) returned no code", kind)
	}
	return code
}

// setOrigins sets a bot's allowed origins through updateBot.
func setOrigins(c client, botID string, origins ...string) map[string]any {
	c.t.Helper()
	return c.put("/v1/admin/bots/"+botID, map[string]any{"integrations": map[string]any{"chat": map[string]any{
		"configuration": map[string]any{"allowedOrigins": origins}}}}).ok()
}

// widget is the JavaScript path of an element in the widget's shadow root.
func widget(sel string) string {
	return `document.querySelector('#botplatform-webchat')?.shadowRoot?.querySelector(` + jsString(sel) + `)`
}

func (b *browser) widgetText(sel string) string {
	b.t.Helper()
	return b.eval(`(` + widget(sel) + `)?.textContent ?? ""`)
}

// botTexts are the texts of the widget's messages, in order.
func (b *browser) widgetMessages() string {
	b.t.Helper()
	return b.eval(`[...document.querySelector('#botplatform-webchat').shadowRoot.querySelectorAll('.messages .msg .body')].map((e) => e.textContent).join('|')`)
}

func (b *browser) waitWidget(what string, ok func() bool) {
	b.t.Helper()
	b.waitFor(what, ok)
}

func TestWebchatBrowser(t *testing.T) {
	t.Parallel()
	exe := chromium()
	if exe == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome or BOTPLATFORM_CHROMIUM): apt-get install -y chromium")
	}
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) { testWebchatBrowser(t, exe, backend) })
	}
}

func testWebchatBrowser(t *testing.T, exe, backend string) {
	s := startBackend(t, backend)
	adm := s.owner(t)
	// The host page allows scripts and connections to the chat server
	// only, and no inline script or style (docs/webchat.md#csp).
	csp := "default-src 'self'; script-src " + s.URL + "; connect-src " + s.URL + "; img-src " + s.URL + " data: https:; style-src 'self'"
	web := newSite(t, csp)
	if web.URL == s.URL {
		t.Fatal("the site and the server share an origin")
	}

	bot := adm.createBot(map[string]any{"name": "Shop assistant", "code": webchatEchoJS})
	botID := str(t, bot, "id")
	setOrigins(adm, botID, web.URL)
	code := webchatCode(t, adm, botID, "preconfigured")
	if !strings.Contains(code, s.URL+"/webchat/v1/inject.js") || !strings.Contains(code, `data-chat-url="`+s.URL+"/chat/") {
		t.Fatalf("preconfigured code %q does not name this server's script and Chat API", code)
	}
	web.page("/", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Our shop</title></head>
<body><h1>Our shop</h1><p>Bicycles, parts and repairs.</p>`+code+`</body></html>`)

	b := newBrowser(t, exe)
	if backend != "sqlite" {
		b.dir = t.TempDir() // the artefacts are SQLite's run
	}
	t.Logf("screenshots in %s", b.dir)
	b.do("opening the shop", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(web.URL+"/"),
		chromedp.WaitVisible(chromedp.JSPath(widget(".bubble"))))
	b.shot("bubble")

	// The bubble opens the chat: a new chat user and conversation.
	b.do("clicking the bubble", chromedp.Click(chromedp.JSPath(widget(".bubble"))))
	b.waitWidget("the chat to connect", func() bool { return b.eval(widget("input")+`.disabled`) == "false" })
	if got := b.widgetText(".title"); got != "Shop assistant" {
		t.Errorf("the header shows %q; want the bot's name", got)
	}
	b.do("typing", chromedp.SendKeys(chromedp.JSPath(widget("input")), "hello"))
	b.do("sending", chromedp.Click(chromedp.JSPath(widget("button.send"))))
	b.waitWidget("the bot's reply", func() bool { return b.widgetMessages() == "hello|You said: hello" })

	// A choice renders as buttons; a button sends its value.
	b.do("asking for the menu", chromedp.SendKeys(chromedp.JSPath(widget("input")), "menu\r"))
	b.waitWidget("the choice", func() bool { return strings.HasSuffix(b.widgetMessages(), "menu|Pick a colour") })
	if got := b.eval(`[...document.querySelector('#botplatform-webchat').shadowRoot.querySelectorAll('.choices button')].map((e) => e.textContent).join(',')`); got != "Red,Blue" {
		t.Fatalf("the choice's buttons are %q; want Red,Blue", got)
	}
	b.do("picking Red", chromedp.Click(chromedp.JSPath(widget(".choices button"))))
	b.waitWidget("the reply to the choice", func() bool { return strings.HasSuffix(b.widgetMessages(), "red|You said: red") })

	// A hostile reply is text.
	b.do("sending a hostile string", chromedp.SendKeys(chromedp.JSPath(widget("input")), hostile+"\r"))
	b.waitWidget("the hostile echo", func() bool { return strings.HasSuffix(b.widgetMessages(), hostile+"|You said: "+hostile) })
	b.notPwned("the bot's reply")
	if n := b.eval(`document.querySelector('#botplatform-webchat').shadowRoot.querySelectorAll('.messages img').length`); n != "0" {
		t.Errorf("%s images in the messages; a hostile reply became markup", n)
	}
	// A card: its links take only http(s) URLs; its postback button
	// sends its value.
	b.do("asking for a card", chromedp.SendKeys(chromedp.JSPath(widget("input")), "card\r"))
	b.waitWidget("the card", func() bool { return strings.Contains(b.widgetText(".messages .msg:last-child .card"), "Trail bike") })
	links := b.eval(`[...document.querySelector('#botplatform-webchat').shadowRoot.querySelectorAll('.card a')].map((a) => a.textContent + '=' + a.href).join(',')`)
	if links != "Shop=https://shop.example.com/bikes" {
		t.Errorf("the card's links are %q; want only the https one", links)
	}
	if n := b.eval(`document.querySelector('#botplatform-webchat').shadowRoot.querySelectorAll('.card img, .card b').length`); n != "0" {
		t.Errorf("the card has %s images or markup; want none (a javascript: image, a subtitle as text)", n)
	}
	b.do("clicking Buy", chromedp.Click(chromedp.JSPath(widget(".messages .msg:last-child .card button"))))
	b.waitWidget("the reply to Buy", func() bool { return strings.HasSuffix(b.widgetMessages(), "buy|You said: buy") })
	b.notPwned("the card")
	b.shot("conversation")
	before := b.widgetMessages()
	stored := b.eval(`localStorage.getItem(` + jsString("botplatform-webchat:") + ` + document.querySelector('script[data-chat-url]').dataset.chatUrl)`)
	if !strings.Contains(stored, `"conversationId"`) || !strings.Contains(stored, `"key"`) {
		t.Fatalf("localStorage holds %s; want the user key and the conversation", stored)
	}

	// After a reload, the same user and conversation, with their messages.
	b.do("reloading", chromedp.Reload(), chromedp.WaitVisible(chromedp.JSPath(widget(".bubble"))))
	b.do("reopening the chat", chromedp.Click(chromedp.JSPath(widget(".bubble"))))
	b.waitWidget("the conversation's history", func() bool { return b.widgetMessages() == before })
	if again := b.eval(`localStorage.getItem(` + jsString("botplatform-webchat:") + ` + document.querySelector('script[data-chat-url]').dataset.chatUrl)`); again != stored {
		t.Errorf("after a reload localStorage holds %s; want %s (the same user and conversation)", again, stored)
	}
	b.waitWidget("the chat to connect again", func() bool { return b.eval(widget("input")+`.disabled`) == "false" })
	b.do("typing after the reload", chromedp.SendKeys(chromedp.JSPath(widget("input")), "still here\r"))
	b.waitWidget("the reply after the reload", func() bool { return b.widgetMessages() == before+"|still here|You said: still here" })
	var convs struct {
		Conversations []map[string]any `json:"conversations"`
	}
	adm.raw(http.MethodGet, "/v1/chat/conversations", nil, "x-bot-id", botID).decode(&convs)
	if len(convs.Conversations) != 1 {
		t.Errorf("the bot has %d conversations; want the one, kept across the reload", len(convs.Conversations))
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors (CSP or script): %v", errs)
	}

	// The server restarts: the widget notices the stream's end, reconnects
	// to the new process (same address and data) and listens again.
	restart := time.Now()
	stopServer(t, s)
	b.waitWidget("the widget to notice the stream's end", func() bool { return strings.Contains(b.widgetText(".status"), "Reconnecting") })
	s = startServer(t, s.DataDir, s.DatabaseURL, "--addr", strings.TrimPrefix(s.URL, "http://"))
	adm = s.owner(t)
	b.waitWidget("the stream to reopen", func() bool { return b.widgetText(".status") == "" })
	b.do("typing after the restart", chromedp.SendKeys(chromedp.JSPath(widget("input")), "back again\r"))
	b.waitWidget("the reply after the restart", func() bool {
		return b.widgetMessages() == before+"|still here|You said: still here|back again|You said: back again"
	})
	before = b.widgetMessages()
	t.Logf("the widget was back %s after the server began to stop", time.Since(restart).Round(100*time.Millisecond))

	// At phone width the panel fills the screen.
	b.do("phone width", chromedp.EmulateViewport(390, 780))
	b.shot("phone")

	// The fullscreen code is a page of its own; the sharable URL a page of
	// this server's.
	web.page("/chat", webchatCode(t, adm, botID, "fullscreen"))
	b.do("opening the fullscreen page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(web.URL+"/chat"),
		chromedp.WaitVisible(chromedp.JSPath(widget(".panel"))))
	b.waitWidget("the fullscreen chat's history", func() bool { return b.widgetMessages() == before })
	b.shot("fullscreen")
	shared := webchatCode(t, adm, botID, "sharableUrl")
	if !strings.HasPrefix(shared, s.URL+"/webchat/") {
		t.Fatalf("sharableUrl %q is not a page of this server", shared)
	}
	b.do("opening the sharable URL", chromedp.Navigate(shared), chromedp.WaitVisible(chromedp.JSPath(widget(".panel"))))
	b.waitWidget("the shared page to connect", func() bool { return b.eval(widget("input")+`.disabled`) == "false" })
	b.do("typing on the shared page", chromedp.SendKeys(chromedp.JSPath(widget("input")), "from the link\r"))
	b.waitWidget("the reply on the shared page", func() bool { return b.widgetMessages() == "from the link|You said: from the link" })
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the pages logged errors (CSP or script): %v", errs)
	}

	// The configurable code (an inline init call: the page allows inline
	// scripts) opens the same visitor's conversation, with its options.
	web.mu.Lock()
	web.csps["/configurable"] = ""
	web.mu.Unlock()
	configurable := strings.Replace(webchatCode(t, adm, botID, "configurable"), "greeting: ''", "greeting: 'Hi! Ask us anything.'", 1)
	web.page("/configurable", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Configured</title></head><body>`+configurable+`</body></html>`)
	b.do("opening the configurable page", chromedp.Navigate(web.URL+"/configurable"), chromedp.WaitVisible(chromedp.JSPath(widget(".bubble"))),
		chromedp.Click(chromedp.JSPath(widget(".bubble"))))
	b.waitWidget("the configurable widget's history", func() bool { return b.widgetMessages() == "Hi! Ask us anything.|"+before })

	// A bot that does not allow the site's origin: the widget says so and
	// nothing reaches the bot.
	closed := adm.createBot(map[string]any{"name": "Closed", "code": webchatEchoJS})
	closedID := str(t, closed, "id")
	web.page("/closed", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Elsewhere</title></head>
<body><h1>Another page</h1>`+webchatCode(t, adm, closedID, "preconfigured")+`</body></html>`)
	b.do("opening the page of a bot that refuses it", chromedp.Navigate(web.URL+"/closed"),
		chromedp.WaitVisible(chromedp.JSPath(widget(".bubble"))), chromedp.Click(chromedp.JSPath(widget(".bubble"))))
	b.waitWidget("the error", func() bool { return strings.Contains(b.widgetText(".error"), "allowed origins") })
	if b.eval(widget(".error")+`.hidden`) != "false" || b.eval(widget("input")+`.disabled`) != "true" || b.eval(widget("button.send")+`.disabled`) != "true" {
		t.Errorf("with the origin refused, the error should show and the input and Send be disabled")
	}
	b.shot("refused")
	for _, path := range []string{"/v1/chat/conversations", "/v1/chat/users"} {
		var out map[string]any
		adm.raw(http.MethodGet, path, nil, "x-bot-id", closedID).decode(&out)
		for k, v := range out {
			if list, ok := v.([]any); ok && len(list) != 0 {
				t.Errorf("%s of the refusing bot: %d %s; want none", path, len(list), k)
			}
		}
	}

	// Allowed now, the same page works after Retry.
	setOrigins(adm, closedID, web.URL)
	b.do("retrying", chromedp.Click(chromedp.JSPath(widget("button.retry"))))
	b.waitWidget("the chat to connect after Retry", func() bool { return b.eval(widget("input")+`.disabled`) == "false" })
}
