package main

// The web console driven in a real browser (headless Chromium through
// chromedp) against a real server: sign in, create a bot, deploy code with
// an error and fix it, chat with the bot, watch its logs and conversations,
// roll it back, upload, read, search and delete files, manage the
// workspace's members and tokens, read its audit log, and render hostile
// strings as text. Each page's screenshot goes to the artefacts directory
// (BOTPLATFORM_ARTIFACTS, or the test's temporary one).

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostile is a string that runs script wherever it is rendered as HTML.
const hostile = `<img src=x onerror=window.__pwned=1>`

// consoleEchoJS is the README's echo bot, with a log line per message.
const consoleEchoJS = `bot.on.message('*', async ({ message, client, logger }) => {
  logger.info('echo heard: ' + message.payload.text)
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'You said: ' + message.payload.text } })
})
`

// consoleBrokenJS has a syntax error on line 2.
const consoleBrokenJS = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'oops' ) })
})
`

// consoleRefundsMD is a document with headings, and a hostile line.
const consoleRefundsMD = `# Policies

## Refunds

Refunds take five days from the day we receive the parcel back.

Never paste ` + hostile + ` into a form.

## Shipping

Parcels leave our warehouse within two working days.
`

// memberRole is the role of the workspace's member with email ("" when
// none), read through the Admin API.
func memberRole(t *testing.T, c client, email string) string {
	t.Helper()
	var out struct {
		Members []struct{ Email, Role string } `json:"members"`
	}
	c.get("/v1/admin/workspace-members?pageSize=100").decode(&out)
	for _, m := range out.Members {
		if m.Email == email {
			return m.Role
		}
	}
	return ""
}

func TestConsoleBrowser(t *testing.T) {
	t.Parallel()
	s, b := startConsole(t)
	adm := s.owner(t)

	// Security headers on the page; /console and the server's root lead to it.
	for _, from := range []string{"/", "/console"} {
		res, err := http.Get(s.URL + from)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.Request.URL.Path != "/console/" || res.StatusCode != 200 {
			t.Fatalf("GET %s ended at %s with %d; want /console/ and 200", from, res.Request.URL.Path, res.StatusCode)
		}
	}
	res, err := http.Get(s.URL + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for h, want := range map[string]string{"Content-Security-Policy": "script-src 'self'", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := res.Header.Get(h); !strings.Contains(got, want) {
			t.Errorf("%s: %q; want it to hold %q", h, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q: want frame-ancestors 'none' and no unsafe-inline", csp)
	}

	// Sign in with the bootstrap token; the workspace is picked for us.
	b.do("opening the console", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.URL+"/console"), chromedp.WaitVisible(chromedp.CSS("#token")))
	b.shot("signin")
	b.setValue("#token", s.Boot.Token)
	b.click("#sign-in")
	b.do("signing in", chromedp.WaitVisible(chromedp.CSS("#new-bot-name")))
	if u := b.eval(`location.href`); strings.Contains(u, s.Boot.Token) {
		t.Fatalf("the token is in the URL: %s", u)
	}

	// Create a bot; its page opens with the starter code in the editor.
	b.setValue("#new-bot-name", "echo")
	b.click("#create-bot")
	b.do("opening the new bot", chromedp.WaitVisible(chromedp.CSS("#code")))
	b.waitText("#bot-title", "echo")
	b.waitText("#versions", "v1")
	if code := b.eval(`document.querySelector('#code').value`); !strings.Contains(code, "You said: ") {
		t.Fatalf("the editor holds %s; want the starter code", code)
	}
	botID := strings.TrimPrefix(b.eval(`location.hash`), "#/bots/")

	// Code with a syntax error is refused, naming its line.
	b.setValue("#code", consoleBrokenJS)
	b.click("#deploy")
	b.waitText("#deploy-error", "line 2")
	if got := b.text(".gutter .bad"); got != "2" {
		t.Errorf("the gutter marks line %q; want 2", got)
	}
	b.shot("bot-syntax-error")

	// Fixed, it deploys as v2.
	b.setValue("#code", consoleEchoJS)
	b.click("#deploy")
	b.waitText("#deploy-notice", "Deployed.")
	b.waitText("#versions", "v2")
	if b.text("#deploy-error") != "" {
		t.Errorf("the syntax error is still shown after a good deploy")
	}

	// The chat tester talks to the bot as a new user; a hostile message
	// comes back as text.
	b.click(`.tabs a[href$="/chat"]`)
	b.waitText("#chat-status", "Connected")
	b.setValue("#chat-text", "hello")
	b.click("#chat-send")
	b.waitText("#messages .from-bot .text", "You said: hello")
	b.setValue("#chat-text", hostile)
	b.click("#chat-send")
	b.waitText("#messages", "You said: "+hostile)
	b.notPwned("chat")
	b.shot("chat")

	// A bot without code, and one whose handler throws: the tester says why
	// no reply comes.
	empty := str(t, adm.createBot(map[string]any{"name": "empty"}), "id")
	b.goTo("/bots/" + empty + "/chat")
	b.waitText("#chat-hint", "has no code")
	throws := str(t, adm.createBot(map[string]any{"name": "throws", "code": `bot.on.message('*', async () => { throw new Error('the handler broke') })`}), "id")
	b.goTo("/bots/" + throws + "/chat")
	b.waitText("#bot-title", "throws")
	b.waitText("#chat-status", "Connected")
	if b.text("#chat-hint") != "" {
		t.Errorf("a bot with code is said to have none: %q", b.text("#chat-hint"))
	}
	b.setValue("#chat-text", "anyone?")
	b.click("#chat-send")
	b.waitText("#chat-hint", "the bot failed: ")
	b.waitText("#chat-hint", "the handler broke")

	// A bot that streams its answer (sends it, then changes it as it comes):
	// the tester shows the change in place, one reply.
	streams := str(t, adm.createBot(map[string]any{"name": "streams", "code": `bot.on.message('*', async ({ message, client }) => {
  const { message: m } = await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'The answer' } })
  await client.updateMessage({ id: m.id, tags: {}, payload: { text: 'The answer is 42.' } })
})`}), "id")
	b.goTo("/bots/" + streams + "/chat")
	b.waitText("#bot-title", "streams")
	b.waitText("#chat-status", "Connected")
	b.setValue("#chat-text", "the question")
	b.click("#chat-send")
	b.waitText("#messages .from-bot .text", "The answer is 42.")
	if n := b.eval(`document.querySelectorAll('#messages .from-bot').length`); n != "1" {
		t.Errorf("the streamed answer shows as %s replies; want 1", n)
	}

	// The logs show the bot's lines, and a new one appears without reload.
	b.goTo("/bots/" + botID)
	b.waitText("#logs", "echo heard: hello")
	b.waitText("#logs", "echo heard: "+hostile)
	b.notPwned("logs")
	bot := field(t, adm.get("/v1/admin/bots/"+botID).ok(), "bot").(map[string]any)
	e := chatEnvOf(t, s, adm, bot)
	u := e.user("console-live")
	conv := e.conversation(u, "console-live")
	e.send(u, conv, "live line")
	b.waitText("#logs", "echo heard: live line")
	b.shot("bot")

	// Filter by level: no warn line exists.
	b.do("filtering by level", chromedp.SetValue(chromedp.CSS("#log-level"), "warn"))
	b.eval(`(document.querySelector('#log-level').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitText("#logs", "No log lines yet.")
	b.do("showing all levels", chromedp.SetValue(chromedp.CSS("#log-level"), ""))
	b.eval(`(document.querySelector('#log-level').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitText("#logs", "echo heard: live line")

	// Filter by text: only the lines that hold it, the filter kept in the
	// page's address; emptied, every line is back.
	b.setValue("#log-filter", "live line")
	b.eval(`(document.querySelector('#log-filter').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitFor("only the lines holding the text", func() bool {
		return b.eval(`(() => { const m = [...document.querySelectorAll('#logs .msg')].map((e) => e.textContent); return m.length > 0 && m.every((t) => t.includes('live line')) })()`) == "true"
	})
	if got := b.eval(`location.hash`); got != "#/bots/"+botID+"?q=live+line" {
		t.Errorf("the filtered logs' address is %s; want the bot's with q=live+line", got)
	}
	b.setValue("#log-filter", "")
	b.eval(`(document.querySelector('#log-filter').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitText("#logs", "echo heard: hello")

	// The bot's conversations, through the Runtime API: the live one is
	// listed; opened, it shows its messages and its log lines, and new ones
	// appear without reload, a hostile one as text.
	b.click(`.tabs a[href$="/conversations"]`)
	b.waitText("#conversations", conv)
	b.click(`#conversations a[href$="/` + conv + `"]`)
	b.waitText("#conversation-messages", "You said: live line")
	b.waitText("#logs", "echo heard: live line")
	e.send(u, conv, hostile)
	b.waitText("#conversation-messages", "You said: "+hostile)
	b.waitText("#logs", "echo heard: "+hostile)
	b.notPwned("conversation")
	b.shot("conversation")
	b.goTo("/bots/" + botID)
	b.waitText("#logs", "echo heard: live line")

	// Roll back to v1: the editor shows its code, and it is the running one.
	// The button is pressed once the page has loaded the code (the editor,
	// taller than its "Loading…", moves the versions down as it appears),
	// and by the element itself, not by where it was when measured.
	b.do("loading the code", chromedp.WaitVisible(chromedp.CSS("#code")))
	b.waitText(`#versions tr[data-version="v1"]`, "v1")
	b.eval(`(document.querySelector('#versions tr[data-version="v1"] button').click(), true)`)
	b.waitText("#deploy-notice", "Deployed version v1.")
	b.waitText(`#versions tr[data-version="v1"]`, "running")
	if code := b.eval(`document.querySelector('#code').value`); !strings.Contains(code, "got a message") {
		t.Errorf("after the rollback the editor holds %s; want v1's code", code)
	}
	var vs struct {
		Versions []map[string]any `json:"versions"`
	}
	adm.get("/v1/admin/bots/" + botID + "/versions").decode(&vs)
	if got := currentOf(vs.Versions); got != "v1" {
		t.Errorf("after rolling back in the console the running version is %q; want v1", got)
	}

	// A file with a hostile key is listed as text.
	s.files(t, s.Boot.Token, botID).create(s, hostile+".txt", []byte("hello"), map[string]any{"tags": map[string]any{"kind": hostile}})
	b.goTo("/bots/" + botID + "/files")
	b.waitText("#files", hostile+".txt")
	b.notPwned("files")

	// Upload with the file picker, indexed and tagged: the progress bar
	// fills, and the status moves on to indexing_completed by itself.
	doc := filepath.Join(t.TempDir(), "refunds.md")
	if err := os.WriteFile(doc, []byte(consoleRefundsMD), 0o644); err != nil {
		t.Fatal(err)
	}
	b.setValue("#upload-tags", "kind=faq")
	b.do("choosing a file", chromedp.SetUploadFiles(chromedp.CSS("#file-input"), []string{doc}))
	b.waitText("#uploads", "uploaded")
	if got := b.eval(`(() => { const p = document.querySelector('#uploads progress'); return p.value === p.max && p.max > 1 })()`); got != "true" {
		t.Errorf("after the upload the progress bar is not full")
	}
	b.waitText(`#files tr[data-key="refunds.md"]`, "indexing_completed")
	b.waitText(`#files tr[data-key="refunds.md"]`, "kind=faq")

	// Dropped, not indexed, with a hostile name: listed as text.
	b.click("#upload-index")
	dropped := hostile + " dropped.txt"
	b.eval(`(() => { const dt = new DataTransfer(); dt.items.add(new File(['plain notes'], ` + jsString(dropped) + `, { type: 'text/plain' }));
		document.querySelector('#dropzone').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt })); return true })()`)
	b.waitText(`#files tr[data-key="`+dropped+`"]`, "upload_completed")
	b.notPwned("upload")
	b.shot("files")

	// Open the indexed file: its passages in order, under their headings,
	// the hostile line as text; the download gives its content back.
	b.click(`#files tr[data-key="refunds.md"] a`)
	b.waitText("#passages", "Refunds take five days")
	texts := b.eval(`[...document.querySelectorAll('#passages .ptext')].map((e) => e.textContent)`)
	if i, j := strings.Index(texts, "Refunds take five days"), strings.Index(texts, "Parcels leave"); i < 0 || j < i {
		t.Errorf("the passages are not in the file's order: %s", texts)
	}
	b.waitText("#passages", "Policies › Refunds")
	b.waitText("#passages", hostile)
	b.notPwned("passages")
	if got := b.eval(`(() => { const x = new XMLHttpRequest(); x.open('GET', document.querySelector('#download').href, false); x.send(); return x.responseText })()`); got != consoleRefundsMD {
		t.Errorf("the download link gives %q; want the file's content", got)
	}
	b.shot("file")

	// The search playground: ranked passages with their scores and files,
	// the query's words marked.
	b.click(`.tabs a[href$="/search"]`)
	b.setValue("#search-query", "how long do refunds take")
	b.click("#search-go")
	b.waitText("#results li:first-child .ptext", "Refunds take five days")
	b.waitText("#results li:first-child .file", "refunds.md")
	b.waitText("#results li:first-child .score", "score 0.")
	if got := b.text("#results li:first-child mark"); !strings.EqualFold(got, "refunds") {
		t.Errorf("the first mark is %q; want refunds", got)
	}
	b.waitText("#results li:first-child .words", "✓ refunds")
	b.shot("search")
	b.setValue("#search-query", "paste onerror form")
	b.click("#search-go")
	b.waitText("#results", hostile)
	b.notPwned("search")

	// Delete the file, after the page asks again.
	b.click("#results li:first-child .file")
	b.waitText("#file-key", "refunds.md")
	b.click("#delete-file")
	b.click("#delete-file-yes")
	b.waitText("#files", "dropped.txt")
	if strings.Contains(b.text("#files"), "refunds.md") {
		t.Errorf("refunds.md is still listed after its deletion")
	}
	if r := s.as(t, s.Boot.Token, "").raw(http.MethodGet, "/v1/files/refunds.md", nil, "x-bot-id", botID); r.Status != http.StatusNotFound {
		t.Errorf("after deleting in the console, getFile answers %d; want 404", r.Status)
	}

	// The workspace: usage bars, members, tokens and the audit log.
	b.click("#nav-workspace")
	b.waitText("#usage-file_storage_bytes", "File storage")
	b.waitText("#usage-knowledgebase_vector_storage", "Vector storage")
	b.waitText("#usage-ai_spend", "$0.00 of $100.00")
	if got := b.eval(`document.querySelector('#usage-file_storage_bytes [role=meter]').getAttribute('aria-valuenow')`); got == "0" || got == "" {
		t.Errorf("file storage in use shows %q after uploads; want more than 0", got)
	}
	b.waitText("#members", "owner@localhost")

	// Add a member, change its role, remove it.
	b.setValue("#member-email", "ada@example.com")
	b.do("choosing a role", chromedp.SetValue(chromedp.CSS("#member-role"), "developer"))
	b.eval(`(document.querySelector('#member-role').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.click("#add-member")
	ada := `#members tr[data-email="ada@example.com"]`
	b.do("waiting for the new member", chromedp.WaitVisible(chromedp.CSS(ada)))
	if got := b.eval(`document.querySelector('#members tr[data-email="ada@example.com"] select').value`); got != "developer" {
		t.Errorf("the new member's role shows %q; want developer", got)
	}
	b.do("changing the role", chromedp.SetValue(chromedp.CSS(ada+" select"), "manager"))
	b.eval(`(document.querySelector('#members tr[data-email="ada@example.com"] select').dispatchEvent(new Event('change', { bubbles: true })), true)`)
	b.waitFor("the role change to be stored", func() bool { return memberRole(t, adm, "ada@example.com") == "manager" })
	b.shot("workspace")
	b.click(ada + " button.danger")
	b.click(ada + " .confirm button.danger")
	b.waitFor("the member to be removed", func() bool { return !strings.Contains(b.text("#members"), "ada@example.com") })
	if got := memberRole(t, adm, "ada@example.com"); got != "" {
		t.Errorf("after removing in the console, ada@example.com is still a %s", got)
	}

	// A token with a hostile note: shown once, works, listed as text,
	// deleted.
	b.setValue("#pat-note", hostile)
	b.click("#create-pat")
	b.do("waiting for the new token", chromedp.WaitVisible(chromedp.CSS("#new-pat-value")))
	pat := b.eval(`document.querySelector('#new-pat-value').value`)
	if !strings.HasPrefix(pat, "bp_pat_") {
		t.Fatalf("the new token shows %q", pat)
	}
	s.as(t, pat, "").get("/v1/admin/account/me").ok()
	b.waitText("#pats", hostile)
	b.notPwned("tokens")
	row := `#pats tr[data-note="` + hostile + `"]`
	b.click(row + " button.danger")
	b.click(row + " .confirm button.danger")
	b.waitFor("the token to be deleted", func() bool { return !strings.Contains(b.text("#pats"), hostile) })
	if r := s.as(t, pat, "").get("/v1/admin/account/me"); r.Status != http.StatusUnauthorized {
		t.Errorf("the token deleted in the console still answers %d; want 401", r.Status)
	}

	// The audit log, newest first, paged back to the workspace's creation.
	b.click("#audit-refresh")
	b.waitText("#audit tbody tr:first-child", "DELETE_PERSONAL_ACCESS_TOKEN")
	b.waitText("#audit", "REMOVE_WORKSPACE_MEMBER")
	for i := 0; b.eval(`!!document.querySelector('#audit-more')`) == "true"; i++ {
		if i > 20 {
			t.Fatalf("the audit log never ends")
		}
		n := b.eval(`document.querySelectorAll('#audit tbody tr').length`)
		b.click("#audit-more")
		b.waitFor("an older page", func() bool { return b.eval(`document.querySelectorAll('#audit tbody tr').length`) != n })
	}
	b.waitText("#audit tbody tr:last-child", "CREATE_WORKSPACE")
	if got := b.eval(`[...document.querySelectorAll('#audit tbody tr')].filter((r) => r.textContent.includes('UPDATE_WORKSPACE_MEMBER')).length`); got != "1" {
		t.Errorf("one role change in the console made %s UPDATE_WORKSPACE_MEMBER records; want 1", got)
	}
	b.notPwned("workspace")
	b.eval(`(document.querySelector('#audit-h').scrollIntoView(), true)`)
	b.shot("workspace-audit")

	// A bot named with a hostile string is listed as text.
	b.goTo("/bots")
	b.setValue("#new-bot-name", hostile)
	b.click("#create-bot")
	b.waitText("#bot-title", hostile)
	b.goTo("/bots")
	b.waitText("#bots", hostile)
	b.notPwned("bots")
	b.shot("bots")

	// Phone width: the bot page and the workspace in one column.
	b.do("narrowing the window", chromedp.EmulateViewport(390, 844))
	b.goTo("/bots/" + botID)
	b.waitText("#logs", "echo heard")
	b.shot("bot-phone")
	b.goTo("/workspace")
	b.waitText("#members", "owner@localhost")
	b.waitText("#usage", "File storage")
	b.shot("workspace-phone")
	b.do("widening the window", chromedp.EmulateViewport(1280, 800))

	// Sign out: the session is gone.
	b.click("#sign-out")
	b.do("signing out", chromedp.WaitVisible(chromedp.CSS("#token")))
	if got := b.eval(`sessionStorage.length`); got != "0" {
		t.Errorf("after signing out, session storage holds %s items", got)
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
