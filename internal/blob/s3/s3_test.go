package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/blob/blobtest"
	"github.com/botplatform/botplatform/internal/blob/s3"
	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
)

// partSize is S3's smallest: the tests reach multipart uploads with little
// data.
const partSize = 5 << 20

var prefixes atomic.Int64

// newStore opens a Store under a new prefix of gw's bucket.
func newStore(t testing.TB, gw *s3test.Gateway) (*s3.Store, string) {
	t.Helper()
	prefix := fmt.Sprintf("t%d/", prefixes.Add(1))
	c := gw.Config(prefix)
	c.PartSize = partSize
	s, err := s3.New(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, prefix
}

// leftovers lists what a store under prefix holds besides its blobs and
// its id: multipart uploads in progress, other objects.
func leftovers(t testing.TB, gw *s3test.Gateway, prefix string) []string {
	var left []string
	for _, u := range gw.Uploads(t, prefix) {
		left = append(left, "upload of "+u)
	}
	for _, o := range gw.Objects(t, prefix) {
		if !strings.HasPrefix(o, prefix+"objects/") && o != prefix+"store-id" {
			left = append(left, o)
		}
	}
	return left
}

func TestS3Conformance(t *testing.T) {
	gw := s3test.Start(t)
	blobtest.Harness{
		New: func(t testing.TB) (blob.Store, func() []string) {
			s, prefix := newStore(t, gw)
			return s, func() []string { return leftovers(t, gw, prefix) }
		},
		Chunk: partSize,
		// Every request of a Reader asks for the version it opened, so a
		// replaced blob fails the read; the bucket keeps no old versions.
		Snapshot: false,
		// One part in memory, far less than the 64 MiB put.
		MaxPutAlloc: 16 << 20,
	}.Run(t)
}

func TestS3SweepAbortsAbandonedUploads(t *testing.T) {
	gw := s3test.Start(t)
	s, prefix := newStore(t, gw)
	ctx := context.Background()
	// What a crashed Put leaves: an upload with a part, never completed.
	core := minio.Core{Client: gw.Client}
	name := prefix + "objects/crashed"
	id, err := core.NewMultipartUpload(ctx, gw.Bucket, name, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.PutObjectPart(ctx, gw.Bucket, name, id, 1, bytes.NewReader([]byte("part")), 4, minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another store's upload is not this one's business.
	other := "elsewhere/objects/crashed"
	if _, err := core.NewMultipartUpload(ctx, gw.Bucket, other, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Sweep(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("Sweep of a young upload = %d, %v; want 0", n, err)
	}
	if got := gw.Uploads(t, prefix); len(got) != 1 {
		t.Fatalf("uploads after sweeping young ones: %v", got)
	}
	if n, err := s.Sweep(ctx, -time.Hour); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if got := gw.Uploads(t, prefix); len(got) != 0 {
		t.Fatalf("uploads after the sweep: %v", got)
	}
	if got := gw.Uploads(t, "elsewhere/"); len(got) != 1 {
		t.Fatalf("another prefix's uploads after the sweep: %v", got)
	}
	blobtest.AssertMissing(t, s, "crashed")
	// A cancelled context stops it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Sweep(cctx, 0); err == nil {
		t.Fatal("Sweep with a cancelled context succeeded")
	}
}

func TestS3StalledPutSweptFailsCleanly(t *testing.T) {
	// A Put whose multipart upload is swept from under it fails and leaves
	// nothing visible.
	gw := s3test.Start(t)
	s, prefix := newStore(t, gw)
	ctx := context.Background()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, "stalled", pr, -1)
		done <- err
	}()
	// More than a part: the upload exists once its first part went up.
	if _, err := io.Copy(pw, blobtest.Gen(1, partSize+1)); err != nil {
		t.Fatal(err)
	}
	for len(gw.Uploads(t, prefix)) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := s.Sweep(ctx, -time.Hour); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	// The rest, until Put gives up (its next part fails).
	go func() {
		io.Copy(pw, blobtest.Gen(2, 2*partSize))
		pw.Close()
	}()
	err := <-done
	pr.Close() // unblocks the writer
	if err == nil {
		t.Fatal("Put whose upload was swept succeeded")
	}
	blobtest.AssertMissing(t, s, "stalled")
	if left := leftovers(t, gw, prefix); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestS3New(t *testing.T) {
	gw := s3test.Start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(*blob.S3Config)
		want string
	}{
		{"missing bucket", func(c *blob.S3Config) { c.Bucket = "nope" }, `bucket "nope" does not exist`},
		{"wrong secret", func(c *blob.S3Config) { c.SecretKey = "wrong" }, `bucket "botplatform"`},
		{"part too small", func(c *blob.S3Config) { c.PartSize = 1 << 20 }, "part size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gw.Config("x/")
			tc.edit(&c)
			_, err := s3.New(ctx, c, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error with %q", err, tc.want)
			}
		})
	}
	s, err := s3.New(ctx, gw.Config("x/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "s3://botplatform/x/?endpoint=" + url.QueryEscape("http://"+gw.Endpoint); s.String() != want {
		t.Fatalf("String() = %q, want %q", s.String(), want)
	}
}

// swapBody is a transport that answers GETs of objects with body instead
// of what the bucket sent, as a gateway does that tests If-Match against
// one version and sends another.
type swapBody struct {
	base http.RoundTripper
	body atomic.Pointer[[]byte]
	etag atomic.Pointer[string]
}

func (s *swapBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/objects/") {
		return resp, err
	}
	if b := s.body.Load(); b != nil {
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(*b))
		resp.ContentLength = int64(len(*b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(*b)))
		resp.Header.Del("Content-Range")
	}
	if e := s.etag.Load(); e != nil {
		resp.Header.Set("ETag", *e)
	}
	return resp, nil
}

// TestS3ReaderRefusesAnotherVersion: a Reader returns the bytes of the
// version it opened or fails; it never returns another version's bytes,
// whatever the bucket sends.
func TestS3ReaderRefusesAnotherVersion(t *testing.T) {
	gw := s3test.Start(t)
	ctx := context.Background()
	swap := &swapBody{}
	c := gw.Config("swap/")
	c.PartSize = partSize
	s, err := s3.New(ctx, c, func(base http.RoundTripper) http.RoundTripper { swap.base = base; return swap })
	if err != nil {
		t.Fatal(err)
	}
	const size = 40 << 10
	if _, err := s.Put(ctx, "k", blobtest.Gen(1, size), -1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body []byte
		etag string
	}{
		{"longer", bytes.Repeat([]byte("x"), size+100), ""},
		{"shorter", bytes.Repeat([]byte("x"), size-100), ""},
		{"other etag", nil, `"0123456789abcdef0123456789abcdef"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Open(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			swap.body.Store(nil)
			swap.etag.Store(nil)
			if tc.body != nil {
				swap.body.Store(&tc.body)
			}
			if tc.etag != "" {
				swap.etag.Store(&tc.etag)
			}
			defer swap.body.Store(nil)
			defer swap.etag.Store(nil)
			n, err := io.Copy(io.Discard, r)
			if err == nil {
				t.Fatalf("read %d bytes of another version without an error", n)
			}
			if n > size {
				t.Fatalf("read %d bytes, more than the %d of the version opened", n, size)
			}
		})
	}
	// Untouched, the same reads succeed.
	b := blobtest.Read(t, s, "k")
	if n, sum := blobtest.GenSum(1, size); int64(len(b)) != n || blobtest.Sum(b) != sum {
		t.Fatalf("read %d bytes %s, want %d %s", len(b), blobtest.Sum(b), n, sum)
	}
}
