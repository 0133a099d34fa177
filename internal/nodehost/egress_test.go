//go:build linux

package nodehost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/sandbox"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// outgoing is a bundle that calls out: each path tries one thing and answers {"ok": true, "detail": …} when
// it worked.
const outgoing = `
const net = require('net')
const dns = require('dns')
const attempt = async (f) => {
  try { return { ok: true, detail: String(await f()) } } catch (e) {
    return { ok: false, detail: String(e && e.message || e) + (e && e.cause ? ': ' + (e.cause.code || e.cause.message) : '') }
  }
}
const get = async (url) => { const r = await fetch(url); return r.status + ' ' + await r.text() }
const env = process.env
let held
const routes = {
  '/fetch-ip': () => get('http://127.0.0.2:' + env.PORT + '/'),
  '/fetch-name': () => get('http://api.example.test:' + env.PORT + '/'),
  '/fetch-closed': () => get('http://127.0.0.2:' + env.CLOSED_PORT + '/'),
  '/fetch-private': () => get('http://10.1.2.3:' + env.PORT + '/'),
  '/resolve': () => dns.promises.resolve4('api.example.test'),
  '/lookup': async () => (await dns.promises.lookup('api.example.test', { all: true })).map((a) => a.address).join(','),
  '/unknown': () => dns.promises.lookup('nowhere.example.test'),
  '/api': () => get(env.BP_API_URL + '/hello'),
  '/hold': () => new Promise((resolve, reject) => {
    held = net.connect({ host: '127.0.0.2', port: Number(env.HOLD_PORT) })
    held.once('data', (d) => resolve(String(d).trim()))
    held.on('error', reject)
  }),
}
exports.handler = async (req) => {
  const f = routes[req.path]
  if (!f) return { status: 404 }
  return { status: 200, body: JSON.stringify(await attempt(f)) }
}
`

// listen127 listens on 127.0.0.2, which stands for a host outside: Linux accepts any 127/8 address.
func listen127(t *testing.T) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, ln.Addr().(*net.TCPAddr).Port
}

func TestSandboxedBundleReachesOutside(t *testing.T) {
	needNode(t)
	if err := sandbox.Available(); err != nil {
		t.Fatalf("no sandbox on this machine: %v", err)
	}
	web, port := listen127(t)
	go http.Serve(web, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from outside") }))
	closed, closedPort := listen127(t) // a port not among the egress ports
	go http.Serve(closed, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "not an egress port") }))
	hold, holdPort := listen127(t)
	heldEnded := make(chan error, 1)
	go func() {
		c, err := hold.Accept()
		if err != nil {
			return
		}
		fmt.Fprintln(c, "held")
		_, err = io.Copy(io.Discard, c)
		heldEnded <- err
	}()
	api := sandbox.NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the API at "+r.URL.Path) })}
	go srv.Serve(api)
	defer srv.Close()
	// The name has an IPv6 address too, which the sandbox cannot reach: Node's fetch falls back to IPv4.
	lookup := func(_ context.Context, network, host string) ([]netip.Addr, error) {
		if host != "api.example.test." {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if network == "ip6" {
			return []netip.Addr{netip.MustParseAddr("2001:db8::1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	}
	start := func(t *testing.T, rule egress.Rule) (*Host, *sandbox.Outbound, *syncbuf.Buffer) {
		logs := &syncbuf.Buffer{}
		out := &sandbox.Outbound{Ports: []int{port, holdPort, 8080}, Lookup: lookup,
			Dial: (&net.Dialer{Control: rule.Control}).DialContext}
		h, err := New(Config{Dir: t.TempDir(), API: api, Outbound: out}, slog.New(slog.NewTextHandler(logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		return h, out, logs
	}
	b := Bundle{BotID: "out", Version: "v1", Code: outgoing, Env: []string{"PORT=" + strconv.Itoa(port),
		"CLOSED_PORT=" + strconv.Itoa(closedPort), "HOLD_PORT=" + strconv.Itoa(holdPort), "BP_API_URL=http://127.0.0.1:8080"}}
	try := func(t *testing.T, h *Host, logs *syncbuf.Buffer, path string, ok bool, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := h.Call(ctx, b, Request{Method: "POST", Path: path})
		if err != nil {
			t.Fatalf("%s: %v; the server's log:\n%s", path, err, logs)
		}
		var got outcome
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", path, got)
		if got.OK != ok || !strings.Contains(got.Detail, want) {
			t.Fatalf("%s: got %+v, want ok=%v with %q", path, got, ok, want)
		}
	}

	t.Run("loopback allowed", func(t *testing.T) {
		h, out, logs := start(t, egress.Rule{Loopback: true, Setting: "--bot-fetch-private"})
		for _, tc := range []struct {
			path string
			ok   bool
			want string
		}{
			{"/fetch-ip", true, "200 hello from outside"},
			{"/fetch-name", true, "200 hello from outside"},
			{"/resolve", true, "127.0.0.2"},
			{"/lookup", true, "127.0.0.2"},
			{"/unknown", false, "ENOTFOUND"},
			{"/fetch-closed", false, "ECONNREFUSED"},
			{"/fetch-private", false, "ECONNRESET"},
			{"/api", true, "200 the API at /hello"}, // 8080 is an egress port too
		} {
			t.Run(tc.path, func(t *testing.T) { try(t, h, logs, tc.path, tc.ok, tc.want) })
		}
		if !strings.Contains(logs.String(), "10.1.2.3") {
			t.Fatalf("the refusal is not logged:\n%s", logs)
		}
		// A connection the bundle holds ends with its process, and so do its sockets.
		try(t, h, logs, "/hold", true, "held")
		h.Stop(b.BotID)
		if err := <-heldEnded; err != nil {
			t.Fatalf("the held connection: %v", err)
		}
		eventually(t, "the stopped process's sockets to close", func() bool { return out.Len() == 0 && api.Len() == 0 })
	})

	t.Run("loopback refused", func(t *testing.T) {
		h, _, logs := start(t, egress.Rule{Setting: "--bot-fetch-private"})
		try(t, h, logs, "/fetch-ip", false, "ECONNRESET")
		try(t, h, logs, "/api", true, "200 the API at /hello")
		if want := "127.0.0.2 is loopback, private or link-local (an operator allows them with --bot-fetch-private)"; !strings.Contains(logs.String(), want) {
			t.Fatalf("the log does not say %q:\n%s", want, logs)
		}
	})
}
