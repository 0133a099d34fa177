package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func testCompleteUpload(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	same(t, e.storage(t, w.ID), platform.Storage{}, "storage before any upload")

	plain := e.putFile(t, e.newFile(b, "", "plain"))
	u := e.upload(plain, 100)
	for _, gen := range []int64{0, 2} {
		bad := u
		bad.Generation = gen
		_, err := e.s.CompleteUpload(e.ctx, bad)
		wantErr(t, err, platform.ErrConflict, "CompleteUpload of generation %d", gen)
	}
	bad := u
	bad.FileID = "file_unknown"
	_, err := e.s.CompleteUpload(e.ctx, bad)
	wantErr(t, err, platform.ErrNotFound, "CompleteUpload of an unknown file")
	e.wantFile(t, plain, "file after rejected uploads")
	same(t, e.storage(t, w.ID), platform.Storage{}, "storage after rejected uploads")

	plain = e.complete(t, plain, u)
	e.wantUsage(t, w.ID, 100, 0, "after a plain upload")
	e.wantNoJobs(t, plain.ID, "after a plain upload")
	again := e.upload(plain, 1)
	_, err = e.s.CompleteUpload(e.ctx, again)
	wantErr(t, err, platform.ErrConflict, "CompleteUpload of a file no longer pending")
	e.wantFile(t, plain, "file after a second upload")
	e.wantUsage(t, w.ID, 100, 0, "after a second upload")

	indexed := e.newFile(b, "", "indexed")
	indexed.Index = true
	indexed = e.putFile(t, indexed)
	ui := e.upload(indexed, 200)
	indexed = e.complete(t, indexed, ui)
	e.wantUsage(t, w.ID, 300, 200, "after an indexed upload")
	e.wantIndexJob(t, indexed, ui.Now, "after an indexed upload")

	// An indexed file completed without indexing: vector storage is counted
	// but no job is enqueued.
	ic := e.newFile(b, "", "indexed-completed")
	ic.Index = true
	ic = e.putFile(t, ic)
	uic := e.upload(ic, 30)
	uic.Status = platform.FileUploadCompleted
	ic = e.complete(t, ic, uic)
	e.wantUsage(t, w.ID, 330, 230, "after an indexed file completed without indexing")
	e.wantNoJobs(t, ic.ID, "upload_completed")

	// Over either limit: a QuotaError naming it, and nothing changes.
	q := e.putFile(t, e.newFile(b, "", "q"))
	uq := e.upload(q, 70)
	uq.MaxStorage = 399
	_, err = e.s.CompleteUpload(e.ctx, uq)
	wantQuota(t, err, store.QuotaError{Quota: "file storage", Used: 330, Limit: 399, Size: 70}, "CompleteUpload over MaxStorage")
	e.wantFile(t, q, "file after a quota error")
	e.wantNoJobs(t, q.ID, "after a quota error")
	e.wantUsage(t, w.ID, 330, 230, "after a quota error")

	qi := e.newFile(b, "", "qi")
	qi.Index = true
	qi = e.putFile(t, qi)
	uqi := e.upload(qi, 70)
	uqi.MaxVector = 299
	_, err = e.s.CompleteUpload(e.ctx, uqi)
	wantQuota(t, err, store.QuotaError{Quota: "vector storage", Used: 230, Limit: 299, Size: 70}, "CompleteUpload over MaxVector")
	e.wantFile(t, qi, "indexed file after a quota error")
	e.wantNoJobs(t, qi.ID, "after a vector quota error")
	e.wantUsage(t, w.ID, 330, 230, "after a vector quota error")
	uqi.MaxVector, uqi.MaxStorage = noLimit, 399
	_, err = e.s.CompleteUpload(e.ctx, uqi)
	wantQuota(t, err, store.QuotaError{Quota: "file storage", Used: 330, Limit: 399, Size: 70}, "indexed CompleteUpload over MaxStorage")
	e.wantFile(t, qi, "indexed file after a file quota error")
	e.wantNoJobs(t, qi.ID, "after a file quota error")
	e.wantUsage(t, w.ID, 330, 230, "after a file quota error")

	// Limits are inclusive: both reached exactly.
	uqi.MaxStorage, uqi.MaxVector = 400, 300
	qi = e.complete(t, qi, uqi)
	e.wantUsage(t, w.ID, 400, 300, "with both limits reached")
	e.wantIndexJob(t, qi, uqi.Now, "with both limits reached")

	// A file that is not indexed needs no vector storage, even when vector
	// usage is over its limit (lowered meanwhile).
	n := e.putFile(t, e.newFile(b, "", "n"))
	un := e.upload(n, 50)
	un.MaxStorage, un.MaxVector = 450, 100
	e.complete(t, n, un)
	e.wantUsage(t, w.ID, 450, 300, "after a plain upload with vector usage over its limit")
	// But an indexed one does.
	m := e.newFile(b, "", "m")
	m.Index = true
	m = e.putFile(t, m)
	um := e.upload(m, 1)
	um.MaxVector = 300
	_, err = e.s.CompleteUpload(e.ctx, um)
	wantQuota(t, err, store.QuotaError{Quota: "vector storage", Used: 300, Limit: 300, Size: 1}, "indexed upload with vector storage full")
	e.wantFile(t, m, "indexed file after quota error")

	// Each workspace counts apart.
	w2, _ := e.workspace(t, a)
	b2 := e.bot(t, w2.ID, "b2")
	f2 := e.putFile(t, e.newFile(b2, "", "plain"))
	u2 := e.upload(f2, 10)
	u2.MaxStorage = 10 // w's usage does not count
	e.complete(t, f2, u2)
	e.wantUsage(t, w2.ID, 10, 0, "other workspace")
	e.wantUsage(t, w.ID, 450, 300, "after an upload in another workspace")
}

// testCompleteUploadConcurrent is the no-overshoot rule: concurrent uploads
// never take more than the limit, however they interleave.
func testCompleteUploadConcurrent(t *testing.T, e *env) {
	a := e.account(t, "a")
	const n, size = 16, int64(1000)
	for _, tc := range []struct {
		quota string
		index bool
		base  int64 // usage before the race
	}{
		{"file storage", false, 0}, // no storage row yet either
		{"vector storage", true, 300},
		{"file storage", true, 700},
	} {
		t.Run(fmt.Sprintf("%s index=%v base=%d", tc.quota, tc.index, tc.base), func(t *testing.T) {
			w, _ := e.workspace(t, a)
			b := e.bot(t, w.ID, "b")
			var baseVector int64
			if tc.base > 0 {
				pre := e.newFile(b, "", "pre")
				pre.Index = tc.index
				pre = e.putFile(t, pre)
				e.complete(t, pre, e.upload(pre, tc.base))
				if tc.index {
					baseVector = tc.base
				}
			}
			files := make([]platform.File, n)
			uploads := make([]store.Upload, n)
			for i := range files {
				f := e.newFile(b, "", fmt.Sprintf("c%02d", i))
				f.Index = tc.index
				files[i] = e.putFile(t, f)
				uploads[i] = e.upload(files[i], size)
				if tc.quota == "file storage" {
					uploads[i].MaxStorage = tc.base + 5*size
				} else {
					uploads[i].MaxVector = baseVector + 5*size
				}
			}
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range files {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = e.s.CompleteUpload(e.ctx, uploads[i])
				}()
			}
			close(start)
			wg.Wait()
			ok := 0
			for i, err := range errs {
				var qe *store.QuotaError
				switch {
				case err == nil:
					ok++
					e.wantFile(t, uploaded(files[i], uploads[i]), "file %d that won", i)
					if tc.index {
						e.wantIndexJob(t, files[i], uploads[i].Now, "file %d that won", i)
					}
				case errors.As(err, &qe):
					if qe.Quota != tc.quota {
						t.Fatalf("file %d: quota error names %q, want %q", i, qe.Quota, tc.quota)
					}
					e.wantFile(t, files[i], "file %d that lost", i)
					e.wantNoJobs(t, files[i].ID, "file %d that lost", i)
				default:
					t.Fatalf("file %d: CompleteUpload: unexpected error %v", i, err)
				}
			}
			if ok != 5 {
				t.Fatalf("%d of %d concurrent uploads succeeded, want exactly 5", ok, n)
			}
			vector := int64(0)
			if tc.index {
				vector = baseVector + 5*size
			}
			e.wantUsage(t, w.ID, tc.base+5*size, vector, "after the race")
		})
	}
}

// testFileUploadRaces races CompleteUpload against PutFile (replacing the
// file) and DeleteFile: whatever the order, the counted usage matches the
// files, and a replacing generation never gets the old content.
func testFileUploadRaces(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	const rounds = 60
	for i := range rounds {
		f := e.newFile(b, "", fmt.Sprintf("race%02d", i))
		f.Index = i%4 < 2
		f = e.putFile(t, f)
		u := e.upload(f, 1000)
		replace := i%2 == 0
		next := e.newFile(b, "", f.Key)
		var cerr, perr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, cerr = e.s.CompleteUpload(e.ctx, u)
		}()
		go func() {
			defer wg.Done()
			<-start
			if replace {
				_, _, perr = e.s.PutFile(e.ctx, next)
			} else {
				_, perr = e.s.DeleteFile(e.ctx, b.ID, f.ID)
			}
		}()
		close(start)
		wg.Wait()
		if cerr != nil && !errors.Is(cerr, platform.ErrConflict) && !errors.Is(cerr, platform.ErrNotFound) {
			t.Fatalf("round %d: CompleteUpload: unexpected error %v", i, cerr)
		}
		must(t, perr, "round %d: replace=%v", i, replace)
		if replace {
			got := e.getFile(t, f.ID)
			if got.Generation != 2 || got.Status != platform.FileUploadPending || got.Size != nil || got.Counted || got.BlobKey != "" {
				t.Fatalf("round %d: replacing generation after the race (upload error %v): %s", i, cerr, show(got))
			}
		} else {
			e.wantNoFile(t, f.ID, "round %d: deleted file", i)
		}
		e.wantNoJobs(t, f.ID, "round %d (upload error %v)", i, cerr)
		e.wantUsage(t, w.ID, 0, 0, "round %d: replace=%v index=%v, upload error %v", i, replace, f.Index, cerr)
	}
}

func testFailUpload(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")

	p := e.putFile(t, e.newFile(b, "", "p"))
	now := e.now()
	got, err := e.s.FailUpload(e.ctx, p.ID, 1, "the client went away", now)
	must(t, err, "FailUpload")
	failed := p
	failed.Status, failed.FailedReason, failed.UpdatedAt = platform.FileUploadFailed, "the client went away", now
	failed = normFile(failed)
	same(t, normFile(got), failed, "FailUpload result")
	e.wantFile(t, failed, "file after FailUpload")
	_, err = e.s.FailUpload(e.ctx, p.ID, 1, "again", e.now())
	wantErr(t, err, platform.ErrConflict, "FailUpload of a failed file")
	_, err = e.s.CompleteUpload(e.ctx, e.upload(failed, 5))
	wantErr(t, err, platform.ErrConflict, "CompleteUpload of a failed file")
	e.wantFile(t, failed, "failed file after further attempts")
	same(t, e.storage(t, w.ID), platform.Storage{}, "storage after a failed upload")

	q := e.putFile(t, e.newFile(b, "", "q"))
	for _, gen := range []int64{0, 2} {
		_, err = e.s.FailUpload(e.ctx, q.ID, gen, "wrong generation", e.now())
		wantErr(t, err, platform.ErrConflict, "FailUpload of generation %d", gen)
	}
	e.wantFile(t, q, "file after FailUpload of other generations")

	c := e.putFile(t, e.newFile(b, "", "c"))
	c = e.complete(t, c, e.upload(c, 9))
	_, err = e.s.FailUpload(e.ctx, c.ID, 1, "too late", e.now())
	wantErr(t, err, platform.ErrConflict, "FailUpload of an uploaded file")
	e.wantFile(t, c, "uploaded file after FailUpload")
	e.wantUsage(t, w.ID, 9, 0, "after FailUpload of an uploaded file")

	// After a replace only the new generation can fail.
	r := e.putFile(t, e.newFile(b, "", "r"))
	stored, _, err := e.s.PutFile(e.ctx, e.newFile(b, "", "r"))
	must(t, err, "PutFile replace")
	_, err = e.s.FailUpload(e.ctx, r.ID, 1, "old", e.now())
	wantErr(t, err, platform.ErrConflict, "FailUpload of a replaced generation")
	e.wantFile(t, stored, "replacing file after FailUpload of the replaced generation")
	now = e.now()
	got, err = e.s.FailUpload(e.ctx, r.ID, 2, "new", now)
	must(t, err, "FailUpload of the current generation")
	if got.Status != platform.FileUploadFailed || got.FailedReason != "new" || got.Generation != 2 || !got.UpdatedAt.Equal(mt(now)) {
		t.Fatalf("FailUpload of generation 2 = %s", show(got))
	}

	_, err = e.s.FailUpload(e.ctx, "file_unknown", 1, "x", e.now())
	if err == nil {
		t.Fatalf("FailUpload of an unknown file: got nil error")
	}

	// A failed file can be put again: pending, without the old reason.
	again := e.newFile(b, "", "p")
	stored, replaced, err := e.s.PutFile(e.ctx, again)
	must(t, err, "PutFile over a failed file")
	if replaced == nil || replaced.Status != platform.FileUploadFailed {
		t.Fatalf("PutFile over a failed file replaced %s", show(replaced))
	}
	if stored.Status != platform.FileUploadPending || stored.FailedReason != "" || stored.Generation != 2 {
		t.Fatalf("PutFile over a failed file = %s", show(stored))
	}
	e.wantFile(t, stored, "file put over a failed one")
}
