package main

// Bot versions through the Admin API: recorded at each deploy, listed,
// downloaded from a signed url, deployed back; an event running when the
// bot is rolled back finishes on the code it started with.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestBotVersions(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"rollback", testBotVersionsRollback},
		{"api", testBotVersionsAPI},
	}, append([]string{"--bot-versions-keep", "5"}, runtimeFlags...)...)
}

// versionsOf lists the bot's versions, newest first.
func versionsOf(c client, botID string) []map[string]any {
	c.t.Helper()
	var r struct {
		Versions []map[string]any `json:"versions"`
	}
	c.get("/v1/admin/bots/" + botID + "/versions").decode(&r)
	return r.Versions
}

// currentOf names the versions listed as current (what the bot runs).
func currentOf(vs []map[string]any) string {
	var out []string
	for _, v := range vs {
		if v["current"] == true {
			out = append(out, v["name"].(string))
		}
	}
	return strings.Join(out, ",")
}

func names(vs []map[string]any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v["name"].(string)
	}
	return out
}

// versionDocument downloads a version from getBotVersion's url, as a
// client without credentials would.
func versionDocument(t *testing.T, c client, botID, versionID string) (map[string]any, string) {
	t.Helper()
	u := str(t, c.get("/v1/admin/bots/"+botID+"/versions/"+versionID).ok(), "url")
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, raw)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("version document: %v: %s", err, raw)
	}
	return doc, u
}

const versionAJS = sayJS + `bot.on.message('*', async ({ message, client }) => {
  const text = message.payload.text
  if (text === 'wait') {
    await say(client, message.conversationId, 'A waits')
    for (let i = 0; i < 1000000; i++) {
      const { messages } = await client.listMessages({ conversationId: message.conversationId })
      if (messages.some((m) => m.payload.text === 'go')) break
    }
    await say(client, message.conversationId, 'A finished')
    return
  }
  await say(client, message.conversationId, 'A: ' + text)
})
`

const versionBJS = sayJS + `bot.on.message('*', async ({ message, client }) => {
  await say(client, message.conversationId, 'B: ' + message.payload.text)
})
`

func testBotVersionsRollback(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	e.deploy(versionAJS, map[string]any{"maxExecutionTime": 120, "secrets": map[string]any{"API_TOKEN": "s3cret-value-42"}})
	e.deploy(versionBJS, nil)
	vs := versionsOf(e.admin, e.botID)
	if got := strings.Join(names(vs), ","); got != "v3,v2,v1" {
		t.Fatalf("versions after create and two deploys: %s; want v3,v2,v1", got)
	}
	vA, vB := str(t, vs[1], "id"), str(t, vs[0], "id")
	if got := currentOf(vs); got != "v3" {
		t.Fatalf("current versions after the last deploy: %q; want v3", got)
	}

	// The version's document holds the code and definition, no secret.
	doc, _ := versionDocument(t, e.admin, e.botID, vA)
	if code := str(t, doc, "bot", "code"); code != versionAJS {
		t.Fatalf("version document's code:\n%s\nwant\n%s", code, versionAJS)
	}
	raw, _ := json.Marshal(doc)
	if strings.Contains(string(raw), "s3cret-value-42") || strings.Contains(string(raw), "API_TOKEN") {
		t.Fatalf("the version document carries a secret: %s", raw)
	}

	u := e.user("versions-user")
	c := e.conversation(u, "versions-conv")
	if got := textOf(e.ask(u, c, "one")); got != "B: one" {
		t.Fatalf("before the rollback: %q", got)
	}
	e.admin.post("/v1/admin/bots/"+e.botID+"/versions/deploy", map[string]any{"versionId": vA}).ok()
	bot := field(t, e.admin.get("/v1/admin/bots/"+e.botID).ok(), "bot").(map[string]any)
	if got := field(t, bot, "secrets"); len(got.([]any)) != 1 {
		t.Errorf("after the rollback the bot's secrets are %v; want API_TOKEN kept", got)
	}
	if got := textOf(e.ask(u, c, "two")); got != "A: two" {
		t.Fatalf("after deploying the first version: %q", got)
	}
	vs = versionsOf(e.admin, e.botID)
	if got := strings.Join(names(vs), ","); got != "v3,v2,v1" {
		t.Fatalf("deploying a version recorded another: %s", got)
	}
	if got := currentOf(vs); got != "v2" {
		t.Fatalf("current versions after deploying v2: %q; want v2", got)
	}

	// An event running while another version is deployed finishes on its
	// own code; the next one runs the new version.
	e.send(u, c, "wait")
	e.waitReplies(u, c, 3) // "A waits": the event runs
	e.admin.post("/v1/admin/bots/"+e.botID+"/versions/deploy", map[string]any{"versionId": vB}).ok()
	e.send(u, c, "go")
	got := texts(e.waitReplies(u, c, 5))
	want := []string{"B: one", "A: two", "A waits", "A finished", "B: go"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("bot replies %q; want %q", got, want)
	}
}

func testBotVersionsAPI(t *testing.T, s *testServer) {
	adm := s.newWorkspace(t, "versions "+t.Name())
	bot := adm.createBot(map[string]any{"name": "versioned"})
	id := str(t, bot, "id")
	base := "/v1/admin/bots/" + id + "/versions"

	// createBotVersion records the bot as it stands, under a name.
	v := field(t, adm.post(base, map[string]any{"name": "release-1", "description": "the first"}).ok(), "version").(map[string]any)
	if v["name"] != "release-1" || v["description"] != "the first" || v["id"] == "" {
		t.Fatalf("createBotVersion: %v", v)
	}
	// Only what the bot runs makes a version: a secret alone does not.
	adm.put("/v1/admin/bots/"+id, map[string]any{"secrets": map[string]any{"K": "v"}}).ok()
	if got := strings.Join(names(versionsOf(adm, id)), ","); got != "release-1,v1" {
		t.Fatalf("versions after a secret changed: %s", got)
	}
	adm.put("/v1/admin/bots/"+id, map[string]any{"name": "renamed"}).ok()
	vs := versionsOf(adm, id)
	if got := strings.Join(names(vs), ","); got != "v3,release-1,v1" {
		t.Fatalf("versions after a rename: %s", got)
	}
	if vs[0]["createdBy"] == "" || vs[0]["createdAt"] == "" {
		t.Errorf("a version without who or when: %v", vs[0])
	}

	// Deploying the first version puts the first name back.
	adm.post(base+"/deploy", map[string]any{"versionId": str(t, vs[2], "id")}).ok()
	if got := str(t, adm.get("/v1/admin/bots/"+id).ok(), "bot", "name"); got != "versioned" {
		t.Fatalf("name after deploying v1: %q", got)
	}

	// The audit log has the version recorded and the rollback.
	recs, _ := auditRecords(t, adm, 10)
	if len(recs) < 2 || recs[0]["action"] != "DEPLOY_BOT" || recs[0]["value"] != "version rollback to v1 ("+str(t, vs[2], "id")+")" ||
		recs[0]["resourceId"] != id {
		t.Errorf("the audit record of a rollback: %v", recs[0:min(1, len(recs))])
	}
	found := false
	for _, r := range recs {
		found = found || (r["action"] == "UNKNOWN" && r["value"] == "CREATE_BOT_VERSION: version release-1")
	}
	if !found {
		t.Errorf("no audit record of createBotVersion among %v", recs)
	}

	// Bad input: a clear error naming the field or the id; nothing changes.
	adm.post(base, map[string]any{}).fail(400, "InvalidPayload", "name")
	adm.post(base, map[string]any{"name": " "}).fail(400, "InvalidPayload", "name")
	adm.post(base, map[string]any{"name": "x", "description": strings.Repeat("d", 2001)}).fail(400, "InvalidPayload", "description")
	adm.post(base+"/deploy", map[string]any{}).fail(400, "InvalidPayload", "versionId")
	adm.post(base+"/deploy", map[string]any{"versionId": "botver_unknown"}).fail(404, "ResourceNotFound", "botver_unknown")
	adm.get(base+"/botver_unknown").fail(404, "ResourceNotFound", "botver_unknown")
	adm.get("/v1/admin/bots/bot_unknown/versions").fail(404, "ResourceNotFound", "bot_unknown")
	other := str(t, adm.createBot(map[string]any{"name": "other"}), "id")
	adm.post("/v1/admin/bots/"+other+"/versions/deploy", map[string]any{"versionId": str(t, vs[0], "id")}).
		fail(404, "ResourceNotFound", str(t, vs[0], "id"))
	if got := strings.Join(names(versionsOf(adm, id)), ","); got != "v3,release-1,v1" {
		t.Fatalf("versions after refused requests: %s", got)
	}

	// A viewer may read versions, not record or deploy them.
	viewer, _ := adm.addMember("viewer")
	if len(versionsOf(viewer, id)) != 3 {
		t.Fatal("a viewer cannot list versions")
	}
	viewer.post(base, map[string]any{"name": "mine"}).fail(403, "Forbidden", "developer")
	viewer.post(base+"/deploy", map[string]any{"versionId": str(t, vs[0], "id")}).fail(403, "Forbidden", "developer")

	// The signed url works without credentials, and only as signed.
	doc, signed := versionDocument(t, adm, id, str(t, vs[0], "id"))
	if doc["name"] != "v3" || str(t, doc, "bot", "name") != "renamed" || doc["botId"] != id {
		t.Fatalf("version document: %v", doc)
	}
	pu, _ := url.Parse(signed)
	for name, mutate := range map[string]func(q url.Values){
		"signature changed": func(q url.Values) { q.Set("signature", strings.Repeat("0", 64)) },
		"expiry extended":   func(q url.Values) { q.Set("expires", q.Get("expires")+"0") },
		"no signature":      func(q url.Values) { q.Del("signature") },
	} {
		bad := *pu
		q := bad.Query()
		mutate(q)
		bad.RawQuery = q.Encode()
		resp, err := http.Get(bad.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"type":"Forbidden"`) {
			t.Errorf("%s: %d %s; want 403 Forbidden", name, resp.StatusCode, body)
		}
	}

	// Only the newest versions are kept (--bot-versions-keep 5).
	for i := range 4 {
		adm.put("/v1/admin/bots/"+id, map[string]any{"description": "change " + string(rune('a'+i))}).ok()
	}
	vs = versionsOf(adm, id)
	if got := strings.Join(names(vs), ","); got != "v7,v6,v5,v4,v3" {
		t.Fatalf("versions kept: %s; want the newest 5", got)
	}

	// A deleted bot's versions go with it.
	adm.del("/v1/admin/bots/" + id).ok()
	adm.get(base+"/"+str(t, vs[0], "id")).fail(404, "ResourceNotFound")
	resp, err := http.Get(signed)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted bot's version url: %d; want 404", resp.StatusCode)
	}
}
