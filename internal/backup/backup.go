// Package backup takes a consistent snapshot of a data directory on the
// embedded default (SQLite database and file contents) while its server
// runs, with a manifest of every file's size and SHA-256, and restores one
// after checking it whole.
package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/botplatform/botplatform/internal/blob"
)

// Format is the version of the backup layout this package writes and reads.
const Format = 1

// Names in a data directory and in a backup, which has the same layout.
const (
	ManifestName = "manifest.json"
	databaseName = "botplatform.db"
	blobsDir     = "blobs"
)

// Manifest describes a backup: what it holds, each file with its size and
// SHA-256, by slash-separated path under the backup's directory.
type Manifest struct {
	Format        int       `json:"format"`
	ServerVersion string    `json:"serverVersion"`
	CreatedAt     time.Time `json:"createdAt"`
	Database      string    `json:"database"`
	Files         []Entry   `json:"files"`
}

// Size is the bytes of the backup's files.
func (m Manifest) Size() int64 {
	var n int64
	for _, e := range m.Files {
		n += e.Size
	}
	return n
}

// Entry is one file of a backup.
type Entry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// attempts bounds how often Create takes the database's snapshot again
// when a file's content was deleted before it could be copied: only one
// added while the snapshot was taken and deleted right after can be.
const attempts = 10

// Create writes a backup of dataDir to the directory to, which must not
// exist: the database as of one moment (SQLite's VACUUM INTO, which the
// running server's writers do not wait for), and a copy of the content of
// every file that moment knows. Contents are never changed in place, only
// added and deleted, so every content present is copied first; then the
// snapshot is taken, and only the contents added in between remain to be
// copied. One of those deleted before its copy makes the whole be done
// again (copying only what is new). Copies, not hard links: a backup must not change when the data
// does, nor the data when the backup is touched. The backup appears at to
// only once it is complete.
func Create(ctx context.Context, dataDir, to, version string) (Manifest, error) {
	db := filepath.Join(dataDir, databaseName)
	if _, err := os.Stat(db); err != nil {
		return Manifest{}, fmt.Errorf("no SQLite database in %s (a server on PostgreSQL is backed up with pg_dump and a copy of %s: docs/data.md): %w", dataDir, filepath.Join(dataDir, blobsDir), err)
	}
	if _, err := os.Lstat(to); err == nil {
		return Manifest{}, fmt.Errorf("%s already exists: back up to a new directory", to)
	}
	parent := filepath.Dir(filepath.Clean(to))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(to)+".partial-")
	if err != nil {
		return Manifest{}, err
	}
	m, err := snapshot(ctx, dataDir, tmp, version)
	if err == nil {
		if err = os.Rename(tmp, to); err == nil {
			return m, blob.SyncDir(parent)
		}
	}
	os.RemoveAll(tmp)
	return Manifest{}, err
}

var errContentGone = errors.New("a file's content was deleted during the backup")

// snapshot writes the backup into the empty directory dir.
func snapshot(ctx context.Context, dataDir, dir, version string) (Manifest, error) {
	src, dst := filepath.Join(dataDir, blobsDir), filepath.Join(dir, blobsDir)
	if err := copyFile(filepath.Join(src, blob.IDFile), filepath.Join(dst, blob.IDFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, err
	}
	var keys []string
	for attempt := 1; ; attempt++ {
		if err := copyObjects(ctx, src, dst); err != nil {
			return Manifest{}, err
		}
		dbCopy := filepath.Join(dir, databaseName)
		if err := os.Remove(dbCopy); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Manifest{}, err
		}
		var err error
		if keys, err = Snapshot(ctx, filepath.Join(dataDir, databaseName), dbCopy); err != nil {
			return Manifest{}, err
		}
		err = copyMissing(ctx, src, dst, keys)
		if err == nil {
			break
		}
		if !errors.Is(err, errContentGone) || attempt == attempts {
			return Manifest{}, err
		}
	}
	if err := dropUnlisted(dst, keys); err != nil {
		return Manifest{}, err
	}
	m := Manifest{Format: Format, ServerVersion: version, CreatedAt: time.Now().UTC(), Database: "sqlite"}
	var err error
	if m.Files, err = entries(dir); err != nil {
		return Manifest{}, err
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if err := writeSynced(filepath.Join(dir, ManifestName), bytes.NewReader(append(body, '\n'))); err != nil {
		return Manifest{}, err
	}
	return m, blob.SyncDir(dir)
}

// copyObjects copies every content of the blob store src into dst; one
// deleted meanwhile is left out.
func copyObjects(ctx context.Context, src, dst string) error {
	objects := filepath.Join(src, "objects")
	return filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if _, err := os.Stat(to); err == nil {
			return nil // copied by an earlier pass
		}
		if err := copyFile(p, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// copyMissing copies the contents of keys that dst lacks from src.
func copyMissing(ctx context.Context, src, dst string, keys []string) error {
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		to := blob.ObjectPath(dst, k)
		if _, err := os.Stat(to); err == nil {
			continue
		}
		if err := copyFile(blob.ObjectPath(src, k), to); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", errContentGone, k)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// dropUnlisted removes from the blob store dst every content not of keys:
// those of files deleted before the snapshot, and uploads never finished.
func dropUnlisted(dst string, keys []string) error {
	keep := make(map[string]bool, len(keys))
	for _, k := range keys {
		keep[blob.ObjectPath(dst, k)] = true
	}
	return filepath.WalkDir(filepath.Join(dst, "objects"), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || keep[p] {
			return err
		}
		return os.Remove(p)
	})
}

// Snapshot copies the SQLite database at src into a new file dst as of one
// moment (its server may be running), and returns the content keys of the
// files it holds.
func Snapshot(ctx context.Context, src, dst string) ([]string, error) {
	db, err := sql.Open("sqlite", "file:"+src+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", src, err)
	}
	snap, err := sql.Open("sqlite", "file:"+dst+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	rows, err := snap.QueryContext(ctx, `SELECT blob_key FROM files WHERE blob_key <> ''`)
	if err != nil {
		return nil, fmt.Errorf("the snapshot's files: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		if !blob.ValidKey(k) {
			return nil, fmt.Errorf("the snapshot names a file content %q that is not a valid key", k)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// entries lists every regular file under dir with its size and SHA-256.
func entries(dir string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == ManifestName {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		size, sum, err := hashFile(p)
		if err != nil {
			return err
		}
		out = append(out, Entry{Path: filepath.ToSlash(rel), Size: size, SHA256: sum})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

func hashFile(p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// copyFile copies src to a new file dst, synced.
func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeSynced(dst, in)
}

// writeSynced writes r to a new file p and syncs it.
func writeSynced(p string, r io.Reader) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cleanPath tells whether a manifest path stays inside the backup.
func cleanPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && filepath.ToSlash(filepath.Clean(filepath.FromSlash(p))) == p && !strings.HasPrefix(p, "../") && p != ".."
}
