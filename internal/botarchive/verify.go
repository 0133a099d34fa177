package botarchive

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// damaged is the error of an archive that cannot be imported.
func damaged(format string, args ...any) error {
	return platform.Errorf(platform.TypeInvalidPayload, "bot archive: "+format, args...)
}

// eachEntry reads the archive at path, calling fn with each entry.
func eachEntry(path string, fn func(name string, size int64, r io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return damaged("not a gzip-compressed tar archive (exportBot writes one): %v", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return damaged("the archive is damaged or truncated after %s", readable(err))
		}
		if h.Typeflag != tar.TypeReg {
			return damaged("entry %s is not a regular file", h.Name)
		}
		if err := fn(h.Name, h.Size, tr); err != nil {
			return err
		}
	}
}

func readable(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "its last complete entry (unexpected end of data)"
	}
	return "its last complete entry: " + err.Error()
}

// knownEntry reports whether name is one an archive may hold.
func knownEntry(name string) bool {
	if id, ok := strings.CutPrefix(name, ContentDir); ok {
		return id != "" && !strings.ContainsAny(id, "/\\")
	}
	return name == BotEntry || name == ManifestEntry || slices.Contains(rowEntries, name)
}

// Verify reads the whole archive and checks it against its manifest: the
// format and its version, every entry listed with its size and SHA-256,
// nothing else there. Nothing is written before it passes.
func Verify(path string) (Manifest, error) {
	return verify(path, Bounds{})
}

// verify is Verify within b: an entry past a bound is refused from its
// header, before it is decompressed.
func verify(path string, b Bounds) (Manifest, error) {
	var m Manifest
	seen := map[string]Entry{}
	var manifest []byte
	sz := sizes{b: b}
	err := eachEntry(path, func(name string, size int64, r io.Reader) error {
		if !knownEntry(name) {
			return damaged("entry %s is not part of a bot archive", name)
		}
		if err := sz.add(name, size); err != nil {
			return err
		}
		if _, dup := seen[name]; dup || (name == ManifestEntry && manifest != nil) {
			return damaged("entry %s appears twice", name)
		}
		if name == ManifestEntry {
			var err error
			if manifest, err = io.ReadAll(io.LimitReader(r, 64<<20)); err != nil {
				return damaged("entry %s: %s", name, readable(err))
			}
			return nil
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		if err != nil {
			return damaged("entry %s is truncated (%d of %d bytes)", name, n, size)
		}
		seen[name] = Entry{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		return nil
	})
	if err != nil {
		return m, err
	}
	if manifest == nil {
		return m, damaged("no %s: the archive is truncated, or not a bot archive", ManifestEntry)
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return m, damaged("%s: %v", ManifestEntry, err)
	}
	if m.Format != FormatName {
		return m, damaged("%s: format %q is not %q", ManifestEntry, m.Format, FormatName)
	}
	if m.Version != FormatVersion {
		return m, damaged("%s: format version %d is not supported (this server reads version %d)", ManifestEntry, m.Version, FormatVersion)
	}
	listed := map[string]bool{}
	for _, e := range m.Entries {
		got, ok := seen[e.Name]
		switch {
		case !ok:
			return m, damaged("entry %s, listed in the manifest, is missing", e.Name)
		case got.Size != e.Size:
			return m, damaged("entry %s has %d bytes, the manifest says %d", e.Name, got.Size, e.Size)
		case got.SHA256 != e.SHA256:
			return m, damaged("entry %s: its SHA-256 differs from the manifest's (the entry was altered or damaged)", e.Name)
		}
		listed[e.Name] = true
	}
	for name := range seen {
		if !listed[name] {
			return m, damaged("entry %s is not listed in the manifest", name)
		}
	}
	if !listed[BotEntry] {
		return m, damaged("no %s", BotEntry)
	}
	return m, nil
}

func decodeJSON(name string, r io.Reader, v any) error {
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return damaged("entry %s: %v", name, err)
	}
	return nil
}
