package files_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestSignedURLExpiry checks that upload and content URLs stop working at
// their expiry (1 h and 15 min by default), and that a fresh URL works.
func TestSignedURLExpiry(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			f := e.upsert(files.UpsertInput{Key: "a.txt", Size: 3})
			stale := signedOf(t, e.svc.UploadURL(f))
			e.clock.Advance(time.Hour + time.Second)
			_, err := e.svc.Upload(e.ctx, stale, "", bytes.NewReader([]byte("abc")))
			requireErr(t, "upload through an expired URL", err, platform.TypeForbidden)
			fresh := signedOf(t, e.svc.UploadURL(f))
			e.clock.Advance(59 * time.Minute)
			done, err := e.svc.Upload(e.ctx, fresh, "", bytes.NewReader([]byte("abc")))
			if err != nil || done.Status != platform.FileUploadCompleted {
				t.Fatalf("upload just before expiry: %+v %v", done, err)
			}

			content := signedOf(t, e.svc.ContentURL(done))
			e.clock.Advance(14 * time.Minute)
			_, rd, err := e.svc.Content(e.ctx, content)
			if err != nil {
				t.Fatalf("content url before expiry: %v", err)
			}
			b, _ := io.ReadAll(rd)
			rd.Close()
			if string(b) != "abc" {
				t.Errorf("content %q", b)
			}
			e.clock.Advance(time.Minute + time.Second)
			_, _, err = e.svc.Content(e.ctx, content)
			requireErr(t, "expired content url", err, platform.TypeForbidden)
			// Public URLs do not expire.
			pub := e.create("p.txt", []byte("pub"), time.Time{}, false)
			if _, err := e.svc.UpdateMetadata(e.ctx, e.caller, pub.ID, files.MetadataUpdate{AccessPolicies: &[]string{platform.PolicyPublicContent}}); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(30 * 24 * time.Hour)
			_, rd, err = e.svc.PublicContent(e.ctx, pub.ID)
			if err != nil {
				t.Fatalf("public content a month later: %v", err)
			}
			rd.Close()
		})
	}
}

// TestReplacedContentIsRemoved checks that the bytes of replaced and deleted
// files do not stay behind in the blob store.
func TestReplacedContentIsRemoved(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			first := e.create("r.txt", []byte("first"), time.Time{}, false)
			other := e.create("o.txt", []byte("other"), time.Time{}, false)
			again := e.upsert(files.UpsertInput{Key: "r.txt", Size: 6})
			if again.ID != first.ID || again.BlobKey != "" || again.Size != nil {
				t.Fatalf("re-upsert: %+v", again)
			}
			if _, err := e.blobs.Open(e.ctx, first.BlobKey); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("replaced content: %v, want blob.ErrNotFound", err)
			}
			if got := e.fileBytes(); got != 5 {
				t.Errorf("file storage %d, want 5", got)
			}
			second, err := e.svc.Upload(e.ctx, signedOf(t, e.svc.UploadURL(again)), "", bytes.NewReader([]byte("second")))
			if err != nil {
				t.Fatal(err)
			}
			if second.BlobKey == first.BlobKey {
				t.Errorf("new content stored under the replaced content's key %s", first.BlobKey)
			}
			if err := e.svc.Delete(e.ctx, e.caller, second.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.blobs.Open(e.ctx, second.BlobKey); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("deleted content: %v, want blob.ErrNotFound", err)
			}
			if got := e.blobCount(); got != 1 {
				t.Errorf("%d blobs, want 1 (%s)", got, other.Key)
			}
			if got := e.fileBytes(); got != 5 {
				t.Errorf("file storage %d, want 5", got)
			}
		})
	}
}

// Content no file refers to (a crash between storing an upload and
// recording it) is removed by the reaper once it is old enough; content of
// files, and recent content, stays.
func TestReaperRemovesOrphanContent(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			kept := e.create("kept.txt", []byte("kept"), time.Time{}, false)
			// Content stored for a file still waiting for its upload: an
			// upload (or a copy, a hard link keeping its source's old time)
			// about to record it.
			pending := e.upsert(files.UpsertInput{Key: "pending.txt", Size: 6})
			inFlight := fmt.Sprintf("%s.%d.UPLOAD", pending.ID, pending.Generation)
			for _, key := range []string{"file_gone.1", kept.ID + ".99", inFlight} {
				if _, err := e.blobs.Put(e.ctx, key, bytes.NewReader([]byte("orphan")), -1); err != nil {
					t.Fatal(err)
				}
			}
			// Date every stored file at the test clock's now.
			_ = filepath.WalkDir(e.blobDir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					_ = os.Chtimes(p, e.clock.Now(), e.clock.Now())
				}
				return nil
			})
			if _, err := e.svc.ReapOnce(e.ctx); err != nil {
				t.Fatal(err)
			}
			if got := e.blobCount(); got != 4 {
				t.Fatalf("%d blobs after reaping recent content, want 4 (recent orphans stay)", got)
			}
			e.clock.Advance(3 * time.Hour)
			if _, err := e.svc.ReapOnce(e.ctx); err != nil {
				t.Fatal(err)
			}
			if got := e.blobCount(); got != 2 {
				t.Fatalf("%d blobs after reaping old orphans, want 2", got)
			}
			if _, err := e.blobs.Open(e.ctx, kept.BlobKey); err != nil {
				t.Fatalf("the content of a file was removed: %v", err)
			}
			if _, err := e.blobs.Open(e.ctx, inFlight); err != nil {
				t.Fatalf("content an upload may still record was removed: %v", err)
			}
			// Once the file is replaced, nothing can record it any more.
			e.upsert(files.UpsertInput{Key: "pending.txt", Size: 7})
			e.clock.Advance(time.Hour)
			if _, err := e.svc.ReapOnce(e.ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := e.blobs.Open(e.ctx, inFlight); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("content of a replaced generation: %v, want blob.ErrNotFound", err)
			}
		})
	}
}

// TestPublicContentWaitsForIndexing: the public content of an indexed file
// is served once indexing has ended (completed or failed), not while it is
// pending, unless publicContentImmediatelyAccessible was asked for.
func TestPublicContentWaitsForIndexing(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			policies := []string{platform.PolicyPublicContent}
			f := e.upsert(files.UpsertInput{Key: "idx.md", Size: 5, Index: true, AccessPolicies: policies})
			done, err := e.svc.Upload(e.ctx, signedOf(t, e.svc.UploadURL(f)), "", bytes.NewReader([]byte("# doc")))
			if err != nil || done.Status != platform.FileIndexPending {
				t.Fatalf("upload: %+v %v", done, err)
			}
			_, _, err = e.svc.PublicContent(e.ctx, f.ID)
			requireErr(t, "public content while indexing is pending", err, platform.TypeResourceNotFound)
			if err := e.store.CompleteIndexing(e.ctx, f.ID, done.Generation, "v2", nil, time.Now()); err != nil {
				t.Fatal(err)
			}
			_, rd, err := e.svc.PublicContent(e.ctx, f.ID)
			if err != nil {
				t.Fatalf("public content once indexed: %v", err)
			}
			rd.Close()
		})
	}
}
