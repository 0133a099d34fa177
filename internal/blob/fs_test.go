package blob_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/blob/blobtest"
)

func newFS(t testing.TB) (*blob.FS, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := blob.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// tmpEntries lists what is in an FS's tmp/ directory.
func tmpEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func assertTmpEmpty(t testing.TB, dir string) {
	t.Helper()
	if names := tmpEntries(t, dir); len(names) != 0 {
		t.Fatalf("tmp holds %v, want nothing", names)
	}
}

// fsHarness runs the conformance suite on FS; link, when set, replaces
// how it hard-links.
func fsHarness(link func(oldname, newname string) error) blobtest.Harness {
	return blobtest.Harness{
		New: func(t testing.TB) (blob.Store, func() []string) {
			s, dir := newFS(t)
			if link != nil {
				blob.SetLink(s, link)
			}
			return s, func() []string { return tmpEntries(t, dir) }
		},
		Chunk:       blob.CopyBufSize,
		Snapshot:    true,
		MaxPutAlloc: 16 << 20,
	}
}

func TestFSConformance(t *testing.T) { fsHarness(nil).Run(t) }

// TestFSStreamedCopy: when hard-linking fails, Copy streams with Put's
// guarantees.
func TestFSStreamedCopy(t *testing.T) {
	linkFailed := false
	fsHarness(func(string, string) error {
		linkFailed = true
		return &os.LinkError{Op: "link", Err: errors.ErrUnsupported}
	}).TestCopy(t)
	if !linkFailed {
		t.Fatal("the streamed copy was not exercised")
	}
}

func TestNewFSLayout(t *testing.T) {
	s, dir := newFS(t)
	for _, d := range []string{"objects", "tmp", "objects/00", "objects/ff"} {
		st, err := os.Stat(filepath.Join(dir, d))
		if err != nil {
			t.Fatal(err)
		}
		if !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a 0700 directory", d, st.Mode())
		}
	}
	blobtest.Put(t, s, "file_01.bin", []byte("x"))
	h := sha256.Sum256([]byte("file_01.bin"))
	p := filepath.Join(dir, "objects", hex.EncodeToString(h[:1]), "file_01.bin")
	if p != blob.ObjectPath(dir, "file_01.bin") {
		t.Fatalf("ObjectPath = %s, want %s", blob.ObjectPath(dir, "file_01.bin"), p)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
		t.Fatalf("blob at %s: %q, %v", p, b, err)
	}
	// Opening an existing store again works and keeps its blobs.
	s2, err := blob.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := blobtest.Read(t, s2, "file_01.bin"); string(got) != "x" {
		t.Fatalf("reopened store reads %q", got)
	}
	if _, err := blob.NewFS(""); err == nil {
		t.Fatal(`NewFS("") succeeded`)
	}
	// Nothing was written outside the store's directories.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Fatalf("the store's directory holds %d entries, want objects and tmp", len(ents))
	}
}

func TestCopySharesInodeWhenLinked(t *testing.T) {
	s, dir := newFS(t)
	blobtest.Put(t, s, "a", []byte("shared"))
	if err := s.Copy(context.Background(), "a", "b"); err != nil {
		t.Fatal(err)
	}
	sa, err1 := os.Stat(blob.ObjectPath(dir, "a"))
	sb, err2 := os.Stat(blob.ObjectPath(dir, "b"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !os.SameFile(sa, sb) {
		t.Skip("the filesystem did not hard-link (the streamed copy is tested in TestFSStreamedCopy)")
	}
	assertTmpEmpty(t, dir)
}

func TestSweep(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	blobtest.Put(t, s, "kept", []byte("blob"))
	tmp := filepath.Join(dir, "tmp")
	now := time.Now()
	files := map[string]time.Duration{ // name: age
		"put-old1":    2 * time.Hour,
		"put-old2":    25 * time.Hour,
		"link-old":    90 * time.Minute,
		"put-young":   10 * time.Minute,
		"put-new":     0,
		"put-future":  -time.Hour,
		"put-edge-in": 59 * time.Minute,
	}
	for name, age := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	// A blob in objects/ with an old mtime is not Sweep's business.
	kept := blob.ObjectPath(dir, "kept")
	if err := os.Chtimes(kept, now.Add(-48*time.Hour), now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}

	n, err := s.Sweep(ctx, time.Hour)
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 removed", n, err)
	}
	left := tmpEntries(t, dir)
	if want := []string{"put-edge-in", "put-future", "put-new", "put-young"}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Fatalf("tmp holds %v after the sweep, want %v", left, want)
	}
	if string(blobtest.Read(t, s, "kept")) != "blob" {
		t.Fatal("Sweep touched a blob")
	}
	// Nothing more to sweep at that age.
	if n, err := s.Sweep(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("second Sweep = %d, %v; want 0", n, err)
	}
	// A cancelled context stops it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Sweep(cctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sweep with a cancelled context: %v", err)
	}
}

func TestSweepManyFiles(t *testing.T) {
	// More entries than one ReadDir batch.
	s, dir := newFS(t)
	old := time.Now().Add(-2 * time.Hour)
	for i := range 600 {
		p := filepath.Join(dir, "tmp", fmt.Sprintf("put-%03d", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := s.Sweep(context.Background(), time.Hour); err != nil || n != 300 {
		t.Fatalf("Sweep = %d, %v; want 300", n, err)
	}
	if left := tmpEntries(t, dir); len(left) != 300 {
		t.Fatalf("%d files left, want 300", len(left))
	}
}

func TestStalledPutSweptFailsCleanly(t *testing.T) {
	// A Put whose temporary file is swept from under it fails and leaves
	// nothing visible.
	s, dir := newFS(t)
	ctx := context.Background()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, "stalled", pr, -1)
		done <- err
	}()
	if _, err := pw.Write([]byte("first part")); err != nil {
		t.Fatal(err)
	}
	// The first chunk has been read (the pipe write returned), so the temporary
	// file exists; sweeping everything removes it.
	if n, err := s.Sweep(ctx, -time.Hour); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	pw.Write([]byte("second part"))
	pw.Close()
	if err := <-done; err == nil {
		t.Fatal("Put whose temporary file was swept succeeded")
	}
	blobtest.AssertMissing(t, s, "stalled")
	assertTmpEmpty(t, dir)
}

func BenchmarkPut(b *testing.B) {
	s, _ := newFS(b)
	const size = 256 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		// Seed 0: the generator only copies, so the time measured is the Put's.
		if _, err := s.Put(context.Background(), "bench", blobtest.Gen(0, size), -1); err != nil {
			b.Fatal(err)
		}
	}
}
