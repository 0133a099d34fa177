package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
)

// pattern is what Gen repeats; its odd length keeps it out of step with
// every buffer size.
var pattern = func() []byte {
	b := make([]byte, 64<<10+13)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

// GenReader yields size bytes (forever when size < 0) of a fixed pattern
// XOR seed, without allocating. Off is how many it has yielded.
type GenReader struct {
	seed      byte
	size, Off int64
}

// Gen returns a GenReader of size bytes.
func Gen(seed byte, size int64) *GenReader { return &GenReader{seed: seed, size: size} }

func (g *GenReader) Read(p []byte) (int, error) {
	if g.size >= 0 {
		if g.Off >= g.size {
			return 0, io.EOF
		}
		if rem := g.size - g.Off; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	n := 0
	for n < len(p) {
		n += copy(p[n:], pattern[int((g.Off+int64(n))%int64(len(pattern))):])
	}
	if g.seed != 0 {
		for i := range p {
			p[i] ^= g.seed
		}
	}
	g.Off += int64(n)
	return n, nil
}

// GenSum is the size and SHA-256 of Gen(seed, size)'s output.
func GenSum(seed byte, size int64) (int64, string) {
	h := sha256.New()
	n, _ := io.Copy(h, Gen(seed, size))
	return n, hex.EncodeToString(h.Sum(nil))
}

// GenBytes is Gen(seed, size)'s output.
func GenBytes(seed byte, size int64) []byte {
	b, _ := io.ReadAll(Gen(seed, size))
	return b
}

// Sum is the SHA-256 of b in hex.
func Sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Put stores b under key.
func Put(t testing.TB, s blob.Store, key string, b []byte) blob.Info {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(b), -1)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

// Read returns the whole content stored under key.
func Read(t testing.TB, s blob.Store, key string) []byte {
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

// AssertMissing fails unless Open says nothing is stored under key.
func AssertMissing(t testing.TB, s blob.Store, key string) {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err == nil {
		r.Close()
		t.Fatalf("Open(%q) succeeded, want ErrNotFound", key)
	}
	if !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open(%q): %v, want ErrNotFound", key, err)
	}
}

// cancelReader yields data and cancels its context once it has yielded
// after bytes.
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
