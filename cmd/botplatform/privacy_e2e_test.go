package main

// End-to-end tests of exporting and erasing a chat user (docs/data.md):
// after an erase, no table of the database (every one the schema has,
// found by asking the database) and no stored file content holds a trace of
// the user, and the other user's data is intact.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/platform"
)

func TestPrivacy(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"export and erase leave no trace", testEraseLeavesNoTrace},
		{"refusals", testPrivacyRefusals},
	}, runtimeFlags...)
}

// privacyJS answers every message without quoting it, logs it, and keeps
// state and a scheduled event about its sender.
const privacyJS = `bot.on.message('*', async ({ message, client, state, event, logger }) => {
  state.user.seen = (state.user.seen || 0) + 1
  state.conversation.n = (state.conversation.n || 0) + 1
  logger.info('heard ' + message.payload.text)
  await client.setState({ type: 'user', id: event.userId, name: 'profile', payload: { last: message.payload.text } })
  await client.scheduleEvent({ type: 'followup', conversationId: message.conversationId, userId: event.userId, delay: 86400000 })
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'got ' + message.payload.text.length + ' characters' } })
})`

// person is a chat user of the test and what it stored.
type person struct {
	u        chatUser
	internal string
	conv     string // the conversation it owns
	marker   string // unique text it wrote
	content  string // unique text in its files
	ids      []string
	lost     []string // its data in the other's conversation, which goes with it
}

func testEraseLeavesNoTrace(t *testing.T, s *testServer) {
	e := newBotEnv(t, s, privacyJS, unlimited)
	stamp := fmt.Sprint(time.Now().UnixNano())
	a := &person{u: e.user("alice-" + stamp), marker: "alicemarker" + stamp, content: "alicecontent" + stamp}
	b := &person{u: e.user("bob-" + stamp), marker: "bobmarker" + stamp, content: "bobcontent" + stamp}
	for _, p := range []*person{a, b} {
		p.internal = e.internalUser(p.u.ID)
		p.conv = e.conversation(p.u, "")
		p.ids = append(p.ids, p.u.ID, p.internal, p.conv, e.internalConv(p.conv))
	}
	e.addParticipant(a.u, a.conv, b.u)
	e.addParticipant(b.u, b.conv, a.u)

	// Each writes in its own conversation and in the other's; the bot
	// answers each message.
	replies := map[string]int{}
	for i, w := range []struct {
		p    *person
		conv string
	}{{a, a.conv}, {b, b.conv}, {a, b.conv}, {b, a.conv}, {a, a.conv}} {
		m := e.send(w.p.u, w.conv, fmt.Sprintf("%s #%d", w.p.marker, i))
		if w.p == b && w.conv == a.conv {
			b.lost = append(b.lost, str(t, m, "id"))
		} else {
			w.p.ids = append(w.p.ids, str(t, m, "id"))
		}
		replies[w.conv]++
		e.waitReplies(w.p.u, w.conv, replies[w.conv])
	}
	// A custom event of each in the other's conversation, and an event each
	// through the Runtime API, scheduled for tomorrow.
	ev := e.call(http.MethodPost, "/events", a.u.Key, map[string]any{"conversationId": b.conv, "payload": map[string]any{"note": a.marker}}).status(201)
	a.ids = append(a.ids, str(t, ev, "event", "id"))
	ev = e.call(http.MethodPost, "/events", b.u.Key, map[string]any{"conversationId": a.conv, "payload": map[string]any{"note": b.marker}}).status(201)
	b.lost = append(b.lost, str(t, ev, "event", "id"))
	for _, p := range []*person{a, b} {
		r := e.admin.raw(http.MethodPost, "/v1/chat/events", map[string]any{"type": "remind", "userId": p.u.ID, "payload": map[string]any{"note": p.marker},
			"schedule": map[string]any{"delay": 86400000}}, "x-bot-id", e.botID).status(201)
		p.ids = append(p.ids, str(t, r, "event", "id"))
	}
	// Files: tagged with the user's id, and created as the user; indexed.
	files := s.files(t, e.admin.token, e.botID)
	for _, p := range []*person{a, b} {
		f := files.index(s, "notes/"+p.u.ID+".txt", []byte("Notes about "+p.content+".\n\nMore about "+p.content+" here."), map[string]any{"tags": map[string]any{"userId": p.u.ID}})
		p.ids = append(p.ids, f.ID)
	}
	own := s.files(t, e.admin.token, e.botID, "x-user-id", a.u.ID).index(s, "upload-by-alice.md", []byte("# Mine\n\n"+a.content+" uploaded by the user."), nil)
	a.ids = append(a.ids, own.ID)
	e.waitLog("", "heard "+a.marker)

	// The export has a's data and nothing of b's.
	out := e.admin.cliOK("users", "export", e.botID, a.u.ID)
	var x struct {
		User          struct{ ID string }
		Conversations []struct {
			ID    string
			Owned bool
		}
		Messages []struct{ ID, UserID string }
		States   []struct{ Type, ID, Name string }
		Files    []struct{ ID string }
		Logs     []struct{ Message string }
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("users export: %v\n%s", err, out)
	}
	if x.User.ID != a.u.ID || len(x.Conversations) != 2 || len(x.Files) != 2 || len(x.Logs) == 0 {
		t.Errorf("export of a: user %q, %d conversations, %d files, %d log lines; want a, 2, 2, some:\n%s", x.User.ID, len(x.Conversations), len(x.Files), len(x.Logs), out)
	}
	for _, id := range a.ids[4:7] { // a's three messages
		if !strings.Contains(out, `"id": "`+id+`"`) {
			t.Errorf("export of a lacks its message %s", id)
		}
	}
	if !strings.Contains(out, `"name": "profile"`) || !strings.Contains(out, a.marker) {
		t.Errorf("export of a lacks its state or its text:\n%s", out)
	}
	for _, trace := range append(append([]string{b.marker, b.content, b.internal, `"` + b.u.ID + `"`}, b.ids[4:]...), b.lost...) {
		if strings.Contains(out, trace) {
			t.Errorf("export of a holds %q, of b", trace)
		}
	}

	// Erase a; the answer counts what went.
	erased := e.admin.cliOK("users", "erase", e.botID, a.u.ID, "--yes")
	if !strings.Contains(erased, "erased user "+a.u.ID) || !strings.Contains(erased, " 1 conversations,") || !strings.Contains(erased, " 2 files,") {
		t.Errorf("users erase: %q", erased)
	}
	// The audit log says a user of the bot was erased, and by whom (the
	// scan below checks it does not say who was erased).
	recs, _ := auditRecords(t, e.admin, 100)
	if len(recs) == 0 || recs[0]["action"] != "UNKNOWN" || !strings.HasPrefix(fmt.Sprint(recs[0]["value"]), "USER_ERASED") ||
		recs[0]["resourceId"] != e.botID || recs[0]["userId"] == nil {
		t.Errorf("the newest audit record after an erase: %v", recs[0:min(1, len(recs))])
	}

	// No table holds a trace of a; b's traces are all found (the scan works).
	db := e.store().Pools()
	pool := db["read"]
	if pool == nil {
		pool = db["main"]
	}
	needles := append([]string{a.marker, a.content}, a.ids...)
	if found := traces(t, pool, e.store().Dialect(), append(needles, b.lost...)); len(found) > 0 {
		t.Errorf("after the erase, the database still holds a's data:\n%s", strings.Join(found, "\n"))
	}
	for _, n := range append([]string{b.marker, b.content}, b.ids...) {
		if found := traces(t, pool, e.store().Dialect(), []string{n}); len(found) == 0 {
			t.Errorf("b's %q is found nowhere: erased with a, or the scan misses it", n)
		}
	}
	if found := blobTraces(t, s.DataDir, a.content); len(found) > 0 {
		t.Errorf("file contents still hold a's: %v", found)
	}
	if found := blobTraces(t, s.DataDir, b.content); len(found) != 1 {
		t.Errorf("b's file content found in %v, want one file", found)
	}

	// b's data is intact: its conversation less a's messages, its state,
	// its file and its passages, its log lines, its event.
	msgs := e.messages(b.u, b.conv)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, textOf(m))
	}
	if len(msgs) != 3 || textOf(msgs[0]) != b.marker+" #1" || !strings.HasPrefix(textOf(msgs[1]), "got ") || !strings.HasPrefix(textOf(msgs[2]), "got ") {
		t.Errorf("b's conversation after the erase: %q, want b's message, a reply, and the reply to a's erased message", texts)
	}
	st := e.admin.raw(http.MethodGet, "/v1/chat/states/user/"+b.u.ID+"/profile", nil, "x-bot-id", e.botID).ok()
	if !strings.Contains(fmt.Sprint(st), b.marker) {
		t.Errorf("b's state after the erase: %v", st)
	}
	if hits := hitFiles(files.search(b.content)); !hits[b.ids[6]] {
		t.Errorf("b's file is no longer found by search: %v", hits)
	}
	for _, h := range files.search(a.content) {
		if strings.Contains(h.Content, a.content) {
			t.Errorf("a's file is still found by search: %s %q", h.File.Key, h.Content)
		}
	}
	e.waitLog("", "heard "+b.marker)
	e.admin.raw(http.MethodGet, "/v1/chat/events/"+b.ids[len(b.ids)-2], nil, "x-bot-id", e.botID).ok()
	e.call(http.MethodGet, "/users/me", a.u.Key, nil).fail(http.StatusUnauthorized, "Unauthorized")
}

// traces lists "table.column: needle" for every needle some column of some
// table of the database holds: every table and column of the schema, found
// by asking the database, so that a table added later is covered.
func traces(t *testing.T, db *sql.DB, dialect string, needles []string) []string {
	t.Helper()
	ctx := context.Background()
	var list, test string
	switch dialect {
	case "sqlite":
		list = `SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY 1, 2`
		test = `SELECT COUNT(*) FROM "%s" WHERE instr(CAST("%s" AS BLOB), CAST(? AS BLOB)) > 0`
	default:
		list = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2`
		test = `SELECT COUNT(*) FROM "%s" WHERE strpos(CASE WHEN pg_typeof("%[2]s") = 'bytea'::regtype THEN encode("%[2]s"::text::bytea, 'escape') ELSE "%[2]s"::text END, $1) > 0`
	}
	rows, err := db.QueryContext(ctx, list)
	if err != nil {
		t.Fatalf("list the schema's columns: %v", err)
	}
	type col struct{ table, name string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.name); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	if len(cols) < 50 {
		t.Fatalf("the schema lists %d columns: not the server's schema", len(cols))
	}
	var found []string
	for _, c := range cols {
		for _, n := range needles {
			var k int
			if err := db.QueryRowContext(ctx, fmt.Sprintf(test, c.table, c.name), n).Scan(&k); err != nil {
				t.Fatalf("scan %s.%s: %v", c.table, c.name, err)
			}
			if k > 0 {
				found = append(found, fmt.Sprintf("%s.%s: %s (%d rows)", c.table, c.name, n, k))
			}
		}
	}
	return found
}

// blobTraces lists the stored file contents that hold needle.
func blobTraces(t *testing.T, dataDir, needle string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(filepath.Join(dataDir, "blobs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err == nil && bytes.Contains(b, []byte(needle)) {
			found = append(found, path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk the blobs: %v", err)
	}
	return found
}

func testPrivacyRefusals(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	u := e.user("carol-refusals")
	other := chatEnvOf(t, s, e.admin, e.admin.createBot(map[string]any{"name": "other"}))
	stranger := other.user("dave-refusals")
	path := func(bot, user string) string { return "/v1/admin/bots/" + bot + "/users/" + user }

	// Unknown user, a user of another bot, an unknown bot: 404 naming it.
	for _, c := range []struct{ bot, user, names string }{
		{e.botID, "nobody-here", "nobody-here"}, {e.botID, stranger.ID, stranger.ID}, {"bot_unknown", u.ID, "bot_unknown"},
	} {
		e.admin.get(path(c.bot, c.user)+"/export").fail(http.StatusNotFound, "ResourceNotFound", c.names)
		e.admin.del(path(c.bot, c.user)).fail(http.StatusNotFound, "ResourceNotFound", c.names)
	}
	// Below administrator: 403, and nothing is erased.
	for _, role := range []string{"developer", "manager"} {
		c, _ := e.admin.addMember(role)
		c.get(path(e.botID, u.ID)+"/export").fail(http.StatusForbidden, "Forbidden", "administrator")
		c.del(path(e.botID, u.ID)).fail(http.StatusForbidden, "Forbidden", "administrator")
	}
	admin, _ := e.admin.addMember("administrator")
	admin.get(path(e.botID, u.ID) + "/export").ok()
	// An erase reads no body but {}.
	e.admin.raw(http.MethodDelete, path(e.botID, u.ID), `{"force":true}`).fail(http.StatusBadRequest, "InvalidPayload", "force")

	// The CLI refuses to erase without --yes when stdin is not a terminal.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err := e.admin.cliRun(ctx, "yes\n", "users", "erase", e.botID, u.ID)
	var usage *cli.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("users erase without --yes: %v, want a usage error naming --yes", err)
	}
	if _, _, err := e.admin.cliRun(ctx, "", "users", "export", e.botID, "nobody-here"); !errors.As(err, new(*cli.APIError)) {
		t.Errorf("users export of an unknown user: %v, want the API's error", err)
	}
	e.call(http.MethodGet, "/users/me", u.Key, nil).ok()

	// An administrator may erase; then the user is gone.
	if _, err := e.store().GetChatUser(ctx, e.botID, u.ID); err != nil {
		t.Fatalf("the user before the erase: %v", err)
	}
	admin.del(path(e.botID, u.ID)).ok()
	if _, err := e.store().GetChatUser(ctx, e.botID, u.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Errorf("the user after the erase: %v, want not found", err)
	}
	e.admin.del(path(e.botID, u.ID)).fail(http.StatusNotFound, "ResourceNotFound", u.ID)
}
