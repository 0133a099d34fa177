package main

// Files end-to-end on object storage: serve --blob-url s3://… against a
// real S3-compatible gateway (Versity's), on each database.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob/blobtest"
	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestFilesOnObjectStorage: the gateway's credentials are in the process's
// environment (TestMain), as serve reads them.
func TestFilesOnObjectStorage(t *testing.T) {
	t.Parallel()
	gw := s3test.Start(t)
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) { testFilesOnObjectStorage(t, gw, backend+"/") })
	}
}

func testFilesOnObjectStorage(t *testing.T, gw *s3test.Gateway, prefix string) {
	objects := prefix + "objects/"
	// Content no file refers to, from before this start: a crash between
	// storing an upload and recording it. The reaper removes it; an object
	// that is no file's content is not its business.
	orphan, stranger := objects+"file_01ORPHAN.1.X", objects+"not-a-file-key"
	gw.Put(t, orphan, []byte("orphan"))
	gw.Put(t, stranger, []byte("stranger"))
	gw.Age(t, orphan, 3*time.Hour)
	gw.Age(t, stranger, 3*time.Hour)

	dir, dbURL := storage(t, strings.TrimSuffix(prefix, "/"))
	s := startServer(t, dir, dbURL, "--blob-url", gw.URL(prefix), "--reaper-interval", "1s")
	if _, err := os.Stat(filepath.Join(dir, "blobs")); !os.IsNotExist(err) {
		t.Errorf("the data directory has blobs/ (%v): contents belong in the bucket", err)
	}
	eventually(t, "the reaper to remove the orphan object", func() bool {
		return !slices.Contains(gw.Objects(t, objects), orphan)
	})
	if !slices.Contains(gw.Objects(t, objects), stranger) {
		t.Errorf("the reaper removed %s, which is no file's content", stranger)
	}

	e := newFilesEnv(t, s, "s3")
	f := e.f
	// Larger than a part (8 MiB): a multipart upload.
	content := blobtest.GenBytes(7, 12<<20+5)
	sum := sha256.Sum256(content)
	file := f.create(s, "big.bin", content, nil)
	if file.Status != "upload_completed" || file.Size == nil || *file.Size != int64(len(content)) {
		t.Fatalf("after the upload: status %s size %v", file.Status, file.Size)
	}
	got := s.fetch(t, file.URL)
	if got.Status != 200 || sha256.Sum256(got.Body) != sum || got.Header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("download: status %d, %d bytes, ETag %s; want the %d uploaded", got.Status, len(got.Body), got.Header.Get("ETag"), len(content))
	}
	part := s.fetch(t, file.URL, "Range", "bytes=9437180-9437189")
	if part.Status != 206 || !bytes.Equal(part.Body, content[9437180:9437190]) {
		t.Fatalf("range download: status %d %q", part.Status, part.Body)
	}
	stored := withPrefix(gw.Objects(t, objects), objects+file.ID+".")
	if len(stored) != 1 {
		t.Fatalf("objects of the file: %v, want one", stored)
	}

	// Failed uploads leave no object and no upload in progress.
	before := gw.Objects(t, objects)
	over := f.mustUpsert(map[string]any{"key": "over.bin", "size": 9 << 20})
	s.upload(t, over.UploadURL, over.ContentType, blobtest.GenBytes(1, 9<<20+1)).fail(413, "PayloadTooLarge", "declared")
	if f.getFile(over.ID).Status != "upload_failed" {
		t.Errorf("an upload larger than declared: %s", f.getFile(over.ID).Status)
	}
	cut := f.mustUpsert(map[string]any{"key": "cut.bin", "size": 20 << 20})
	s.cutUpload(t, cut.UploadURL, 20<<20, blobtest.GenBytes(2, 9<<20)) // one part sent, then the connection ends
	if st := f.getFile(cut.ID).Status; st != "upload_pending" {
		t.Errorf("a cut upload: %s, want upload_pending (the URL can be used again)", st)
	}
	eventually(t, "the cut upload's multipart upload to be aborted", func() bool { return len(gw.Uploads(t, prefix)) == 0 })
	if after := gw.Objects(t, objects); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("failed uploads changed the bucket from %v to %v", before, after)
	}

	// Public content keeps its permanent URL.
	pub := f.create(s, "public.txt", []byte("for everyone"), map[string]any{"accessPolicies": []string{"public_content"}})
	if r := s.fetch(t, pub.URL); r.Status != 200 || string(r.Body) != "for everyone" || strings.Contains(pub.URL, "?") {
		t.Errorf("public file %s: %d %q", pub.URL, r.Status, r.Body)
	}

	// Deleting a file removes its object.
	f.del(file.ID).ok()
	if left := withPrefix(gw.Objects(t, objects), objects+file.ID+"."); len(left) != 0 {
		t.Errorf("objects of the deleted file: %v", left)
	}

	// backup copies contents from the data directory: with a bucket it
	// refuses and says where to look.
	_, _, err := runCLI(t, "backup", "--data", dir, "--to", filepath.Join(t.TempDir(), "b"), "--blob-url", gw.URL(prefix))
	if err == nil || !strings.Contains(err.Error(), "docs/deploy.md") {
		t.Errorf("backup of a server on a bucket: %v", err)
	}

	// The same server again, redirecting downloads to the bucket.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	testRedirectDownloads(t, gw, startServer(t, dir, dbURL, "--blob-url", gw.URL(prefix), "--blob-download", "redirect"))
}

// testRedirectDownloads: with --blob-download redirect, a file's url
// answers a GET with a 307 to a presigned URL of the bucket, once the
// server has checked it as when it streams.
func testRedirectDownloads(t *testing.T, gw *s3test.Gateway, s *testServer) {
	e := newFilesEnv(t, s, "s3 redirect")
	f := e.f
	content := blobtest.GenBytes(8, 9<<20+3)
	sum := sha256.Sum256(content)
	file := f.create(s, "redirected.bin", content, nil)

	r, _ := download(t, http.MethodGet, file.URL, false)
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(loc, "http://"+gw.Endpoint+"/"+gw.Bucket+"/") {
		t.Fatalf("GET of the url: %d to %q, want 307 to the bucket", r.StatusCode, loc)
	}
	r, body := download(t, http.MethodGet, file.URL, true)
	if r.StatusCode != 200 || sha256.Sum256(body) != sum || r.Header.Get("Content-Type") != file.ContentType {
		t.Fatalf("download through the redirect: %d, %d bytes as %q; want the %d uploaded as %q", r.StatusCode, len(body),
			r.Header.Get("Content-Type"), len(content), file.ContentType)
	}
	r, body = download(t, http.MethodGet, file.URL, true, "Range", "bytes=8388600-8388615") // across the first part's end
	if r.StatusCode != 206 || !bytes.Equal(body, content[8388600:8388616]) {
		t.Fatalf("range download through the redirect: %d %q", r.StatusCode, body)
	}
	// HEAD and conditional requests are the server's: a presigned URL is
	// for GET, and the bucket's ETag is not the file's.
	r, _ = download(t, http.MethodHead, file.URL, false)
	if r.StatusCode != 200 || r.ContentLength != int64(len(content)) || r.Header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("HEAD: %d, length %d, ETag %s", r.StatusCode, r.ContentLength, r.Header.Get("ETag"))
	}
	r, _ = download(t, http.MethodGet, file.URL, false, "If-None-Match", `"`+hex.EncodeToString(sum[:])+`"`)
	if r.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional GET: %d, want 304", r.StatusCode)
	}

	// The server still checks the url first: nothing that was refused is
	// redirected.
	sig := []byte(queryOf(t, file.URL, "signature"))
	sig[0] ^= 1
	tampered := withQuery(t, file.URL, "signature", string(sig))
	if r, body := download(t, http.MethodGet, tampered, false); r.StatusCode != 403 || r.Header.Get("Location") != "" {
		t.Fatalf("tampered url: %d %s (Location %q), want 403 and no redirect", r.StatusCode, body, r.Header.Get("Location"))
	}

	pub := f.create(s, "public.txt", []byte("for everyone"), map[string]any{"accessPolicies": []string{"public_content"}})
	if r, _ := download(t, http.MethodGet, pub.URL, false); r.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("public url: %d, want 307", r.StatusCode)
	}
	// The store answers with the file's type, not the one it stored.
	if r, body := download(t, http.MethodGet, pub.URL, true); r.StatusCode != 200 || string(body) != "for everyone" ||
		r.Header.Get("Content-Type") != pub.ContentType || !strings.HasPrefix(pub.ContentType, "text/plain") {
		t.Fatalf("public file through the redirect: %d %q as %q, want %q", r.StatusCode, body, r.Header.Get("Content-Type"), pub.ContentType)
	}

	f.del(file.ID).ok()
	f.del(pub.ID).ok()
	for _, u := range []string{file.URL, pub.URL} {
		if r, body := download(t, http.MethodGet, u, false); r.StatusCode != 404 || r.Header.Get("Location") != "" {
			t.Fatalf("url of a deleted file: %d %s (Location %q), want 404 and no redirect", r.StatusCode, body, r.Header.Get("Location"))
		}
	}
	// A presigned URL handed out before lasts minutes, not the object.
	if r, _ := download(t, http.MethodGet, loc, false); r.StatusCode != 404 {
		t.Fatalf("the deleted file's presigned URL: %d, want the bucket's 404", r.StatusCode)
	}
}

// download sends a request to a file's url with a plain client, following
// redirects or not.
func download(t *testing.T, method, u string, follow bool, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	r, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return r, body
}

// withPrefix is the keys of list that start with prefix.
func withPrefix(list []string, prefix string) []string {
	var out []string
	for _, v := range list {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
