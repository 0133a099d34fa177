package tunnel

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/botplatform/botplatform/internal/syncbuf"
)

// tunnelLib is the official CLI's tunnel client, installed with the
// compatibility suite (`cd compat && npm ci`; `make test` installs it after
// the Go tests, so a clean run skips this test, and the suite drives `bp
// dev` itself).
const tunnelLib = "../../compat/node_modules/@bpinternal/tunnel"

// tail is a `bp dev` reduced to its tunnel: TunnelTail answers each request
// with the request itself as JSON.
const tail = `
const { TunnelTail } = require(process.env.TUNNEL_LIB);
TunnelTail.new(process.env.TUNNEL_URL, process.env.TUNNEL_ID).then((t) => {
  t.events.on("request", (req) => {
    t.send({ requestId: req.id, status: 202, headers: { "x-from": "node", "content-length": 1 }, body: JSON.stringify(req) });
  });
  t.hello();
  console.log("open");
}, (err) => { console.error("tunnel:", err && err.message); process.exit(1); });
`

// TestNodeTunnelTail drives the real client of @bpinternal/tunnel.
func TestNodeTunnelTail(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	lib, err := filepath.Abs(tunnelLib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("the CLI's tunnel client is not installed at %s", lib)
	}
	e := newEnv(t)
	const id = "0f8e3c4e-6a53-4c62-9a4e-1b2c3d4e5f60"
	ctx, cancel := context.WithTimeout(t.Context(), hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", tail)
	cmd.Env = append(os.Environ(), "TUNNEL_LIB="+lib, "TUNNEL_URL="+e.wsURL, "TUNNEL_ID="+id)
	cmd.Stderr = &syncbuf.Buffer{}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		e.srv.Close() // the tail exits once its socket closes
		_ = cmd.Wait()
	}()
	if line, err := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "open" {
		t.Fatalf("node said %q (%v); stderr: %s", line, err, cmd.Stderr)
	}
	waitFor(t, "the tunnel to be served", func() bool { return e.srv.Connected(id) })

	res := wait(t, call(t.Context(), e.srv, "PUT", "http://localhost/"+id+"/hook?x=1", `{"a":"é"}`))
	if res.err != nil {
		t.Fatalf("RoundTrip: %v", res.err)
	}
	if res.res.StatusCode != 202 || res.res.Header.Get("X-From") != "node" || res.res.Header.Get("Content-Length") != "" {
		t.Errorf("answer %d %v", res.res.StatusCode, res.res.Header)
	}
	var got struct {
		Type, ID, Method, Path, Query, Body string
		Headers                             map[string]any
	}
	if err := json.Unmarshal(res.body, &got); err != nil {
		t.Fatalf("answer body %q: %v", res.body, err)
	}
	if got.Type != "request" || got.ID == "" || got.Method != "PUT" || got.Path != "/hook" || got.Query != "x=1" || got.Body != `{"a":"é"}` || got.Headers["X-Single"] != "one" {
		t.Errorf("the request as the tail saw it: %+v", got)
	}

	// The tail answers pings, so its tunnel is live: another connection
	// with its id is refused, and the tail keeps it.
	dctx, dcancel := context.WithTimeout(t.Context(), hang)
	defer dcancel()
	ws, dres, err := websocket.Dial(dctx, e.wsURL+"/"+id, nil)
	if err == nil {
		ws.CloseNow()
		t.Fatal("a second connection took the tail's tunnel")
	}
	if dres == nil || dres.StatusCode != http.StatusConflict {
		t.Fatalf("second connection: %v, want 409", err)
	}
	if res := wait(t, call(t.Context(), e.srv, "GET", "http://localhost/"+id+"/again", "")); res.err != nil || res.res.StatusCode != 202 {
		t.Fatalf("the tail after the refused connection: %+v", res)
	}
}
