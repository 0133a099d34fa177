package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob/blobtest"
	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/migratedata"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestMigrateData moves a populated embedded install to PostgreSQL and a
// bucket: a first run interrupted part-way, then runs that finish it and
// change nothing more; a server on the result answers as the embedded one
// did. The gateway's credentials are in the process's environment
// (TestMain).
func TestMigrateData(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	gw := s3test.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The embedded install: a bot with code that chatted, files (one
	// indexed, one over a multipart part), a table with rows, a state.
	src := startBackendWith(t, "sqlite", runtimeFlags...)
	c := src.owner(t)
	botID := c.createBot(map[string]any{"name": "kb", "code": cliEchoJS, "maxExecutionTime": 120})["id"].(string)
	f := src.files(t, src.Boot.Token, botID)
	contents := map[string][]byte{"small.bin": blobtest.GenBytes(1, 1000), "big.bin": blobtest.GenBytes(2, 9<<20+7)}
	ids := map[string]string{}
	for key, body := range contents {
		ids[key] = f.create(src, key, body, nil).ID
	}
	doc := []byte("Otters hold hands while they sleep, so that they do not drift apart on the water.\n")
	ids["otters.txt"] = f.index(src, "otters.txt", doc, nil).ID
	contents["otters.txt"] = doc
	// Markdown: its heading is a passage without a vector (an empty BLOB on
	// SQLite, which must not arrive as NULL).
	md := []byte("# Shipping\n\nWe ship to Germany within 3 days.\n")
	ids["shipping.md"] = f.index(src, "shipping.md", md, nil).ID
	contents["shipping.md"] = md
	if out, _, err := c.cliRun(ctx, "one\ntwo\n", "chat", "kb"); err != nil || out != "echo: one\necho: two\n" {
		t.Fatalf("chat: %q, %v", out, err)
	}
	asBot := []string{"x-bot-id", botID}
	c.raw(http.MethodPost, "/v1/tables", map[string]any{"name": "NotesTable", "schema": map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}}}}, asBot...).ok()
	c.raw(http.MethodPost, "/v1/tables/NotesTable/rows", map[string]any{"rows": []any{map[string]any{"text": "one"}, map[string]any{"text": "two"}}}, asBot...).ok()
	c.raw(http.MethodPost, "/v1/chat/states/bot/"+botID+"/settings/get-or-set", map[string]any{"payload": map[string]any{"mood": "calm"}}, asBot...).ok()
	before := botView(t, c, botID)
	stopServer(t, src)

	prefix := "moved/"
	blobURL := gw.URL(prefix)
	t.Run("bad inputs", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--to-database", dbURL, "--to-blob", blobURL}, "--from is required"},
			{[]string{"--from", src.DataDir, "--to-blob", blobURL}, "--to-database is required"},
			{[]string{"--from", src.DataDir, "--to-database", dbURL}, "--to-blob is required"},
			{[]string{"--from", src.DataDir, "--to-database", dbURL, "--to-blob", "s3://botplatform/x?endpoint=http://127.0.0.1:1"}, "to-blob"},
			{[]string{"--from", t.TempDir(), "--to-database", dbURL, "--to-blob", blobURL}, "no SQLite database"},
		} {
			_, _, err := runCLI(t, append([]string{"migrate-data"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("migrate-data %v: %v, want an error saying %q", tc.args, err, tc.want)
			}
		}
		// A database another server already uses.
		other := storetest.PostgresURL(t)
		stopServer(t, startServer(t, t.TempDir(), other))
		_, _, err := runCLI(t, "migrate-data", "--from", src.DataDir, "--to-database", other, "--to-blob", gw.URL("other/"))
		if err == nil || !strings.Contains(err.Error(), "holds other data") {
			t.Errorf("into a used database: %v", err)
		}
		// A running server's data directory.
		running := startBackend(t, "sqlite")
		_, _, err = runCLI(t, "migrate-data", "--from", running.DataDir, "--to-database", storetest.PostgresURL(t), "--to-blob", gw.URL("running/"))
		if err == nil || !strings.Contains(err.Error(), "a server is running") {
			t.Errorf("from a running server's data directory: %v", err)
		}
	})

	// Interrupted in the middle of the messages, after the file contents.
	target, err := config.S3Target(blobURL)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	_, err = migratedata.Run(runCtx, migratedata.Options{DataDir: src.DataDir, DatabaseURL: dbURL, Blob: target, BatchSize: 1,
		Progress: func(table string, rows int64) {
			if table == "messages" && rows == 2 {
				stop()
			}
		}})
	stop()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	for i := range 2 { // finishes the copy, then finds nothing to do
		out, errOut, err := runCLI(t, "migrate-data", "--from", src.DataDir, "--to-database", dbURL, "--to-blob", blobURL)
		if err != nil || !strings.Contains(out, "checked:") || !strings.Contains(out, "an earlier run of this migration") {
			t.Fatalf("run %d after the interruption: %v\n%s\n%s", i+1, err, out, errOut)
		}
		if want := "file contents: 0 copied, 4 there from an earlier run"; !strings.Contains(out, want) {
			t.Errorf("run %d: %q, want %q", i+1, out, want)
		}
	}

	// A server on the result, with no --adopt-data, and the same token.
	dir := t.TempDir()
	boot, err := os.ReadFile(filepath.Join(src.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bootstrap.json"), boot, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, dbURL, append([]string{"--blob-url", blobURL}, runtimeFlags...)...)
	mc := s.owner(t)
	if after := botView(t, mc, botID); after != before {
		t.Errorf("the bot's data after the move:\n%s\nbefore:\n%s", after, before)
	}
	mf := s.files(t, s.Boot.Token, botID)
	for key, body := range contents {
		got := s.fetch(t, mf.getFile(ids[key]).URL)
		if got.Status != 200 || sha256.Sum256(got.Body) != sha256.Sum256(body) {
			t.Errorf("%s after the move: status %d, %d bytes, want the %d uploaded", key, got.Status, len(got.Body), len(body))
		}
	}
	if hits := mf.search("otters drift apart"); len(hits) == 0 || !hitFiles(hits)[ids["otters.txt"]] {
		t.Errorf("search after the move: %s", describeHits(hits))
	}
	if out, _, err := mc.cliRun(ctx, "three\n", "chat", "kb"); err != nil || out != "echo: three\n" {
		t.Errorf("chat after the move: %q, %v", out, err)
	}
	// New rows get new ids after the copied ones (sequences were moved on).
	mc.raw(http.MethodPost, "/v1/tables/NotesTable/rows", map[string]any{"rows": []any{map[string]any{"text": "three"}}}, asBot...).ok()
	var found struct{ Rows []struct{ ID int64 } }
	mc.raw(http.MethodPost, "/v1/tables/NotesTable/rows/find", map[string]any{}, asBot...).decode(&found)
	if len(found.Rows) != 3 || found.Rows[2].ID != 3 {
		t.Errorf("table rows after the move and one insert: %+v", found.Rows)
	}
}

// botView is what a bot reads of its data through the Runtime and Tables
// APIs, as JSON: users, conversations and their messages, a state, a
// table's rows.
func botView(t *testing.T, c client, botID string) string {
	t.Helper()
	rt := func(method, path string, body any) map[string]any {
		return c.raw(method, path, body, "x-bot-id", botID).ok()
	}
	view := map[string]any{
		"users":    rt(http.MethodGet, "/v1/chat/users", nil)["users"],
		"state":    rt(http.MethodGet, "/v1/chat/states/bot/"+botID+"/settings", nil),
		"rows":     rt(http.MethodPost, "/v1/tables/NotesTable/rows/find", map[string]any{}),
		"messages": map[string]any{},
	}
	convs := rt(http.MethodGet, "/v1/chat/conversations", nil)["conversations"].([]any)
	view["conversations"] = convs
	for _, conv := range convs {
		id := conv.(map[string]any)["id"].(string)
		msgs := rt(http.MethodGet, "/v1/chat/messages?conversationId="+url.QueryEscape(id), nil)["messages"].([]any)
		if len(msgs) != 4 {
			t.Errorf("conversation %s: %d messages, want the 2 sent and their 2 replies", id, len(msgs))
		}
		view["messages"].(map[string]any)[id] = msgs
	}
	b, _ := json.MarshalIndent(view, "", " ")
	return string(b)
}
