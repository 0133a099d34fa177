package botarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// part is an archive entry whose body is chunk, repeat times (an entry far
// larger than the archive: each copy is its own gzip member, compressed once).
type part struct {
	name   string
	chunk  []byte
	repeat int
}

func entry(name string, lines ...string) part {
	body := strings.Join(lines, "\n")
	if body != "" && !strings.HasSuffix(name, ".json") {
		body += "\n"
	}
	return part{name: name, chunk: []byte(body), repeat: 1}
}

// buildArchive writes the parts and an honest manifest (sizes and SHA-256
// as they are) as a gzip-compressed tar.
func buildArchive(t testing.TB, parts ...part) []byte {
	t.Helper()
	m := Manifest{Format: FormatName, Version: FormatVersion, BotID: "bot_src", ExportedAt: time.Unix(1e9, 0).UTC(), Counts: map[string]int{}}
	for _, p := range parts {
		h := sha256.New()
		for range p.repeat {
			h.Write(p.chunk)
		}
		m.Entries = append(m.Entries, Entry{Name: p.name, Size: int64(len(p.chunk) * p.repeat), SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	raw, _ := json.Marshal(m)
	parts = append(parts, part{name: ManifestEntry, chunk: raw, repeat: 1})
	var out bytes.Buffer
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		gz.Write(b)
		gz.Close()
		return buf.Bytes()
	}
	for _, p := range parts {
		size := int64(len(p.chunk) * p.repeat)
		var hdr bytes.Buffer
		if err := tar.NewWriter(&hdr).WriteHeader(&tar.Header{Name: p.name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		out.Write(member(hdr.Bytes()))
		c := member(p.chunk)
		for range p.repeat {
			out.Write(c)
		}
		if pad := (512 - size%512) % 512; pad > 0 {
			out.Write(member(make([]byte, pad)))
		}
	}
	out.Write(member(make([]byte, 1024)))
	return out.Bytes()
}

const botJSON = `{"id":"bot_src","name":"b","type":"studio","status":"active","tags":{},"spec":{},"createdAt":"2020-01-01T00:00:00Z","updatedAt":"2020-01-01T00:00:00Z"}`
