package botarchive

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// FuzzReadArchive feeds untrusted bytes to what an import reads before it
// writes anything (the check against the manifest, bot.json, every record
// and its references): any input must end in an answer of the API's
// error type, never a panic or another error.
func FuzzReadArchive(f *testing.F) {
	user := `{"id":"user_a","fid":"alice","createdAt":"2020-01-01T00:00:00Z"}`
	conv := `{"id":"conv_a","fid":"c","ownerId":"user_a","participants":[{"userId":"user_a"}]}`
	f.Add(buildArchive(f, entry(BotEntry, botJSON), entry("users.jsonl", user), entry("conversations.jsonl", conv),
		entry("messages.jsonl", `{"id":"msg_1","conversationId":"conv_a","payload":{}}`), entry("files.jsonl", `{"id":"file_1","key":"k","size":2}`),
		entry("passages.jsonl", `{"id":"psg_1","fileId":"file_1"}`), entry("files/file_1", "hi")))
	f.Add(buildArchive(f, entry(BotEntry, botJSON), entry("messages.jsonl", `{"id":"msg_1","conversationId":"conv_gone"}`)))
	f.Add(buildArchive(f, entry("messages.jsonl", `{}`), entry(BotEntry, `[]`)))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	dir := f.TempDir()
	bounds := Bounds{EntryBytes: 1 << 20, RowBytes: 2 << 20, ArchiveBytes: 4 << 20, RecordBytes: 64 << 10, EntryRecords: 1000, Records: 2000}
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(dir, "archive")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		err := readForImport(path, bounds)
		if _, ok := platform.AsError(err); err != nil && !ok {
			t.Fatalf("not an API error: %v", err)
		}
	})
}

// readForImport runs an import's reading of the archive at path, for a
// new bot (so that no store is asked).
func readForImport(path string, b Bounds) error {
	m, err := verify(path, b)
	if err != nil {
		return err
	}
	if _, err := readBot(path, b); err != nil {
		return err
	}
	in := store.BotImport{BotID: "bot_new"}
	p := newPlan(&Service{bounds: b}, context.Background(), &in, m.BotID, false)
	if err := p.check(path); err != nil {
		return err
	}
	return p.rows(path)(func(any) error { return nil })
}
