package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

func TestReaper(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testReaper(t, newEnv(t, backend))
		})
	}
}

func testReaper(t *testing.T, e *env) {
	soon := start.Add(10 * time.Minute)
	expiring := e.create("expiring.txt", []byte("12345"), soon, false)
	indexed := e.create("indexed.md", []byte("# doc"), soon, true) // 5 bytes, with a queued index job
	pushed := e.create("pushed.txt", []byte("1234"), soon, false)
	cleared := e.create("cleared.txt", []byte("123"), soon, false)
	never := e.create("never.txt", []byte("12"), time.Time{}, false)
	pendingIn := files.UpsertInput{Key: "pending.txt", Size: 9}
	v := soon.Format(time.RFC3339)
	pendingIn.ExpiresAt = &v
	pending := e.upsert(pendingIn) // never uploaded
	contentURL := e.svc.ContentURL(expiring)

	if indexed.Status != platform.FileIndexPending {
		t.Fatalf("indexed file: %s", indexed.Status)
	}
	if jobs, err := e.store.ListJobs(e.ctx, indexed.ID); err != nil || len(jobs) != 1 || jobs[0].Kind != platform.JobIndexFile {
		t.Fatalf("index jobs of the indexed file: %+v %v", jobs, err)
	}
	later, _ := json.Marshal(start.Add(2 * time.Hour).Format(time.RFC3339))
	if _, err := e.svc.UpdateMetadata(e.ctx, e.caller, pushed.ID, files.MetadataUpdate{ExpiresAt: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.UpdateMetadata(e.ctx, e.caller, cleared.ID, files.MetadataUpdate{ExpiresAt: json.RawMessage("null")}); err != nil {
		t.Fatal(err)
	}
	if got := e.fileBytes(); got != 19 {
		t.Fatalf("file storage %d, want 19", got)
	}
	if got := e.vectorBytes(); got != 5 {
		t.Fatalf("vector storage %d, want 5", got)
	}

	// Nothing is due yet, not even at the very minute before.
	e.clock.Advance(9*time.Minute + 59*time.Second)
	if n, err := e.svc.ReapOnce(e.ctx); err != nil || n != 0 {
		t.Fatalf("ReapOnce before expiry: %d %v", n, err)
	}
	e.clock.Advance(2 * time.Second)
	// A reaper that listed pushed while it was due, and deletes it after the
	// expiry was pushed back, must leave it alone.
	if _, err := e.store.DeleteExpiredFile(e.ctx, pushed.ID, e.clock.Now()); !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("DeleteExpiredFile of a file whose expiry was pushed back: %v, want ErrNotFound", err)
	}
	n, err := e.svc.ReapOnce(e.ctx)
	if err != nil || n != 3 {
		t.Fatalf("ReapOnce after expiry: %d %v, want 3 (expiring, indexed, pending)", n, err)
	}
	for _, f := range []platform.File{expiring, indexed, pending} {
		_, err := e.svc.Get(e.ctx, e.caller, f.ID)
		requireErr(t, "getFile "+f.Key, err, platform.TypeResourceNotFound)
		if f.BlobKey != "" {
			if _, err := e.blobs.Open(e.ctx, f.BlobKey); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("blob of %s after reaping: %v, want blob.ErrNotFound", f.Key, err)
			}
		}
		if jobs, err := e.store.ListJobs(e.ctx, f.ID); err != nil || len(jobs) != 0 {
			t.Errorf("jobs of %s after reaping: %+v %v", f.Key, jobs, err)
		}
	}
	if _, _, err := e.svc.Content(e.ctx, signedOf(t, contentURL)); err == nil {
		t.Error("the content url of a reaped file still serves")
	}
	if got := e.fileBytes(); got != 9 {
		t.Errorf("file storage after reaping %d, want 9 (pushed + cleared + never)", got)
	}
	if got := e.vectorBytes(); got != 0 {
		t.Errorf("vector storage after reaping %d, want 0", got)
	}
	for _, f := range []platform.File{pushed, cleared, never} {
		got, err := e.svc.Get(e.ctx, e.caller, f.ID)
		if err != nil || got.Status != platform.FileUploadCompleted {
			t.Errorf("%s after reaping: %+v %v", f.Key, got, err)
		}
		if _, err := e.blobs.Open(e.ctx, got.BlobKey); err != nil {
			t.Errorf("blob of %s: %v", f.Key, err)
		}
	}
	if n, err := e.svc.ReapOnce(e.ctx); err != nil || n != 0 {
		t.Errorf("second ReapOnce: %d %v", n, err)
	}

	// The pushed-back expiry comes too; the cleared one never does.
	e.clock.Advance(2 * time.Hour)
	if n, err := e.svc.ReapOnce(e.ctx); err != nil || n != 1 {
		t.Fatalf("ReapOnce after the pushed expiry: %d %v, want 1", n, err)
	}
	_, err = e.svc.Get(e.ctx, e.caller, pushed.ID)
	requireErr(t, "getFile pushed", err, platform.TypeResourceNotFound)
	e.clock.Advance(100 * 24 * time.Hour)
	if n, err := e.svc.ReapOnce(e.ctx); err != nil || n != 0 {
		t.Fatalf("ReapOnce much later: %d %v, want 0", n, err)
	}
	if got := e.fileBytes(); got != 5 {
		t.Errorf("file storage at the end %d, want 5", got)
	}
	if got := e.blobCount(); got != 2 {
		t.Errorf("%d blobs at the end, want 2 (cleared, never)", got)
	}
}

// TestReaperMany reaps more files than one batch.
func TestReaperMany(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			for i := range 130 {
				e.create(fmt.Sprintf("f%03d", i), []byte("x"), start.Add(time.Duration(1+i%5)*time.Minute), false)
			}
			e.clock.Advance(time.Hour)
			if n, err := e.svc.ReapOnce(e.ctx); err != nil || n != 130 {
				t.Fatalf("ReapOnce: %d %v, want 130", n, err)
			}
			if got := e.fileBytes(); got != 0 {
				t.Errorf("file storage %d, want 0", got)
			}
			if got := e.blobCount(); got != 0 {
				t.Errorf("%d blobs left", got)
			}
		})
	}
}

// TestConcurrentUploadsQuota uploads files at once against quotas that fit
// only some of them: the limits are never overshot.
func TestConcurrentUploadsQuota(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name   string
				quota  string
				limit  int64
				index  bool
				reason string
			}{
				{"file storage", files.QuotaFileStorage, 750, false, "file storage"},
				{"vector storage", files.QuotaVectorStorage, 350, true, "vector storage"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					e := newEnv(t, backend)
					if _, err := e.svc.SetQuotas(e.ctx, e.actor, e.workspace, files.QuotaUpdate{Set: map[string]int64{tc.quota: tc.limit}}); err != nil {
						t.Fatal(err)
					}
					const n, size = 20, 100
					pending := make([]platform.File, n)
					for i := range pending {
						pending[i] = e.upsert(files.UpsertInput{Key: fmt.Sprintf("c%02d", i), Size: size, Index: tc.index})
					}
					var wg sync.WaitGroup
					errs := make([]error, n)
					startGate := make(chan struct{})
					for i, f := range pending {
						wg.Go(func() {
							<-startGate
							_, errs[i] = e.svc.Upload(e.ctx, signedOf(t, e.svc.UploadURL(f)), "", bytes.NewReader(bytes.Repeat([]byte{byte('a' + i)}, size)))
						})
					}
					close(startGate)
					wg.Wait()
					ok := 0
					for i, err := range errs {
						if err == nil {
							ok++
							continue
						}
						requireErr(t, fmt.Sprintf("upload %d", i), err, platform.TypeQuotaExceeded)
					}
					want := int(tc.limit / size)
					if ok != want {
						t.Errorf("%d uploads completed, want %d = floor(%d/%d)", ok, want, tc.limit, size)
					}
					used := e.fileBytes()
					if tc.index {
						used = e.vectorBytes()
					}
					if used > tc.limit || used != int64(ok*size) {
						t.Errorf("usage %d with %d completed uploads of %d bytes, limit %d", used, ok, size, tc.limit)
					}
					list, _, err := e.svc.List(e.ctx, e.caller, store.FileFilter{Page: store.Page{Limit: 100}})
					if err != nil {
						t.Fatal(err)
					}
					statuses := map[string]int{}
					for _, f := range list {
						statuses[f.Status]++
						if f.Status == platform.FileUploadFailed && !bytes.Contains([]byte(f.FailedReason), []byte(tc.reason)) {
							t.Errorf("%s failed with %q, want a %s reason", f.Key, f.FailedReason, tc.reason)
						}
					}
					done := platform.FileUploadCompleted
					if tc.index {
						done = platform.FileIndexPending
					}
					if statuses[done] != want || statuses[platform.FileUploadFailed] != n-want {
						t.Errorf("statuses %v, want %d %s and %d upload_failed", statuses, want, done, n-want)
					}
					if got := e.blobCount(); got != want {
						t.Errorf("%d blobs stored, want %d (refused content is removed)", got, want)
					}
				})
			}
		})
	}
}

// TestRunReaper checks the loop the server runs: it reaps on every tick
// and returns when its context ends.
func TestRunReaper(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, backend)
			f := e.create("x.txt", []byte("x"), start.Add(time.Minute), false)
			ctx, cancel := context.WithCancel(e.ctx)
			done := make(chan struct{})
			go func() { e.svc.RunReaper(ctx, 5*time.Millisecond); close(done) }()
			defer func() {
				cancel()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Error("RunReaper did not return after its context ended")
				}
			}()
			if _, err := e.svc.Get(e.ctx, e.caller, f.ID); err != nil {
				t.Fatalf("the reaper deleted a file before its expiry: %v", err)
			}
			e.clock.Advance(2 * time.Minute)
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, err := e.svc.Get(e.ctx, e.caller, f.ID)
				if err != nil {
					requireErr(t, "getFile after expiry", err, platform.TypeResourceNotFound)
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the running reaper did not delete the expired file within 10s")
				}
				time.Sleep(5 * time.Millisecond) // poll
			}
			if got := e.fileBytes(); got != 0 {
				t.Errorf("file storage %d, want 0", got)
			}
		})
	}
}
