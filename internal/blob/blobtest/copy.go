package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
)

// TestCopy is the suite's test of Copy (run by Run too).
func (h Harness) TestCopy(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	data := GenBytes(9, 2*h.Chunk+3)
	Put(t, s, "src", data)

	// Copy, then delete the source: the copy stays whole.
	if err := s.Copy(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	AssertMissing(t, s, "src")
	if !bytes.Equal(Read(t, s, "dst"), data) {
		t.Fatal("the copy changed when its source was deleted")
	}

	// Copy, then replace the source: the copy keeps the old content.
	if err := s.Copy(ctx, "dst", "dst2"); err != nil {
		t.Fatal(err)
	}
	Put(t, s, "dst", []byte("new"))
	if !bytes.Equal(Read(t, s, "dst2"), data) {
		t.Fatal("the copy changed when its source was replaced")
	}

	// Copy over an existing blob replaces it, again and again.
	Put(t, s, "other", []byte("other content"))
	for range 2 {
		if err := s.Copy(ctx, "other", "dst2"); err != nil {
			t.Fatal(err)
		}
		if got := Read(t, s, "dst2"); string(got) != "other content" {
			t.Fatalf("copy over an existing blob reads %q", got)
		}
	}
	// Onto itself.
	if err := s.Copy(ctx, "other", "other"); err != nil {
		t.Fatal(err)
	}
	if got := Read(t, s, "other"); string(got) != "other content" {
		t.Fatalf("copy onto itself reads %q", got)
	}

	// Empty blob.
	Put(t, s, "empty", nil)
	if err := s.Copy(ctx, "empty", "empty2"); err != nil {
		t.Fatal(err)
	}
	if got := Read(t, s, "empty2"); len(got) != 0 {
		t.Fatalf("copy of empty blob has %d bytes", len(got))
	}

	// A missing source.
	for _, dst := range []string{"nowhere", "dst2"} {
		if err := s.Copy(ctx, "missing", dst); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("Copy from a missing key to %q: %v, want ErrNotFound", dst, err)
		}
	}
	if err := s.Copy(ctx, "missing", "missing"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Copy of a missing key onto itself: %v, want ErrNotFound", err)
	}
	AssertMissing(t, s, "nowhere")
	if got := Read(t, s, "dst2"); string(got) != "other content" {
		t.Fatalf("failed copy changed dst2 to %q", got)
	}

	// A cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Copy(cctx, "other", "cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Copy with a cancelled context: %v", err)
	}
	AssertMissing(t, s, "cancelled")
}

func (h Harness) testDelete(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	Put(t, s, "k", []byte("x"))
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	AssertMissing(t, s, "k")
	// A reader opened before the delete reads the content whole (or,
	// without Snapshot, fails).
	Put(t, s, "open", []byte("still here"))
	r, err := s.Open(ctx, "open")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := s.Delete(ctx, "open"); err != nil {
		t.Fatal(err)
	}
	h.readRest(t, r, nil, []byte("still here"))
	AssertMissing(t, s, "open")
}

func (h Harness) testWalk(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	walk := func() []string {
		t.Helper()
		var keys []string
		err := s.Walk(ctx, func(key string, mod time.Time) error {
			if time.Since(mod) > time.Hour || time.Until(mod) > time.Minute {
				t.Errorf("%s: modification time %v, want about now", key, mod)
			}
			keys = append(keys, key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(keys)
		return keys
	}
	if got := walk(); len(got) != 0 {
		t.Fatalf("an empty store walks %v", got)
	}
	for _, k := range []string{"a", "b.1", "c_2"} {
		Put(t, s, k, []byte(k))
	}
	if err := s.Copy(ctx, "a", "d"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "b.1"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(walk()); got != "[a c_2 d]" {
		t.Fatalf("Walk visits %s, want [a c_2 d]", got)
	}
	// fn's error stops the walk and is returned.
	stop := errors.New("stop")
	calls := 0
	if err := s.Walk(ctx, func(string, time.Time) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Walk whose fn fails: %v after %d calls, want stop after 1", err, calls)
	}
}

func (h Harness) testID(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if ids[i], err = s.ID(ctx, fmt.Sprintf("id-%d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("concurrent first IDs: %q, want one id for all", ids)
		}
	}
	if got, err := s.ID(ctx, "other"); err != nil || got != ids[0] {
		t.Fatalf("ID after the first: %q %v, want %q", got, err, ids[0])
	}
	if err := s.SetID(ctx, "replaced"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ID(ctx, "other"); err != nil || got != "replaced" {
		t.Fatalf("ID after SetID: %q %v", got, err)
	}
	// The id is no blob.
	if err := s.Walk(ctx, func(k string, _ time.Time) error { return fmt.Errorf("walk visits %q", k) }); err != nil {
		t.Fatal(err)
	}
}

func (h Harness) testConcurrentPuts(t *testing.T) {
	s := h.store(t)
	ctx := context.Background()
	const writers = 16
	sizes := func(i int) int64 { return int64(100<<10 + i*37<<10 + i) }

	t.Run("different keys", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				key := fmt.Sprintf("key-%d", i)
				if _, err := s.Put(ctx, key, Gen(byte(i), sizes(i)), -1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for i := range writers {
			n, sum := GenSum(byte(i), sizes(i))
			b := Read(t, s, fmt.Sprintf("key-%d", i))
			if int64(len(b)) != n || Sum(b) != sum {
				t.Fatalf("key-%d: %d bytes %s, want %d %s", i, len(b), Sum(b), n, sum)
			}
		}
	})

	t.Run("same key", func(t *testing.T) {
		valid := map[string]int64{} // SHA-256: size of every version
		for i := range writers {
			n, sum := GenSum(byte(i), sizes(i))
			valid[sum] = n
		}
		if _, err := s.Put(ctx, "same", Gen(0, sizes(0)), -1); err != nil {
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
					n, sum, err := tryHash(r)
					r.Close()
					if err != nil && !h.Snapshot {
						continue // replaced while read: it failed, which is allowed
					}
					if want, ok := valid[sum]; err != nil || !ok || want != n {
						t.Errorf("a reader saw %d bytes that are no complete version (%v)", n, err)
						return
					}
				}
			})
		}
		for i := range writers {
			wg.Go(func() {
				info, err := s.Put(ctx, "same", Gen(byte(i), sizes(i)), -1)
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
		b := Read(t, s, "same")
		if n, ok := valid[Sum(b)]; !ok || n != int64(len(b)) {
			t.Fatalf("the final blob (%d bytes) is no complete version", len(b))
		}
	})
}

// tryHash reads r whole: its size and SHA-256.
func tryHash(r io.Reader) (int64, string, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return n, hex.EncodeToString(h.Sum(nil)), err
}

func sumOf(t *testing.T, r io.Reader) (int64, string) {
	t.Helper()
	n, sum, err := tryHash(r)
	if err != nil {
		t.Fatal(err)
	}
	return n, sum
}
