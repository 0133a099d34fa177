package main

// End-to-end tests of moving a bot (docs/data.md, "Moving a bot"): a bot
// filled on a SQLite server is exported, imported into a PostgreSQL server,
// and everything the public APIs show of it is compared; importing again
// adds nothing; a bot goes back the other way; damaged archives are
// refused before anything is written.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archiveJS answers every message, keeps event.state and Runtime API
// states of three kinds.
const archiveJS = `bot.on.message('*', async ({ message, client, state, event }) => {
  state.user.seen = (state.user.seen || 0) + 1
  state.conversation.n = (state.conversation.n || 0) + 1
  await client.setState({ type: 'user', id: event.userId, name: 'profile', payload: { last: message.payload.text } })
  await client.setState({ type: 'conversation', id: message.conversationId, name: 'topic', payload: { n: state.conversation.n } })
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'echo ' + message.payload.text } })
})`

func TestBotArchive(t *testing.T) {
	t.Parallel()
	src := startBackendWith(t, "sqlite", runtimeFlags...)
	dst := startBackendWith(t, "postgres", runtimeFlags...)
	e, users, convs := fillArchiveBot(t, src, "to postgres")
	want := botSnapshot(t, src, e.admin, e.botID, users)
	for section, part := range map[string]string{"messages of " + convs[0]: "echo " + users[0].ID + " says 1", "files": "Sale items",
		"export of " + users[0].ID: `"codeStates":[{`, "versions": archiveJS[:20], "bot": "support"} {
		if !strings.Contains(want[section], part) {
			t.Fatalf("the bot's %s lack %q (the comparison would miss it): %s", section, part, want[section])
		}
	}
	if os.Getenv("BOTARCHIVE_SHOW") != "" {
		t.Logf("%v", want)
	}

	file := filepath.Join(t.TempDir(), "bot.tar.gz")
	out := e.admin.cliOK("bots", "export", e.botID, "-o", file)
	if !strings.Contains(out, "exported bot") || !strings.Contains(out, "3 users") { // the two people, and the user the bot speaks as
		t.Errorf("bots export: %q", out)
	}
	noSecrets(t, file)
	if recs, _ := auditRecords(t, e.admin, 50); len(recs) == 0 || recs[0]["action"] != "DOWNLOAD_BOT_ARCHIVE" || recs[0]["resourceId"] != e.botID {
		t.Errorf("the newest audit record after the export: %v", recs[:min(1, len(recs))])
	}

	// Into a PostgreSQL server's workspace: everything is there.
	adm := dst.newWorkspace(t, "import")
	res := importCLI(t, adm, file)
	if !res.Created || res.Added["messages"] == 0 || res.Added["passages"] == 0 || res.Added["contents"] != 3 {
		t.Fatalf("first import: %+v", res)
	}
	if recs, _ := auditRecords(t, adm, 50); len(recs) == 0 || recs[0]["action"] != "UNKNOWN" ||
		!strings.HasPrefix(fmt.Sprint(recs[0]["value"]), "IMPORT_BOT: from the archive of "+e.botID) || recs[0]["resourceId"] != res.BotID {
		t.Errorf("the newest audit record after the import: %v", recs[:min(1, len(recs))])
	}
	got := botSnapshot(t, dst, adm, res.BotID, users)
	compareSnapshots(t, "sqlite → postgres", want, got)
	bot := adm.get("/v1/admin/bots/" + res.BotID).ok()["bot"].(map[string]any)
	if secrets := fmt.Sprint(bot["secrets"]); secrets != "[]" {
		t.Errorf("imported without --secrets, the bot has secrets %s", secrets)
	}
	// The bot runs there: a user key signed with the new bot's encryption
	// key (the old one did not travel) reaches the same user.
	ne := chatEnvOf(t, dst, adm, bot)
	old := ne.call(http.MethodGet, "/users/me", users[0].Key, nil)
	if old.Status != http.StatusUnauthorized {
		t.Errorf("an old user key on the imported bot without secrets: %d, want 401", old.Status)
	}
	alice := chatUser{ID: users[0].ID, Key: ne.selfKey(users[0].ID)}
	replies := len(ne.fromBot(ne.messages(alice, convs[0])))
	ne.send(alice, convs[0], "after the move")
	ne.waitReplies(alice, convs[0], replies+1)

	// Again: nothing is added, nothing changes but the new messages.
	again := importCLI(t, adm, file)
	if again.Created || again.BotID != res.BotID {
		t.Errorf("second import: created %v, bot %s; want the first import's bot %s", again.Created, again.BotID, res.BotID)
	}
	for k, n := range again.Added {
		if n != 0 {
			t.Errorf("second import added %d %s, want none", n, k)
		}
	}
	if n := len(adm.get("/v1/admin/bots").ok()["bots"].([]any)); n != 1 {
		t.Errorf("%d bots in the workspace after two imports, want 1", n)
	}
	for _, u := range users[1:] { // bob's side is as it was
		compareSnapshots(t, "after a second import", want.only(u.ID), botSnapshot(t, dst, adm, res.BotID, users).only(u.ID))
	}

	// With its secrets (administrators only), the old user keys work.
	dev, _ := e.admin.addMember("developer")
	dev.raw(http.MethodPost, "/v1/admin/bots/"+e.botID+"/export?secrets=true", nil).fail(http.StatusForbidden, "Forbidden", "administrator")
	secret := filepath.Join(t.TempDir(), "secret.tar.gz")
	e.admin.cliOK("bots", "export", e.botID, "-o", secret, "--secrets")
	adm2 := dst.newWorkspace(t, "import with secrets")
	res2 := importCLI(t, adm2, secret, "--name", "moved")
	bot2 := adm2.get("/v1/admin/bots/" + res2.BotID).ok()["bot"].(map[string]any)
	if bot2["name"] != "moved" || fmt.Sprint(bot2["secrets"]) != "[API_KEY]" {
		t.Errorf("imported with secrets: name %v, secrets %v", bot2["name"], bot2["secrets"])
	}
	chatEnvOf(t, dst, adm2, bot2).call(http.MethodGet, "/users/me", users[0].Key, nil).status(200)

	// Back: the PostgreSQL bot, with the message sent there, into SQLite.
	back := filepath.Join(t.TempDir(), "back.tar.gz")
	adm.cliOK("bots", "export", res.BotID, "-o", back)
	home := src.newWorkspace(t, "back")
	res3 := importCLI(t, home, back)
	compareSnapshots(t, "postgres → sqlite", botSnapshot(t, dst, adm, res.BotID, users), botSnapshot(t, src, home, res3.BotID, users))

	testBadArchives(t, dst.newWorkspace(t, "bad"), file)
}

// fillArchiveBot makes a bot with two versions of code, a secret, files
// (indexed, tagged, with metadata) and two users in each other's
// conversations, answered by the bot.
func fillArchiveBot(t *testing.T, s *testServer, name string) (*chatEnv, []chatUser, []string) {
	e := newBotEnv(t, s, "bot.on.message('*', async () => {})", unlimited)
	e.deploy(archiveJS, map[string]any{"tags": map[string]any{"team": "support"}, "secrets": map[string]any{"API_KEY": "s3cret"},
		"configuration": map[string]any{"data": map[string]any{"greeting": "hi"}}})
	alice, bob := e.user("alice-"+strings.ReplaceAll(name, " ", "-")), e.user("bob")
	var convs []string
	for _, u := range []chatUser{alice, bob} {
		conv := e.conversation(u, "")
		convs = append(convs, conv)
		other := alice
		if u.ID == alice.ID {
			other = bob
		}
		e.addParticipant(u, conv, other)
		for i := range 2 {
			e.send(u, conv, fmt.Sprintf("%s says %d", u.ID, i))
			e.waitReplies(u, conv, i+1)
		}
	}
	e.admin.raw(http.MethodPost, "/v1/chat/states/bot/"+e.botID+"/settings", map[string]any{"payload": map[string]any{"mode": "calm"}}, "x-bot-id", e.botID).ok()
	f := s.files(t, e.admin.token, e.botID)
	f.index(s, "guide/returns.md", []byte("# Returns\n\n## Sale items\n\nSale items are final.\n\n## Refunds\n\nRefunds take five days."),
		map[string]any{"tags": map[string]any{"lang": "en"}, "metadata": map[string]any{"source": "handbook", "rev": 3}})
	f.index(s, "guide/shipping.txt", []byte("Shipping is free above fifty euros."), map[string]any{"tags": map[string]any{"lang": "en", "userId": alice.ID}})
	f.create(s, "raw/logo.bin", []byte{0, 1, 2, 3, 255}, map[string]any{"tags": map[string]any{"kind": "image"}})
	return e, []chatUser{alice, bob}, convs
}

// snapshot is what the public APIs show of a bot, by section, with the
// ids that an import changes (the bot's, messages', files', passages')
// replaced by their kind.
type snapshot map[string]string

var volatileIDs = regexp.MustCompile(`\b(bot|msg|file|botver|psg|passage|state|job)_[0-9a-z]{26}\b`)

func (s snapshot) only(userID string) snapshot {
	out := snapshot{}
	for k, v := range s {
		if strings.Contains(k, userID) {
			out[k] = v
		}
	}
	return out
}

func botSnapshot(t *testing.T, s *testServer, adm client, botID string, users []chatUser) snapshot {
	t.Helper()
	snap := snapshot{}
	put := func(section string, v any, drop ...string) {
		raw, _ := json.Marshal(strip(v, drop))
		snap[section] = volatileIDs.ReplaceAllString(string(raw), "<$1>")
	}
	bot := adm.get("/v1/admin/bots/" + botID).ok()["bot"].(map[string]any)
	put("bot", bot, "id", "name", "integrations", "updatedAt", "createdBy", "signingSecret", "webhookUrl", "secrets")
	vs := adm.get("/v1/admin/bots/" + botID + "/versions").ok()["versions"].([]any)
	var docs []any
	for _, v := range vs {
		u := str(t, adm.get("/v1/admin/bots/"+botID+"/versions/"+str(t, v, "id")).ok(), "url")
		docs = append(docs, s.as(t, "", "").raw(http.MethodGet, s.relative(t, u), nil).ok())
	}
	put("versions", docs, "createdBy")
	rt := func(path string) map[string]any {
		return adm.raw(http.MethodGet, path, nil, "x-bot-id", botID).ok()
	}
	put("users", rt("/v1/chat/users")["users"])
	convs := rt("/v1/chat/conversations")["conversations"].([]any)
	put("conversations", convs)
	for _, c := range convs {
		id := str(t, c, "id")
		put("messages of "+id, rt("/v1/chat/messages?conversationId=" + url.QueryEscape(id))["messages"])
		put("state topic of "+id, rt("/v1/chat/states/conversation/"+url.PathEscape(id)+"/topic"))
	}
	for _, u := range users {
		put("state profile of "+u.ID, rt("/v1/chat/states/user/"+url.PathEscape(u.ID)+"/profile"))
		put("export of "+u.ID, adm.get("/v1/admin/bots/"+botID+"/users/"+url.PathEscape(u.ID)+"/export").ok(), "exportedAt", "logs", "events", "url")
	}
	put("bot state", rt("/v1/chat/states/bot/"+botID+"/settings"))
	f := s.files(t, adm.token, botID)
	files := f.listAll("", 100)
	var described []any
	for _, file := range files {
		content := s.fetch(t, file.URL).Body
		sum := sha256.Sum256(content)
		passages, _ := f.passagesPage(file.ID, "?limit=200")
		described = append(described, map[string]any{"file": file, "sha256": hex.EncodeToString(sum[:]), "passages": passages})
	}
	put("files", described, "url", "uploadUrl", "id", "botId")
	return snap
}

// strip removes the named keys from every object in v.
func strip(v any, keys []string) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range keys {
				delete(x, k)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(out)
	return out
}

func compareSnapshots(t *testing.T, what string, want, got snapshot) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s differs:\nwant %s\n got %s", what, k, w, got[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is new: %s", what, k, got[k])
		}
	}
}

// archiveResult is importBot's answer.
type archiveResult struct {
	BotID   string         `json:"botId"`
	Created bool           `json:"created"`
	Added   map[string]int `json:"added"`
}

func importCLI(t *testing.T, c client, file string, args ...string) archiveResult {
	t.Helper()
	var res archiveResult
	out := c.cliOK(append([]string{"bots", "import", file, "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bots import --json: %v\n%s", err, out)
	}
	return res
}

// noSecrets fails when the archive holds the bot's secret value.
func noSecrets(t *testing.T, file string) {
	t.Helper()
	for name, body := range readArchive(t, file) {
		if bytes.Contains(body, []byte("s3cret")) {
			t.Errorf("archive exported without --secrets holds the secret, in %s", name)
		}
	}
}

func readArchive(t *testing.T, file string) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	var order []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name], _ = io.ReadAll(tr)
		order = append(order, h.Name)
	}
	if order[len(order)-1] != "manifest.json" {
		t.Errorf("archive entries %v: want manifest.json last", order)
	}
	return out
}

// rewrite writes the archive's entries again, changed by change, in the
// same order.
func rewrite(t *testing.T, file string, change func(name string, body []byte) []byte) []byte {
	t.Helper()
	entries := readArchive(t, file)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	order := []string{"bot.json", "versions.jsonl", "users.jsonl", "conversations.jsonl", "messages.jsonl", "states.jsonl",
		"code-states.jsonl", "workflows.jsonl", "files.jsonl", "passages.jsonl", "files/", "manifest.json"}
	rank := func(name string) int {
		if strings.HasPrefix(name, "files/") {
			name = "files/"
		}
		return slices.Index(order, name)
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) }) // as written
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		body := change(n, entries[n])
		_ = tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(body)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// rewriteHonest is rewrite with the manifest made to match the changed
// entries (their sizes and SHA-256), as an attacker would write it.
func rewriteHonest(t *testing.T, file string, change func(name string, body []byte) []byte) []byte {
	t.Helper()
	sums := map[string][2]any{}
	return rewrite(t, file, func(name string, body []byte) []byte {
		if name != "manifest.json" {
			body = change(name, body)
			sum := sha256.Sum256(body)
			sums[name] = [2]any{len(body), hex.EncodeToString(sum[:])}
			return body
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		for _, e := range m["entries"].([]any) {
			e := e.(map[string]any)
			s := sums[e["name"].(string)]
			e["size"], e["sha256"] = s[0], s[1]
		}
		raw, _ := json.Marshal(m)
		return raw
	})
}

func testBadArchives(t *testing.T, c client, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	altered := rewrite(t, file, func(name string, body []byte) []byte {
		if strings.HasPrefix(name, "files/") && len(body) > 3 {
			body = slices.Clone(body)
			body[1] ^= 0x20
		}
		return body
	})
	version := rewrite(t, file, func(name string, body []byte) []byte {
		if name == "manifest.json" {
			return bytes.Replace(body, []byte(`"version": 1`), []byte(`"version": 2`), 1)
		}
		return body
	})
	// A message of a conversation the archive lacks, the manifest honest:
	// refused before anything is written, naming the record.
	dangling := rewriteHonest(t, file, func(name string, body []byte) []byte {
		if name == "messages.jsonl" {
			return append(slices.Clone(body), `{"id":"msg_dangling","conversationId":"conv_gone","userId":"x","payload":{}}`+"\n"...)
		}
		return body
	})
	for _, bad := range []struct {
		name     string
		body     []byte
		mentions []string
	}{
		{"a message of an absent conversation", dangling, []string{"entry messages.jsonl, line", "msg_dangling", "conv_gone"}},
		{"truncated", raw[:len(raw)/2], []string{"truncated"}},
		{"an altered entry", altered, []string{"files/file_", "SHA-256"}},
		{"a wrong format version", version, []string{"version 2", "version 1"}},
		{"not an archive", []byte(`{"bot": "no"}`), []string{"not a gzip-compressed tar"}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			c.raw(http.MethodPost, "/v1/admin/bots/import", bad.body).fail(http.StatusBadRequest, "InvalidPayload", bad.mentions...)
			if bots := c.get("/v1/admin/bots").ok()["bots"].([]any); len(bots) != 0 {
				t.Errorf("after a refused import, the workspace has %d bots", len(bots))
			}
		})
	}
	// Over the workspace's File Storage: the standard error, nothing written.
	c.put("/v1/admin/workspaces/"+c.ws+"/quotas", map[string]any{"file_storage_bytes": 50}).ok()
	c.raw(http.MethodPost, "/v1/admin/bots/import", raw).fail(http.StatusForbidden, "QuotaExceeded", "file storage")
	if bots := c.get("/v1/admin/bots").ok()["bots"].([]any); len(bots) != 0 {
		t.Errorf("after an import over quota, the workspace has %d bots", len(bots))
	}
	viewer, _ := c.addMember("viewer")
	viewer.raw(http.MethodPost, "/v1/admin/bots/import", raw).fail(http.StatusForbidden, "Forbidden")
}
