package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// pattern is what genReader repeats; its odd length keeps it out of step with
// every buffer size.
var pattern = func() []byte {
	b := make([]byte, 64<<10+13)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

// genReader yields size bytes (forever when size < 0) of pattern XOR seed,
// without allocating.
type genReader struct {
	seed      byte
	size, off int64
}

func gen(seed byte, size int64) *genReader { return &genReader{seed: seed, size: size} }

func (g *genReader) Read(p []byte) (int, error) {
	if g.size >= 0 {
		if g.off >= g.size {
			return 0, io.EOF
		}
		if rem := g.size - g.off; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	n := 0
	for n < len(p) {
		n += copy(p[n:], pattern[int((g.off+int64(n))%int64(len(pattern))):])
	}
	if g.seed != 0 {
		for i := range p {
			p[i] ^= g.seed
		}
	}
	g.off += int64(n)
	return n, nil
}

// genSum is the size and SHA-256 of gen(seed, size)'s output.
func genSum(seed byte, size int64) (int64, string) {
	h := sha256.New()
	n, _ := io.Copy(h, gen(seed, size))
	return n, hex.EncodeToString(h.Sum(nil))
}

func genBytes(seed byte, size int64) []byte {
	b, _ := io.ReadAll(gen(seed, size))
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func newFS(t testing.TB) (*FS, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func put(t testing.TB, s *FS, key string, b []byte) Info {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(b), -1)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

// read returns the whole content stored under key.
func read(t testing.TB, s *FS, key string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	if int64(len(b)) != r.Info().Size {
		t.Fatalf("%q: read %d bytes, Info().Size %d", key, len(b), r.Info().Size)
	}
	return b
}

func assertMissing(t testing.TB, s *FS, key string) {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err == nil {
		r.Close()
		t.Fatalf("Open(%q) succeeded, want ErrNotFound", key)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open(%q): %v, want ErrNotFound", key, err)
	}
}

func assertTmpEmpty(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("tmp holds %v, want nothing", names)
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
	put(t, s, "file_01.bin", []byte("x"))
	h := sha256.Sum256([]byte("file_01.bin"))
	p := filepath.Join(dir, "objects", hex.EncodeToString(h[:1]), "file_01.bin")
	if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
		t.Fatalf("blob at %s: %q, %v", p, b, err)
	}
	// Opening an existing store again works and keeps its blobs.
	s2, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, s2, "file_01.bin"); string(got) != "x" {
		t.Fatalf("reopened store reads %q", got)
	}
	if _, err := NewFS(""); err == nil {
		t.Fatal(`NewFS("") succeeded`)
	}
}

func TestPutOpenRoundTrip(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		key  string
		data []byte
		wrap func(io.Reader) io.Reader
	}{
		{"empty", "empty", nil, nil},
		{"one byte", "a", []byte{0}, nil},
		{"text", "hello.txt", []byte("hello, world\n"), nil},
		{"buffer size", "buf", genBytes(1, copyBufSize), nil},
		{"several buffers", "several-buffers_2.bin", genBytes(2, 3*copyBufSize+7), nil},
		{"one byte reads", "one", genBytes(3, 10_000), iotest.OneByteReader},
		{"data with EOF", "eof", genBytes(4, 100_000), iotest.DataErrReader},
		{"half reads", "half", genBytes(5, 1<<20+1), iotest.HalfReader},
		{"longest key", strings.Repeat("k", MaxKeyLen), []byte("long"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(tc.data)
			if tc.wrap != nil {
				r = tc.wrap(r)
			}
			before := time.Now().Add(-time.Second)
			info, err := s.Put(ctx, tc.key, r, -1)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != int64(len(tc.data)) || info.SHA256 != sum(tc.data) {
				t.Fatalf("Put = %d bytes %s, want %d %s", info.Size, info.SHA256, len(tc.data), sum(tc.data))
			}
			if info.ModTime.Before(before) {
				t.Fatalf("ModTime %v, want about now", info.ModTime)
			}
			rd, err := s.Open(ctx, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			got := rd.Info()
			if got.Size != info.Size || !got.ModTime.Equal(info.ModTime) {
				t.Fatalf("Open Info %+v, Put Info %+v", got, info)
			}
			if got.SHA256 != "" && got.SHA256 != info.SHA256 {
				t.Fatalf("Open SHA256 %s, want %s or empty", got.SHA256, info.SHA256)
			}
			b, err := io.ReadAll(rd)
			if err != nil || !bytes.Equal(b, tc.data) {
				t.Fatalf("read %d bytes (%v), want the %d put", len(b), err, len(tc.data))
			}
			assertTmpEmpty(t, dir)
		})
	}
}

func TestPutReplaceKeepsOpenReaders(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	v1, v2 := genBytes(1, 3*copyBufSize), genBytes(2, 1000)
	put(t, s, "k", v1)
	old, err := s.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	// Read part of the old content before the replace, the rest after.
	head := make([]byte, 100)
	if _, err := io.ReadFull(old, head); err != nil {
		t.Fatal(err)
	}
	info := put(t, s, "k", v2)
	if info.Size != int64(len(v2)) || info.SHA256 != sum(v2) {
		t.Fatalf("replacing Put = %+v", info)
	}
	rest, err := io.ReadAll(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(head, rest...), v1) || old.Info().Size != int64(len(v1)) {
		t.Fatal("a reader opened before the replace did not read the old content whole")
	}
	if !bytes.Equal(read(t, s, "k"), v2) {
		t.Fatal("Open after the replace does not read the new content")
	}
	assertTmpEmpty(t, dir)
}

func TestPutMax(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	for _, tc := range []struct {
		size, max int64
		tooLarge  bool
	}{
		{0, 0, false},
		{1, 0, true},
		{10, 10, false},
		{11, 10, true},
		{copyBufSize, copyBufSize, false},
		{copyBufSize + 1, copyBufSize, true},
		{3 * copyBufSize, copyBufSize + 1, true},
		{1000, -1, false},
		{0, -1, false},
		{1000, math.MaxInt64, false},
	} {
		t.Run(fmt.Sprintf("%d bytes max %d", tc.size, tc.max), func(t *testing.T) {
			key := fmt.Sprintf("max-%d-%d", tc.size, tc.max)
			info, err := s.Put(ctx, key, gen(0, tc.size), tc.max)
			if tc.tooLarge {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Put: %v, want ErrTooLarge", err)
				}
				assertMissing(t, s, key)
			} else {
				n, h := genSum(0, tc.size)
				if err != nil || info.Size != n || info.SHA256 != h {
					t.Fatalf("Put = %+v, %v; want %d bytes", info, err, n)
				}
			}
			assertTmpEmpty(t, dir)
		})
	}

	t.Run("stops reading at max+1", func(t *testing.T) {
		endless := gen(0, -1)
		if _, err := s.Put(ctx, "endless", endless, 1000); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Put: %v, want ErrTooLarge", err)
		}
		if endless.off > 1001 {
			t.Fatalf("read %d bytes, want at most 1001", endless.off)
		}
		assertMissing(t, s, "endless")
		assertTmpEmpty(t, dir)
	})
}

// cancelReader yields data and cancels its context once it has yielded after
// bytes.
type cancelReader struct {
	r      io.Reader
	after  int64
	n      int64
	cancel context.CancelFunc
}

func (c *cancelReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n >= c.after {
		c.cancel()
	}
	return n, err
}

func TestPutFailures(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		// reader returns what Put reads, and the context to put with.
		reader func() (context.Context, io.Reader)
		max    int64
		want   error
	}{
		{"error at once", func() (context.Context, io.Reader) {
			return context.Background(), iotest.ErrReader(boom)
		}, -1, boom},
		{"error after 100 bytes", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(gen(0, 100), iotest.ErrReader(boom))
		}, -1, boom},
		{"error after 3 buffers", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(gen(0, 3*copyBufSize+5), iotest.ErrReader(boom))
		}, -1, boom},
		{"error with data", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(gen(0, 100), &dataErrReader{data: []byte("tail"), err: boom})
		}, -1, boom},
		{"timeout", func() (context.Context, io.Reader) {
			return context.Background(), iotest.TimeoutReader(gen(0, 10*copyBufSize))
		}, -1, iotest.ErrTimeout},
		{"context cancelled before", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, gen(0, 100)
		}, -1, context.Canceled},
		{"context cancelled mid-stream", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, &cancelReader{r: gen(0, -1), after: 2 * copyBufSize, cancel: cancel}
		}, -1, context.Canceled},
		{"context cancelled on the last chunk", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			// DataErrReader hands over the last data with io.EOF, so Put sees
			// no further Read and must check the context before the rename.
			return ctx, iotest.DataErrReader(&cancelReader{r: gen(0, 1000), after: 1000, cancel: cancel})
		}, -1, context.Canceled},
		{"deadline mid-stream", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(50*time.Millisecond))
			t.Cleanup(cancel)
			return ctx, &slowReader{r: gen(0, -1), delay: 5 * time.Millisecond}
		}, -1, context.DeadlineExceeded},
		{"too large", func() (context.Context, io.Reader) {
			return context.Background(), gen(0, 2000)
		}, 1999, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newFS(t)
			for _, existing := range []bool{false, true} {
				key := "new"
				if existing {
					key = "existing"
					put(t, s, key, []byte("old content"))
				}
				ctx, r := tc.reader()
				_, err := s.Put(ctx, key, r, tc.max)
				if !errors.Is(err, tc.want) {
					t.Fatalf("Put(%q): %v, want %v", key, err, tc.want)
				}
				if existing {
					if got := read(t, s, key); string(got) != "old content" {
						t.Fatalf("failed Put changed %q to %d bytes", key, len(got))
					}
				} else {
					assertMissing(t, s, key)
				}
				assertTmpEmpty(t, dir)
			}
		})
	}
}

// dataErrReader returns its data and err from the same Read.
type dataErrReader struct {
	data []byte
	err  error
}

func (d *dataErrReader) Read(p []byte) (int, error) { return copy(p, d.data), d.err }

type slowReader struct {
	r     io.Reader
	delay time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.r.Read(p[:min(len(p), 1024)])
}

func TestInvalidKeys(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	put(t, s, "valid", []byte("v"))
	for _, key := range []string{
		"", ".", "..", "../x", "a/b", "/abs", `a\b`, "a b", "a\x00b", "a\nb", "é", "a:b", "a*", "~",
		strings.Repeat("k", MaxKeyLen+1),
	} {
		t.Run(fmt.Sprintf("%.20q", key), func(t *testing.T) {
			if ValidKey(key) {
				t.Fatal("ValidKey = true")
			}
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, ErrInvalidKey) {
					t.Errorf("%s: %v, want ErrInvalidKey", op, err)
				}
			}
			_, err := s.Put(ctx, key, strings.NewReader("x"), -1)
			check("Put", err)
			_, err = s.Open(ctx, key)
			check("Open", err)
			check("Copy from", s.Copy(ctx, key, "valid2"))
			check("Copy to", s.Copy(ctx, "valid", key))
			check("Delete", s.Delete(ctx, key))
		})
	}
	for _, key := range []string{"a", "A-Z_0.9", ".hidden", "a..b", "...", "-", strings.Repeat("k", MaxKeyLen)} {
		if !ValidKey(key) {
			t.Errorf("ValidKey(%q) = false", key)
		}
	}
	assertMissing(t, s, "valid2")
	assertTmpEmpty(t, dir)
	// Nothing was written outside the store's directory either.
	if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stray file: %v", err)
	}
}

func TestOpenMissing(t *testing.T) {
	s, _ := newFS(t)
	assertMissing(t, s, "nope")
	put(t, s, "gone", []byte("x"))
	if err := s.Delete(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	assertMissing(t, s, "gone")
}

func TestOpenSeek(t *testing.T) {
	s, _ := newFS(t)
	ctx := context.Background()
	data := genBytes(7, 3*copyBufSize+11)
	put(t, s, "seek", data)

	r, err := s.Open(ctx, "seek")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		off    int64
		whence int
		pos    int64
		n      int
	}{
		{5, io.SeekStart, 5, 3},
		{10, io.SeekCurrent, 18, 100},
		{-7, io.SeekEnd, int64(len(data)) - 7, 7},
		{copyBufSize - 2, io.SeekStart, copyBufSize - 2, 4},
		{0, io.SeekStart, 0, 1},
	} {
		pos, err := r.Seek(tc.off, tc.whence)
		if err != nil || pos != tc.pos {
			t.Fatalf("Seek(%d, %d) = %d, %v; want %d", tc.off, tc.whence, pos, err, tc.pos)
		}
		buf := make([]byte, tc.n)
		if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, data[pos:pos+int64(tc.n)]) {
			t.Fatalf("reading %d bytes at %d: %v or wrong bytes", tc.n, pos, err)
		}
	}
	if pos, _ := r.Seek(0, io.SeekEnd); pos != int64(len(data)) {
		t.Fatalf("end at %d, want %d", pos, len(data))
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read at end = %d, %v; want io.EOF", n, err)
	}

	// iotest.TestReader checks Read, Seek and ReadAt against the content.
	r2, err := s.Open(ctx, "seek")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := iotest.TestReader(r2, data); err != nil {
		t.Fatal(err)
	}
}

func TestServeContentRange(t *testing.T) {
	s, _ := newFS(t)
	data := []byte("0123456789abcdef")
	put(t, s, "page.txt", data)
	for _, tc := range []struct {
		rng        string
		status     int
		body, cr   string
		wantLength string
	}{
		{"", http.StatusOK, string(data), "", "16"},
		{"bytes=2-5", http.StatusPartialContent, "2345", "bytes 2-5/16", "4"},
		{"bytes=-3", http.StatusPartialContent, "def", "bytes 13-15/16", "3"},
		{"bytes=10-", http.StatusPartialContent, "abcdef", "bytes 10-15/16", "6"},
		{"bytes=20-30", http.StatusRequestedRangeNotSatisfiable, "", "bytes */16", ""},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			r, err := s.Open(context.Background(), "page.txt")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			req := httptest.NewRequest(http.MethodGet, "/page.txt", nil)
			if tc.rng != "" {
				req.Header.Set("Range", tc.rng)
			}
			rec := httptest.NewRecorder()
			http.ServeContent(rec, req, "page.txt", r.Info().ModTime, r)
			if rec.Code != tc.status || rec.Header().Get("Content-Range") != tc.cr {
				t.Fatalf("status %d, Content-Range %q; want %d, %q", rec.Code, rec.Header().Get("Content-Range"), tc.status, tc.cr)
			}
			if tc.status != http.StatusRequestedRangeNotSatisfiable {
				if rec.Body.String() != tc.body || rec.Header().Get("Content-Length") != tc.wantLength {
					t.Fatalf("body %q, Content-Length %q; want %q, %q", rec.Body, rec.Header().Get("Content-Length"), tc.body, tc.wantLength)
				}
			}
		})
	}
}

func TestCopy(t *testing.T) {
	for _, mode := range []string{"link", "streamed"} {
		t.Run(mode, func(t *testing.T) {
			s, dir := newFS(t)
			linkFailed := false
			if mode == "streamed" {
				s.link = func(string, string) error {
					linkFailed = true
					return &os.LinkError{Op: "link", Err: errors.ErrUnsupported}
				}
			}
			ctx := context.Background()
			data := genBytes(9, 2*copyBufSize+3)
			put(t, s, "src", data)

			// Copy, then delete the source: the copy stays whole.
			if err := s.Copy(ctx, "src", "dst"); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "src"); err != nil {
				t.Fatal(err)
			}
			assertMissing(t, s, "src")
			if !bytes.Equal(read(t, s, "dst"), data) {
				t.Fatal("the copy changed when its source was deleted")
			}

			// Copy, then replace the source: the copy keeps the old content.
			if err := s.Copy(ctx, "dst", "dst2"); err != nil {
				t.Fatal(err)
			}
			put(t, s, "dst", []byte("new"))
			if !bytes.Equal(read(t, s, "dst2"), data) {
				t.Fatal("the copy changed when its source was replaced")
			}

			// Copy over an existing blob replaces it.
			put(t, s, "other", []byte("other content"))
			if err := s.Copy(ctx, "other", "dst2"); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, "dst2"); string(got) != "other content" {
				t.Fatalf("copy over an existing blob reads %q", got)
			}
			// Again, now that dst2 may be a link to the same inode as other.
			if err := s.Copy(ctx, "other", "dst2"); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, "dst2"); string(got) != "other content" {
				t.Fatalf("repeated copy reads %q", got)
			}
			// Onto itself.
			if err := s.Copy(ctx, "other", "other"); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, "other"); string(got) != "other content" {
				t.Fatalf("copy onto itself reads %q", got)
			}

			// Empty blob.
			put(t, s, "empty", nil)
			if err := s.Copy(ctx, "empty", "empty2"); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, "empty2"); len(got) != 0 {
				t.Fatalf("copy of empty blob has %d bytes", len(got))
			}

			// A missing source.
			for _, dst := range []string{"nowhere", "dst2"} {
				if err := s.Copy(ctx, "missing", dst); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Copy from a missing key to %q: %v, want ErrNotFound", dst, err)
				}
			}
			if err := s.Copy(ctx, "missing", "missing"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Copy of a missing key onto itself: %v, want ErrNotFound", err)
			}
			assertMissing(t, s, "nowhere")
			if got := read(t, s, "dst2"); string(got) != "other content" {
				t.Fatalf("failed copy changed dst2 to %q", got)
			}

			// A cancelled context.
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := s.Copy(cctx, "other", "cancelled"); !errors.Is(err, context.Canceled) {
				t.Fatalf("Copy with a cancelled context: %v", err)
			}
			assertMissing(t, s, "cancelled")

			if mode == "streamed" && !linkFailed {
				t.Fatal("the streamed copy was not exercised")
			}
			assertTmpEmpty(t, dir)
		})
	}
}

func TestCopySharesInodeWhenLinked(t *testing.T) {
	s, dir := newFS(t)
	put(t, s, "a", []byte("shared"))
	if err := s.Copy(context.Background(), "a", "b"); err != nil {
		t.Fatal(err)
	}
	_, pa := s.path("a")
	_, pb := s.path("b")
	sa, err1 := os.Stat(pa)
	sb, err2 := os.Stat(pb)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !os.SameFile(sa, sb) {
		t.Skip("the filesystem did not hard-link (the streamed copy is tested in TestCopy)")
	}
	assertTmpEmpty(t, dir)
}

func TestDelete(t *testing.T) {
	s, _ := newFS(t)
	ctx := context.Background()
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	put(t, s, "k", []byte("x"))
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	assertMissing(t, s, "k")
	// An open reader outlives the delete.
	put(t, s, "open", []byte("still here"))
	r, err := s.Open(ctx, "open")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := s.Delete(ctx, "open"); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "still here" {
		t.Fatalf("reader after delete: %q, %v", b, err)
	}
}

func TestSweep(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	put(t, s, "kept", []byte("blob"))
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
	_, kept := s.path("kept")
	if err := os.Chtimes(kept, now.Add(-48*time.Hour), now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}

	n, err := s.Sweep(ctx, time.Hour)
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 removed", n, err)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"put-edge-in", "put-future", "put-new", "put-young"}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Fatalf("tmp holds %v after the sweep, want %v", left, want)
	}
	if string(read(t, s, "kept")) != "blob" {
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
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 300 {
		t.Fatalf("%d files left, want 300", len(ents))
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
	assertMissing(t, s, "stalled")
	assertTmpEmpty(t, dir)
}

func TestConcurrentPuts(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	const writers = 16
	sizes := func(i int) int64 { return int64(100<<10 + i*37<<10 + i) }

	t.Run("different keys", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				key := fmt.Sprintf("key-%d", i)
				if _, err := s.Put(ctx, key, gen(byte(i), sizes(i)), -1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for i := range writers {
			n, h := genSum(byte(i), sizes(i))
			b := read(t, s, fmt.Sprintf("key-%d", i))
			if int64(len(b)) != n || sum(b) != h {
				t.Fatalf("key-%d: %d bytes %s, want %d %s", i, len(b), sum(b), n, h)
			}
		}
		assertTmpEmpty(t, dir)
	})

	t.Run("same key", func(t *testing.T) {
		valid := map[string]int64{} // SHA-256: size of every version
		for i := range writers {
			n, h := genSum(byte(i), sizes(i))
			valid[h] = n
		}
		if _, err := s.Put(ctx, "same", gen(0, sizes(0)), -1); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var readers, wg sync.WaitGroup
		for range 4 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					r, err := s.Open(ctx, "same")
					if err != nil {
						t.Error(err)
						return
					}
					h := sha256.New()
					n, err := io.Copy(h, r)
					r.Close()
					if want, ok := valid[hex.EncodeToString(h.Sum(nil))]; err != nil || !ok || want != n {
						t.Errorf("a reader saw %d bytes that are no complete version (%v)", n, err)
						return
					}
				}
			})
		}
		for i := range writers {
			wg.Go(func() {
				info, err := s.Put(ctx, "same", gen(byte(i), sizes(i)), -1)
				if err != nil {
					t.Error(err)
				} else if valid[info.SHA256] != info.Size {
					t.Errorf("Put returned %+v, no version", info)
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		b := read(t, s, "same")
		if n, ok := valid[sum(b)]; !ok || n != int64(len(b)) {
			t.Fatalf("the final blob (%d bytes) is no complete version", len(b))
		}
		assertTmpEmpty(t, dir)
	})
}

func TestLargePutStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	s, dir := newFS(t)
	const size = 64 << 20
	wantN, wantH := genSum(3, size)
	// Warm up the buffer pool and everything lazily initialised.
	if _, err := s.Put(context.Background(), "warm", gen(3, copyBufSize), -1); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	info, err := s.Put(context.Background(), "large", gen(3, size), -1)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != wantN || info.SHA256 != wantH {
		t.Fatalf("Put = %d bytes %s, want %d %s", info.Size, info.SHA256, wantN, wantH)
	}
	// TotalAlloc counts every byte allocated, freed or not, so it bounds the
	// heap growth too.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB Put allocated %d KiB", size>>20, allocated>>10)
	if allocated > 16<<20 {
		t.Fatalf("a %d MiB Put allocated %d MiB; it should stream", size>>20, allocated>>20)
	}
	r, err := s.Open(context.Background(), "large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	if n, err := io.Copy(h, r); err != nil || n != wantN || hex.EncodeToString(h.Sum(nil)) != wantH {
		t.Fatalf("reading back: %d bytes, %v, or wrong hash", n, err)
	}
	assertTmpEmpty(t, dir)
}

func BenchmarkPut(b *testing.B) {
	s, _ := newFS(b)
	const size = 256 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		// Seed 0: the generator only copies, so the time measured is the Put's.
		if _, err := s.Put(context.Background(), "bench", gen(0, size), -1); err != nil {
			b.Fatal(err)
		}
	}
}
