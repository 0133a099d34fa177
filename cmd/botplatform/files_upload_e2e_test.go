package main

// Files API end-to-end: uploads to uploadUrl, statuses, size and storage
// quotas, signed and public content URLs.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testUploadStatuses(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "statuses")
	f := e.f
	plain := f.mustUpsert(map[string]any{"key": "plain.txt", "size": 5})
	if plain.Status != "upload_pending" || plain.Size != nil || plain.FailedStatusReason != nil {
		t.Errorf("after upsert: %+v", plain)
	}
	r := s.upload(t, plain.UploadURL, plain.ContentType, []byte("hello"))
	if r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	got := f.getFile(plain.ID)
	if got.Status != "upload_completed" || got.Size == nil || *got.Size != 5 {
		t.Errorf("after upload (index false): status %s size %v", got.Status, got.Size)
	}
	indexed := f.mustUpsert(map[string]any{"key": "indexed.md", "size": 7, "index": true})
	if indexed.Status != "upload_pending" || !indexed.Index {
		t.Errorf("indexed upsert: %+v", indexed)
	}
	if r := s.upload(t, indexed.UploadURL, indexed.ContentType, []byte("# title")); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	got = f.getFile(indexed.ID)
	if got.Status != "indexing_pending" || got.Size == nil || *got.Size != 7 || got.IndexingStack != nil {
		t.Errorf("after upload (index true): status %s size %v stack %v", got.Status, got.Size, got.IndexingStack)
	}
	if u := storageUsage(t, e.ws, "knowledgebase_vector_storage"); u != 7 {
		t.Errorf("vector usage %d, want 7 (the indexed file)", u)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 12 {
		t.Errorf("file usage %d, want 12", u)
	}

	// More than declared: the upload fails, the file says why.
	over := f.upsert(map[string]any{"key": "over.txt", "size": 4})
	if over.Status != 200 {
		t.Fatalf("upsert: %d", over.Status)
	}
	of := over.file()
	s.upload(t, of.UploadURL, of.ContentType, []byte("too long")).fail(413, "PayloadTooLarge", "declared")
	got = f.getFile(of.ID)
	if got.Status != "upload_failed" || got.FailedStatusReason == nil || !strings.Contains(*got.FailedStatusReason, "declared") || got.Size != nil {
		t.Errorf("after an upload larger than declared: status %s reason %v size %v", got.Status, got.FailedStatusReason, got.Size)
	}
	s.fetch(t, got.URL).fail(404, "ResourceNotFound")
	// The failed file does not count, and upserting it again starts over.
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 12 {
		t.Errorf("file usage %d after a failed upload, want 12", u)
	}
	retry := f.mustUpsert(map[string]any{"key": "over.txt", "size": 8})
	if retry.Status != "upload_pending" || retry.FailedStatusReason != nil || retry.ID != of.ID {
		t.Errorf("re-upsert of a failed file: %+v", retry)
	}
	if r := s.upload(t, retry.UploadURL, retry.ContentType, []byte("too long")); r.Status != 200 {
		t.Fatalf("retry upload: %d %s", r.Status, r.Body)
	}
	if got := f.getFile(of.ID); got.Status != "upload_completed" || *got.Size != 8 {
		t.Errorf("retry: %+v", got)
	}
	// An empty file is a file.
	empty := f.create(s, "empty.txt", nil, nil)
	if empty.Status != "upload_completed" || empty.Size == nil || *empty.Size != 0 {
		t.Errorf("empty file: %+v", empty)
	}
	if r := s.fetch(t, empty.URL); r.Status != 200 || len(r.Body) != 0 {
		t.Errorf("empty content: %d %q", r.Status, r.Body)
	}
}

func testMaxFileSize(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "max-size")
	f := e.f
	setQuotas(t, e.ws, map[string]any{"file_max_size_bytes": 10})
	big := f.mustUpsert(map[string]any{"key": "big.txt", "size": 11}) // the upsert itself succeeds
	if big.Status != "upload_pending" {
		t.Errorf("upsert over the max file size: %+v", big)
	}
	s.upload(t, big.UploadURL, big.ContentType, []byte("01234567890")).fail(413, "PayloadTooLarge", "maximum file size")
	got := f.getFile(big.ID)
	if got.Status != "upload_failed" || got.FailedStatusReason == nil || !strings.Contains(*got.FailedStatusReason, "maximum file size") {
		t.Errorf("after an upload over the max file size: status %s reason %v", got.Status, got.FailedStatusReason)
	}
	ok := f.create(s, "ok.txt", []byte("0123456789"), nil) // exactly the maximum
	if ok.Status != "upload_completed" {
		t.Errorf("a file of exactly the maximum size: %+v", ok)
	}
	// Back to the default: the same size is fine.
	setQuotas(t, e.ws, map[string]any{"file_max_size_bytes": nil})
	if got := f.create(s, "big.txt", []byte("01234567890"), nil); got.Status != "upload_completed" {
		t.Errorf("after resetting the max file size: %+v", got)
	}
}

func testStorageQuota(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "storage")
	f := e.f
	setQuotas(t, e.ws, map[string]any{"file_storage_bytes": 20})
	first := f.create(s, "a.txt", []byte("123456789012345"), nil) // 15 of 20
	if first.Status != "upload_completed" {
		t.Fatalf("first: %+v", first)
	}
	second := f.mustUpsert(map[string]any{"key": "b.txt", "size": 10})
	s.upload(t, second.UploadURL, second.ContentType, []byte("0123456789")).fail(403, "QuotaExceeded", "storage")
	got := f.getFile(second.ID)
	if got.Status != "upload_failed" || got.FailedStatusReason == nil || !strings.Contains(*got.FailedStatusReason, "storage") {
		t.Errorf("after exceeding the storage quota: status %s reason %v", got.Status, got.FailedStatusReason)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 15 {
		t.Errorf("usage %d, want 15", u)
	}
	// Exactly filling the quota is allowed.
	fill := f.create(s, "c.txt", []byte("12345"), nil)
	if fill.Status != "upload_completed" {
		t.Errorf("filling the quota exactly: %+v", fill)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 20 {
		t.Errorf("usage %d, want 20", u)
	}
	// Deleting frees room.
	f.del(first.ID).ok()
	f.del(fill.ID).ok()
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 0 {
		t.Errorf("usage after deletes %d, want 0", u)
	}
	if got := f.create(s, "b.txt", []byte("0123456789"), nil); got.Status != "upload_completed" {
		t.Errorf("after freeing room: %+v", got)
	}
}

func testVectorQuota(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "vector")
	f := e.f
	setQuotas(t, e.ws, map[string]any{"knowledgebase_vector_storage": 10})
	big := f.mustUpsert(map[string]any{"key": "big.md", "size": 11, "index": true})
	s.upload(t, big.UploadURL, big.ContentType, []byte("01234567890")).fail(403, "QuotaExceeded", "vector")
	got := f.getFile(big.ID)
	if got.Status != "upload_failed" || got.FailedStatusReason == nil || !strings.Contains(*got.FailedStatusReason, "vector") {
		t.Errorf("after exceeding the vector quota: status %s reason %v", got.Status, got.FailedStatusReason)
	}
	// The same size unindexed only counts against File Storage.
	if got := f.create(s, "plain.md", []byte("01234567890"), nil); got.Status != "upload_completed" {
		t.Errorf("unindexed file: %+v", got)
	}
	if got := f.create(s, "fits.md", []byte("0123456789"), map[string]any{"index": true}); got.Status != "indexing_pending" {
		t.Errorf("indexed file within the vector quota: %+v", got)
	}
	if v, fs := storageUsage(t, e.ws, "knowledgebase_vector_storage"), storageUsage(t, e.ws, "file_storage_bytes"); v != 10 || fs != 21 {
		t.Errorf("usage: vector %d (want 10), file storage %d (want 21)", v, fs)
	}
	one := f.mustUpsert(map[string]any{"key": "one.md", "size": 1, "index": true})
	s.upload(t, one.UploadURL, one.ContentType, []byte("x")).fail(403, "QuotaExceeded", "vector")
	// With the vector quota lowered below what is in use, unindexed files
	// (which need no vector storage) are still accepted.
	setQuotas(t, e.ws, map[string]any{"knowledgebase_vector_storage": 5})
	if got := f.create(s, "after.md", []byte("unindexed"), nil); got.Status != "upload_completed" {
		t.Errorf("unindexed file while vector usage is over its quota: %s %v", got.Status, got.FailedStatusReason)
	}
	two := f.mustUpsert(map[string]any{"key": "two.md", "size": 1, "index": true})
	s.upload(t, two.UploadURL, two.ContentType, []byte("x")).fail(403, "QuotaExceeded", "vector")
}

func testUploadURL(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "upload-url")
	f := e.f
	up := f.mustUpsert(map[string]any{"key": "u.txt", "size": 3})
	if queryOf(t, up.UploadURL, "signature") == "" {
		t.Fatalf("uploadUrl %q carries no signature", up.UploadURL)
	}
	sig := queryOf(t, up.UploadURL, "signature")
	flipped := []byte(sig)
	if flipped[0] == 'a' {
		flipped[0] = 'b'
	} else {
		flipped[0] = 'a'
	}
	gen, _ := strconv.Atoi(queryOf(t, up.UploadURL, "gen"))
	exp, _ := strconv.ParseInt(queryOf(t, up.UploadURL, "expires"), 10, 64)
	for name, u := range map[string]string{
		"signature flipped":   withQuery(t, up.UploadURL, "signature", string(flipped)),
		"signature removed":   withQuery(t, up.UploadURL, "signature", ""),
		"gen changed":         withQuery(t, up.UploadURL, "gen", strconv.Itoa(gen+1)),
		"expires extended":    withQuery(t, up.UploadURL, "expires", strconv.FormatInt(exp+3600, 10)),
		"expires removed":     withQuery(t, up.UploadURL, "expires", ""),
		"tagging added":       withQuery(t, up.UploadURL, "tagging", "public=true"),
		"another file's id":   strings.Replace(up.UploadURL, up.ID, f.mustUpsert(map[string]any{"key": "v.txt", "size": 3}).ID, 1),
		"content url for PUT": strings.Replace(up.UploadURL, "/upload/", "/content/", 1),
	} {
		r := s.upload(t, u, "text/plain", []byte("abc"))
		if name == "content url for PUT" {
			r.fail(405, "MethodNotFound")
			continue
		}
		if r.Status != 403 {
			t.Errorf("%s: status %d, want 403", name, r.Status)
			continue
		}
		r.fail(403, "Forbidden")
	}
	if got := f.getFile(up.ID); got.Status != "upload_pending" {
		t.Errorf("refused uploads changed the file: %s", got.Status)
	}
	// Stale after a re-upsert.
	again := f.mustUpsert(map[string]any{"key": "u.txt", "size": 3})
	s.upload(t, up.UploadURL, "text/plain", []byte("abc")).fail(403, "Forbidden")
	if r := s.upload(t, again.UploadURL, "text/plain", []byte("abc")); r.Status != 200 {
		t.Fatalf("fresh uploadUrl: %d %s", r.Status, r.Body)
	}
	// A completed upload cannot be overwritten through its URL.
	s.upload(t, again.UploadURL, "text/plain", []byte("xyz")).fail(403, "Forbidden")
	if r := s.fetch(t, f.getFile(up.ID).URL); string(r.Body) != "abc" {
		t.Errorf("content after a second upload attempt: %q", r.Body)
	}
	// The uploadUrl of a deleted file is dead.
	gone := f.mustUpsert(map[string]any{"key": "gone.txt", "size": 1})
	f.del(gone.ID).ok()
	s.upload(t, gone.UploadURL, "text/plain", []byte("x")).fail(403, "Forbidden")

	// publicContentImmediatelyAccessible with public_content requires
	// x-amz-tagging: public=true.
	pub := f.mustUpsert(map[string]any{"key": "p.txt", "size": 2, "accessPolicies": []any{"public_content"}, "publicContentImmediatelyAccessible": true})
	s.upload(t, pub.UploadURL, "text/plain", []byte("hi")).fail(403, "Forbidden", "x-amz-tagging")
	s.upload(t, pub.UploadURL, "text/plain", []byte("hi"), "x-amz-tagging", "public=false").fail(403, "Forbidden", "x-amz-tagging")
	if got := f.getFile(pub.ID); got.Status != "upload_pending" {
		t.Errorf("refused tagging changed the file: %s", got.Status)
	}
	if r := s.upload(t, pub.UploadURL, "text/plain", []byte("hi"), "x-amz-tagging", "public=true"); r.Status != 200 {
		t.Fatalf("upload with x-amz-tagging: %d %s", r.Status, r.Body)
	}
	// Without public_content, the flag needs no header.
	priv := f.mustUpsert(map[string]any{"key": "q.txt", "size": 2, "publicContentImmediatelyAccessible": true})
	if r := s.upload(t, priv.UploadURL, "text/plain", []byte("hi")); r.Status != 200 {
		t.Errorf("upload of a non-public file with publicContentImmediatelyAccessible: %d %s", r.Status, r.Body)
	}
	// A plain file takes the header too (the client may send it).
	plain := f.mustUpsert(map[string]any{"key": "r.txt", "size": 2})
	if r := s.upload(t, plain.UploadURL, "text/plain", []byte("hi"), "x-amz-tagging", "public=true"); r.Status != 200 {
		t.Errorf("upload with an unneeded x-amz-tagging: %d %s", r.Status, r.Body)
	}

	// Content is not held to the Files API's 1 MB body limit.
	big := bytes.Repeat([]byte("0123456789abcdef"), 96<<10) // 1.5 MiB
	bf := f.create(s, "big.bin", big, nil)
	if bf.Status != "upload_completed" || *bf.Size != int64(len(big)) {
		t.Errorf("1.5 MiB upload: %+v", bf)
	}
	if r := s.fetch(t, bf.URL); !bytes.Equal(r.Body, big) {
		t.Errorf("1.5 MiB content came back as %d bytes", len(r.Body))
	}
}

func testCutUpload(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "cut")
	f := e.f
	up := f.mustUpsert(map[string]any{"key": "cut.txt", "size": 100})
	s.cutUpload(t, up.UploadURL, 100, []byte("only forty bytes of a hundred.........."))
	got := f.getFile(up.ID)
	if got.Status != "upload_pending" || got.Size != nil {
		t.Fatalf("after a cut upload: status %s size %v, want upload_pending and null", got.Status, got.Size)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 0 {
		t.Errorf("a cut upload counts %d bytes", u)
	}
	s.fetch(t, got.URL).fail(404, "ResourceNotFound")
	content := bytes.Repeat([]byte("x"), 100)
	if r := s.upload(t, up.UploadURL, "text/plain", content); r.Status != 200 {
		t.Fatalf("retry with the same URL: %d %s", r.Status, r.Body)
	}
	got = f.getFile(up.ID)
	if got.Status != "upload_completed" || *got.Size != 100 {
		t.Errorf("after the retry: %+v", got)
	}
	if r := s.fetch(t, got.URL); !bytes.Equal(r.Body, content) {
		t.Errorf("content after the retry: %q", r.Body)
	}
}

func testFileContent(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "content")
	f := e.f
	content := []byte("0123456789abcdef")
	got := f.create(s, "c.txt", content, map[string]any{"contentType": "text/plain"})
	if queryOf(t, got.URL, "signature") == "" {
		t.Errorf("a private file's url %q is not signed", got.URL)
	}
	r := s.fetch(t, got.URL)
	sum := sha256.Sum256(content)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	if r.Status != 200 || !bytes.Equal(r.Body, content) {
		t.Fatalf("GET url: %d %q", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "text/plain" {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	if cl := r.Header.Get("Content-Length"); cl != "16" {
		t.Errorf("Content-Length %q, want 16", cl)
	}
	if r.Header.Get("ETag") != etag {
		t.Errorf("ETag %q, want %s", r.Header.Get("ETag"), etag)
	}
	rr := s.fetch(t, got.URL, "Range", "bytes=2-5")
	if rr.Status != 206 || string(rr.Body) != "2345" || rr.Header.Get("Content-Range") != "bytes 2-5/16" {
		t.Errorf("Range bytes=2-5: %d %q %q", rr.Status, rr.Body, rr.Header.Get("Content-Range"))
	}
	if rr := s.fetch(t, got.URL, "Range", "bytes=-3"); rr.Status != 206 || string(rr.Body) != "def" {
		t.Errorf("Range bytes=-3: %d %q", rr.Status, rr.Body)
	}
	if rr := s.fetch(t, got.URL, "Range", "bytes=100-"); rr.Status != 416 {
		t.Errorf("Range beyond the end: %d, want 416", rr.Status)
	}
	if nm := s.fetch(t, got.URL, "If-None-Match", etag); nm.Status != 304 || len(nm.Body) != 0 {
		t.Errorf("If-None-Match with the ETag: %d %q, want 304", nm.Status, nm.Body)
	}
	if nm := s.fetch(t, got.URL, "If-None-Match", `"other"`); nm.Status != 200 {
		t.Errorf("If-None-Match with another ETag: %d, want 200", nm.Status)
	}
	// A second getFile signs a url that works too.
	if r := s.fetch(t, f.getFile(got.ID).URL); r.Status != 200 || !bytes.Equal(r.Body, content) {
		t.Errorf("second url: %d", r.Status)
	}
	// Tampered content urls are refused.
	s.fetch(t, withQuery(t, got.URL, "signature", strings.Repeat("0", 64))).fail(403, "Forbidden")
	s.fetch(t, withQuery(t, got.URL, "expires", strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10))).fail(403, "Forbidden")
	s.fetch(t, strings.Replace(got.URL, "/content/", "/upload/", 1)).fail(405, "MethodNotFound")
	// A file without content has no content to serve.
	pending := f.mustUpsert(map[string]any{"key": "pending.txt", "size": 3})
	s.fetch(t, pending.URL).fail(404, "ResourceNotFound")
	// The uploadUrl's signature is not valid as a content url.
	asContent := strings.Replace(pending.UploadURL, "/upload/", "/content/", 1)
	s.fetch(t, asContent).fail(403, "Forbidden")
	s.fetch(t, s.URL+"/v1/files/content/file_nope").fail(403, "Forbidden")
}

func testPublicContent(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "public")
	f := e.f
	pub := f.mustUpsert(map[string]any{"key": "p.txt", "size": 5, "accessPolicies": []any{"public_content"}})
	wantURL := s.URL + "/v1/files/public/" + pub.ID
	if pub.URL != wantURL {
		t.Errorf("public url %q, want the permanent %s", pub.URL, wantURL)
	}
	s.fetch(t, pub.URL).fail(404, "ResourceNotFound") // no content yet
	if r := s.upload(t, pub.UploadURL, "text/plain", []byte("hello")); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	a, b := f.getFile(pub.ID).URL, f.getFile(pub.ID).URL
	if a != b || a != wantURL || strings.Contains(a, "signature") || strings.Contains(a, "?") {
		t.Errorf("public urls %q and %q, want both %s, unsigned", a, b, wantURL)
	}
	r := s.fetch(t, a)
	if r.Status != 200 || string(r.Body) != "hello" || r.Header.Get("ETag") == "" {
		t.Errorf("public content: %d %q", r.Status, r.Body)
	}
	// Public content of an indexed file waits for processing...
	idx := f.create(s, "idx.md", []byte("# doc"), map[string]any{"index": true, "accessPolicies": []any{"public_content"}})
	if idx.Status != "indexing_pending" {
		t.Fatalf("indexed public file: %s", idx.Status)
	}
	s.fetch(t, idx.URL).fail(404, "ResourceNotFound")
	// ...unless it is immediately accessible.
	now := f.create(s, "now.md", []byte("# now"), map[string]any{"index": true, "accessPolicies": []any{"public_content"},
		"publicContentImmediatelyAccessible": true})
	if now.Status != "indexing_pending" {
		t.Fatalf("indexed public file: %s", now.Status)
	}
	if r := s.fetch(t, now.URL); r.Status != 200 || string(r.Body) != "# now" {
		t.Errorf("immediately accessible public content: %d %q", r.Status, r.Body)
	}
	// Private files are not served at the public address.
	priv := f.create(s, "priv.txt", []byte("secret"), nil)
	s.fetch(t, s.URL+"/v1/files/public/"+priv.ID).fail(404, "ResourceNotFound")
	s.fetch(t, s.URL+"/v1/files/public/file_nope").fail(404, "ResourceNotFound")
	// Removing public_content takes the file off the public address.
	f.update(pub.ID, map[string]any{"accessPolicies": []any{}}).file()
	s.fetch(t, wantURL).fail(404, "ResourceNotFound")
	if u := f.getFile(pub.ID).URL; u == wantURL || queryOf(t, u, "signature") == "" {
		t.Errorf("url after removing public_content: %q, want a signed one", u)
	}
}
