package botarchive

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/botplatform/botplatform/internal/platform"
)

// Bounds limit what an import decompresses and holds, so that an archive
// small on the wire cannot take the server's memory or time (a gzip stream
// expands about a thousandfold). Sizes are checked from the tar headers
// before an entry is read, record counts and sizes while reading. A zero
// field is no bound.
type Bounds struct {
	EntryBytes   int64 // one JSON entry (bot.json, each .jsonl), decompressed
	RowBytes     int64 // all JSON entries together
	ArchiveBytes int64 // every entry, files' contents included
	RecordBytes  int   // one line of a JSON Lines entry (or bot.json)
	EntryRecords int   // lines of one JSON Lines entry
	Records      int   // lines of all of them
}

// DefaultBounds are an import's. Rows are streamed from the spooled
// archive, never all held: what an import holds is one record (at most
// RecordBytes) and, per record, its id's mapping or hash (Records caps
// those at a few hundred MiB in the worst case, tens in practice).
var DefaultBounds = Bounds{
	EntryBytes:   256 << 20,
	RowBytes:     1 << 30,
	ArchiveBytes: 16 << 30,
	RecordBytes:  64 << 20,
	EntryRecords: 1_000_000,
	Records:      2_000_000,
}

// tooLarge is the error of an archive past a bound: 413, naming the bound.
func tooLarge(format string, args ...any) error {
	return platform.Errorf(platform.TypePayloadTooLarge, "bot archive: "+format, args...)
}

// sizes counts the decompressed bytes of an archive's entries against b.
type sizes struct {
	b         Bounds
	rows, all int64
}

// add checks an entry's size, as its tar header states it, before it is read.
func (s *sizes) add(name string, size int64) error {
	s.all += size
	if s.b.ArchiveBytes > 0 && s.all > s.b.ArchiveBytes {
		return tooLarge("entry %s: the archive's entries exceed %d bytes decompressed (the import's bound on an archive)", name, s.b.ArchiveBytes)
	}
	if name == ManifestEntry || name != BotEntry && !slices.Contains(rowEntries, name) {
		return nil
	}
	if s.b.EntryBytes > 0 && size > s.b.EntryBytes {
		return tooLarge("entry %s has %d bytes decompressed, over the import's bound of %d bytes a JSON entry", name, size, s.b.EntryBytes)
	}
	s.rows += size
	if s.b.RowBytes > 0 && s.rows > s.b.RowBytes {
		return tooLarge("entry %s: the archive's JSON entries exceed %d bytes decompressed together (the import's bound)", name, s.b.RowBytes)
	}
	return nil
}

// lines reads a JSON Lines entry one record at a time, within the bounds
// on a record's size and on the count of records.
type lines struct {
	name  string
	r     *bufio.Reader
	b     Bounds
	total *int // records read from every entry so far
	line  int  // of the last record read
	buf   []byte
}

func newLines(name string, r io.Reader, b Bounds, total *int) *lines {
	return &lines{name: name, r: bufio.NewReaderSize(r, 64<<10), b: b, total: total}
}

// next returns the next non-empty line, io.EOF after the last. The slice
// is valid until the next call.
func (l *lines) next() ([]byte, error) {
	for {
		l.buf = l.buf[:0]
		for {
			chunk, err := l.r.ReadSlice('\n')
			l.buf = append(l.buf, chunk...)
			if l.b.RecordBytes > 0 && len(l.buf) > l.b.RecordBytes+1 {
				return nil, tooLarge("entry %s, line %d: a record over %d bytes (the import's bound on a record)", l.name, l.line+1, l.b.RecordBytes)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, damaged("entry %s, line %d: %s", l.name, l.line+1, readable(err))
			}
			if len(l.buf) == 0 && err != nil {
				return nil, io.EOF
			}
			break
		}
		l.line++
		if rec := bytes.TrimSpace(l.buf); len(rec) > 0 {
			if l.b.EntryRecords > 0 && l.line > l.b.EntryRecords {
				return nil, tooLarge("entry %s: more than %d records (the import's bound on an entry's records)", l.name, l.b.EntryRecords)
			}
			if *l.total++; l.b.Records > 0 && *l.total > l.b.Records {
				return nil, tooLarge("entry %s, line %d: the archive holds more than %d records (the import's bound on records)", l.name, l.line, l.b.Records)
			}
			return rec, nil
		}
	}
}
