// Package blobtest is the conformance suite every blob.Store passes, with its test data generators.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
)

// Harness describes a Store implementation to the suite.
type Harness struct {
	// New returns an empty store, and a function listing what Puts left
	// behind in it (temporary files, pending uploads): after every test,
	// failed ones included, the suite wants nothing.
	New func(t testing.TB) (blob.Store, func() []string)
	// Chunk is the unit a Put reads and writes by (a buffer, a part):
	// contents around it reach every path of the implementation.
	Chunk int64
	// Snapshot: a Reader opened before its blob is replaced or deleted
	// still reads the old content whole. Without it, such a Reader may fail
	// instead; it never reads a mix of two contents.
	Snapshot bool
	// MaxPutAlloc bounds the bytes a 64 MiB Put may allocate.
	MaxPutAlloc uint64
}

// Run runs every test of the suite.
func (h Harness) Run(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"PutOpenRoundTrip", h.testRoundTrip},
		{"PutReplaceWhileReading", h.testReplaceWhileReading},
		{"PutMax", h.testMax},
		{"PutFailures", h.testFailures},
		{"InvalidKeys", h.testInvalidKeys},
		{"OpenSeek", h.testSeek},
		{"ServeContentRange", h.testServeContent},
		{"Copy", h.TestCopy},
		{"Delete", h.testDelete},
		{"Walk", h.testWalk},
		{"ID", h.testID},
		{"ConcurrentPuts", h.testConcurrentPuts},
		{"LargePutStreams", h.testLargePut},
	} {
		t.Run(tc.name, tc.run)
	}
}

// store returns a new store, checked for leftovers when the test ends.
func (h Harness) store(t *testing.T) blob.Store {
	t.Helper()
	s, left := h.New(t)
	t.Cleanup(func() {
		if l := left(); len(l) != 0 {
			t.Errorf("left behind: %v, want nothing", l)
		}
	})
	return s
}

func (h Harness) testRoundTrip(t *testing.T) {
	s := h.store(t)
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
		{"chunk size", "buf", GenBytes(1, h.Chunk), nil},
		{"several chunks", "several-buffers_2.bin", GenBytes(2, 3*h.Chunk+7), nil},
		{"one byte reads", "one", GenBytes(3, 10_000), iotest.OneByteReader},
		{"data with EOF", "eof", GenBytes(4, 100_000), iotest.DataErrReader},
		{"half reads", "half", GenBytes(5, 1<<20+1), iotest.HalfReader},
		{"longest key", strings.Repeat("k", blob.MaxKeyLen), []byte("long"), nil},
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
			if info.Size != int64(len(tc.data)) || info.SHA256 != Sum(tc.data) {
				t.Fatalf("Put = %d bytes %s, want %d %s", info.Size, info.SHA256, len(tc.data), Sum(tc.data))
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
		})
	}
}

// readRest reads what is left of r after head, the first bytes of old: the
// whole of old, or, without Snapshot, an error.
func (h Harness) readRest(t *testing.T, r io.Reader, head, old []byte) {
	t.Helper()
	rest, err := io.ReadAll(r)
	if err != nil && !h.Snapshot {
		return
	}
	if err != nil || !bytes.Equal(append(head, rest...), old) {
		t.Fatalf("a reader opened before its blob changed read %d bytes of it (%v), want the %d of the old content", len(head)+len(rest), err, len(old))
	}
}

func (h Harness) testReplaceWhileReading(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	v1, v2 := GenBytes(1, 3*h.Chunk), GenBytes(2, 1000)
	Put(t, s, "k", v1)
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
	info := Put(t, s, "k", v2)
	if info.Size != int64(len(v2)) || info.SHA256 != Sum(v2) {
		t.Fatalf("replacing Put = %+v", info)
	}
	h.readRest(t, old, head, v1)
	if old.Info().Size != int64(len(v1)) {
		t.Fatalf("the old reader's size changed to %d", old.Info().Size)
	}
	if !bytes.Equal(Read(t, s, "k"), v2) {
		t.Fatal("Open after the replace does not read the new content")
	}
}

func (h Harness) testMax(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	c := h.Chunk
	for _, tc := range []struct {
		size, max int64
		tooLarge  bool
	}{
		{0, 0, false},
		{1, 0, true},
		{10, 10, false},
		{11, 10, true},
		{c, c, false},
		{c + 1, c, true},
		{3 * c, c + 1, true},
		{3*c + 1, 3*c + 1, false},
		{1000, -1, false},
		{0, -1, false},
		{1000, math.MaxInt64, false},
	} {
		t.Run(fmt.Sprintf("%d bytes max %d", tc.size, tc.max), func(t *testing.T) {
			key := fmt.Sprintf("max-%d-%d", tc.size, tc.max)
			info, err := s.Put(ctx, key, Gen(0, tc.size), tc.max)
			if tc.tooLarge {
				if !errors.Is(err, blob.ErrTooLarge) {
					t.Fatalf("Put: %v, want ErrTooLarge", err)
				}
				AssertMissing(t, s, key)
			} else {
				n, sum := GenSum(0, tc.size)
				if err != nil || info.Size != n || info.SHA256 != sum {
					t.Fatalf("Put = %+v, %v; want %d bytes", info, err, n)
				}
			}
		})
	}

	t.Run("stops reading at max+1", func(t *testing.T) {
		endless := Gen(0, -1)
		if _, err := s.Put(ctx, "endless", endless, 1000); !errors.Is(err, blob.ErrTooLarge) {
			t.Fatalf("Put: %v, want ErrTooLarge", err)
		}
		if endless.Off > 1001 {
			t.Fatalf("read %d bytes, want at most 1001", endless.Off)
		}
		AssertMissing(t, s, "endless")
	})
}

func (h Harness) testFailures(t *testing.T) {
	boom := errors.New("boom")
	c := h.Chunk
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
			return context.Background(), io.MultiReader(Gen(0, 100), iotest.ErrReader(boom))
		}, -1, boom},
		{"error after 3 chunks", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(Gen(0, 3*c+5), iotest.ErrReader(boom))
		}, -1, boom},
		{"error after exactly 2 chunks", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(Gen(0, 2*c), iotest.ErrReader(boom))
		}, -1, boom},
		{"unexpected EOF after a chunk", func() (context.Context, io.Reader) {
			// A cut connection: io.ErrUnexpectedEOF is an error, not the end.
			return context.Background(), io.MultiReader(Gen(0, c+5), iotest.ErrReader(io.ErrUnexpectedEOF))
		}, -1, io.ErrUnexpectedEOF},
		{"error with data", func() (context.Context, io.Reader) {
			return context.Background(), io.MultiReader(Gen(0, 100), &dataErrReader{data: []byte("tail"), err: boom})
		}, -1, boom},
		{"timeout", func() (context.Context, io.Reader) {
			return context.Background(), iotest.TimeoutReader(Gen(0, 10*c))
		}, -1, iotest.ErrTimeout},
		{"context cancelled before", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, Gen(0, 100)
		}, -1, context.Canceled},
		{"context cancelled mid-stream", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, &cancelReader{r: Gen(0, -1), after: 2 * c, cancel: cancel}
		}, -1, context.Canceled},
		{"context cancelled on the last chunk", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			// DataErrReader hands over the last data with io.EOF, so Put sees
			// no further Read and must check the context before committing.
			return ctx, iotest.DataErrReader(&cancelReader{r: Gen(0, 1000), after: 1000, cancel: cancel})
		}, -1, context.Canceled},
		{"context cancelled on the last chunk of several", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, iotest.DataErrReader(&cancelReader{r: Gen(0, 2*c+10), after: 2*c + 10, cancel: cancel})
		}, -1, context.Canceled},
		{"deadline mid-stream", func() (context.Context, io.Reader) {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(50*time.Millisecond))
			t.Cleanup(cancel)
			return ctx, &slowReader{r: Gen(0, -1), delay: 5 * time.Millisecond}
		}, -1, context.DeadlineExceeded},
		{"too large", func() (context.Context, io.Reader) {
			return context.Background(), Gen(0, 2000)
		}, 1999, blob.ErrTooLarge},
		{"too large after chunks", func() (context.Context, io.Reader) {
			return context.Background(), Gen(0, 2*c+1)
		}, 2 * c, blob.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.store(t)
			for _, existing := range []bool{false, true} {
				key := "new"
				if existing {
					key = "existing"
					Put(t, s, key, []byte("old content"))
				}
				ctx, r := tc.reader()
				_, err := s.Put(ctx, key, r, tc.max)
				if !errors.Is(err, tc.want) {
					t.Fatalf("Put(%q): %v, want %v", key, err, tc.want)
				}
				if existing {
					if got := Read(t, s, key); string(got) != "old content" {
						t.Fatalf("failed Put changed %q to %d bytes", key, len(got))
					}
				} else {
					AssertMissing(t, s, key)
				}
			}
		})
	}
}

func (h Harness) testInvalidKeys(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	Put(t, s, "valid", []byte("v"))
	for _, key := range []string{
		"", ".", "..", "../x", "a/b", "/abs", `a\b`, "a b", "a\x00b", "a\nb", "é", "a:b", "a*", "~",
		strings.Repeat("k", blob.MaxKeyLen+1),
	} {
		t.Run(fmt.Sprintf("%.20q", key), func(t *testing.T) {
			if blob.ValidKey(key) {
				t.Fatal("ValidKey = true")
			}
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, blob.ErrInvalidKey) {
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
	for _, key := range []string{"a", "A-Z_0.9", ".hidden", "a..b", "...", "-", strings.Repeat("k", blob.MaxKeyLen)} {
		if !blob.ValidKey(key) {
			t.Errorf("ValidKey(%q) = false", key)
		}
	}
	AssertMissing(t, s, "valid2")
	var keys []string
	if err := s.Walk(ctx, func(k string, _ time.Time) error { keys = append(keys, k); return nil }); err != nil || fmt.Sprint(keys) != "[valid]" {
		t.Fatalf("the store holds %v (%v), want only [valid]", keys, err)
	}
}

func (h Harness) testSeek(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	AssertMissing(t, s, "nope")
	data := GenBytes(7, 3*h.Chunk+11)
	Put(t, s, "seek", data)

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
		{h.Chunk - 2, io.SeekStart, h.Chunk - 2, 4},
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

func (h Harness) testServeContent(t *testing.T) {
	s := h.store(t)
	data := []byte("0123456789abcdef")
	Put(t, s, "page.txt", data)
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

func (h Harness) testLargePut(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	s := h.store(t)
	const size = 64 << 20
	wantN, wantH := GenSum(3, size)
	// Warm up pools and everything lazily initialised.
	if _, err := s.Put(context.Background(), "warm", Gen(3, 2*h.Chunk), -1); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	info, err := s.Put(context.Background(), "large", Gen(3, size), -1)
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
	if allocated > h.MaxPutAlloc {
		t.Fatalf("a %d MiB Put allocated %d MiB, more than %d; it should stream", size>>20, allocated>>20, h.MaxPutAlloc>>20)
	}
	r, err := s.Open(context.Background(), "large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, sum := sumOf(t, r); n != wantN || sum != wantH {
		t.Fatalf("reading back: %d bytes %s", n, sum)
	}
}
