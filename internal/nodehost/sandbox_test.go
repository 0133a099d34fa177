//go:build linux

package nodehost

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/sandbox"
)

// hostile is a bundle that attacks the machine from its handler: each path tries one thing and answers
// {"ok": true, "detail": …} when it worked.
const hostile = `
const fs = require('fs')
const net = require('net')
const cp = require('child_process')
const attempt = async (f) => { try { return { ok: true, detail: String(await f()) } } catch (e) { return { ok: false, detail: String(e && e.message || e) } } }
const dial = (host, port) => new Promise((resolve, reject) => {
  const s = net.connect({ host, port }, () => { s.destroy(); resolve('connected') })
  s.on('error', reject)
  s.setTimeout(5000, () => { s.destroy(); reject(new Error('timeout')) })
})
const routes = {
  '/read-data': () => fs.readFileSync(process.env.SECRET_FILE, 'utf8'),
  '/list-data': () => fs.readdirSync(process.env.DATA_DIR).join(','),
  '/write-data': () => fs.writeFileSync(process.env.DATA_DIR + '/planted', 'x'),
  '/write-root': () => fs.writeFileSync('/planted', 'x'),
  '/write-bundle': () => fs.writeFileSync(__filename, 'x'),
  '/write-tmp': () => { fs.writeFileSync('/tmp/mine', 'x'); return fs.readFileSync('/tmp/mine', 'utf8') },
  '/host-loopback': () => dial('127.0.0.1', Number(process.env.HOST_PORT)),
  '/postgres': () => dial('127.0.0.1', 5432),
  '/private': () => dial('10.1.2.3', 80),
  '/metadata': () => dial('169.254.169.254', 80),
  '/api': async () => { const r = await fetch(process.env.BP_API_URL + '/hello'); return r.status + ' ' + await r.text() },
  '/exec': () => cp.execSync('id').toString(),
  '/spawn-loop': () => { let n = 0; for (let i = 0; i < 200; i++) { try { cp.spawn('/bin/sh', ['-c', 'sleep 60']); n++ } catch (e) { throw new Error('after ' + n + ': ' + e.message) } } return n },
  '/processes': () => fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d)).join(','),
  '/proc-root': () => fs.readdirSync('/proc/1/root').join(','),
  '/fds': () => {
    const fds = []
    try { for (;;) { fds.push(fs.openSync('/dev/null', 'r')); if (fds.length > 100000) return 'unbounded' } } finally { fds.forEach((fd) => fs.closeSync(fd)) }
  },
  '/uid': () => fs.readFileSync('/proc/self/status', 'utf8').split('\n').filter((l) => /^(Cap(Eff|Prm)|NoNewPrivs|Seccomp):/.test(l)).join('; '),
}
exports.handler = async (req) => {
  const f = routes[req.path]
  if (!f) return { status: 404 }
  return { status: 200, body: JSON.stringify(await attempt(f)) }
}
`

type outcome struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func TestSandboxedBundleCannotTouchTheServer(t *testing.T) {
	needNode(t)
	if err := sandbox.Available(); err != nil {
		t.Fatalf("no sandbox on this machine: %v", err)
	}
	// The server's data: a secret beside the bundles, and a service on the host's loopback.
	dataDir := t.TempDir()
	secret := filepath.Join(dataDir, "bootstrap.json")
	os.WriteFile(secret, []byte(`{"token":"bp_pat_owner"}`), 0o600)
	hostSvc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostSvc.Close()
	go func() {
		for {
			c, err := hostSvc.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// The server's API as the sandbox reaches it.
	api := sandbox.NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the API at "+r.URL.Path) })}
	go srv.Serve(api)
	defer srv.Close()

	h, _ := newHost(t, Config{Dir: filepath.Join(dataDir, "node-bots"), API: api, Limits: sandbox.Limits{Files: 128}})
	_, hostPort, _ := net.SplitHostPort(hostSvc.Addr().String())
	b := Bundle{BotID: "evil", Version: "v1", Code: hostile, Env: []string{
		"SECRET_FILE=" + secret, "DATA_DIR=" + dataDir, "HOST_PORT=" + hostPort, "BP_API_URL=http://127.0.0.1:8080",
	}}
	other := bot("b2") // another tenant's bot, which must keep answering

	for _, tc := range []struct {
		path string
		ok   bool
		want string // in the detail
	}{
		{"/read-data", false, "no such file"},
		{"/list-data", false, "no such file"},
		{"/write-data", false, ""},
		{"/write-root", false, "read-only"},
		{"/write-bundle", false, "read-only"},
		{"/write-tmp", true, "x"},
		{"/host-loopback", false, "ECONNREFUSED"},
		{"/postgres", false, "ECONNREFUSED"},
		{"/private", false, "ENETUNREACH"},
		{"/metadata", false, "ENETUNREACH"},
		{"/api", true, "200 the API at /hello"},
		{"/exec", false, ""},
		{"/spawn-loop", false, "after 0"},
		{"/processes", true, ""},
		{"/proc-root", true, "app,bin,dev,etc"}, // /proc/1 is the bundle itself
		{"/fds", false, "EMFILE"},
		{"/uid", true, "CapEff:\t0000000000000000"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var got outcome
			if err := json.Unmarshal(mustCall(t, h, b, tc.path).Body, &got); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", tc.path, got)
			if got.OK != tc.ok || !strings.Contains(got.Detail, tc.want) {
				t.Fatalf("%s: got %+v, want ok=%v with %q", tc.path, got, tc.ok, tc.want)
			}
			if tc.path == "/proc-root" && (strings.Contains(got.Detail, "home") || strings.Contains(got.Detail, "root")) {
				t.Fatalf("the host's root shows through: %s", got.Detail)
			}
			if tc.path == "/processes" && got.Detail != "1" {
				t.Fatalf("the bundle sees other processes: %s", got.Detail)
			}
			if res := mustCall(t, h, other, "/echo"); res.Status != 200 {
				t.Fatalf("the other bot answered %d", res.Status)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dataDir, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the bundle wrote into the data directory: %v", err)
	}
}

// A sandbox's API listener lives as long as its process: one left open
// would keep the sandbox's network namespace, a descriptor and a goroutine
// for every start of a bot.
func TestSandboxListenerEndsWithItsProcess(t *testing.T) {
	needNode(t)
	if err := sandbox.Available(); err != nil {
		t.Fatalf("no sandbox on this machine: %v", err)
	}
	api := sandbox.NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	defer api.Close()
	h, _ := newHost(t, Config{Dir: t.TempDir(), API: api})
	b := bot("b1")
	for i := range 3 {
		mustCall(t, h, b, "/echo")
		if n := api.Len(); n != 1 {
			t.Fatalf("start %d: %d listeners feed the API, want 1", i, n)
		}
		h.Stop(b.BotID)
		eventually(t, "the stopped process's listener to close", func() bool { return api.Len() == 0 })
	}
}

func TestNoSandboxRefusesBundles(t *testing.T) {
	needNode(t)
	err := noSandboxError{errors.New("user namespaces are disabled")}
	if !errors.Is(err, ErrNoSandbox) || !strings.Contains(err.Error(), "--unsandboxed-bots") {
		t.Fatalf("%v", err)
	}
	// The unsandboxed host runs the same bundle as the server's user: what the flag accepts.
	h, _ := newHost(t, Config{Unsandboxed: true})
	if res := mustCall(t, h, bot("b1"), "/echo"); res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
}
