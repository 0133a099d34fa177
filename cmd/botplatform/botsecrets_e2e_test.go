package main

// A bot's secrets and the roles that see them: the signing secret and the
// chat integration's encryptionKey sign for the bot and for its users, so
// only the roles that may change the bot read them (docs/admin-api.md#roles).

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func TestBotSecretsByRole(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"a viewer reads no bot's signing secret nor chat encryption key from any route", testViewerSeesNoBotSecrets},
	})
}

func testViewerSeesNoBotSecrets(t *testing.T, s *testServer) {
	own := s.newWorkspace(t, "bot secrets")
	viewer, _ := own.addMember("viewer")
	dev, _ := own.addMember("developer")
	bot := dev.createBot(map[string]any{"name": "guarded"})
	botID := str(t, bot, "id")
	signing := str(t, bot, "signingSecret")
	encKey := str(t, bot, "integrations", "chat", "configuration", "encryptionKey")
	// A dev bot's url names its `bp dev` tunnel, whose id is the tunnel's
	// only credential; one delivery puts the tunnel in the bot's logs.
	const tunnelID = "7d1f0b52-9c4e-4a8e-b1d2-3f6a0c9e8b71"
	path := "/v1/admin/bots/" + botID
	dev.put(path, map[string]any{"url": s.URL + "/" + tunnelID}).ok()
	dev.raw(http.MethodPost, "/v1/chat/actions", map[string]any{"type": "ping", "input": map[string]any{}}, "x-bot-id", botID).fail(400, "Runtime")
	if logs := string(dev.get("/v1/admin/bots/" + botID + "/logs?timeStart=2000-01-01T00:00:00Z").Body); !strings.Contains(logs, "tunnel 7d1f0b52…") {
		t.Fatalf("the bot's logs do not name its tunnel, cut short: %s", logs)
	}
	secrets := map[string]string{"signing secret": signing, "chat encryption key": encKey, "tunnel id": tunnelID[8:]}

	// The roles that may change the bot read its secrets in every answer.
	for _, c := range []client{dev, own} {
		b := c.get(path).ok()
		if str(t, b, "bot", "signingSecret") != signing || str(t, b, "bot", "integrations", "chat", "configuration", "encryptionKey") != encKey {
			t.Errorf("getBot of a developer or owner lacks the bot's secrets: %v", b)
		}
	}
	if got := str(t, dev.get(path).ok(), "bot", "url"); got != s.URL+"/"+tunnelID {
		t.Errorf("a developer's getBot: url %q", got)
	}
	if got := str(t, dev.put(path, map[string]any{"description": "seen"}).ok(), "bot", "signingSecret"); got != signing {
		t.Errorf("updateBot's answer: signingSecret %q, want %q", got, signing)
	}

	// A viewer's bot has the field the official client requires, empty.
	vb := viewer.get(path).ok()
	if got, ok := field(t, vb, "bot").(map[string]any)["signingSecret"]; !ok || got != "" {
		t.Errorf("a viewer's getBot: signingSecret %#v, want the field present and empty", got)
	}
	if k, ok := field(t, vb, "bot", "integrations", "chat", "configuration").(map[string]any)["encryptionKey"]; ok {
		t.Errorf("a viewer's getBot: chat encryptionKey %#v, want none", k)
	}
	if str(t, vb, "bot", "integrations", "chat", "webhookId") == "" || str(t, vb, "bot", "name") != "guarded" {
		t.Errorf("a viewer's getBot lost more than the secrets: %v", vb)
	}

	// No route a viewer may read carries them: every GET operation of the
	// served OpenAPI document that takes a bearer token, with the bot's,
	// its workspace's and its first version's ids in the path.
	versions := dev.get(path + "/versions").ok()["versions"].([]any)
	versionID := str(t, versions[0], "id")
	ids := map[string]string{"id": botID, "versionId": versionID}
	checked := 0
	for _, p := range bearerGETPaths(t, s) {
		if strings.HasSuffix(p, "/listen") {
			continue // a stream: it would not end
		}
		ids["id"] = botID
		if strings.HasPrefix(p, "/v1/admin/workspaces/") {
			ids["id"] = own.ws
		}
		filled := pathParam.ReplaceAllStringFunc(p, func(m string) string {
			if v, ok := ids[m[1:len(m)-1]]; ok {
				return url.PathEscape(v)
			}
			return "none"
		})
		q := "?timeStart=2000-01-01T00:00:00Z&botId=" + botID
		r := viewer.raw(http.MethodGet, filled+q, nil, "x-bot-id", botID)
		for name, v := range secrets {
			if strings.Contains(string(r.Body), v) {
				t.Errorf("a viewer's GET %s (%d) carries the bot's %s: %s", filled, r.Status, name, tail(string(r.Body), 500))
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d routes checked: the OpenAPI document was not read as expected", checked)
	}
	// getBotVersion's url needs no credentials: what it answers a viewer.
	u, err := url.Parse(str(t, viewer.get(path+"/versions/"+versionID).ok(), "url"))
	if err != nil {
		t.Fatal(err)
	}
	r := s.as(t, "", "").get(u.RequestURI())
	if r.Status != http.StatusOK {
		t.Errorf("the version document a viewer's url designates: %d", r.Status)
	}
	for name, v := range secrets {
		if strings.Contains(string(r.Body), v) {
			t.Errorf("the version document a viewer's url designates carries the bot's %s", name)
		}
	}
	// An export with the secrets is an administrator's.
	viewer.post(path+"/export?secrets=true", nil).fail(http.StatusForbidden, "Forbidden")
	// What viewers were shown changed nothing stored.
	if k := str(t, dev.get(path).ok(), "bot", "integrations", "chat", "configuration", "encryptionKey"); k != encKey {
		t.Errorf("after the viewer's reads, the developer's getBot has encryptionKey %q, want %q", k, encKey)
	}
}

// pathParam is a parameter in an OpenAPI path: {id}.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// bearerGETPaths are the paths of the GET operations of the server's
// OpenAPI document that accept a bearer token, sorted.
func bearerGETPaths(t *testing.T, s *testServer) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Security []map[string][]string `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.as(t, "", "").get("/openapi.json").Body, &doc); err != nil {
		t.Fatalf("/openapi.json: %v", err)
	}
	var out []string
	for p, ops := range doc.Paths {
		for _, req := range ops["get"].Security {
			if _, ok := req["bearer"]; ok {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
