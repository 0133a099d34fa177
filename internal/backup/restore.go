package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/botplatform/botplatform/internal/blob"
)

// Verify reads the manifest of the backup in dir and checks the backup
// against it: every file listed is there with its size and SHA-256, and
// nothing else is.
func Verify(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, fmt.Errorf("not a backup: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if m.Format != Format {
		return m, fmt.Errorf("%s: backup format %d; this server reads format %d", ManifestName, m.Format, Format)
	}
	if m.Database != "sqlite" {
		return m, fmt.Errorf("%s: a backup of a %q database; this server restores sqlite ones", ManifestName, m.Database)
	}
	listed := make(map[string]Entry, len(m.Files))
	for _, e := range m.Files {
		if !cleanPath(e.Path) {
			return m, fmt.Errorf("%s: the path %q leaves the backup", ManifestName, e.Path)
		}
		listed[e.Path] = e
	}
	if _, ok := listed[databaseName]; !ok {
		return m, fmt.Errorf("%s: no database listed", ManifestName)
	}
	found, err := entries(dir)
	if err != nil {
		return m, err
	}
	for _, got := range found {
		want, ok := listed[got.Path]
		switch {
		case !ok:
			return m, fmt.Errorf("%s is in the backup but not in its manifest", got.Path)
		case got.Size != want.Size:
			return m, fmt.Errorf("%s: %d bytes, the manifest says %d: the backup is damaged", got.Path, got.Size, want.Size)
		case got.SHA256 != want.SHA256:
			return m, fmt.Errorf("%s: its SHA-256 differs from the manifest's: the backup is damaged", got.Path)
		}
		delete(listed, got.Path)
	}
	for p := range listed {
		return m, fmt.Errorf("%s is in the manifest but missing from the backup", p)
	}
	return m, nil
}

// Restore checks the backup in from whole (Verify), then makes a data
// directory of it at dataDir, which must not exist or be empty; nothing is
// written before the check passes, and dataDir appears only once complete.
// bootstrap.json is not in a backup: the token it shows still works, and
// `botplatform token` issues new ones.
func Restore(ctx context.Context, from, dataDir string) (Manifest, error) {
	m, err := Verify(from)
	if err != nil {
		return m, err
	}
	if ents, err := os.ReadDir(dataDir); err == nil && len(ents) > 0 {
		return m, fmt.Errorf("%s is not empty: restore into a new directory", dataDir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	parent := filepath.Dir(filepath.Clean(dataDir))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return m, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dataDir)+".restoring-")
	if err != nil {
		return m, err
	}
	for _, e := range m.Files {
		if err := ctx.Err(); err != nil {
			os.RemoveAll(tmp)
			return m, err
		}
		// Copies, not links: the server writes its database in place, and
		// the backup must stay as it is.
		if err := copyFile(filepath.Join(from, filepath.FromSlash(e.Path)), filepath.Join(tmp, filepath.FromSlash(e.Path))); err != nil {
			os.RemoveAll(tmp)
			return m, err
		}
	}
	os.Remove(dataDir) // empty, or absent
	if err := os.Rename(tmp, dataDir); err != nil {
		os.RemoveAll(tmp)
		return m, err
	}
	return m, blob.SyncDir(parent)
}
