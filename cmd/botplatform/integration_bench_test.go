package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// relayIntegration is the benchmark's integration, written against the
// contract: a provider's webhook {user, conv, text} becomes its user's
// message in its conversation (three Runtime API calls with the
// installation's key), and the bot's message goes back to the provider.
// It speaks HTTP as integrations built with @botpress/sdk do: the official
// client's transport (node:http with a keep-alive agent), not fetch.
const relayIntegration = `
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true })
const post = (url, headers, body) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
    const chunks = []
    res.on('data', (c) => chunks.push(c))
    res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }))
  })
  req.on('error', reject)
  req.end(body)
})
const api = async (path, body) => {
  const r = await post(process.env.BP_API_URL + path, { authorization: 'Bearer ' + process.env.BP_TOKEN,
    'x-bot-id': process.env.BP_BOT_ID, 'x-integration-id': process.env.BP_INTEGRATION_ID }, JSON.stringify(body))
  if (r.status >= 300) throw new Error(path + ': ' + r.status + ' ' + r.text)
  return JSON.parse(r.text)
}
module.exports = { default: { handler: async (req) => {
  const h = req.headers
  const conf = JSON.parse(Buffer.from(h['x-bp-configuration'], 'base64').toString())
  const body = JSON.parse(req.body || '{}')
  switch (h['x-bp-operation']) {
    case 'webhook_received': {
      const w = JSON.parse(body.req.body)
      const { user } = await api('/v1/chat/users/get-or-create', { tags: { id: w.user }, discriminateByTags: ['id'] })
      const { conversation } = await api('/v1/chat/conversations/get-or-create', { channel: 'relay', tags: { id: w.conv }, discriminateByTags: ['id'] })
      await api('/v1/chat/messages', { conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: w.text }, tags: {} })
      return { status: 200 }
    }
    case 'message_created':
      await post(conf.provider, {}, JSON.stringify({ text: body.payload.text }))
      return { status: 200 }
  }
  return { status: 200 }
} } }
`

// BenchmarkIntegrationRoundTrip measures a provider's message through a
// deployed integration to an echo bot and back to the provider (webhook →
// integration → bot → integration → provider), against the chat echo of
// the same server: each sends 200 messages per second over 100
// conversations, and a message's time runs from its sending to its reply's
// arrival, once every conversation has had one.
//
//	go test -run '^$' -bench IntegrationRoundTrip -benchtime 3000x ./cmd/botplatform/
func BenchmarkIntegrationRoundTrip(b *testing.B) {
	needNodeBench(b)
	// The provider: 127.0.0.2 stands for an address outside.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		b.Fatal(err)
	}
	replies := newReplyLog()
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Text string }
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) == nil {
			replies.add(m.Text)
		}
	}))
	b.Cleanup(func() { ln.Close() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	s := startBenchServer(b, "--bot-egress-ports", port, "--bot-fetch-private")
	s.deploy(b, echoCode)
	ws := map[string]string{"x-workspace-id": s.workspace}
	s.do(b, "PUT", "/v1/admin/workspaces/"+s.workspace, nil, `{"handle":"bench"}`, nil)
	def, _ := json.Marshal(map[string]any{"name": "bench/relay", "version": "1.0.0", "code": relayIntegration,
		"channels": map[string]any{"relay": map[string]any{"messages": map[string]any{"text": map[string]any{"schema": map[string]any{"type": "object"}}}}}})
	var created struct{ Integration struct{ ID string } }
	s.do(b, "POST", "/v1/admin/integrations", ws, string(def), &created)
	install, _ := json.Marshal(map[string]any{"integrations": map[string]any{"relay": map[string]any{
		"integrationId": created.Integration.ID, "configuration": map[string]any{"provider": "http://127.0.0.2:" + port + "/replies"}}}})
	var bot struct {
		Bot struct {
			Integrations map[string]struct{ WebhookURL, Status string }
		}
	}
	s.do(b, "PUT", "/v1/admin/bots/"+s.botID, ws, string(install), &bot)
	hook := bot.Bot.Integrations[created.Integration.ID].WebhookURL
	if hook == "" {
		b.Fatalf("the installation has no webhook URL: %+v", bot)
	}

	b.Run("chat-echo", func(b *testing.B) { echoRoundTrip(b, s, []string{s.webhook}) })
	b.Run("integration", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		measureRoundTrips(b, 100, replies, func(i int, text string) error {
			body := `{"user":"u` + strconv.Itoa(i%100) + `","conv":"c` + strconv.Itoa(i%100) + `","text":"` + text + `"}`
			res, err := client.Post(hook, "application/json", strings.NewReader(body))
			if err != nil {
				return err
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return &benchError{res.StatusCode}
			}
			return nil
		})
	})
}

type benchError struct{ status int }

func (e *benchError) Error() string { return "the webhook answered " + strconv.Itoa(e.status) }

func needNodeBench(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is not installed")
	}
}
