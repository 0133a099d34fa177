package main

// A database knows its file storage: a process started with another --data
// refuses to serve (it would answer 404 for every file's content) until
// told, with --adopt-data, that the directory holds the database's files.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

func TestDataDirBelongsToDatabase(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dirA, dbURL := storage(t, backend)
			a := startServer(t, dirA, dbURL)
			e := newFilesEnv(t, a, "datadir")
			content := []byte("stored under the first data directory")
			f := e.f.create(a, "kept.txt", content, nil)
			stopServer(t, a)

			// Another data directory on the same database: PostgreSQL, or the
			// SQLite database file moved without its blobs.
			// (bootstrap.json is copied for the test's helpers.)
			dirB := t.TempDir()
			copyTree(t, dirA, dirB, func(rel string) bool {
				return rel == "bootstrap.json" || backend == "sqlite" && strings.HasPrefix(rel, "botplatform.db")
			})
			blobsA, blobsB := filepath.Join(dirA, "blobs"), filepath.Join(dirB, "blobs")
			refused := func(what string) {
				t.Helper()
				_, stderr, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, storageArgs(dirB, dbURL)...)...)
				if err == nil {
					t.Fatalf("%s: serve started on another data directory\n%s", what, stderr)
				}
				for _, want := range []string{blobsA, blobsB, "--adopt-data", "--data"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: the error does not name %q: %v", what, want, err)
					}
				}
			}
			refused("empty data directory")
			// The content restored from a backup, without the store's id: still
			// refused, as nothing tells it from a stranger.
			copyTree(t, blobsA, blobsB, func(rel string) bool { return strings.HasPrefix(rel, "objects") })
			refused("restored data directory")

			// Told that it is the database's storage, it serves the content.
			b := startServer(t, dirB, dbURL, "--adopt-data")
			fb := b.files(t, e.ws.token, e.bot)
			if r := b.fetch(t, fb.getFile(f.ID).URL); r.Status != 200 || !bytes.Equal(r.Body, content) {
				t.Fatalf("content after adopting: %d %q", r.Status, r.Body)
			}
			stopServer(t, b)
			// And from then on without the flag; with PostgreSQL the first
			// directory, which carries the same id, is accepted too.
			stopServer(t, startServer(t, dirB, dbURL))
			if backend == "postgres" {
				stopServer(t, startServer(t, dirA, dbURL))
			}
		})
	}
}

// copyTree copies the regular files under src whose path relative to src
// keep accepts into dst, creating directories as needed.
func copyTree(t *testing.T, src, dst string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if !keep(rel) {
			return nil
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o700); err != nil {
			return err
		}
		in, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // SQLite's -shm, removed when its last connection (another process's, or an idle one) closed
		}
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(filepath.Join(dst, rel), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}
