package main

// The console's Integrations section in a real browser, a subtest of
// TestConsoleBrowserMore: a bot's installations as getBot has them, their
// configuration's secrets masked, and the way to each one's log lines.

import (
	"net/url"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// consoleRelayIntegration is an integration's code written against the
// contract itself, as spyIntegration is: register logs the chat it relays
// to, and every other operation succeeds.
const consoleRelayIntegration = `
module.exports = { default: { handler: async (req) => {
  const conf = JSON.parse(Buffer.from(req.headers['x-bp-configuration'], 'base64').toString())
  if (req.headers['x-bp-operation'] === 'register') console.info('relaying to chat ' + conf.chatId)
  return { status: 200 }
} } }
`

// consoleRelaySchema is its configuration's schema: one secret the key's
// name gives away, two only the schema marks (@botpress/sdk's secret(),
// and a password field), a plain value, and a list of objects holding a
// key.
var consoleRelaySchema = map[string]any{"type": "object", "required": []string{"botToken", "chatId"}, "properties": map[string]any{
	"botToken":      map[string]any{"type": "string"},
	"signingPhrase": map[string]any{"type": "string", "x-zui": map[string]any{"secret": true}},
	"pin":           map[string]any{"type": "string", "format": "password"},
	"chatId":        map[string]any{"type": "string"},
	"routes": map[string]any{"type": "array", "items": map[string]any{"type": "object",
		"properties": map[string]any{"name": map[string]any{"type": "string"}, "apiKey": map[string]any{"type": "string"}}}},
}}

// testConsoleIntegrations: an integration deployed in two versions and
// installed twice, once registered and once refused by its schema, is
// listed with its status, the reason of the failure, its webhook URL to
// copy and its configuration with every secret masked; its logs link opens
// the bot's logs kept to its lines, a filter that can be cleared; a bot
// with nothing installed says how to install; and a viewer sees the same
// page, which only reads.
func testConsoleIntegrations(t *testing.T, s *testServer, b *browser, adm client) {
	needNode(t)
	adm.put("/v1/admin/workspaces/"+adm.ws, map[string]any{"handle": "acme"}).ok()
	deploy := func(version string) string {
		return str(t, adm.post("/v1/admin/integrations", map[string]any{"name": "acme/relay", "version": version, "title": "Relay",
			"code": consoleRelayIntegration, "configuration": map[string]any{"schema": consoleRelaySchema}}).ok(), "integration", "id")
	}
	v1, v2 := deploy("1.2.3"), deploy("1.3.0")
	bot := adm.createBot(map[string]any{"name": "integrated", "code": consoleEchoJS})
	id := str(t, bot, "id")
	secrets := map[string]string{ // each value, and what the page shows of it
		"relay-bot-token-7f3a9c-WXYZ": "••••WXYZ",
		"open sesame, said Ali 5QRS":  "••••5QRS",
		"24681357":                    "••••",
		"route-api-key-0000-LMNO":     "••••LMNO",
		str(t, bot, "integrations", "chat", "configuration", "encryptionKey"): "",
	}
	adm.put("/v1/admin/bots/"+id, map[string]any{"integrations": map[string]any{
		"relay": map[string]any{"integrationId": v1, "configuration": map[string]any{"botToken": "relay-bot-token-7f3a9c-WXYZ",
			"signingPhrase": "open sesame, said Ali 5QRS", "pin": "24681357", "chatId": "chat-42",
			"routes": []any{map[string]any{"name": hostile, "apiKey": "route-api-key-0000-LMNO"}}}},
		"relay-backup": map[string]any{"integrationId": v2, "configuration": map[string]any{"chatId": "chat-43"}},
	}}).ok()
	installed := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "integrations").(map[string]any)
	relay, backup := installed[v1].(map[string]any), installed[v2].(map[string]any)
	if relay["status"] != "registered" || backup["status"] != "registration_failed" {
		t.Fatalf("the installations' statuses: %v and %v", relay["status"], backup["status"])
	}
	// A line of the bot's own, which the integration's filter leaves out.
	e := chatEnvOf(t, s, adm, bot)
	u := e.user("console-integrations")
	e.send(u, e.conversation(u, "console-integrations"), "not the relay's")

	b.goTo("/bots/" + id)
	b.click(`.tabs a[href$="/integrations"]`)
	row := func(alias string) string { return `#integrations li[data-integration="` + alias + `"]` }
	b.waitText(row("relay")+" h3", "Relay")
	b.waitText(row("relay"), "acme/relay@1.2.3")
	b.waitText(row("relay")+" .integration-enabled", "enabled")
	b.waitText(row("relay")+" .integration-status", "registered")
	b.waitText(row("relay")+" .webhook-url", str(t, relay, "webhookUrl"))
	b.waitText(row("relay")+" dl.config", "chat-42")
	b.waitText(row("relay-backup")+" .integration-status", "registration failed")
	b.waitText(row("relay-backup")+" .integration-reason", str(t, backup, "statusReason"))
	if !strings.Contains(str(t, backup, "statusReason"), "botToken") {
		t.Errorf("the failed installation's reason %q does not name botToken", backup["statusReason"])
	}
	b.waitText(row("chat"), "built in")
	b.notPwned("integrations")
	if got := b.eval(`getComputedStyle(document.querySelector('` + row("relay-backup") + ` .integration-reason')).color`); got != "rgb(180, 35, 24)" {
		t.Errorf("the reason of a failed registration is drawn in %s; want the error colour", got)
	}

	// Every secret is masked, by its key's name or by its schema, and its
	// value is nowhere in the page.
	b.waitFor("the configurations", func() bool {
		return b.eval(`!document.querySelector('#integrations').textContent.includes('Loading')`) == "true"
	})
	for value, masked := range secrets {
		if b.eval(`document.documentElement.outerHTML.includes(`+jsString(value)+`)`) != "false" {
			t.Errorf("the secret %q is in the page's HTML", value)
		}
		if masked != "" {
			b.waitText(row("relay")+" dl.config", masked)
		}
	}
	for key, want := range map[string]string{"botToken": "••••WXYZ", "signingPhrase": "••••5QRS", "pin": "••••", "routes[0].apiKey": "••••LMNO", "routes[0].name": hostile} {
		got := b.eval(`(() => { const dt = [...document.querySelectorAll('` + row("relay") + ` dl.config dt')].find((d) => d.textContent === ` + jsString(key) + `); return dt ? dt.nextElementSibling.textContent : '' })()`)
		if got != want {
			t.Errorf("configuration %s shows %q; want %q", key, got, want)
		}
	}
	b.shot("integrations")
	b.do("narrowing the window", chromedp.EmulateViewport(390, 844))
	if got := b.eval(`document.documentElement.scrollWidth <= innerWidth`); got != "true" {
		t.Errorf("the integrations at 390 pixels are wider than the window (%s pixels)", b.eval(`document.documentElement.scrollWidth`))
	}
	b.shot("integrations-phone")
	b.do("widening the window", chromedp.EmulateViewport(1280, 800))

	// The webhook URL's Copy button puts it on the clipboard.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: s.URL}); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	b.click(row("relay") + " button.copy")
	b.waitText(row("relay")+" .copied", "Copied.")
	b.eval(`(navigator.clipboard.readText().then((t) => { window.__clipboard = t }), true)`)
	b.waitFor("the clipboard's text", func() bool { return b.eval(`window.__clipboard`) == str(t, relay, "webhookUrl") })

	// Its logs link: the bot's logs, kept to the relay's lines, the filter
	// in the page's address; cleared, the bot's own lines are back.
	b.click(row("relay") + " a.integration-logs")
	b.waitText("#logs", "[relay] relaying to chat chat-42")
	if got := b.eval(`document.querySelector('#log-filter').value`); got != "[relay]" {
		t.Errorf("the logs' filter holds %q; want [relay]", got)
	}
	frag := b.eval(`location.hash`)
	if q, err := url.ParseQuery(frag[strings.Index(frag, "?")+1:]); err != nil || !strings.HasPrefix(frag, "#/bots/"+id+"?") || q.Get("q") != "[relay]" {
		t.Errorf("the logs' address is %s; want the bot's, with q=[relay]", frag)
	}
	b.waitFor("only the relay's lines", func() bool {
		return b.eval(`[...document.querySelectorAll('#logs .msg')].every((m) => m.textContent.startsWith('[relay] '))`) == "true"
	})
	b.shot("integration-logs")
	b.setValue("#log-filter", "")
	b.eval(`(document.querySelector('#log-filter').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitText("#logs", "echo heard: not the relay's")
	if got := b.eval(`location.hash`); got != "#/bots/"+id {
		t.Errorf("after clearing the filter the address is %s", got)
	}

	// A bot with only the built-in chat says how to install one.
	bare := str(t, adm.createBot(map[string]any{"name": "bare"}), "id")
	b.goTo("/bots/" + bare + "/integrations")
	b.waitText("#integrations-none", "docs/integrations.md")
	b.waitText(row("chat"), "Chat")

	// A viewer sees the page, and it only reads.
	viewer, _ := adm.addMember("viewer")
	b.click("#sign-out")
	b.setValue("#token", viewer.token)
	b.setValue("#workspace", viewer.ws)
	b.click("#sign-in")
	b.do("signing in as a viewer", chromedp.WaitVisible(chromedp.CSS("#new-bot-name")))
	b.eval(`(() => {
		window.__methods = []
		const f = window.fetch
		window.fetch = (input, init) => {
			window.__methods.push((init && init.method) || 'GET')
			return f(input, init)
		}
		return true
	})()`)
	b.goTo("/bots/" + id + "/integrations")
	b.waitText(row("relay-backup")+" .integration-reason", "botToken")
	// It gets no configuration of a deployed integration, and the page says why.
	b.waitText(row("relay")+" .config-hidden", "developers and above")
	if b.eval(`document.querySelector('#integrations').innerHTML.includes('WXYZ')`) != "false" {
		t.Error("a viewer's page holds a configuration value")
	}
	b.waitFor("the configurations", func() bool {
		return b.eval(`!document.querySelector('#integrations').textContent.includes('Loading')`) == "true"
	})
	if got := b.eval(`[...new Set(window.__methods)].join(' ')`); got != "GET" {
		t.Errorf("the page sent %q requests as a viewer; want GET only", got)
	}
	b.click("#sign-out")
	b.signIn(s)
}
