package main

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// TestBackupToObjectStorage: botplatform backup --to s3://… puts a backup
// in a bucket (the manifest last), restore --from s3://… checks it whole
// before writing, and a server starts on what it restores. The gateway's
// credentials are in the process's environment (TestMain).
func TestBackupToObjectStorage(t *testing.T) {
	t.Parallel()
	gw := s3test.Start(t)
	s := startBackend(t, "sqlite")
	c := s.owner(t)
	c.createBot(map[string]any{"name": "kb"})
	content := []byte(strings.Repeat("what the bucket keeps ", 5000))
	src := filepath.Join(t.TempDir(), "kept.txt")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	c.cliOK("files", "put", "kb", src)

	url := gw.URL("backups/one")
	out, errOut, err := runCLI(t, "backup", "--data", s.DataDir, "--to", url)
	if err != nil || !strings.Contains(out, "backed up "+s.DataDir+" to "+url) {
		t.Fatalf("backup to a bucket: %q, %v\n%s", out, err, errOut)
	}
	objects := gw.Objects(t, "backups/one/")
	if !slices.Contains(objects, "backups/one/manifest.json") || !slices.Contains(objects, "backups/one/botplatform.db") || len(objects) < 4 {
		t.Fatalf("objects of the backup: %v", objects)
	}
	if _, _, err := runCLI(t, "backup", "--data", s.DataDir, "--to", url); err == nil || !strings.Contains(err.Error(), "already holds objects") {
		t.Errorf("a second backup to the same prefix: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.DataDir), ".botplatform-backup-*")); len(leftovers) != 0 {
		t.Errorf("temporary directories left beside the data: %v", leftovers)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if out, errOut, err := runCLI(t, "restore", "--from", url, "--data", restored); err != nil || !strings.Contains(out, "checked") {
		t.Fatalf("restore from a bucket: %q, %v\n%s", out, err, errOut)
	}
	boot, err := os.ReadFile(filepath.Join(s.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "bootstrap.json"), boot, 0o600); err != nil {
		t.Fatal(err)
	}
	r := startServer(t, restored, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got syncbuf.Buffer
	if err := r.owner(t).cliRunTo(ctx, "", &got, &syncbuf.Buffer{}, "files", "get", "kb", "kept.txt"); err != nil {
		t.Fatalf("the restored file: %v", err)
	}
	if sha256.Sum256([]byte(got.String())) != sha256.Sum256(content) {
		t.Fatal("the restored file's content differs from what was uploaded")
	}

	// A damaged or unfinished backup in the bucket is refused, and nothing
	// is written.
	refused := func(what, url, want string) {
		t.Helper()
		to := filepath.Join(t.TempDir(), "data")
		_, _, err := runCLI(t, "restore", "--from", url, "--data", to)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error saying %q", what, err, want)
		}
		if _, serr := os.Stat(to); serr == nil {
			t.Errorf("%s: the data directory was written", what)
		}
	}
	gw.Put(t, "backups/one/botplatform.db", []byte("not the database"))
	refused("an altered database", url, "botplatform.db")
	out, errOut, err = runCLI(t, "backup", "--data", s.DataDir, "--to", gw.URL("backups/two"))
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, errOut)
	}
	if err := gw.Client.RemoveObject(ctx, gw.Bucket, "backups/two/manifest.json", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("a backup without its manifest", gw.URL("backups/two"), "manifest")
	refused("an empty prefix", gw.URL("backups/none"), "holds no object")
}
