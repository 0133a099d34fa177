package main

// Files API end-to-end: who may see and change which files (tokens, bot
// API keys, roles, other bots and workspaces, integrations).

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func testFilesAccess(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "access")
	otherBot := e.newBot(t, "access-other")
	f := e.f
	file := f.create(s, "mine.txt", []byte("mine"), nil)
	notFound := func(c filesClient, what string) {
		t.Helper()
		c.get(file.ID).fail(404, "ResourceNotFound")
		c.update(file.ID, map[string]any{"tags": map[string]any{"x": "y"}}).fail(404, "ResourceNotFound")
		c.del(file.ID).fail(404, "ResourceNotFound")
		c.copy(file.ID, "stolen.txt", nil).fail(404, "ResourceNotFound")
		for _, x := range c.list("").Files {
			if x.ID == file.ID {
				t.Errorf("%s lists the file", what)
			}
		}
		if l := c.list("?ids=" + file.ID); len(l.Files) != 0 {
			t.Errorf("%s lists the file by id: %v", what, keysOf(l.Files))
		}
	}
	// Another bot of the same workspace does not see the file.
	notFound(s.files(t, e.ws.token, otherBot), "another bot")

	// A bot of a workspace the account is not a member of is invisible.
	dev, _ := e.ws.addMember("developer")
	elsewhere := s.newWorkspace(t, "access-elsewhere")
	foreignBot := str(t, elsewhere.createBot(map[string]any{"name": "foreign"}), "id")
	foreign := s.files(t, dev.token, foreignBot)
	foreign.listRaw("").fail(404, "ResourceNotFound")
	foreign.upsert(map[string]any{"key": "x", "size": 1}).fail(404, "ResourceNotFound")
	foreign.get(file.ID).fail(404, "ResourceNotFound")
	s.files(t, dev.token, "bot_doesnotexist").listRaw("").fail(404, "ResourceNotFound")
	// The developer reaches the bot of its own workspace, and may write.
	devF := s.files(t, dev.token, e.bot)
	devF.getFile(file.ID)
	devF.mustUpsert(map[string]any{"key": "by-dev.txt", "size": 1})

	// A bot API key works for its bot only.
	key := str(t, e.ws.post("/v1/admin/bots/baks", map[string]any{"botId": e.bot}).ok(), "value")
	byKey := s.files(t, key, e.bot)
	if got := byKey.getFile(file.ID); got.ID != file.ID {
		t.Errorf("bot key getFile: %+v", got)
	}
	byKey.mustUpsert(map[string]any{"key": "by-key.txt", "size": 1})
	s.files(t, key, otherBot).listRaw("").fail(403, "Forbidden")
	s.files(t, key, otherBot).get(file.ID).fail(403, "Forbidden")
	s.files(t, key, foreignBot).upsert(map[string]any{"key": "x", "size": 1}).fail(403, "Forbidden")
	s.files(t, "bp_bak_"+strings.Repeat("z", 40), e.bot).listRaw("").fail(401, "Unauthorized")

	// A viewer reads but does not write.
	viewer, _ := e.ws.addMember("viewer")
	vf := s.files(t, viewer.token, e.bot)
	vf.readOnly = true
	if got := vf.getFile(file.ID); got.ID != file.ID {
		t.Errorf("viewer getFile: %+v", got)
	}
	if l := vf.list(""); len(l.Files) != 3 {
		t.Errorf("viewer lists %v", keysOf(l.Files))
	}
	vf.strList("/v1/files/tags", "tags", 10)
	vf.upsert(map[string]any{"key": "v.txt", "size": 1}).fail(403, "Forbidden")
	vf.update(file.ID, map[string]any{"tags": map[string]any{"x": "y"}}).fail(403, "Forbidden")
	vf.del(file.ID).fail(403, "Forbidden")
	vf.copy(file.ID, "v-copy.txt", nil).fail(403, "Forbidden")
	if got := f.getFile(file.ID); len(got.Tags) != 0 {
		t.Errorf("the viewer's update went through: %v", got.Tags)
	}

	// Credentials and context headers.
	s.files(t, "", e.bot).listRaw("").fail(401, "Unauthorized")
	s.files(t, "", e.bot).upsert(map[string]any{"key": "x", "size": 1}).fail(401, "Unauthorized")
	s.files(t, "garbage", e.bot).listRaw("").fail(401, "Unauthorized")
	s.files(t, "bp_pat_"+strings.Repeat("x", 40), e.bot).get(file.ID).fail(401, "Unauthorized")
	f.with("Authorization", "Basic "+e.ws.token).listRaw("").fail(401, "Unauthorized")
	s.files(t, e.ws.token, "").listRaw("").fail(400, "InvalidPayload", "x-bot-id")
	s.files(t, e.ws.token, "").upsert(map[string]any{"key": "x", "size": 1}).fail(400, "InvalidPayload", "x-bot-id")
	// A deleted bot takes its files with it.
	gone := e.newBot(t, "access-gone")
	gf := s.files(t, e.ws.token, gone)
	gfile := gf.mustUpsert(map[string]any{"key": "g.txt", "size": 1})
	e.ws.del("/v1/admin/bots/" + gone).ok()
	gf.get(gfile.ID).fail(404, "ResourceNotFound")
	// Unknown files and routes.
	f.get("file_doesnotexist").fail(404, "ResourceNotFound")
	f.del("file_doesnotexist").fail(404, "ResourceNotFound")
	f.update("file_doesnotexist", map[string]any{}).fail(404, "ResourceNotFound")
	f.do(http.MethodPatch, "/v1/files/"+file.ID, "{}").fail(405, "MethodNotFound")
}

func testFilesIntegrations(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "integrations")
	bot := e.f
	shared := bot.create(s, "shared.txt", []byte("shared"), map[string]any{"accessPolicies": []any{"integrations"}, "tags": map[string]any{"kind": "shared"}})
	private := bot.create(s, "private.txt", []byte("private"), map[string]any{"tags": map[string]any{"kind": "private"}})
	i1 := bot.with("x-integration-id", "intver_1", "x-integration-name", "slack", "x-integration-alias", "slack")
	i2 := bot.with("x-integration-id", "intver_2", "x-integration-name", "teams", "x-integration-alias", "teams")
	own := i1.create(s, "private.txt", []byte("integration's"), map[string]any{"tags": map[string]any{"kind": "i1"}})
	if own.ID == private.ID {
		t.Fatal("the integration's key overwrote the bot's file")
	}
	if got := sortedKeysOf(i1.list("").Files); !reflect.DeepEqual(got, []string{"private.txt", "shared.txt"}) {
		t.Errorf("integration 1 lists %v, want its own file and the shared one", got)
	}
	for _, x := range i1.list("").Files {
		if x.ID == private.ID {
			t.Errorf("integration 1 lists the bot's private file")
		}
	}
	if got := keysOf(i2.list("").Files); !reflect.DeepEqual(got, []string{"shared.txt"}) {
		t.Errorf("integration 2 lists %v, want only the shared file", got)
	}
	if got := i2.list("?ids=" + own.ID + "&ids=" + private.ID); len(got.Files) != 0 {
		t.Errorf("integration 2 lists others' files by id: %v", keysOf(got.Files))
	}
	i1.getFile(shared.ID)
	if r := s.fetch(t, i1.getFile(shared.ID).URL); string(r.Body) != "shared" {
		t.Errorf("shared content through integration 1: %q", r.Body)
	}
	for _, c := range []filesClient{i1, i2} {
		c.get(private.ID).fail(404, "ResourceNotFound")
		c.update(private.ID, map[string]any{"tags": map[string]any{"x": "y"}}).fail(404, "ResourceNotFound")
		c.del(private.ID).fail(404, "ResourceNotFound")
		c.copy(private.ID, "leak.txt", nil).fail(404, "ResourceNotFound")
	}
	i2.get(own.ID).fail(404, "ResourceNotFound")
	i2.del(own.ID).fail(404, "ResourceNotFound")
	// "integrations" grants read, search and list (spec 4.1), not changes.
	sharedUpdate := i2.update(shared.ID, map[string]any{"tags": map[string]any{"kind": "hijacked"}})
	if sharedUpdate.Status == 200 {
		t.Errorf("an integration changed a bot's shared file")
	} else {
		sharedUpdate.fail(403, "Forbidden")
	}
	if r := i2.del(shared.ID); r.Status == 200 {
		t.Errorf("an integration deleted a bot's shared file")
	} else {
		r.fail(403, "Forbidden")
	}
	if got := bot.getFile(shared.ID); got.Tags["kind"] != "shared" {
		t.Errorf("shared file changed: %v", got.Tags)
	}
	// The bot sees every file, its integrations' too.
	if got := sortedKeysOf(bot.list("").Files); !reflect.DeepEqual(got, []string{"private.txt", "private.txt", "shared.txt"}) {
		t.Errorf("the bot lists %v", got)
	}
	if got := bot.getFile(own.ID); got.Owner["type"] != "integration" || got.Owner["name"] != "slack" {
		t.Errorf("bot's view of the integration's file: owner %v", got.Owner)
	}
	// Tags follow visibility.
	if got := i2.strList("/v1/files/tags/kind/values", "values", 10); !reflect.DeepEqual(got, []string{"shared"}) {
		t.Errorf("integration 2 tag values %v, want [shared]", got)
	}
	if got := i1.strList("/v1/files/tags/kind/values", "values", 10); !reflect.DeepEqual(got, []string{"i1", "shared"}) {
		t.Errorf("integration 1 tag values %v, want [i1 shared]", got)
	}
	if got := bot.strList("/v1/files/tags/kind/values", "values", 10); !reflect.DeepEqual(got, []string{"i1", "private", "shared"}) {
		t.Errorf("bot tag values %v", got)
	}
	// The integration manages its own file.
	i1.update(own.ID, map[string]any{"tags": map[string]any{"kind": "i1b"}}).file()
	i1.del(own.ID).ok()
	bot.get(own.ID).fail(404, "ResourceNotFound")
}
