package main

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// listBotsResponse is the body of GET /v1/admin/bots.
type listBotsResponse struct {
	Bots []struct {
		ID        string            `json:"id"`
		Name      string            `json:"name"`
		CreatedAt string            `json:"createdAt"`
		UpdatedAt string            `json:"updatedAt"`
		Tags      map[string]string `json:"tags"`
		Type      string            `json:"type"`
	} `json:"bots"`
	Meta *struct {
		NextToken string `json:"nextToken"`
	} `json:"meta"`
}

func (c client) listBots(query string) listBotsResponse {
	c.t.Helper()
	var r listBotsResponse
	c.get("/v1/admin/bots" + query).decode(&r)
	if r.Meta == nil || r.Bots == nil {
		c.t.Fatalf("listBots%s: want bots and meta", query)
	}
	return r
}

func (r listBotsResponse) ids() []string {
	out := make([]string, len(r.Bots))
	for i, b := range r.Bots {
		out[i] = b.ID
	}
	return out
}

func testBots(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "bots")
	if s.Boot.ChatURL != s.URL+"/chat" || s.Boot.APIURL != s.URL {
		t.Errorf("bootstrap.json apiUrl %q chatUrl %q, want %s and %s/chat", s.Boot.APIURL, s.Boot.ChatURL, s.URL, s.URL)
	}
	const secretValue = "s3cr3t-value-never-shown"
	r := c.post("/v1/admin/bots", map[string]any{
		"name": "Support bot", "description": "answers", "tags": map[string]any{"env": "prod", "team": "a"},
		"secrets": map[string]any{"API_KEY": secretValue, "B_KEY": "x"}, "code": "bot.on.message(() => {})",
	})
	bot := field(t, r.ok(), "bot").(map[string]any)
	id := str(t, bot, "id")
	if !strings.HasPrefix(id, "bot_") || bot["name"] != "Support bot" || bot["dev"] != false || bot["type"] != "studio" {
		t.Errorf("createBot: %v", bot)
	}
	signing := str(t, bot, "signingSecret")
	str(t, bot, "deployedAt") // code was given
	if !reflect.DeepEqual(bot["secrets"], []any{"API_KEY", "B_KEY"}) || strings.Contains(string(r.Body), secretValue) {
		t.Errorf("secrets must be listed by name only: %v", bot["secrets"])
	}
	if _, ok := bot["url"]; ok {
		t.Errorf("the Bot object has no url field: %v", bot["url"])
	}
	if !reflect.DeepEqual(bot["tags"], map[string]any{"env": "prod", "team": "a"}) {
		t.Errorf("tags: %v", bot["tags"])
	}
	webhookID := str(t, bot, "integrations", "chat", "webhookId")
	if got := str(t, bot, "integrations", "chat", "webhookUrl"); got != s.Boot.ChatURL+"/"+webhookID {
		t.Errorf("webhookUrl %q, want chatUrl/webhookId = %s/%s", got, s.Boot.ChatURL, webhookID)
	}
	encKey := str(t, bot, "integrations", "chat", "configuration", "encryptionKey")
	if field(t, bot, "integrations", "chat", "enabled") != true {
		t.Errorf("chat integration not enabled: %v", bot["integrations"])
	}

	got := c.get("/v1/admin/bots/" + id)
	if strings.Contains(string(got.Body), secretValue) {
		t.Error("getBot shows a secret's value")
	}
	g := field(t, got.ok(), "bot")
	if str(t, g, "signingSecret") != signing || str(t, g, "integrations", "chat", "webhookId") != webhookID ||
		str(t, g, "integrations", "chat", "configuration", "encryptionKey") != encKey {
		t.Errorf("getBot differs from createBot: %v", g)
	}

	// Without code, no deployedAt; code sets it.
	draft := c.createBot(map[string]any{"name": "Draft"})
	if _, ok := draft["deployedAt"]; ok {
		t.Errorf("a bot without code has deployedAt %v", draft["deployedAt"])
	}
	draftID := str(t, draft, "id")
	str(t, c.put("/v1/admin/bots/"+draftID, map[string]any{"code": "x"}).ok(), "bot", "deployedAt")
	if str(t, c.createBot(nil), "name") == "" {
		t.Error("a bot created from {} has no name")
	}

	update := func(body map[string]any) map[string]any {
		t.Helper()
		return field(t, c.put("/v1/admin/bots/"+id, body).ok(), "bot").(map[string]any)
	}
	u := update(map[string]any{"tags": map[string]any{"env": nil, "team": "b", "new": "x"}, "secrets": map[string]any{"API_KEY": nil}})
	if !reflect.DeepEqual(u["tags"], map[string]any{"team": "b", "new": "x"}) || !reflect.DeepEqual(u["secrets"], []any{"B_KEY"}) {
		t.Errorf("after tags {env:null} and secrets {API_KEY:null}: tags %v secrets %v", u["tags"], u["secrets"])
	}
	// A secret's name becomes part of an SDK bot's environment variable
	// (SECRET_<name>): a name that cannot be one is refused, naming it.
	for _, name := range []string{"A=B", "", "1ST", "has space"} {
		msg := c.put("/v1/admin/bots/"+id, map[string]any{"secrets": map[string]any{name: "v"}}).fail(http.StatusBadRequest, "InvalidPayload", "secrets")
		if !strings.Contains(msg, strconv.Quote(name)) {
			t.Errorf("secret named %q: the error %q does not name it", name, msg)
		}
	}
	if got := field(t, c.get("/v1/admin/bots/"+id).ok(), "bot", "secrets"); !reflect.DeepEqual(got, []any{"B_KEY"}) {
		t.Errorf("after refused secret names, secrets are %v; want [B_KEY]", got)
	}
	key := strings.Repeat("k", 32)
	u = update(map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"encryptionKey": key}}}})
	if str(t, u, "integrations", "chat", "configuration", "encryptionKey") != key || str(t, u, "integrations", "chat", "webhookId") != webhookID {
		t.Errorf("encryptionKey not set: %v", u["integrations"])
	}
	// null, as @botpress/cli sends for every integration a bot does not
	// declare, keeps the built-in chat integration and removes nothing.
	u = update(map[string]any{"integrations": map[string]any{"chat": nil, "telegram": nil}})
	if str(t, u, "integrations", "chat", "webhookId") != webhookID || str(t, u, "integrations", "chat", "configuration", "encryptionKey") != key ||
		field(t, u, "integrations", "chat", "enabled") != true || len(u["integrations"].(map[string]any)) != 1 {
		t.Errorf("after integrations {chat: null, telegram: null}: %v", u["integrations"])
	}
	path := "/v1/admin/bots/" + id
	c.put(path, map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"encryptionKey": "short"}}}}).
		fail(400, "InvalidPayload", "integrations.chat.configuration.encryptionKey")
	c.put(path, map[string]any{"integrations": map[string]any{"slack": map[string]any{"enabled": true}}}).fail(400, "ReferenceNotFound", "slack")
	c.put(path, map[string]any{"dev": true}).fail(400, "InvalidPayload", "dev")
	c.put(path, map[string]any{"name": ""}).fail(400, "InvalidPayload", "name")
	c.put(path, map[string]any{"maxExecutionTime": 0}).fail(400, "InvalidPayload", "maxExecutionTime")
	g = field(t, c.get(path).ok(), "bot")
	if str(t, g, "integrations", "chat", "configuration", "encryptionKey") != key || g.(map[string]any)["dev"] != false || g.(map[string]any)["name"] != "Support bot" {
		t.Errorf("failed updates changed the bot: %v", g)
	}

	rot := c.post(path+"/signing-secrets/rotate", "{}").ok()
	fresh := str(t, rot, "newSigningSecret")
	if fresh == signing {
		t.Error("rotate kept the signing secret")
	}
	if str(t, c.get(path).ok(), "bot", "signingSecret") != fresh {
		t.Error("getBot does not show the rotated signing secret")
	}

	if m := c.del(path).ok(); len(m) != 0 {
		t.Errorf("deleteBot returned %v, want {}", m)
	}
	c.get(path).fail(404, "ResourceNotFound")
	c.put(path, map[string]any{"name": "ghost"}).fail(404, "ResourceNotFound")
	c.del(path).fail(404, "ResourceNotFound")
	c.post(path+"/signing-secrets/rotate", "{}").fail(404, "ResourceNotFound")
}

// testListBotsPagination pages through 45 bots 20 at a time while bots are
// created and deleted between pages: every bot that exists throughout must
// appear exactly once.
func testListBotsPagination(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "pagination")
	var initial []string
	known := map[string]bool{}
	create := func(name string, dev bool) string {
		id := str(t, c.createBot(map[string]any{"name": name, "dev": dev}), "id")
		known[id] = true
		return id
	}
	for i := range 45 {
		initial = append(initial, create(fmt.Sprintf("bot-%02d", i), false))
	}
	devBot := create("dev-bot", true)
	deleted := map[string]bool{}
	remove := func(id string) {
		c.del("/v1/admin/bots/" + id).ok()
		deleted[id] = true
	}

	seen := map[string]int{}
	next := ""
	for page := 1; ; page++ {
		q := "?pageSize=20"
		if next != "" {
			q += "&nextToken=" + url.QueryEscape(next)
		}
		r := c.listBots(q)
		if len(r.Bots) > 20 {
			t.Fatalf("page %d has %d bots, want at most 20", page, len(r.Bots))
		}
		for _, b := range r.Bots {
			seen[b.ID]++
		}
		if next = r.Meta.NextToken; next == "" {
			break
		}
		if page > 10 {
			t.Fatal("nextToken never ends")
		}
		switch page { // change the listing between pages
		case 1:
			remove(initial[0])  // already seen
			remove(initial[25]) // not yet seen
			remove(initial[44]) // the last one
			create("new-1", false)
			create("new-2", false)
			create("new-dev", true)
		case 2:
			remove(initial[5])
			remove(initial[42])
			create("new-3", false)
		}
	}
	for _, id := range initial {
		if !deleted[id] && seen[id] != 1 {
			t.Errorf("bot %s, present throughout, was listed %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 || !known[id] {
			t.Errorf("bot %s listed %d times (known %v)", id, n, known[id])
		}
	}
	if seen[devBot] != 0 {
		t.Error("the production listing shows a dev bot")
	}
}

func testListBotsSort(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "sort")
	var ids []string
	for i := range 5 {
		ids = append(ids, str(t, c.createBot(map[string]any{"name": fmt.Sprintf("s%d", i)}), "id"))
	}
	// Touch 2 then 0: updatedAt order becomes 1, 3, 4, 2, 0.
	c.put("/v1/admin/bots/"+ids[2], map[string]any{"description": "touched"}).ok()
	c.put("/v1/admin/bots/"+ids[0], map[string]any{"description": "touched"}).ok()
	reverse := func(in []string) []string {
		out := make([]string, len(in))
		for i, v := range in {
			out[len(in)-1-i] = v
		}
		return out
	}
	byUpdate := []string{ids[1], ids[3], ids[4], ids[2], ids[0]}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"sortField=createdAt&sortDirection=asc", ids},
		{"sortField=createdAt&sortDirection=desc", reverse(ids)},
		{"sortField=updatedAt&sortDirection=asc", byUpdate},
		{"sortField=updatedAt&sortDirection=desc", reverse(byUpdate)},
	} {
		r := c.listBots("?" + tc.query)
		if got := r.ids(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
		stamp := func(i int) string {
			if strings.HasPrefix(tc.query, "sortField=updatedAt") {
				return r.Bots[i].UpdatedAt
			}
			return r.Bots[i].CreatedAt
		}
		for i := 1; i < len(r.Bots); i++ {
			if a, b := stamp(i-1), stamp(i); (a > b) != strings.HasSuffix(tc.query, "desc") && a != b {
				t.Errorf("%s: timestamps out of order at %d: %s then %s", tc.query, i, a, b)
			}
		}
		// The same order, two at a time.
		var paged []string
		next := ""
		for range 10 {
			p := c.listBots("?" + tc.query + "&pageSize=2&nextToken=" + url.QueryEscape(next))
			paged = append(paged, p.ids()...)
			if next = p.Meta.NextToken; next == "" {
				break
			}
		}
		if !reflect.DeepEqual(paged, tc.want) {
			t.Errorf("%s, pages of 2: %v, want %v", tc.query, paged, tc.want)
		}
	}
}

func testListBotsFilters(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "filters")
	mk := func(name string, dev bool, tags map[string]any) string {
		body := map[string]any{"name": name, "dev": dev}
		if tags != nil {
			body["tags"] = tags
		}
		return str(t, c.createBot(body), "id")
	}
	a := mk("a", false, map[string]any{"env": "prod", "team": "a"})
	b := mk("b", false, map[string]any{"env": "prod", "team": "b"})
	st := mk("staging", false, map[string]any{"env": "staging"})
	plain := mk("plain", false, nil)
	devA := mk("dev-a", true, map[string]any{"env": "prod"})
	devB := mk("dev-b", true, nil)
	sorted := func(ids ...string) []string {
		out := append([]string{}, ids...)
		sort.Strings(out)
		if out == nil {
			out = []string{}
		}
		return out
	}
	jsonTags := func(j string) string { return "tags=" + url.QueryEscape(j) }
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", sorted(a, b, st, plain)},
		{"dev=false", sorted(a, b, st, plain)},
		{"dev=true", sorted(devA, devB)},
		{"tags.env=prod", sorted(a, b)},
		{"tags.env=prod&tags.team=b", sorted(b)},
		{"tags.env=prod&tags.env=staging", sorted(a, b, st)},
		{"tags.env=prod&dev=true", sorted(devA)},
		{"tags.env=nope", sorted()},
		{"tags.missing=prod", sorted()},
		{jsonTags(`{"env":"prod"}`), sorted(a, b)},
		{jsonTags(`{"env":"prod","team":"a"}`), sorted(a)},
		{jsonTags(`{"env":["prod","staging"]}`), sorted(a, b, st)},
		{jsonTags(`{"team":"b"}`) + "&dev=true", sorted()},
		{"integrationNames=chat", sorted(a, b, st, plain)},
		{"integrationNames=slack", sorted()},
		{"pluginNames=anything", sorted()},
	} {
		r := c.listBots("?" + tc.query)
		if got := sorted(r.ids()...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("listBots?%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	// List items carry tags and no secrets.
	item := c.get("/v1/admin/bots?tags.team=a").ok()["bots"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(item["tags"], map[string]any{"env": "prod", "team": "a"}) || item["signingSecret"] != nil {
		t.Errorf("list item: %v", item)
	}
	for _, k := range []string{"id", "createdAt", "updatedAt", "name", "type"} {
		str(t, item, k)
	}
}

func testCrossWorkspaceBots(t *testing.T, s *testServer) {
	mine := s.newWorkspace(t, "mine")
	theirs := s.newWorkspace(t, "theirs") // the owner is a member of both
	name := "theirs-secret-name-" + strings.TrimSuffix(uniqueEmail("n"), "@example.com")
	bot := theirs.createBot(map[string]any{"name": name})
	id := str(t, bot, "id")
	path := "/v1/admin/bots/" + id
	for _, r := range []*response{
		mine.get(path),
		mine.put(path, map[string]any{"name": "hijacked"}),
		mine.del(path),
		mine.post(path+"/signing-secrets/rotate", "{}"),
		mine.get(path + "/logs?timeStart=2020-01-01T00:00:00Z"),
	} {
		r.fail(404, "ResourceNotFound")
		if strings.Contains(string(r.Body), name) {
			t.Errorf("%s: the 404 reveals the bot's name: %s", r.what, r.Body)
		}
	}
	g := field(t, theirs.get(path).ok(), "bot").(map[string]any)
	if g["name"] != name || g["signingSecret"] != bot["signingSecret"] {
		t.Errorf("the other workspace's bot changed: %v", g)
	}
	if ids := mine.listBots("").ids(); len(ids) != 0 {
		t.Errorf("listBots shows another workspace's bots: %v", ids)
	}
	// A member of mine only cannot switch to theirs.
	dev, _ := mine.addMember("developer")
	dev.in(theirs.ws).get(path).fail(401, "Unauthorized")
	dev.get(path).fail(404, "ResourceNotFound")
}

func testBotKeys(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "keys")
	bot := str(t, c.createBot(map[string]any{"name": "keyed"}), "id")
	k := c.post("/v1/admin/bots/baks", map[string]any{"botId": bot, "note": "ci key"}).ok()
	if keys := sortedKeys(k); !reflect.DeepEqual(keys, []string{"createdAt", "id", "note", "value"}) {
		t.Fatalf("createBotApiKey returned %v, want a flat {id,createdAt,note,value}", k)
	}
	id, value := str(t, k, "id"), str(t, k, "value")
	if !strings.HasPrefix(id, "bak_") || !strings.HasPrefix(value, "bp_bak_") || k["note"] != "ci key" {
		t.Errorf("createBotApiKey: %v", k)
	}
	second := str(t, c.post("/v1/admin/bots/baks", map[string]any{"botId": bot}).ok(), "id")

	list := func(c client, botID string) []map[string]any {
		t.Helper()
		r := c.get("/v1/admin/bots/baks?botId=" + url.QueryEscape(botID))
		if strings.Contains(string(r.Body), "bp_bak_") {
			t.Errorf("listBotApiKeys shows a key value: %s", r.Body)
		}
		var out struct {
			Baks []map[string]any `json:"baks"`
		}
		r.decode(&out)
		if out.Baks == nil {
			t.Fatal("listBotApiKeys: no baks array")
		}
		return out.Baks
	}
	ks := list(c, bot)
	if len(ks) != 2 {
		t.Fatalf("listBotApiKeys: %v, want 2 keys", ks)
	}
	for _, key := range ks {
		if _, ok := key["value"]; ok {
			t.Errorf("listed key has a value: %v", key)
		}
		if key["id"] == id && key["note"] != "ci key" {
			t.Errorf("listed key %v, want note ci key", key)
		}
	}
	c.get("/v1/admin/bots/baks").fail(400, "InvalidQuery", "botId")
	c.post("/v1/admin/bots/baks", map[string]any{"note": "x"}).fail(400, "InvalidPayload", "botId")
	c.post("/v1/admin/bots/baks", map[string]any{"botId": "bot_nope"}).fail(404, "ResourceNotFound")
	c.get("/v1/admin/bots/baks?botId=bot_nope").fail(404, "ResourceNotFound")
	s.as(t, value, c.ws).get("/v1/admin/bots").fail(401, "Unauthorized") // a bot key is not a PAT

	viewer, _ := c.addMember("viewer")
	viewer.post("/v1/admin/bots/baks", map[string]any{"botId": bot}).fail(403, "Forbidden")
	viewer.del("/v1/admin/bots/baks/"+id).fail(403, "Forbidden")

	if m := c.del("/v1/admin/bots/baks/" + id).ok(); len(m) != 0 {
		t.Errorf("deleteBotApiKey returned %v, want {}", m)
	}
	if ks := list(c, bot); len(ks) != 1 || ks[0]["id"] != second {
		t.Errorf("after delete: %v, want only %s", ks, second)
	}
	c.del("/v1/admin/bots/baks/"+id).fail(404, "ResourceNotFound")

	// Keys of another workspace's bot are out of reach.
	other := s.newWorkspace(t, "keys-other")
	otherBot := str(t, other.createBot(map[string]any{"name": "theirs"}), "id")
	otherKey := str(t, other.post("/v1/admin/bots/baks", map[string]any{"botId": otherBot}).ok(), "id")
	c.post("/v1/admin/bots/baks", map[string]any{"botId": otherBot}).fail(404, "ResourceNotFound")
	c.get("/v1/admin/bots/baks?botId="+otherBot).fail(404, "ResourceNotFound")
	c.del("/v1/admin/bots/baks/"+otherKey).fail(404, "ResourceNotFound")
	if ks := list(other, otherBot); len(ks) != 1 || ks[0]["id"] != otherKey {
		t.Errorf("the other workspace's keys changed: %v", ks)
	}
}

func testBotLogs(t *testing.T, s *testServer) {
	c := s.newWorkspace(t, "logs")
	path := "/v1/admin/bots/" + str(t, c.createBot(map[string]any{"name": "logged"}), "id") + "/logs"
	c.get(path).fail(400, "InvalidQuery", "timeStart")
	c.get(path+"?timeStart=yesterday").fail(400, "InvalidQuery", "timeStart")
	c.get(path+"?timeStart=2020-01-01T00:00:00Z&timeEnd=2019-01-01T00:00:00Z").fail(400, "InvalidQuery", "timeEnd")
	r := c.get(path + "?timeStart=2020-01-01T00:00:00Z")
	m := r.ok()
	if keys := sortedKeys(m); !reflect.DeepEqual(keys, []string{"logs"}) || !reflect.DeepEqual(m["logs"], []any{}) {
		t.Errorf("getBotLogs: %s, want {\"logs\":[]}", r.Body)
	}
	c.get("/v1/admin/bots/bot_nope/logs?timeStart=2020-01-01T00:00:00Z").fail(404, "ResourceNotFound")
}
