package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/backup"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// TestBackupRestore backs up a running server while files are uploaded and
// deleted and a bot chats, restores the backup into a new directory,
// starts a server on it, and checks that it holds what was acknowledged
// before the backup began, intact, and nothing that differs from the
// original; then that damaged backups are refused before anything is
// written.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", runtimeFlags...)
	c := s.owner(t)
	c.createBot(map[string]any{"name": "kb", "code": cliEchoJS, "maxExecutionTime": 120})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	sums := map[string]string{} // key → SHA-256 of every content uploaded
	put := func(key string, size int) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), filepath.Dir(key))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Error(err)
			return
		}
		body := make([]byte, size)
		rand.Read(body)
		sum := sha256.Sum256(body)
		p := filepath.Join(dir, filepath.Base(key))
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Error(err)
			return
		}
		if _, errOut, err := c.cliRun(ctx, "", "files", "put", "kb", p, "--prefix", filepath.Dir(key)); err != nil {
			t.Errorf("files put %s: %v\n%s", key, err, errOut)
			return
		}
		mu.Lock()
		sums[key] = hex.EncodeToString(sum[:])
		mu.Unlock()
	}
	for i := range 8 {
		put(fmt.Sprintf("before/%d.bin", i), 1000+i*70000)
	}
	if out, _, err := c.cliRun(ctx, "one\ntwo\n", "chat", "kb"); err != nil || out != "echo: one\necho: two\n" {
		t.Fatalf("chat before the backup: %q, %v", out, err)
	}

	// Load while the backup runs: uploads, deletes of files the backup may
	// have seen, chat.
	stop := make(chan struct{})
	loaded, running := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(loaded)
		for i := 0; ; i++ {
			if i == 3 {
				close(running) // deletes went through: the backup starts
			}
			select {
			case <-stop:
				return
			default:
			}
			put(fmt.Sprintf("during/%d.bin", i), 50000)
			if i >= 2 {
				c.cliRun(ctx, "", "files", "rm", "kb", fmt.Sprintf("during/%d.bin", i-2))
			}
			c.cliRun(ctx, fmt.Sprintf("load %d\n", i), "chat", "kb")
		}
	}()
	<-running
	backupDir := filepath.Join(t.TempDir(), "backup")
	out, errOut, err := runCLI(t, "backup", "--data", s.DataDir, "--to", backupDir)
	close(stop)
	<-loaded
	if err != nil || !strings.Contains(out, "backed up "+s.DataDir+" to "+backupDir) {
		t.Fatalf("backup: %q, %v\n%s", out, err, errOut)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if out, errOut, err := runCLI(t, "restore", "--from", backupDir, "--data", restored); err != nil || !strings.Contains(out, "checked") {
		t.Fatalf("restore: %q, %v\n%s", out, err, errOut)
	}
	// The restored data has the accounts and their tokens; bootstrap.json,
	// which shows one in clear, is not in a backup.
	boot, err := os.ReadFile(filepath.Join(s.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "bootstrap.json"), boot, 0o600); err != nil {
		t.Fatal(err)
	}
	r := startServer(t, restored, "", runtimeFlags...)
	rc := r.owner(t)

	var listed struct {
		Files []struct{ Key, Status string }
	}
	if err := json.Unmarshal([]byte(rc.cliOK("files", "ls", "kb", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range listed.Files {
		have[f.Key] = true
		if f.Status == "upload_pending" {
			continue // its content was on its way when the snapshot was taken
		}
		var got syncbuf.Buffer
		if err := rc.cliRunTo(ctx, "", &got, &syncbuf.Buffer{}, "files", "get", "kb", f.Key); err != nil {
			t.Errorf("restored %s (%s): %v", f.Key, f.Status, err)
			continue
		}
		sum := sha256.Sum256([]byte(got.String()))
		if mu.Lock(); hex.EncodeToString(sum[:]) != sums[f.Key] {
			t.Errorf("restored %s: its content differs from what was uploaded", f.Key)
		}
		mu.Unlock()
	}
	for i := range 8 {
		if key := fmt.Sprintf("before/%d.bin", i); !have[key] {
			t.Errorf("%s, stored before the backup, is not in the restored data", key)
		}
	}
	// Messages: every one before the backup is there, and every one there
	// is the original's, byte for byte.
	orig, back := messages(t, filepath.Join(s.DataDir, "botplatform.db")), messages(t, filepath.Join(restored, "botplatform.db"))
	for id, payload := range back {
		if orig[id] != payload {
			t.Errorf("restored message %s: %s, originally %q", id, payload, orig[id])
		}
	}
	texts := strings.Join(mapValues(back), "\n")
	for _, want := range []string{`"text":"one"`, `"text":"echo: two"`} {
		if !strings.Contains(texts, want) {
			t.Errorf("the restored messages lack %s", want)
		}
	}
	// The restored server works: it answers in a new chat.
	if out, _, err := rc.cliRun(ctx, "after\n", "chat", "kb"); err != nil || out != "echo: after\n" {
		t.Errorf("chat on the restored server: %q, %v", out, err)
	}

	t.Run("damaged backups are refused", func(t *testing.T) {
		damaged := func(name string, harm func(dir string)) string {
			dir := filepath.Join(t.TempDir(), name)
			if out, err := exec.Command("cp", "-a", backupDir, dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			harm(dir)
			to := filepath.Join(t.TempDir(), "data")
			_, _, err := runCLI(t, "restore", "--from", dir, "--data", to)
			if err == nil {
				t.Fatalf("%s: restored", name)
			}
			if _, serr := os.Stat(to); serr == nil {
				t.Errorf("%s: the data directory was written before the backup was found damaged", name)
			}
			return err.Error()
		}
		aBlob := func(dir string) string {
			ps, _ := filepath.Glob(filepath.Join(dir, "blobs", "objects", "*", "*"))
			if len(ps) == 0 {
				t.Fatal("no file content in the backup")
			}
			return ps[0]
		}
		for _, tc := range []struct {
			name string
			harm func(dir string)
			want string
		}{
			{"truncated", func(dir string) { os.Truncate(aBlob(dir), 3) }, "the backup is damaged"},
			{"altered", func(dir string) {
				f, _ := os.OpenFile(filepath.Join(dir, "botplatform.db"), os.O_RDWR, 0)
				f.WriteAt([]byte{0xff}, 5000)
				f.Close()
			}, "botplatform.db: its SHA-256 differs from the manifest's"},
			{"missing", func(dir string) { os.Remove(aBlob(dir)) }, "missing from the backup"},
			{"extra", func(dir string) { os.WriteFile(filepath.Join(dir, "blobs", "stray"), []byte("x"), 0o600) }, "blobs/stray is in the backup but not in its manifest"},
			{"no manifest", func(dir string) { os.Remove(filepath.Join(dir, "manifest.json")) }, "not a backup"},
		} {
			if msg := damaged(tc.name, tc.harm); !strings.Contains(msg, tc.want) {
				t.Errorf("%s backup: %q, want %q", tc.name, msg, tc.want)
			}
		}
		if _, _, err := runCLI(t, "restore", "--from", backupDir, "--data", restored); err == nil || !strings.Contains(err.Error(), "is not empty") {
			t.Errorf("restore into a used directory: %v", err)
		}
		if _, _, err := runCLI(t, "backup", "--data", s.DataDir, "--to", backupDir); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("backup over a backup: %v", err)
		}
		if _, _, err := runCLI(t, "backup", "--to", t.TempDir()+"/x", "--database-url", "postgres://localhost/db"); err == nil || !strings.Contains(err.Error(), "pg_dump") {
			t.Errorf("backup of a PostgreSQL server: %v", err)
		}
	})
}

// messages reads every message of a SQLite database: id → payload.
func messages(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, payload FROM messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, payload string
		if err := rows.Scan(&id, &payload); err != nil {
			t.Fatal(err)
		}
		out[id] = payload
	}
	return out
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestScheduledBackups: serve takes backups on its schedule, keeps the
// newest --backup-keep, each one whole, and counts them in /metrics.
func TestScheduledBackups(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "backups")
	s := startBackendWith(t, "sqlite", "--backup-cron", "@every 1s", "--backup-keep", "2", "--backup-dir", dir)
	c := s.owner(t)
	c.createBot(map[string]any{"name": "kb"})
	done := func() int { return strings.Count(s.Stderr.String(), `msg="backup done"`) }
	eventually(t, "three scheduled backups", func() bool { return done() >= 3 })
	_, fams := scrape(t, s, "")
	if v, _ := sample(fams, "botplatform_backups_total", map[string]string{"outcome": "ok"}); v < 3 {
		t.Errorf("botplatform_backups_total{outcome=ok} = %v, want at least 3", v)
	}
	if v, _ := sample(fams, "botplatform_backup_last_success_timestamp_seconds", nil); v < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("botplatform_backup_last_success_timestamp_seconds = %v, want the time of the last backup", v)
	}
	stopServer(t, s) // no backup runs after this
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "backup-") {
			kept = append(kept, e.Name())
			if _, err := backup.Verify(filepath.Join(dir, e.Name())); err != nil {
				t.Errorf("%s: %v", e.Name(), err)
			}
		}
	}
	if len(kept) != 2 {
		t.Errorf("kept %v, want the newest 2 (of %d taken)", kept, done())
	}
	if !strings.Contains(s.Stderr.String(), `msg="backup removed"`) {
		t.Error("no backup removed in the log")
	}
}

// TestBackupPostgresAsDocumented follows docs/data.md's procedure for a
// server on PostgreSQL while it runs: a copy of the file contents, pg_dump,
// a second copy; then pg_restore into a new database and a server started
// on it, which must hold every file, intact, and every message.
func TestBackupPostgresAsDocumented(t *testing.T) {
	t.Parallel()
	base := os.Getenv(storetest.PostgresEnv)
	s := startBackendWith(t, "postgres", runtimeFlags...)
	c := s.owner(t)
	c.createBot(map[string]any{"name": "kb", "code": cliEchoJS, "maxExecutionTime": 120})
	src := filepath.Join(t.TempDir(), "docs")
	sums := map[string]string{}
	for i := range 5 {
		body := make([]byte, 20000+i*30000)
		rand.Read(body)
		sum := sha256.Sum256(body)
		name := fmt.Sprintf("%d.bin", i)
		sums["docs/"+name] = hex.EncodeToString(sum[:])
		if err := os.MkdirAll(src, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.cliOK("files", "put", "kb", src)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, _, err := c.cliRun(ctx, "hello\n", "chat", "kb"); err != nil || out != "echo: hello\n" {
		t.Fatalf("chat: %q, %v", out, err)
	}

	u, err := url.Parse(s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	work := t.TempDir()
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	blobs := filepath.Join(s.DataDir, "blobs") + "/."
	sh("mkdir", "-p", "backup/blobs")
	sh("cp", "-a", blobs, "backup/blobs/")
	sh("pg_dump", "--format=custom", "--schema="+schema, "--file=backup/botplatform.dump", base)
	sh("cp", "-a", blobs, "backup/blobs/")

	newDB := fmt.Sprintf("restored_%d", time.Now().UnixNano())
	sh("psql", base, "-q", "-c", "CREATE DATABASE "+newDB)
	t.Cleanup(func() { exec.Command("psql", base, "-q", "-c", "DROP DATABASE IF EXISTS "+newDB+" WITH (FORCE)").Run() })
	restoredURL := *u
	restoredURL.Path = "/" + newDB
	plain := restoredURL
	plain.RawQuery = url.Values{"sslmode": u.Query()["sslmode"]}.Encode()
	sh("pg_restore", "--dbname="+plain.String(), "backup/botplatform.dump")
	newData := filepath.Join(work, "data")
	sh("mkdir", "-p", "data/blobs")
	sh("cp", "-a", filepath.Join(work, "backup", "blobs")+"/.", "data/blobs/")
	boot, err := os.ReadFile(filepath.Join(s.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(newData, "bootstrap.json"), boot, 0o600); err != nil {
		t.Fatal(err)
	}

	r := startServer(t, newData, restoredURL.String(), runtimeFlags...)
	rc := r.owner(t)
	for key, want := range sums {
		out := rc.cliOK("files", "get", "kb", key)
		if sum := sha256.Sum256([]byte(out)); hex.EncodeToString(sum[:]) != want {
			t.Errorf("restored %s: its content differs", key)
		}
	}
	if out, _, err := rc.cliRun(ctx, "again\n", "chat", "kb"); err != nil || out != "echo: again\n" {
		t.Errorf("chat on the restored server: %q, %v", out, err)
	}
	// The bot's logs hold the line of the message before the backup, and
	// (once its event has ended) of the one after.
	logged := func() string {
		var heard []string
		dec := json.NewDecoder(strings.NewReader(rc.cliOK("bots", "logs", "kb", "--json"))) // one object per line
		for dec.More() {
			var l struct{ Message string }
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			heard = append(heard, l.Message)
		}
		return strings.Join(heard, "|")
	}
	eventuallyExplained(t, "the restored bot's logs to hold both lines", func() bool {
		got := logged()
		return strings.Contains(got, "heard hello") && strings.Contains(got, "heard again")
	}, logged)
}
