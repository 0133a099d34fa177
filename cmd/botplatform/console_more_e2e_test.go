package main

// More of the web console in a real browser: a bot's settings and its
// write-only secrets, deleting bots, the search playground's score
// breakdown, the AI Spend chart, a conversation updated live over the
// Admin API's stream, and a keyboard-only walk. Screenshots go where
// TestConsoleBrowser's go.

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// signIn opens the console and signs in with the bootstrap token.
func (b *browser) signIn(s *testServer) {
	b.t.Helper()
	b.do("opening the console", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.URL+"/console/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	b.setValue("#token", s.Boot.Token)
	b.click("#sign-in")
	b.do("signing in", chromedp.WaitVisible(chromedp.CSS("#new-bot-name")))
}

// recordResponses makes the page keep the text of every response its
// fetch calls get (in window.__bodies), to check what the server sent it.
func (b *browser) recordResponses() {
	b.t.Helper()
	b.eval(`(() => {
		if (window.__bodies) return true
		window.__bodies = []
		const f = window.fetch
		window.fetch = async (...args) => {
			const res = await f(...args)
			if (!(res.headers.get('content-type') || '').includes('event-stream')) res.clone().text().then((t) => window.__bodies.push(t))
			return res
		}
		return true
	})()`)
}

// seen reports whether s is anywhere the page shows or holds it: its HTML,
// the values of its fields, its storage, or a response it was sent.
func (b *browser) seen(s string) string {
	b.t.Helper()
	return b.eval(`(() => {
		const s = ` + jsString(s) + `
		const where = []
		if (document.documentElement.outerHTML.includes(s)) where.push('the HTML')
		if ([...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(s))) where.push('a field')
		if (JSON.stringify(sessionStorage).includes(s) || JSON.stringify(localStorage).includes(s)) where.push('storage')
		if ((window.__bodies || []).some((t) => t.includes(s))) where.push('a response')
		return where.join(', ')
	})()`)
}

// tabTo presses Tab until the focus is on sel, at most max times, and
// checks at each stop that the focus can be seen.
func (b *browser) tabTo(sel string, max int) {
	b.t.Helper()
	for range max {
		b.do("pressing Tab", chromedp.KeyEvent("\t"))
		b.focusVisible()
		if b.eval(`document.activeElement.matches(`+jsString(sel)+`)`) == "true" {
			return
		}
	}
	b.fail("%d presses of Tab never reached %s; the focus is on %s", max, sel, b.eval(`document.activeElement.outerHTML.slice(0, 200)`))
}

// focusVisible fails unless the focused element (or the editor holding it)
// shows a focus outline of at least 2 pixels.
func (b *browser) focusVisible() {
	b.t.Helper()
	got := b.eval(`(() => {
		const e = document.activeElement
		if (!e || e === document.body) return 'ok' // between the page and its first control
		const shown = e.closest('.editor') || e
		const s = getComputedStyle(shown)
		if (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2) return 'ok'
		return e.outerHTML.slice(0, 160) + ': outline ' + s.outlineStyle + ' ' + s.outlineWidth
	})()`)
	if got != "ok" {
		b.fail("the focus is not visible on %s", got)
	}
}

func TestConsoleBrowserMore(t *testing.T) {
	t.Parallel()
	s, b := startConsole(t)
	adm := s.owner(t)
	b.signIn(s)
	b.recordResponses()

	t.Run("settings and secrets", func(t *testing.T) {
		b.t = t
		bot := adm.createBot(map[string]any{"name": "configured", "code": consoleEchoJS, "tags": map[string]any{"old": "x"},
			"states": map[string]any{"visits": map[string]any{"type": "conversation", "schema": map[string]any{"title": hostile}}}})
		id := str(t, bot, "id")
		b.goTo("/bots/" + id + "/settings")
		b.waitFor("the settings form", func() bool { return b.eval(`document.querySelector('#set-name')?.value`) == "configured" })

		// The definition is shown as it is, read only.
		b.click(`details[data-part="states"] summary`)
		b.waitText(`details[data-part="states"] pre`, `"title": "`+hostile+`"`)
		b.setValue("#set-name", "configured "+hostile)
		b.setValue("#set-tags", "team=support\nlang=en")
		b.setValue("#set-max-time", "30")
		b.setValue("#set-config", `{"greeting": "hi", "n": 2}`)
		b.click("#save-settings")
		b.waitText("#settings-notice", "Saved.")
		b.waitText("#bot-title", hostile)
		b.notPwned("settings")
		got := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot").(map[string]any)
		if got["name"] != "configured "+hostile || !reflect.DeepEqual(got["tags"], map[string]any{"team": "support", "lang": "en"}) ||
			got["maxExecutionTime"] != float64(30) || !reflect.DeepEqual(field(t, got, "configuration", "data"), map[string]any{"greeting": "hi", "n": float64(2)}) {
			t.Errorf("after saving in the console the bot is %v", got)
		}

		// Bad JSON is refused in the page, naming the field; a bad value
		// the server refuses shows its answer.
		b.setValue("#set-config", `{"greeting": `)
		b.click("#save-settings")
		b.waitText("#settings-error", "configuration data")
		b.setValue("#set-config", `{}`)
		b.setValue("#set-max-time", "100000")
		b.click("#save-settings")
		b.waitText("#settings-error", "maxExecutionTime")
		b.setValue("#set-max-time", "30")
		b.setValue("#set-config", `{"greeting": "hi", "n": 2}`)
		b.click("#save-settings")
		b.waitText("#settings-notice", "Saved.")

		// A secret, set: listed by name, its value nowhere on the page, in
		// its fields or in any response the page was sent; then replaced,
		// and deleted.
		const value1, value2 = "console-secret-value-one", "console-secret-value-two"
		b.setValue("#secret-name", "API_TOKEN")
		b.setValue("#secret-value", value1)
		b.click("#set-secret")
		b.waitText("#secrets-notice", "Secret API_TOKEN set.")
		b.waitText(`#secrets tr[data-secret="API_TOKEN"]`, "set (hidden)")
		if got := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "secrets"); !reflect.DeepEqual(got, []any{"API_TOKEN"}) {
			t.Errorf("after setting a secret in the console the bot's secrets are %v", got)
		}
		b.eval(`(scrollTo(0, 0), true)`)
		b.shot("settings")
		b.click(`#secrets tr[data-secret="API_TOKEN"] button`)
		b.waitText("#secret-replacing", "API_TOKEN")
		b.setValue("#secret-value", value2)
		b.click("#set-secret")
		b.waitText("#secrets-notice", "Secret API_TOKEN set.")
		b.goTo("/bots/" + id) // other pages load the bot too
		b.waitText("#versions", "v")
		b.goTo("/bots/" + id + "/settings")
		b.waitText("#secrets", "API_TOKEN")
		for _, v := range []string{value1, value2} {
			if where := b.seen(v); where != "" {
				t.Errorf("the secret's value %q is in %s", v, where)
			}
		}
		if n := b.eval(`window.__bodies.length`); n == "0" {
			t.Errorf("no response was recorded")
		}
		// A bad name is the server's to refuse.
		b.setValue("#secret-name", "BAD NAME")
		b.eval(`(document.querySelector('#secret-name').removeAttribute('pattern'), true)`)
		b.setValue("#secret-value", "x")
		b.click("#set-secret")
		b.waitText("#secrets-error", "not a secret name")
		b.click(`#secrets tr[data-secret="API_TOKEN"] button.danger`)
		b.click(`#secrets tr[data-secret="API_TOKEN"] .confirm button.danger`)
		b.waitText("#secrets-none", "No secrets.")
		if got := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "secrets"); !reflect.DeepEqual(got, []any{}) {
			t.Errorf("after deleting the secret in the console the bot's secrets are %v", got)
		}

		// The hosts the code may fetch from.
		b.do("waiting for the hosts", chromedp.WaitVisible(chromedp.CSS("#set-fetch")))
		b.setValue("#set-fetch", "api.example.com\n*.example.org")
		b.click("#save-fetch")
		b.waitText("#fetch-notice", "Saved.")
		if got := field(t, adm.get("/v1/admin/bots/"+id+"/fetch").ok(), "hosts"); !reflect.DeepEqual(got, []any{"api.example.com", "*.example.org"}) {
			t.Errorf("after saving hosts in the console getBotFetchHosts answers %v", got)
		}

		// Delete the bot from its settings, after the page asks again.
		b.click("#delete-bot")
		b.click("#delete-bot-yes")
		b.do("back to the bots", chromedp.WaitVisible(chromedp.CSS("#new-bot-name")))
		adm.get("/v1/admin/bots/"+id).fail(http.StatusNotFound, "ResourceNotFound")

		// And one from the list.
		other := str(t, adm.createBot(map[string]any{"name": "short-lived"}), "id")
		b.goTo("/workspace")
		b.goTo("/bots")
		row := `#bots tr[data-bot="` + other + `"]`
		b.do("waiting for the bot in the list", chromedp.WaitVisible(chromedp.CSS(row)))
		b.click(row + " button.danger")
		b.click(row + " .confirm button.danger")
		b.waitFor("the bot to leave the list", func() bool { return !strings.Contains(b.text("#bots"), "short-lived") })
		adm.get("/v1/admin/bots/"+other).fail(http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("search breakdown", func(t *testing.T) {
		b.t = t
		id := str(t, adm.createBot(map[string]any{"name": "searched"}), "id")
		s.files(t, s.Boot.Token, id).index(s, "refunds.md", []byte(consoleRefundsMD), nil)
		b.goTo("/bots/" + id + "/search")
		b.setValue("#search-query", "how long do refunds take")
		b.click("#search-go")
		first := "#results li:first-child"
		b.waitText(first+" .ptext", "Refunds take five days")
		b.waitText(first+" .part-text", "Full text (BM25)")
		// The numbers shown are the server's: the same search, through the
		// API, with explain=true.
		var out struct {
			Passages []explainHit `json:"passages"`
		}
		s.files(t, s.Boot.Token, id).searchRaw("query", "how long do refunds take", "limit", "10", "includeBreadcrumb", "true", "explain", "true").decode(&out)
		x := out.Passages[0].Explain
		if x == nil || x.FullText == nil || x.Vector == nil {
			t.Fatalf("the API's first passage has no full-text and vector parts: %+v", out.Passages[0])
		}
		for sel, want := range map[string]string{
			first + " .part-text":   fmt.Sprintf("%d%.3f", x.FullText.Rank, x.FullText.Score),
			first + " .part-vector": fmt.Sprintf("%dsimilarity %.3f%.4f", x.Vector.Rank, x.Vector.Similarity, x.Vector.Fused),
			first + " .part-fused":  fmt.Sprintf("%.4f", x.Score),
		} {
			b.waitText(sel, want)
		}
		b.waitText(first+" .words", "✓ refunds")
		b.waitText(first+" .words", "✗ long")
		b.eval(`(scrollTo(0, 0), true)`)
		b.shot("search")
	})

	t.Run("AI Spend chart", func(t *testing.T) {
		b.t = t
		// Two metered calls today and one on the month's first day, as
		// indexing records them.
		record := aiUsageRecorder(t, s)
		now := time.Now().UTC()
		first := time.Date(now.Year(), now.Month(), 1, 0, 30, 0, 0, time.UTC)
		record(s.Boot.WorkspaceID, "bot_charted", "summarization", 1_000_000_000, now)
		record(s.Boot.WorkspaceID, "bot_charted", "summarization", 500_000_000, now)
		record(s.Boot.WorkspaceID, "bot_charted", "summarization", 250_000_000, first)
		b.goTo("/workspace")
		today := `#ai-spend-chart rect[data-date="` + now.Format(time.DateOnly) + `"]`
		b.waitFor("today's bar", func() bool { return b.eval(`!!document.querySelector('`+today+`')`) == "true" })
		want := "1.5"
		if now.Day() == 1 {
			want = "1.75"
		}
		if got := b.eval(`document.querySelector('` + today + `').getAttribute('data-value')`); got != want {
			t.Errorf("today's bar holds %s dollars; want %s", got, want)
		}
		days := b.eval(`document.querySelectorAll('#ai-spend-chart rect').length`)
		if want := fmt.Sprint(time.Date(now.Year(), now.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()); days != want {
			t.Errorf("the chart has %s bars; want one a day of the month, %s", days, want)
		}
		if now.Day() != 1 {
			first := `#ai-spend-chart rect[data-date="` + first.Format(time.DateOnly) + `"]`
			if b.eval(`+document.querySelector('`+first+`').getAttribute('height') < +document.querySelector('`+today+`').getAttribute('height')`) != "true" {
				t.Errorf("the first day's $0.25 bar is not lower than today's")
			}
		}
		b.waitText("#ai-spend-days", "$1.50")
		b.waitText("#usage-ai_spend", "$1.75 of $100.00")
		b.shot("workspace-spend")
	})

	t.Run("conversation live", func(t *testing.T) {
		b.t = t
		bot := adm.createBot(map[string]any{"name": "watched", "code": consoleEchoJS})
		id := str(t, bot, "id")
		e := chatEnvOf(t, s, adm, bot)
		u := e.user("console-watched")
		conv := e.conversation(u, "console-watched")
		e.send(u, conv, "before opening")
		b.goTo("/bots/" + id + "/conversations")
		b.waitText("#conversations", conv)
		b.click(`#conversations a[href$="/` + conv + `"]`)
		b.waitText("#conversation-stream", "live")
		b.waitText("#conversation-messages", "You said: before opening")
		b.eval(`(window.__samePage = true)`)

		// A message, the bot's reply and its log line, and a custom event
		// appear without reload; the page no longer polls for them, it
		// follows the conversation's stream.
		e.send(u, conv, "while watching "+hostile)
		b.waitText("#conversation-messages", "You said: while watching "+hostile)
		b.waitText("#logs", "echo heard: while watching "+hostile)
		// Each log line under the message it was written for.
		msgs := `#conversation-messages li.from-user`
		b.waitFor("the log lines under their messages", func() bool {
			return b.eval(`[...document.querySelectorAll('`+msgs+`')].map((li) => li.querySelector('.handled')?.textContent || '').join(' | ')`) ==
				"info echo heard: before opening | info echo heard: while watching "+hostile
		})
		e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": conv, "payload": map[string]any{"kind": hostile}}).status(201)
		b.waitText("#conversation-events", "custom event")
		b.waitText("#conversation-events", hostile)
		b.notPwned("conversation")
		if b.eval(`window.__samePage === true`) != "true" {
			t.Errorf("the page was reloaded")
		}
		b.shot("conversation")
	})

	t.Run("keyboard only", func(t *testing.T) {
		b.t = t
		bot := adm.createBot(map[string]any{"name": "keyboard bot", "code": consoleEchoJS})
		id := str(t, bot, "id")
		b.click("#sign-out")
		b.do("reopening the console", chromedp.Navigate(s.URL+"/console/"), chromedp.WaitVisible(chromedp.CSS("#token")))

		// Sign in: Tab to the token, type it, Enter.
		b.tabTo("#token", 10)
		b.do("typing the token", chromedp.KeyEvent(s.Boot.Token))
		b.do("pressing Enter", chromedp.KeyEvent("\r"))
		b.do("signing in", chromedp.WaitVisible(chromedp.CSS("#new-bot-name")))

		// The bots: Tab to the bot's link, Enter opens it.
		b.do("waiting for the bot", chromedp.WaitVisible(chromedp.CSS(`#bots tr[data-bot="`+id+`"]`)))
		b.tabTo(`#bots tr[data-bot="`+id+`"] a.bot-name`, 80)
		b.do("pressing Enter", chromedp.KeyEvent("\r"))
		b.do("opening the bot", chromedp.WaitVisible(chromedp.CSS("#code")))
		b.waitText("#bot-title", "keyboard bot")
		b.waitFor("the bot's code", func() bool { return strings.Contains(b.eval(`document.querySelector('#code').value`), "echo heard") })

		// Edit the code: Tab into the editor, type a line; Escape, then
		// Shift+Tab leaves it for Deploy; Enter deploys.
		b.tabTo("#code", 40)
		b.do("typing in the editor", chromedp.KeyEvent("// typed with the keyboard"), chromedp.KeyEvent("\r"))
		b.do("leaving the editor", chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)))
		if got := b.eval(`document.activeElement.id`); got != "deploy" {
			t.Fatalf("Escape and Shift+Tab from the editor focus %q; want deploy", got)
		}
		b.focusVisible()
		b.do("pressing Enter", chromedp.KeyEvent("\r"))
		b.waitText("#deploy-notice", "Deployed.")
		b.waitText("#versions", "v2")
		b.waitFor("the focus back on Deploy", func() bool { return b.eval(`document.activeElement.id`) == "deploy" })
		b.focusVisible()
		b.shot("keyboard")
		var vs struct {
			Versions []map[string]any `json:"versions"`
		}
		adm.get("/v1/admin/bots/" + id + "/versions").decode(&vs)
		if got := currentOf(vs.Versions); got != "v2" {
			t.Errorf("after deploying by keyboard the running version is %q; want v2", got)
		}
	})

	t.Run("phone width", func(t *testing.T) {
		b.t = t
		id := str(t, adm.createBot(map[string]any{"name": "small screen", "secrets": map[string]any{"API_TOKEN": "x"}}), "id")
		b.do("narrowing the window", chromedp.EmulateViewport(390, 844))
		defer b.do("widening the window", chromedp.EmulateViewport(1280, 800))
		for _, page := range []struct{ route, wait, shot string }{
			{"/bots/" + id + "/settings", "#secrets", "settings-phone"},
			{"/workspace", "#ai-spend-chart", ""},
		} {
			b.goTo(page.route)
			b.do("waiting for "+page.wait, chromedp.WaitVisible(chromedp.CSS(page.wait)))
			if got := b.eval(`document.documentElement.scrollWidth <= innerWidth`); got != "true" {
				t.Errorf("%s at 390 pixels is wider than the window (%s pixels): %s", page.route, b.eval(`document.documentElement.scrollWidth`),
					b.eval(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 5).map((e) => e.tagName + '#' + e.id + '.' + e.className).join(' ')`))
			}
			if page.shot != "" {
				b.shot(page.shot)
			}
		}
	})

	t.Run("website chat", func(t *testing.T) {
		b.t = t
		id := str(t, adm.createBot(map[string]any{"name": "on a website"}), "id")
		b.goTo("/bots/" + id + "/settings")
		b.waitText("#webchat-code", "/webchat/v1/inject.js")
		code := str(t, adm.get("/v1/admin/bots/"+id+"/webchat?type=preconfigured").ok(), "code")
		if got := b.text("#webchat-code"); got != code {
			t.Errorf("the page shows the embed code %q; getBotWebchat gives %q", got, code)
		}
		// A bad origin: the server's answer, naming the entry; nothing saved.
		b.setValue("#set-origins", "https://shop.example.com\nftp://files.example.com/path")
		b.click("#save-origins")
		b.waitText("#webchat-error", "allowedOrigins[1]")
		b.setValue("#set-origins", "https://shop.example.com\nhttps://*.example.org")
		b.click("#save-origins")
		b.waitText("#webchat-notice", "Saved.")
		b.shot("settings-webchat")
		integ := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "integrations").(map[string]any)
		var origins any
		for _, v := range integ {
			if m := v.(map[string]any); m["name"] == "chat" {
				origins = field(t, m, "configuration", "allowedOrigins")
			}
		}
		if !reflect.DeepEqual(origins, []any{"https://shop.example.com", "https://*.example.org"}) {
			t.Errorf("allowed origins after saving in the console: %v", origins)
		}
		// Emptied: none allowed.
		b.setValue("#set-origins", "")
		b.click("#save-origins")
		b.waitFor("the origins cleared", func() bool {
			integ := field(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "integrations").(map[string]any)
			for _, v := range integ {
				if m := v.(map[string]any); m["name"] == "chat" {
					conf, _ := m["configuration"].(map[string]any)
					list, _ := conf["allowedOrigins"].([]any)
					return len(list) == 0
				}
			}
			return false
		})
	})

	t.Run("integrations", func(t *testing.T) {
		b.t = t
		testConsoleIntegrations(t, s, b, adm)
	})

	t.Run("readable contrast", func(t *testing.T) {
		b.t = t
		id := str(t, adm.createBot(map[string]any{"name": "contrast", "code": "bot.on.message('*', async () => {})"}), "id")
		for _, page := range []struct{ route, wait string }{
			{"/bots", "#create-bot"},
			{"/bots/" + id, ".editor .gutter"},
			{"/bots/" + id + "/files", "main"},
			{"/bots/" + id + "/search", "main input"},
			{"/bots/" + id + "/settings", "#save-settings"},
			{"/bots/" + id + "/integrations", "#integrations"},
			{"/bots/" + id + "/conversations", "main"},
			{"/bots/" + id + "/chat", "#chat-status"},
			{"/workspace", "#ai-spend-chart"},
		} {
			b.goTo(page.route)
			b.do("waiting for "+page.wait, chromedp.WaitVisible(chromedp.CSS(page.wait)))
			if low := b.eval(lowContrastJS); low != "[]" {
				t.Errorf("%s: text below WCAG AA contrast (4.5:1, large text 3:1): %s", page.route, low)
			}
		}
	})

	b.t = t
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// lowContrastJS lists the visible elements whose own text falls below WCAG
// 2.1 AA contrast against the background it is drawn on (the nearest
// ancestor's opaque background colour): 4.5:1, or 3:1 for large text (24
// pixels, or 18.66 bold). Disabled controls are exempt, as WCAG says.
const lowContrastJS = `(() => {
  const rgba = (c) => { const m = c.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 } }
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4 }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b) }
  const over = (top, bottom) => ({ r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a), b: top.b * top.a + bottom.b * (1 - top.a), a: 1 })
  const background = (el) => {
    const layers = []
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor)
      if (c.a > 0) { layers.push(c); if (c.a >= 1) break }
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 }
    for (const c of layers.reverse()) bg = over(c, bg)
    return bg
  }
  const out = []
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('[disabled], [aria-disabled=true], svg')) continue
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '')
    if (!own) continue
    const r = el.getBoundingClientRect(), st = getComputedStyle(el)
    if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || Number(st.opacity) === 0) continue
    const bg = background(el), fg = over(rgba(st.color), bg)
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a)
    const ratio = (hi + 0.05) / (lo + 0.05)
    const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5
    if (ratio < need) out.push(el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' "' + el.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2))
  }
  return JSON.stringify(out.slice(0, 10))
})()`
