package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestIntegrationVersions: a workspace deploys integration versions under
// its handle, reads them back by id, name and version range, changes and
// deletes them; the hub shows what is public or unlisted to every
// workspace and nothing private; and a viewer, another workspace, a name
// under someone else's handle, a taken name@version and bad fields are
// refused with the field named, leaving what is stored as it was.
func TestIntegrationVersions(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackend(t, backend)
			owner := s.owner(t)
			// Another tenant: its own account and workspace.
			stranger := s.as(t, s.issueToken(t, uniqueEmail("stranger")), "")
			stranger = stranger.in(str(t, stranger.post("/v1/admin/workspaces", map[string]any{"name": "elsewhere"}).ok(), "id"))
			viewer, _ := owner.addMember("viewer")

			def := func(name, version string, extra map[string]any) map[string]any {
				d := map[string]any{"name": name, "version": version, "title": "Echo", "code": "module.exports = {}",
					"actions": map[string]any{"echo": map[string]any{"input": map[string]any{"schema": map[string]any{"type": "object"}},
						"output": map[string]any{"schema": map[string]any{"type": "object"}}}},
					"secrets": map[string]any{"API_KEY": "secret-value-k1"}}
				for k, v := range extra {
					d[k] = v
				}
				return d
			}
			create := func(c client, d map[string]any) map[string]any {
				t.Helper()
				return c.post("/v1/admin/integrations", d).ok()["integration"].(map[string]any)
			}

			// Without a handle, a handle-prefixed name is refused, naming what to do.
			owner.post("/v1/admin/integrations", def("acme/echo", "0.1.0", nil)).fail(400, "InvalidPayload", "name", "handle", "updateWorkspace")
			if got := owner.put("/v1/admin/workspaces/handle-availability", map[string]any{"handle": "acme"}).ok(); got["available"] != true {
				t.Fatalf("a free handle: %v", got)
			}
			owner.put("/v1/admin/workspaces/"+owner.ws, map[string]any{"handle": "acme"}).ok()
			got := stranger.put("/v1/admin/workspaces/handle-availability", map[string]any{"handle": "acme"}).ok()
			if got["available"] != false || len(got["suggestions"].([]any)) == 0 || got["usedBy"] != nil {
				t.Fatalf("a taken handle, for another workspace: %v", got)
			}
			stranger.put("/v1/admin/workspaces/handle-availability", map[string]any{"handle": "NO WAY"}).fail(400, "InvalidPayload", "handle")

			v1 := create(owner, def("acme/echo", "0.1.0", map[string]any{"icon": base64.StdEncoding.EncodeToString([]byte("<svg/>"))}))
			v2 := create(owner, def("acme/echo", "0.2.0", nil))
			if str(t, v1, "id")[:7] != "intver_" || len(str(t, v1, "id")) < 28 || v1["visibility"] != "private" ||
				!strings.HasPrefix(str(t, v1, "iconUrl"), "data:image/svg+xml;base64,") || v1["secrets"].([]any)[0] != "API_KEY" {
				t.Fatalf("created: %v", v1)
			}
			if strings.Contains(string(owner.get("/v1/admin/integrations/"+str(t, v1, "id")).Body), "secret-value-k1") {
				t.Fatal("an integration's answer shows a secret's value")
			}
			byName := func(c client, version string) *response {
				return c.get("/v1/admin/integrations/" + url.PathEscape("acme/echo") + "/" + url.PathEscape(version))
			}
			for version, want := range map[string]any{"latest": v2["id"], "0.1.0": v1["id"], "^0.1.0": v1["id"], ">=0.1.0": v2["id"]} {
				if got := byName(owner, version).ok()["integration"].(map[string]any)["id"]; got != want {
					t.Errorf("getIntegrationByName %s = %v, want %v", version, got, want)
				}
			}
			byName(owner, "9.0.0").fail(404, "ResourceNotFound", "acme/echo")
			byName(owner, "not a version!").fail(400, "InvalidQuery", "version")

			// Refusals, each naming its field.
			owner.post("/v1/admin/integrations", def("acme/echo", "0.1.0", nil)).fail(409, "AlreadyExists", "acme/echo", "0.1.0")
			owner.post("/v1/admin/integrations", def("acme/echo", "1.0", nil)).fail(400, "InvalidPayload", "version")
			owner.post("/v1/admin/integrations", def("Bad Name", "1.0.0", nil)).fail(400, "InvalidPayload", "name")
			owner.post("/v1/admin/integrations", def("chat", "9.0.0", nil)).fail(400, "InvalidPayload", "name", "built-in")
			owner.post("/v1/admin/integrations", def("acme/x", "1.0.0", map[string]any{"secrets": map[string]any{"lower": "v"}})).fail(400, "InvalidPayload", "secrets.lower")
			owner.post("/v1/admin/integrations", def("acme/x", "1.0.0", map[string]any{"icon": "%%%"})).fail(400, "InvalidPayload", "icon")
			big := base64.StdEncoding.EncodeToString(make([]byte, 300<<10))
			owner.post("/v1/admin/integrations", def("acme/x", "1.0.0", map[string]any{"icon": big})).fail(400, "InvalidPayload", "icon")
			owner.post("/v1/admin/integrations", def("acme/x", "1.0.0", map[string]any{"actions": map[string]any{"a": map[string]any{"input": 1}}})).fail(400, "InvalidPayload", "actions.a")
			owner.post("/v1/admin/integrations", def("acme/x", "1.0.0", map[string]any{"dev": true, "visibility": "public"})).fail(400, "InvalidPayload", "visibility")
			stranger.post("/v1/admin/integrations", def("acme/stolen", "1.0.0", nil)).fail(400, "InvalidPayload", "name", "acme")
			viewer.post("/v1/admin/integrations", def("acme/x", "1.0.0", nil)).fail(403, "Forbidden")
			viewer.del("/v1/admin/integrations/"+str(t, v1, "id")).fail(403, "Forbidden")
			owner.post("/v1/admin/integrations/validate", def("acme/x", "1.0.0", nil)).ok()
			byNameX := owner.get("/v1/admin/integrations/" + url.PathEscape("acme/x") + "/1.0.0")
			byNameX.fail(404, "ResourceNotFound") // the dry run stored nothing

			// A bare name belongs to the first workspace that deploys it.
			create(stranger, def("webhooky", "1.0.0", nil))
			owner.post("/v1/admin/integrations", def("webhooky", "2.0.0", nil)).fail(409, "AlreadyExists", "webhooky", "another workspace")

			// Private versions stay in their workspace.
			stranger.get("/v1/admin/integrations/"+str(t, v1, "id")).fail(404, "ResourceNotFound")
			stranger.put("/v1/admin/integrations/"+str(t, v1, "id"), map[string]any{"title": "mine"}).fail(404, "ResourceNotFound")
			stranger.del("/v1/admin/integrations/"+str(t, v1, "id")).fail(404, "ResourceNotFound")
			stranger.get("/v1/admin/hub/integrations/"+str(t, v1, "id")).fail(404, "ResourceNotFound")
			stranger.get("/v1/admin/hub/integrations/"+url.PathEscape("acme/echo")+"/latest").fail(404, "ResourceNotFound")
			if list := stranger.get("/v1/admin/integrations").ok()["integrations"].([]any); len(list) != 1 {
				t.Fatalf("another workspace lists %v", list)
			}

			// An update: null removes, left out keeps; the name cannot change.
			owner.put("/v1/admin/integrations/"+str(t, v2, "id"), map[string]any{"name": "acme/other"}).fail(400, "InvalidPayload", "name")
			owner.put("/v1/admin/integrations/"+str(t, v2, "id"), map[string]any{"version": "0.3.0"}).fail(400, "InvalidPayload", "version")
			up := owner.put("/v1/admin/integrations/"+str(t, v2, "id"), map[string]any{"description": "changed",
				"events": map[string]any{"hit": map[string]any{"schema": map[string]any{"type": "object"}}}, "secrets": map[string]any{"API_KEY": nil, "OTHER": "x"}}).ok()["integration"].(map[string]any)
			if up["description"] != "changed" || up["actions"].(map[string]any)["echo"] == nil || up["events"].(map[string]any)["hit"] == nil ||
				len(up["secrets"].([]any)) != 1 || up["secrets"].([]any)[0] != "OTHER" || up["title"] != "Echo" {
				t.Fatalf("updated: %v", up)
			}
			up = owner.put("/v1/admin/integrations/"+str(t, v2, "id"), map[string]any{"actions": map[string]any{"echo": nil}}).ok()["integration"].(map[string]any)
			if len(up["actions"].(map[string]any)) != 0 || up["events"].(map[string]any)["hit"] == nil {
				t.Fatalf("after removing an action: %v", up)
			}

			// Public: in the hub for everyone, and frozen.
			pub := create(owner, def("acme/echo", "1.0.0", map[string]any{"public": true}))
			if pub["visibility"] != "public" {
				t.Fatalf("public: true gives visibility %v", pub["visibility"])
			}
			hub := stranger.get("/v1/admin/hub/integrations/" + url.PathEscape("acme/echo") + "/latest").ok()["integration"].(map[string]any)
			if hub["id"] != pub["id"] || field(t, hub, "ownerWorkspace", "handle") != "acme" || hub["secrets"].([]any)[0] != "API_KEY" {
				t.Fatalf("the hub's acme/echo: %v", hub)
			}
			stranger.get("/v1/admin/hub/integrations/" + str(t, pub, "id")).ok()
			names := map[string]bool{}
			for _, i := range stranger.get("/v1/admin/hub/integrations").ok()["integrations"].([]any) {
				names[i.(map[string]any)["name"].(string)+"@"+i.(map[string]any)["version"].(string)] = true
			}
			if !names["acme/echo@1.0.0"] || names["acme/echo@0.1.0"] || !names["chat@1.0.0"] || names["webhooky@1.0.0"] {
				t.Fatalf("the hub lists %v", names)
			}
			owner.put("/v1/admin/integrations/"+str(t, pub, "id"), map[string]any{"title": "changed"}).fail(403, "Forbidden", "new version")

			owner.del("/v1/admin/integrations/" + str(t, v1, "id")).ok()
			owner.get("/v1/admin/integrations/"+str(t, v1, "id")).fail(404, "ResourceNotFound")
			if got := byName(owner, "^0.1.0"); got.Status != 404 {
				t.Fatalf("a deleted version still resolves: %s", got.Body)
			}
		})
	}
}

// spyIntegration is an integration's code written against the contract
// itself (the headers of @botpress/sdk's integration server): register
// checks its configuration, the action "env" hands back what the process
// was given (its key among them, as a hostile integration could), and the
// webhook handler echoes the request it got.
const spyIntegration = `
module.exports = { default: { handler: async (req) => {
  const h = req.headers
  const conf = JSON.parse(Buffer.from(h['x-bp-configuration'], 'base64').toString())
  const body = JSON.parse(req.body || '{}')
  const fail = (message) => ({ status: 400, body: JSON.stringify({ id: 'err_1', code: 400, type: 'Runtime', message }) })
  switch (h['x-bp-operation']) {
    case 'register':
      console.info('registering ' + body.webhookUrl)
      return conf.ok ? { status: 200 } : fail('bad config')
    case 'unregister':
      return { status: 200 }
    case 'action_triggered':
      if (h['x-bp-type'] === 'hang') await new Promise(() => {})
      if (h['x-bp-type'] === 'crash') process.exit(3)
      if (h['x-bp-type'] !== 'env') return fail('no action ' + h['x-bp-type'])
      return { status: 200, body: JSON.stringify({ output: { token: process.env.BP_TOKEN, bot: process.env.BP_BOT_ID, secret: process.env.SECRET_API_KEY,
        alias: h['x-integration-alias'], webhook: h['x-webhook-id'], input: body.input } }) }
    case 'webhook_received':
      return { status: 201, headers: { 'x-echo': body.req.path, 'content-type': 'application/json' }, body: JSON.stringify(body.req) }
  }
  return fail('unexpected ' + h['x-bp-operation'])
} } }
`

// TestIntegrationInstallations: a bot installs a deployed integration,
// whose code runs in the Node host: register decides the installation's
// status, actions answer, the webhook URL relays the provider's request
// and the integration's answer; the key the code is given acts as that
// integration of that bot only, and dies with the installation; another
// workspace cannot install a private integration; a configuration the
// integration's schema refuses is refused naming the field.
func TestIntegrationInstallations(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackend(t, backend)
			owner := s.owner(t)
			owner.put("/v1/admin/workspaces/"+owner.ws, map[string]any{"handle": "acme"}).ok()
			spy := owner.post("/v1/admin/integrations", map[string]any{"name": "acme/spy", "version": "1.0.0", "code": spyIntegration,
				"secrets":       map[string]any{"API_KEY": "s3cret"},
				"configuration": map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}},
				"actions": map[string]any{"env": map[string]any{"input": map[string]any{"schema": map[string]any{"type": "object"}},
					"output": map[string]any{"schema": map[string]any{"type": "object"}}}}}).ok()["integration"].(map[string]any)
			spyID := str(t, spy, "id")
			botID := owner.createBot(map[string]any{"name": "host"})["id"].(string)
			otherBot := owner.createBot(map[string]any{"name": "neighbour"})["id"].(string)
			install := func(c client, bot string, entry map[string]any) *response {
				return c.put("/v1/admin/bots/"+bot, map[string]any{"integrations": map[string]any{"spy": entry}})
			}

			// The integration's schema checks the configuration: refused, it
			// is not registered, and the installation says why.
			got := install(owner, botID, map[string]any{"integrationId": spyID, "configuration": map[string]any{"ok": "yes"}}).ok()
			in := field(t, got, "bot", "integrations", spyID).(map[string]any)
			if in["status"] != "registration_failed" || !strings.HasPrefix(fmt.Sprint(in["statusReason"]), "configuration: ok:") {
				t.Fatalf("a configuration the schema refuses: %v", in)
			}
			// register refuses: the installation stays, marked with the reason.
			got = install(owner, botID, map[string]any{"integrationId": spyID, "configuration": map[string]any{"ok": false}}).ok()
			in = field(t, got, "bot", "integrations", spyID).(map[string]any)
			if in["status"] != "registration_failed" || in["statusReason"] != "bad config" || in["name"] != "acme/spy" {
				t.Fatalf("a refused registration: %v", in)
			}
			got = install(owner, botID, map[string]any{"integrationId": spyID, "configuration": map[string]any{"ok": true}}).ok()
			in = field(t, got, "bot", "integrations", spyID).(map[string]any)
			if in["status"] != "registered" || in["statusReason"] != nil {
				t.Fatalf("a registration: %v", in)
			}
			// Its alias alone names the installation: another configuration
			// is registered anew, and the one before again.
			for _, ok := range []bool{false, true} {
				got = install(owner, botID, map[string]any{"configuration": map[string]any{"ok": ok}}).ok()
				in = field(t, got, "bot", "integrations", spyID).(map[string]any)
				if want := map[bool]string{false: "registration_failed", true: "registered"}[ok]; in["status"] != want {
					t.Fatalf("configuration {ok: %v} by the alias alone: %v", ok, in)
				}
			}
			webhookURL, webhookID := str(t, in, "webhookUrl"), str(t, in, "webhookId")
			if !strings.HasSuffix(webhookURL, "/webhooks/"+webhookID) {
				t.Fatalf("webhookUrl %s", webhookURL)
			}
			// A viewer reads the installation, not its configuration (a provider's token, an API key).
			viewer, _ := owner.addMember("viewer")
			if seen := field(t, viewer.get("/v1/admin/bots/"+botID).ok(), "bot", "integrations", spyID).(map[string]any); fmt.Sprint(seen["configuration"]) != "map[]" || seen["status"] != "registered" {
				t.Fatalf("a viewer's view of the installation: %v", seen)
			}

			// An action runs in the integration's code.
			out := owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "spy:env", "input": map[string]any{"n": 1}}, "x-bot-id", botID).ok()["output"].(map[string]any)
			if out["bot"] != botID || out["secret"] != "s3cret" || out["alias"] != "spy" || out["webhook"] != webhookID || field(t, out, "input", "n") != float64(1) {
				t.Fatalf("the action saw %v", out)
			}
			owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "spy:other"}, "x-bot-id", botID).fail(400, "Runtime", "no action other")
			// A call that hangs or crashes the code fails alone: the next one runs.
			owner.put("/v1/admin/integrations/"+spyID, map[string]any{"maxExecutionTime": 1}).ok()
			owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "spy:hang"}, "x-bot-id", botID).fail(504, "OperationTimeout", "spy:hang", "in time")
			// The next calls start the code anew: a deadline a cold start fits in, however busy the machine (a
			// crash ends the call as soon as the code runs).
			owner.put("/v1/admin/integrations/"+spyID, map[string]any{"maxExecutionTime": 120}).ok()
			owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "spy:crash"}, "x-bot-id", botID).fail(400, "Runtime", "spy:crash")
			if again := owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "spy:env"}, "x-bot-id", botID).ok()["output"].(map[string]any); again["bot"] != botID {
				t.Fatalf("after a hang and a crash: %v", again)
			}

			// The webhook URL relays the request and the answer.
			u := s.relative(t, webhookURL)
			res := s.as(t, "", "").raw("POST", u+"/hook/deep?x=1", map[string]any{"hello": "world"})
			if res.Status != 201 || res.Header.Get("x-echo") != "/hook/deep" {
				t.Fatalf("webhook answer %d %v: %s", res.Status, res.Header, res.Body)
			}
			var echoed struct {
				Method, Path, Query, Body string
				Headers                   map[string]string
			}
			if err := json.Unmarshal(res.Body, &echoed); err != nil {
				t.Fatal(err)
			}
			if echoed.Method != "POST" || echoed.Query != "x=1" || !strings.Contains(echoed.Body, `"hello":"world"`) {
				t.Fatalf("the integration got %+v", echoed)
			}
			s.as(t, "", "").raw("GET", "/webhooks/nosuchwebhook", nil).fail(404, "ResourceNotFound", "nosuchwebhook")
			s.as(t, "", "").raw("POST", u, make([]byte, 33<<20)).fail(413, "PayloadTooLarge", "at most")
			eventually(t, "the webhook and the registration in the bot's logs", func() bool {
				logs := string(owner.get("/v1/admin/bots/" + botID + "/logs?timeStart=2020-01-01T00:00:00Z").Body)
				return strings.Contains(logs, "[spy] webhook POST /hook/deep: 201 in") && strings.Contains(logs, "[spy] registering "+webhookURL)
			})

			// The key acts as this integration of this bot, and nothing more.
			key := out["token"].(string)
			asSpy := s.as(t, key, "")
			asSpy.raw("GET", "/v1/chat/conversations", nil, "x-bot-id", botID).ok()
			asSpy.raw("GET", "/v1/chat/conversations", nil, "x-bot-id", otherBot).fail(403, "Forbidden")
			asSpy.raw("GET", "/v1/chat/conversations", nil, "x-bot-id", botID, "x-integration-id", "intver_other").fail(403, "Forbidden", "integration")
			asSpy.get("/v1/admin/bots").fail(401, "Unauthorized")
			f := asSpy.raw("PUT", "/v1/files", map[string]any{"key": "spy.txt", "size": 1}, "x-bot-id", botID).ok()["file"].(map[string]any)
			if field(t, f, "owner", "type") != "integration" {
				t.Fatalf("a file of the integration: %v", f)
			}

			// Another workspace cannot install a private integration.
			other := s.newWorkspace(t, "other")
			stranger := other.createBot(map[string]any{"name": "stranger"})["id"].(string)
			install(other, stranger, map[string]any{"integrationId": spyID}).fail(400, "ReferenceNotFound", spyID)

			// The integration's own logs: its lines in the workspace's bots, and nothing of the bots' own.
			var ilogs struct {
				Logs []struct{ Level, Message string }
			}
			owner.get("/v1/admin/integrations/" + spyID + "/logs?timeStart=2020-01-01T00:00:00Z").decode(&ilogs)
			webhookLine := false
			for _, l := range ilogs.Logs {
				if !strings.HasPrefix(l.Message, "[spy] ") {
					t.Fatalf("getIntegrationLogs: a line not of the integration: %q", l.Message)
				}
				webhookLine = webhookLine || strings.HasPrefix(l.Message, "[spy] webhook POST /hook/deep: 201")
			}
			if !webhookLine {
				t.Fatalf("getIntegrationLogs: no line of the webhook in %+v", ilogs.Logs)
			}
			owner.get("/v1/admin/integrations/"+spyID+"/logs").fail(400, "InvalidQuery", "timeStart")
			other.get("/v1/admin/integrations/"+spyID+"/logs?timeStart=2020-01-01T00:00:00Z").fail(404, "ResourceNotFound")

			// A version a bot installed is not deleted.
			owner.del("/v1/admin/integrations/"+spyID).fail(409, "ReferenceConstraint", "installed in 1 bot")

			// Removed: the key is dead, the webhook gone.
			owner.put("/v1/admin/bots/"+botID, map[string]any{"integrations": map[string]any{"spy": nil}}).ok()
			asSpy.raw("GET", "/v1/chat/conversations", nil, "x-bot-id", botID).fail(401, "Unauthorized")
			s.as(t, "", "").raw("POST", u, map[string]any{}).fail(404, "ResourceNotFound")
			owner.del("/v1/admin/integrations/" + spyID).ok()
		})
	}
}

// TestChatSendEvent: bot code calls the built-in chat integration's action
// chat:sendEvent (the hosted chat's, which bots of the public repository
// call), and the conversation's listeners receive the event; the hub
// answers the chat versions bots pin.
func TestChatSendEvent(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, storetest.Backends[0], runtimeFlags...)
	e := newBotEnv(t, s, `bot.on.message('text', async ({ message, client }) => {
  await client.callAction({ type: 'chat:sendEvent', input: { conversationId: message.conversationId, payload: { typing: true } } })
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'done' } })
})`, unlimited)
	u := e.user("sender")
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	e.send(u, c, "hi")
	st.expect(t, "message_created")
	ev := st.expect(t, "event_created")
	if ev["isBot"] != true || ev["conversationId"] != c {
		t.Fatalf("the event signal %v", ev)
	}
	wantEqual(t, ev["payload"], map[string]any{"typing": true}, "the event's payload")
	if reply := st.expect(t, "message_created"); textOf(reply) != "done" {
		t.Fatalf("reply %v", reply)
	}
	owner := s.owner(t)
	owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "chat:sendEvent", "input": map[string]any{"conversationId": "conv_none", "payload": map[string]any{}}},
		"x-bot-id", e.botID).fail(404, "ResourceNotFound", "conv_none")
	owner.raw("POST", "/v1/chat/actions", map[string]any{"type": "chat:sendEvent", "input": map[string]any{"payload": map[string]any{}}},
		"x-bot-id", e.botID).fail(400, "InvalidPayload", "input.conversationId")
	for _, v := range []string{"0.7.5", "1.2.0", "latest"} {
		hub := owner.get("/v1/admin/hub/integrations/chat/" + v).ok()["integration"].(map[string]any)
		if field(t, hub, "actions", "sendEvent") == nil || field(t, hub, "channels", "channel", "messages", "bloc") == nil {
			t.Fatalf("the hub's chat@%s: %v", v, hub)
		}
	}
}
