package main

// A headless Chromium tab driven through chromedp, for the console's browser
// test: actions with hang guards, the page's script errors and CSP reports
// collected, and screenshots saved as artefacts.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium or Chrome binary (BOTPLATFORM_CHROMIUM first).
func chromium() string {
	if p := os.Getenv("BOTPLATFORM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artefacts is where the test leaves its screenshots.
func artefacts(t *testing.T) string {
	dir := os.Getenv("BOTPLATFORM_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startConsole starts a server on the embedded default and a browser tab,
// or skips the test when there is no Chromium.
func startConsole(t *testing.T) (*testServer, *browser) {
	exe := chromium()
	if exe == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome or BOTPLATFORM_CHROMIUM): apt-get install -y chromium")
	}
	s := startBackend(t, "sqlite")
	b := newBrowser(t, exe)
	t.Logf("screenshots in %s", b.dir)
	return s, b
}

// browser is one headless tab, with the page's errors collected.
type browser struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	mu   sync.Mutex
	errs []string // uncaught exceptions and security (CSP) messages
}

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("lang", "en-US"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, dir: artefacts(t)}
	if err := chromedp.Listen(ctx, b.note); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return b
}

func (b *browser) note(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
	case *log.EventEntryAdded:
		if ev.Entry.Source == log.EntrySourceSecurity || strings.Contains(ev.Entry.Text, "Content Security Policy") {
			msg = "security: " + ev.Entry.Text
		}
	}
	if msg != "" {
		b.mu.Lock()
		b.errs = append(b.errs, msg)
		b.mu.Unlock()
	}
}

// do runs actions, failing the test with what.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second) // a hang guard
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail("%s: %v", what, err)
	}
}

func (b *browser) fail(format string, args ...any) {
	b.t.Helper()
	b.shot("failure")
	b.t.Fatalf(format+"\npage errors: %v", append(args, b.pageErrors())...)
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// eval returns expression's value: a string as it is, anything else as
// JSON.
func (b *browser) eval(expression string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expression))
	if err != nil {
		b.fail("evaluating %s: %v", expression, err)
	}
	if len(v) == 0 {
		return "undefined"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// text is the text of the first element sel matches ("" when none).
func (b *browser) text(sel string) string {
	b.t.Helper()
	return b.eval(`document.querySelector(` + jsString(sel) + `)?.textContent ?? ""`)
}

// waitText waits until the text of sel contains want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(signalTimeout) // a hang guard, not a measure: a bot's first event on a loaded machine took over a minute
	for {
		got := b.text(sel)
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			b.fail("%s never showed %q; it shows %q", sel, want, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor waits until ok holds.
func (b *browser) waitFor(what string, ok func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(signalTimeout) // a hang guard, not a measure
	for !ok() {
		if time.Now().After(deadline) {
			b.fail("waiting for %s: it never happened", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setValue sets a field's value as typing would (an input event).
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	b.do("waiting for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	b.eval(`((() => { const el = document.querySelector(` + jsString(sel) + `); el.focus(); el.value = ` + jsString(value) +
		`; el.dispatchEvent(new Event('input', { bubbles: true })); return true })())`)
}

func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
}

func (b *browser) goTo(route string) {
	b.t.Helper()
	b.eval(`(location.hash = ` + jsString("#"+route) + `, true)`)
}

// shot saves a screenshot of the viewport as name.png.
func (b *browser) shot(name string) {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

// pwned fails the test if a hostile string ran as script.
func (b *browser) notPwned(where string) {
	b.t.Helper()
	if got := b.eval(`typeof window.__pwned`); got != "undefined" {
		b.fail("%s: a hostile string ran as script (window.__pwned is %s)", where, got)
	}
}

func jsString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
