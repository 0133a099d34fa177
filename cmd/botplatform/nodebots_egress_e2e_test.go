package main

// Sandboxed Node bundles reaching outside services (--bot-egress-ports),
// under the address rule of bot code's fetch (--bot-fetch-private).

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/sandbox"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// nodeFetchBundle fetches the url a user sends and answers with the
// status and body, or the error's code.
const nodeFetchBundle = bundleAPI + `
module.exports = { default: { handler: async (req) => {
  if (req.headers['x-bp-type'] !== 'message_created') return
  const m = JSON.parse(req.body).event.payload.message
  let text
  try { const r = await fetch(m.payload.text); text = r.status + ' ' + await r.text() } catch (e) { text = 'failed: ' + (e.cause && e.cause.code || e.message) }
  await api('/v1/chat/messages', { conversationId: m.conversationId, userId: process.env.BP_BOT_ID, type: 'text', tags: {}, payload: { text } })
} } }
`

func TestNodeBundleEgress(t *testing.T) {
	t.Parallel()
	needNode(t)
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	// 127.0.0.2 stands for a service outside: Linux accepts any 127/8
	// address. The scenarios run after this function returns.
	outside, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Close() })
	go http.Serve(outside, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "outside") }))
	port := strconv.Itoa(outside.Addr().(*net.TCPAddr).Port)
	other, err := net.Listen("tcp", "127.0.0.2:0") // not an egress port
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	url := "http://127.0.0.2:" + port + "/"
	ask := func(t *testing.T, s *testServer, text string) string {
		e := newChatEnv(t, s)
		e.deploy(nodeFetchBundle, nil)
		u := e.createUser(nil)
		return textOf(e.ask(u, e.conversation(u, ""), text))
	}

	runScenarios(t, []scenario{
		{"a bundle reaches an egress port on an allowed address", func(t *testing.T, s *testServer) {
			if got := ask(t, s, url); got != "200 outside" {
				t.Fatalf("reply = %q", got)
			}
		}},
		{"other ports are refused", func(t *testing.T, s *testServer) {
			if got := ask(t, s, "http://"+other.Addr().String()+"/"); got != "failed: ECONNREFUSED" {
				t.Fatalf("reply = %q", got)
			}
		}},
	}, append([]string{"--bot-egress-ports", port + ",443", "--bot-fetch-private"}, runtimeFlags...)...)

	t.Run("loopback refused without --bot-fetch-private", func(t *testing.T) {
		s := startBackendWith(t, storetest.Backends[0], append([]string{"--bot-egress-ports", port}, runtimeFlags...)...)
		if got := ask(t, s, url); got != "failed: ECONNRESET" {
			t.Fatalf("reply = %q", got)
		}
		eventually(t, "the refusal in the server's log", func() bool {
			return strings.Contains(s.Stderr.String(), "127.0.0.2 is loopback, private or link-local (an operator allows them with --bot-fetch-private)")
		})
	})
}
