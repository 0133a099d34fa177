package storetest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ---- file fixtures and assertions ----

// noLimit is a storage limit that never binds.
const noLimit = int64(1) << 50

// newFile returns an unsaved upload_pending file of bot b, its JSON fields
// empty but set (as reads return them).
func (e *env) newFile(b platform.Bot, scope, key string) platform.File {
	now := e.now()
	return platform.File{
		ID: platform.NewID("file_"), BotID: b.ID, WorkspaceID: b.WorkspaceID, Scope: scope, Key: key,
		Status: platform.FileUploadPending, DeclaredSize: int64(1000 + e.next()), ContentType: "text/plain",
		Tags: map[string]string{}, Metadata: map[string]any{}, AccessPolicies: []string{},
		Owner: platform.FileOwner{Type: "bot", ID: b.ID}, CreatedAt: now, UpdatedAt: now,
	}
}

// fullFile returns an unsaved file with every field PutFile keeps set, the
// JSON ones with values that must come back unchanged.
func (e *env) fullFile(b platform.Bot, scope, key string) platform.File {
	f := e.newFile(b, scope, key)
	f.ContentType = "application/json; charset=utf-8"
	f.Tags = map[string]string{"team": "core", "lang": "ünïcødé", "blank": ""}
	f.Metadata = map[string]any{
		"title":  "A \"quoted\" 'title' \\ ünïcødé",
		"n":      1.5,
		"list":   []any{"a", 2.0, true, nil},
		"nested": map[string]any{"empty": map[string]any{}, "deep": map[string]any{"x": -3.0}},
	}
	f.AccessPolicies = []string{platform.PolicyPublicContent, platform.PolicyIntegrations}
	f.Index, f.PublicNow = true, true
	f.IndexingStack = "stack-v2"
	exp := e.now().Add(48 * time.Hour)
	f.ExpiresAt = &exp
	f.Owner = platform.FileOwner{Type: "integration", ID: "intg_slack", Name: "slack", Alias: "sl"}
	return f
}

// normFile is what a store keeps of f: times to the microsecond, in UTC.
func normFile(f platform.File) platform.File {
	f.CreatedAt, f.UpdatedAt = mt(f.CreatedAt), mt(f.UpdatedAt)
	if f.ExpiresAt != nil {
		x := mt(*f.ExpiresAt)
		f.ExpiresAt = &x
	}
	if f.Size != nil {
		s := *f.Size
		f.Size = &s
	}
	return f
}

func fileIDs(fs []platform.File) []string {
	return mapSlice(fs, func(f platform.File) string { return f.ID })
}

// putFile creates f, whose bot, scope and key must be new, and returns it
// as stored (generation 1).
func (e *env) putFile(t *testing.T, f platform.File) platform.File {
	t.Helper()
	stored, replaced, err := e.s.PutFile(e.ctx, f)
	must(t, err, "PutFile %q/%q", f.Scope, f.Key)
	if replaced != nil {
		t.Fatalf("PutFile %q/%q of a new key replaced %s", f.Scope, f.Key, show(replaced))
	}
	f.Generation = 1
	same(t, normFile(stored), normFile(f), "PutFile %q/%q result", f.Scope, f.Key)
	return normFile(f)
}

func (e *env) getFile(t *testing.T, id string) platform.File {
	t.Helper()
	f, err := e.s.GetFile(e.ctx, "", id)
	must(t, err, "GetFile %s", id)
	return f
}

// wantFile checks that the stored file is want.
func (e *env) wantFile(t *testing.T, want platform.File, format string, args ...any) {
	t.Helper()
	same(t, e.getFile(t, want.ID), normFile(want), format, args...)
}

func (e *env) wantNoFile(t *testing.T, id string, format string, args ...any) {
	t.Helper()
	_, err := e.s.GetFile(e.ctx, "", id)
	wantErr(t, err, platform.ErrNotFound, format, args...)
}

// upload returns the Upload of size bytes for f's generation, with the
// status the service gives it and limits that never bind.
func (e *env) upload(f platform.File, size int64) store.Upload {
	status := platform.FileUploadCompleted
	if f.Index {
		status = platform.FileIndexPending
	}
	return store.Upload{
		FileID: f.ID, Generation: f.Generation, BlobKey: fmt.Sprintf("%s.%d", f.ID, f.Generation), Size: size,
		SHA256: fmt.Sprintf("%064x", size), Status: status, MaxStorage: noLimit, MaxVector: noLimit, Now: e.now(),
	}
}

// uploaded is f once u succeeded.
func uploaded(f platform.File, u store.Upload) platform.File {
	size := u.Size
	f.Status, f.Size, f.BlobKey, f.SHA256, f.Counted, f.UpdatedAt = u.Status, &size, u.BlobKey, u.SHA256, true, u.Now
	return normFile(f)
}

// complete runs u on f, checks the returned and the stored file, and
// returns the file as stored.
func (e *env) complete(t *testing.T, f platform.File, u store.Upload) platform.File {
	t.Helper()
	got, err := e.s.CompleteUpload(e.ctx, u)
	must(t, err, "CompleteUpload %s (%d bytes)", f.Key, u.Size)
	want := uploaded(f, u)
	same(t, normFile(got), want, "CompleteUpload %s result", f.Key)
	e.wantFile(t, want, "file %s after CompleteUpload", f.Key)
	return want
}

func (e *env) storage(t *testing.T, workspaceID string) platform.Storage {
	t.Helper()
	st, err := e.s.GetStorage(e.ctx, workspaceID)
	must(t, err, "GetStorage %s", workspaceID)
	return st
}

// wantUsage checks the usage counters of the workspace's storage.
func (e *env) wantUsage(t *testing.T, workspaceID string, file, vector int64, format string, args ...any) {
	t.Helper()
	st := e.storage(t, workspaceID)
	if st.FileBytes != file || st.VectorBytes != vector {
		t.Fatalf("%s: storage usage file_bytes=%d vector_bytes=%d, want %d and %d",
			fmt.Sprintf(format, args...), st.FileBytes, st.VectorBytes, file, vector)
	}
}

func (e *env) jobs(t *testing.T, subject string) []platform.Job {
	t.Helper()
	js, err := e.s.ListJobs(e.ctx, subject)
	must(t, err, "ListJobs %s", subject)
	return js
}

func (e *env) wantNoJobs(t *testing.T, subject string, format string, args ...any) {
	t.Helper()
	if js := e.jobs(t, subject); len(js) != 0 {
		t.Fatalf("%s: jobs about %s = %s, want none", fmt.Sprintf(format, args...), subject, show(js))
	}
}

// wantIndexJob checks that exactly one job is about f: the pending
// index_file job enqueued at u.Now.
func (e *env) wantIndexJob(t *testing.T, f platform.File, at time.Time, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	js := e.jobs(t, f.ID)
	if len(js) != 1 {
		t.Fatalf("%s: jobs about %s = %s, want exactly one", what, f.ID, show(js))
	}
	j := js[0]
	var payload map[string]any
	if err := json.Unmarshal(j.Payload, &payload); err != nil {
		t.Fatalf("%s: job payload %q is not a JSON object: %v", what, j.Payload, err)
	}
	if j.ID == "" {
		t.Fatalf("%s: job has no id", what)
	}
	j.ID, j.Payload = "", nil
	same(t, j, platform.Job{Kind: platform.JobIndexFile, Subject: f.ID, Status: "pending", RunAfter: mt(at), CreatedAt: mt(at)}, "%s: index job", what)
}

func wantQuota(t *testing.T, err error, want store.QuotaError, format string, args ...any) {
	t.Helper()
	var qe *store.QuotaError
	if !errors.As(err, &qe) {
		t.Fatalf("%s: got error %v, want a *store.QuotaError", fmt.Sprintf(format, args...), err)
	}
	same(t, *qe, want, "%s: quota error", fmt.Sprintf(format, args...))
}

// listFiles pages through ListFiles with the given limit.
func (e *env) listFiles(t *testing.T, f store.FileFilter, limit int) []platform.File {
	t.Helper()
	f.Limit = limit
	return collect(t, "ListFiles", limit, func(token string) ([]platform.File, string, error) {
		f.Token = token
		return e.s.ListFiles(e.ctx, f)
	})
}

func allOf(botID string) store.FileVisibility { return store.FileVisibility{BotID: botID, All: true} }

func scopeOf(botID, scope string) store.FileVisibility {
	return store.FileVisibility{BotID: botID, Scope: scope}
}

// tagq builds a tag filter from key, value pairs.
func tagq(kv ...string) map[string][]string {
	m := map[string][]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = append(m[kv[i]], kv[i+1])
	}
	return m
}

// ---- tests ----

func testFiles(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	sib := e.bot(t, w.ID, "sibling")
	o := e.bot(t, w2.ID, "other")

	for _, tc := range []struct{ bot, ws string }{{b.ID, w.ID}, {sib.ID, w.ID}, {o.ID, w2.ID}} {
		ws, err := e.s.GetBotWorkspace(e.ctx, tc.bot)
		must(t, err, "GetBotWorkspace %s", tc.bot)
		if ws != tc.ws {
			t.Fatalf("GetBotWorkspace %s = %q, want %q", tc.bot, ws, tc.ws)
		}
	}
	_, err := e.s.GetBotWorkspace(e.ctx, "bot_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetBotWorkspace unknown bot")
	_, err = e.s.GetBotWorkspace(e.ctx, w.ID)
	wantErr(t, err, platform.ErrNotFound, "GetBotWorkspace with a workspace id")

	full := e.putFile(t, e.fullFile(b, "", "docs/a.json"))
	minimal := e.putFile(t, e.newFile(b, "", "min"))
	scoped := e.putFile(t, e.newFile(b, "intg_slack", "docs/a.json")) // same key, another scope
	sibling := e.putFile(t, e.newFile(sib, "", "docs/a.json"))        // same key, another bot
	other := e.putFile(t, e.newFile(o, "", "docs/a.json"))            // same key, another workspace
	for _, f := range []platform.File{full, minimal, scoped, sibling, other} {
		got, err := e.s.GetFile(e.ctx, f.BotID, f.ID)
		must(t, err, "GetFile %s", f.Key)
		same(t, got, f, "GetFile %q/%q of its bot", f.Scope, f.Key)
		got, err = e.s.GetFile(e.ctx, "", f.ID)
		must(t, err, "GetFile %s without bot", f.Key)
		same(t, got, f, "GetFile %q/%q without bot", f.Scope, f.Key)
		got, err = e.s.GetFileByKey(e.ctx, f.BotID, f.Scope, f.Key)
		must(t, err, "GetFileByKey %s", f.Key)
		same(t, got, f, "GetFileByKey %q/%q", f.Scope, f.Key)
	}
	// Stored times are the given times to the microsecond.
	if got := e.getFile(t, full.ID); !got.CreatedAt.Equal(mt(full.CreatedAt)) || got.ExpiresAt == nil || !got.ExpiresAt.Equal(mt(*full.ExpiresAt)) {
		t.Fatalf("GetFile times: created %v expires %v, want %v and %v", got.CreatedAt, got.ExpiresAt, mt(full.CreatedAt), mt(*full.ExpiresAt))
	}

	for _, tc := range []struct{ name, bot, id string }{
		{"of a sibling bot", sib.ID, full.ID},
		{"of another workspace's bot", o.ID, full.ID},
		{"of an unknown bot", "bot_unknown", full.ID},
		{"unknown id", b.ID, "file_unknown"},
		{"unknown id without bot", "", "file_unknown"},
	} {
		_, err := e.s.GetFile(e.ctx, tc.bot, tc.id)
		wantErr(t, err, platform.ErrNotFound, "GetFile %s", tc.name)
	}
	for _, tc := range []struct{ name, bot, scope, key string }{
		{"other scope", b.ID, "intg_telegram", "docs/a.json"},
		{"scope is not a wildcard", b.ID, "intg_slack", "min"},
		{"keys are case-sensitive", b.ID, "", "docs/A.json"},
		{"no prefix match", b.ID, "", "docs"},
		{"other bot", o.ID, "", "min"},
	} {
		_, err := e.s.GetFileByKey(e.ctx, tc.bot, tc.scope, tc.key)
		wantErr(t, err, platform.ErrNotFound, "GetFileByKey %s", tc.name)
	}
}

func testPutFileReplace(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")

	orig := e.putFile(t, e.fullFile(b, "", "report")) // indexed
	u1 := e.upload(orig, 300)
	orig = e.complete(t, orig, u1)
	plain := e.putFile(t, e.newFile(b, "", "plain"))
	plain = e.complete(t, plain, e.upload(plain, 40))
	idx := e.newFile(b, "", "indexed")
	idx.Index = true
	idx = e.putFile(t, idx)
	uidx := e.upload(idx, 5)
	idx = e.complete(t, idx, uidx)
	e.wantUsage(t, w.ID, 345, 305, "before replace")
	e.wantIndexJob(t, orig, u1.Now, "before replace")

	next := e.newFile(b, "", "report")
	next.ContentType = "text/csv"
	next.DeclaredSize = 77
	next.Tags = map[string]string{"team": "growth"}
	next.Metadata = map[string]any{"v": 2.0}
	next.AccessPolicies = []string{platform.PolicyIntegrations}
	next.Owner = platform.FileOwner{Type: "user", ID: "acc_someone"}
	stored, replaced, err := e.s.PutFile(e.ctx, next)
	must(t, err, "PutFile replace")
	if replaced == nil {
		t.Fatalf("PutFile of an existing key returned no replaced file")
	}
	same(t, normFile(*replaced), orig, "replaced file (with its content, to remove it)")
	gen2 := next
	gen2.ID, gen2.CreatedAt, gen2.Generation = orig.ID, orig.CreatedAt, 2
	gen2 = normFile(gen2)
	same(t, normFile(stored), gen2, "PutFile replace result")
	if stored.Size != nil || stored.BlobKey != "" || stored.SHA256 != "" || stored.Counted || stored.Status != platform.FileUploadPending {
		t.Fatalf("replacing file kept content: %s", show(stored))
	}
	e.wantFile(t, gen2, "file after replace")
	e.wantNoFile(t, next.ID, "the id given to a replacing PutFile")
	e.wantUsage(t, w.ID, 45, 5, "after replacing an uploaded indexed file")
	e.wantNoJobs(t, orig.ID, "after replace")
	e.wantIndexJob(t, idx, uidx.Now, "another file's job after replace")
	e.wantFile(t, plain, "untouched file after replace")
	e.wantFile(t, idx, "untouched indexed file after replace")
	// The tag index follows the new tags.
	same(t, fileIDs(e.listFiles(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("team", "core")}, 10)), []string{}, "files tagged team=core after replace")
	same(t, fileIDs(e.listFiles(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("team", "growth")}, 10)), []string{orig.ID}, "files tagged team=growth after replace")
	same(t, fileIDs(e.listFiles(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("lang", "ünïcødé")}, 10)), []string{}, "files with a tag of the replaced file")

	// The upload URL of the replaced generation no longer works.
	stale := u1
	stale.Now = e.now()
	_, err = e.s.CompleteUpload(e.ctx, stale)
	wantErr(t, err, platform.ErrConflict, "CompleteUpload of the replaced generation")
	e.wantFile(t, gen2, "file after a stale upload")
	e.wantUsage(t, w.ID, 45, 5, "after a stale upload")
	e.wantNoJobs(t, orig.ID, "after a stale upload")

	// The same key in another scope is another file.
	e.putFile(t, e.newFile(b, "intg_slack", "report"))
	e.wantFile(t, gen2, "file after a put of its key in another scope")

	// Replacing a file still pending: nothing to release.
	third := e.newFile(b, "", "report")
	stored, replaced, err = e.s.PutFile(e.ctx, third)
	must(t, err, "PutFile replace pending")
	if replaced == nil {
		t.Fatalf("PutFile replace pending: no replaced file")
	}
	same(t, normFile(*replaced), gen2, "replaced pending file")
	gen3 := third
	gen3.ID, gen3.CreatedAt, gen3.Generation = orig.ID, orig.CreatedAt, 3
	gen3 = normFile(gen3)
	same(t, normFile(stored), gen3, "PutFile replace pending result")
	e.wantUsage(t, w.ID, 45, 5, "after replacing a pending file")

	// Replacing an uploaded file that is not indexed releases file bytes only.
	gen3 = e.complete(t, gen3, e.upload(gen3, 25))
	e.wantUsage(t, w.ID, 70, 5, "after uploading generation 3")
	e.wantNoJobs(t, orig.ID, "after uploading a file that is not indexed")
	fourth := e.newFile(b, "", "report")
	fourth.Index = true
	stored, replaced, err = e.s.PutFile(e.ctx, fourth)
	must(t, err, "PutFile replace uploaded")
	if replaced == nil {
		t.Fatalf("PutFile replace uploaded: no replaced file")
	}
	same(t, normFile(*replaced), gen3, "replaced uploaded file")
	if stored.Generation != 4 || stored.ID != orig.ID {
		t.Fatalf("fourth put: id %s generation %d, want %s and 4", stored.ID, stored.Generation, orig.ID)
	}
	e.wantUsage(t, w.ID, 45, 5, "after replacing an uploaded file that is not indexed")
	gen4 := normFile(stored)
	u4 := e.upload(gen4, 10)
	gen4 = e.complete(t, gen4, u4)
	e.wantUsage(t, w.ID, 55, 15, "after uploading generation 4")
	e.wantIndexJob(t, gen4, u4.Now, "after uploading generation 4")
	_, _, err = e.s.PutFile(e.ctx, e.newFile(b, "", "report"))
	must(t, err, "PutFile replace generation 4")
	e.wantUsage(t, w.ID, 45, 5, "after replacing generation 4")
	e.wantNoJobs(t, orig.ID, "after replacing generation 4")
	if got := e.getFile(t, orig.ID); got.Generation != 5 || !got.CreatedAt.Equal(orig.CreatedAt) {
		t.Fatalf("after five puts: generation %d created %v, want 5 and %v", got.Generation, got.CreatedAt, orig.CreatedAt)
	}
}

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

func testUpdateFile(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	sib := e.bot(t, w.ID, "sibling")

	f := e.putFile(t, e.fullFile(b, "", "doc")) // indexed, shared with integrations, expires
	uf := e.upload(f, 10)
	f = e.complete(t, f, uf)
	o := e.newFile(b, "", "other")
	o.Tags = map[string]string{"team": "core"}
	o = e.putFile(t, o)
	slack := scopeOf(b.ID, "intg_slack")
	listIDs := func(t *testing.T, f store.FileFilter) []string {
		t.Helper()
		return fileIDs(e.listFiles(t, f, 10))
	}
	tagKeys := func(t *testing.T, v store.FileVisibility) []string {
		t.Helper()
		keys, _, err := e.s.ListFileTags(e.ctx, v, store.Page{Limit: 100})
		must(t, err, "ListFileTags")
		return keys
	}
	same(t, listIDs(t, store.FileFilter{FileVisibility: slack}), []string{f.ID}, "files an integration sees before update")

	upd := f
	upd.Tags = map[string]string{"team": "growth", "region": "eu"}
	upd.Metadata = map[string]any{"v": 2.0, "s": "x"}
	upd.AccessPolicies = []string{platform.PolicyPublicContent}
	exp := e.now().Add(time.Hour)
	upd.ExpiresAt = &exp
	upd.UpdatedAt = e.now()
	// Fields UpdateFile does not store.
	changed := upd
	changed.Key, changed.Scope, changed.Status, changed.ContentType = "renamed", "intg_x", platform.FileUploadFailed, "x/y"
	changed.DeclaredSize, changed.Index, changed.PublicNow, changed.Generation = 1, false, false, 9
	changed.Size, changed.BlobKey, changed.SHA256, changed.Counted = nil, "", "", false
	changed.Owner, changed.CreatedAt, changed.WorkspaceID, changed.FailedReason = platform.FileOwner{Type: "user"}, e.now(), "wkspace_other", "x"
	must(t, e.s.UpdateFile(e.ctx, changed), "UpdateFile")
	upd = normFile(upd)
	e.wantFile(t, upd, "file after UpdateFile")
	e.wantUsage(t, w.ID, 10, 10, "after UpdateFile")
	e.wantIndexJob(t, f, uf.Now, "after UpdateFile")

	// The tag index follows.
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("team", "growth")}), []string{f.ID}, "team=growth")
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("team", "core")}), []string{o.ID}, "team=core")
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("region", "eu")}), []string{f.ID}, "region=eu")
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("lang", "ünïcødé")}), []string{}, "a removed tag")
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), NotTags: tagq("team", "growth")}), []string{o.ID}, "not team=growth")
	same(t, tagKeys(t, allOf(b.ID)), []string{"region", "team"}, "ListFileTags after UpdateFile")

	// The integrations policy drives what integrations see.
	same(t, listIDs(t, store.FileFilter{FileVisibility: slack}), []string{}, "files an integration sees once unshared")
	same(t, tagKeys(t, slack), []string{}, "tags an integration sees once unshared")
	shared := upd
	shared.AccessPolicies = []string{platform.PolicyIntegrations}
	shared.UpdatedAt = e.now()
	must(t, e.s.UpdateFile(e.ctx, shared), "UpdateFile share")
	shared = normFile(shared)
	e.wantFile(t, shared, "file after sharing")
	same(t, listIDs(t, store.FileFilter{FileVisibility: slack}), []string{f.ID}, "files an integration sees once shared")
	same(t, tagKeys(t, slack), []string{"region", "team"}, "tags an integration sees once shared")

	// Expiry.
	expired, err := e.s.ExpiredFiles(e.ctx, exp, 10)
	must(t, err, "ExpiredFiles")
	same(t, fileIDs(expired), []string{f.ID}, "ExpiredFiles after setting an expiry")
	noExp := shared
	noExp.ExpiresAt = nil
	noExp.Tags = map[string]string{}
	noExp.UpdatedAt = e.now()
	must(t, e.s.UpdateFile(e.ctx, noExp), "UpdateFile without expiry and tags")
	noExp = normFile(noExp)
	e.wantFile(t, noExp, "file after clearing expiry and tags")
	expired, err = e.s.ExpiredFiles(e.ctx, exp.Add(1000*time.Hour), 10)
	must(t, err, "ExpiredFiles")
	if len(expired) != 0 {
		t.Fatalf("ExpiredFiles after clearing the expiry = %s, want none", show(fileIDs(expired)))
	}
	same(t, tagKeys(t, allOf(b.ID)), []string{"team"}, "ListFileTags after clearing tags")
	same(t, listIDs(t, store.FileFilter{FileVisibility: allOf(b.ID), Tags: tagq("team", "growth")}), []string{}, "team=growth after clearing tags")

	// Another bot's id, or an unknown id: not found, nothing changes.
	wrong := noExp
	wrong.BotID = sib.ID
	wrong.Tags = map[string]string{"hacked": "yes"}
	wrong.Metadata = map[string]any{"hacked": true}
	wantErr(t, e.s.UpdateFile(e.ctx, wrong), platform.ErrNotFound, "UpdateFile through another bot")
	e.wantFile(t, noExp, "file after UpdateFile through another bot")
	same(t, tagKeys(t, allOf(sib.ID)), []string{}, "sibling's tags after a rejected UpdateFile")
	same(t, tagKeys(t, allOf(b.ID)), []string{"team"}, "tags after a rejected UpdateFile")
	wrong.BotID, wrong.ID = b.ID, "file_unknown"
	wantErr(t, e.s.UpdateFile(e.ctx, wrong), platform.ErrNotFound, "UpdateFile unknown id")
	same(t, tagKeys(t, allOf(b.ID)), []string{"team"}, "tags after UpdateFile of an unknown id")
	e.wantFile(t, o, "other file after all updates")
}

func testDeleteFile(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	sib := e.bot(t, w.ID, "sibling")

	idx := e.newFile(b, "", "idx")
	idx.Index = true
	idx.Tags = map[string]string{"kind": "indexed"}
	idx = e.putFile(t, idx)
	idx = e.complete(t, idx, e.upload(idx, 100))
	plain := e.newFile(b, "", "plain")
	plain.Tags = map[string]string{"only": "plain"}
	plain = e.putFile(t, plain)
	plain = e.complete(t, plain, e.upload(plain, 10))
	pending := e.putFile(t, e.newFile(b, "", "pending"))
	keep := e.newFile(b, "", "keep")
	keep.Index = true
	keep.Tags = map[string]string{"kind": "kept"}
	keep = e.putFile(t, keep)
	ukeep := e.upload(keep, 1)
	keep = e.complete(t, keep, ukeep)
	e.wantUsage(t, w.ID, 111, 101, "before deletes")

	_, err := e.s.DeleteFile(e.ctx, sib.ID, idx.ID)
	wantErr(t, err, platform.ErrNotFound, "DeleteFile through another bot")
	e.wantFile(t, idx, "file after DeleteFile through another bot")
	e.wantUsage(t, w.ID, 111, 101, "after DeleteFile through another bot")
	if len(e.jobs(t, idx.ID)) != 1 {
		t.Fatalf("job of idx gone after DeleteFile through another bot")
	}

	got, err := e.s.DeleteFile(e.ctx, b.ID, idx.ID)
	must(t, err, "DeleteFile")
	same(t, normFile(got), idx, "DeleteFile result (with its content, to remove it)")
	e.wantNoFile(t, idx.ID, "deleted file")
	_, err = e.s.GetFileByKey(e.ctx, b.ID, "", "idx")
	wantErr(t, err, platform.ErrNotFound, "GetFileByKey of a deleted file")
	e.wantUsage(t, w.ID, 11, 1, "after deleting an indexed file")
	e.wantNoJobs(t, idx.ID, "after DeleteFile")
	e.wantIndexJob(t, keep, ukeep.Now, "another file's job after DeleteFile")
	_, err = e.s.DeleteFile(e.ctx, b.ID, idx.ID)
	wantErr(t, err, platform.ErrNotFound, "DeleteFile twice")

	got, err = e.s.DeleteFile(e.ctx, b.ID, plain.ID)
	must(t, err, "DeleteFile plain")
	same(t, normFile(got), plain, "DeleteFile plain result")
	e.wantUsage(t, w.ID, 1, 1, "after deleting a plain file")
	got, err = e.s.DeleteFile(e.ctx, b.ID, pending.ID)
	must(t, err, "DeleteFile pending")
	same(t, normFile(got), pending, "DeleteFile pending result")
	e.wantUsage(t, w.ID, 1, 1, "after deleting a pending file")

	keys, _, err := e.s.ListFileTags(e.ctx, allOf(b.ID), store.Page{Limit: 10})
	must(t, err, "ListFileTags")
	same(t, keys, []string{"kind"}, "tags after deletes")
	vals, _, err := e.s.ListFileTagValues(e.ctx, allOf(b.ID), "kind", store.Page{Limit: 10})
	must(t, err, "ListFileTagValues")
	same(t, vals, []string{"kept"}, "tag values after deletes")
	same(t, fileIDs(e.listFiles(t, store.FileFilter{FileVisibility: allOf(b.ID)}, 10)), []string{keep.ID}, "files after deletes")

	// The key is free again: a new file.
	again := e.putFile(t, e.newFile(b, "", "idx"))
	if again.ID == idx.ID {
		t.Fatalf("a file put after delete reuses the deleted id")
	}
	_, err = e.s.DeleteFile(e.ctx, b.ID, "file_unknown")
	wantErr(t, err, platform.ErrNotFound, "DeleteFile unknown")
	e.wantFile(t, keep, "kept file")
}

func testExpiredFiles(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	o := e.bot(t, w2.ID, "o")
	base := e.now() // has nanoseconds: stored expiries are truncated
	mk := func(bot platform.Bot, scope, key string, in time.Duration, index bool) platform.File {
		f := e.newFile(bot, scope, key)
		if in >= 0 {
			x := base.Add(in)
			f.ExpiresAt = &x
		}
		f.Index = index
		return e.putFile(t, f)
	}
	e1 := mk(b, "", "e1", time.Second, false)
	e2 := mk(o, "", "e2", 3*time.Second, true)
	e3 := mk(b, "intg_slack", "e3", 2*time.Second, false)
	e4 := mk(b, "", "e4", 10*time.Second, false)
	never := mk(b, "", "never", -1, false)
	e2 = e.complete(t, e2, e.upload(e2, 50))
	e.wantUsage(t, w2.ID, 50, 50, "before expiry")

	expiredIDs := func(t *testing.T, now time.Time, limit int) []string {
		t.Helper()
		fs, err := e.s.ExpiredFiles(e.ctx, now, limit)
		must(t, err, "ExpiredFiles")
		for _, f := range fs {
			e.wantFile(t, f, "listed expired file %s", f.Key)
		}
		return fileIDs(fs)
	}
	for _, tc := range []struct {
		name  string
		now   time.Time
		limit int
		want  []string
	}{
		{"before any expiry", base, 10, []string{}},
		{"a microsecond before the first", base.Add(time.Second - time.Microsecond), 10, []string{}},
		{"at the first", base.Add(time.Second), 10, []string{e1.ID}},
		{"at the second", base.Add(2 * time.Second), 10, []string{e1.ID, e3.ID}},
		{"at the third, across workspaces", base.Add(3 * time.Second), 10, []string{e1.ID, e3.ID, e2.ID}},
		{"limit 2", base.Add(3 * time.Second), 2, []string{e1.ID, e3.ID}},
		{"limit 1", base.Add(3 * time.Second), 1, []string{e1.ID}},
		{"all", base.Add(time.Hour), 10, []string{e1.ID, e3.ID, e2.ID, e4.ID}},
	} {
		got := expiredIDs(t, tc.now, tc.limit)
		if len(got) == 0 {
			got = []string{}
		}
		same(t, got, tc.want, "ExpiredFiles %s", tc.name)
	}

	_, err := e.s.DeleteExpiredFile(e.ctx, e4.ID, base.Add(3*time.Second))
	wantErr(t, err, platform.ErrNotFound, "DeleteExpiredFile before its expiry")
	e.wantFile(t, e4, "file not yet expired")
	_, err = e.s.DeleteExpiredFile(e.ctx, never.ID, base.Add(1000*time.Hour))
	wantErr(t, err, platform.ErrNotFound, "DeleteExpiredFile of a file without expiry")
	e.wantFile(t, never, "file without expiry")
	_, err = e.s.DeleteExpiredFile(e.ctx, "file_unknown", base.Add(1000*time.Hour))
	wantErr(t, err, platform.ErrNotFound, "DeleteExpiredFile unknown")

	got, err := e.s.DeleteExpiredFile(e.ctx, e2.ID, base.Add(3*time.Second)) // exactly at its expiry
	must(t, err, "DeleteExpiredFile")
	same(t, normFile(got), e2, "DeleteExpiredFile result")
	e.wantNoFile(t, e2.ID, "expired file after DeleteExpiredFile")
	e.wantUsage(t, w2.ID, 0, 0, "after DeleteExpiredFile")
	e.wantNoJobs(t, e2.ID, "after DeleteExpiredFile")
	_, err = e.s.DeleteExpiredFile(e.ctx, e2.ID, base.Add(3*time.Second))
	wantErr(t, err, platform.ErrNotFound, "DeleteExpiredFile twice")

	// An expiry pushed back saves the file.
	later := base.Add(20 * time.Second)
	pushed := e1
	pushed.ExpiresAt, pushed.UpdatedAt = &later, e.now()
	must(t, e.s.UpdateFile(e.ctx, pushed), "UpdateFile expiry")
	pushed = normFile(pushed)
	same(t, expiredIDs(t, base.Add(3*time.Second), 10), []string{e3.ID}, "ExpiredFiles after pushing an expiry back")
	_, err = e.s.DeleteExpiredFile(e.ctx, e1.ID, base.Add(3*time.Second))
	wantErr(t, err, platform.ErrNotFound, "DeleteExpiredFile after its expiry was pushed back")
	e.wantFile(t, pushed, "file whose expiry was pushed back")
	got, err = e.s.DeleteExpiredFile(e.ctx, e1.ID, later)
	must(t, err, "DeleteExpiredFile at the new expiry")
	same(t, normFile(got), pushed, "DeleteExpiredFile at the new expiry")
}

func testListFilesVisibility(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	o := e.bot(t, w.ID, "o")
	mk := func(bot platform.Bot, scope, key string, share bool) platform.File {
		f := e.newFile(bot, scope, key)
		if share {
			f.AccessPolicies = []string{platform.PolicyPublicContent, platform.PolicyIntegrations}
		} else {
			f.AccessPolicies = []string{platform.PolicyPublicContent}
		}
		return e.putFile(t, f)
	}
	own := mk(b, "", "own", false)
	ownShared := mk(b, "", "own-shared", true)
	s1 := mk(b, "intg_slack", "s1", false)
	s2 := mk(b, "intg_slack", "s2", true)
	t1 := mk(b, "intg_telegram", "t1", false)
	t2 := mk(b, "intg_telegram", "t2", true)
	ob := mk(o, "intg_slack", "ob", true)
	files := map[string]platform.File{}
	for _, f := range []platform.File{own, ownShared, s1, s2, t1, t2, ob} {
		files[f.ID] = f
	}
	ids := func(fs ...platform.File) []string { return fileIDs(fs) }
	for _, tc := range []struct {
		name string
		v    store.FileVisibility
		want []string
	}{
		{"all", allOf(b.ID), ids(own, ownShared, s1, s2, t1, t2)},
		{"all ignores the scope", store.FileVisibility{BotID: b.ID, All: true, Scope: "intg_slack"}, ids(own, ownShared, s1, s2, t1, t2)},
		{"bot scope", scopeOf(b.ID, ""), ids(own, ownShared, s2, t2)},
		{"slack", scopeOf(b.ID, "intg_slack"), ids(ownShared, s1, s2, t2)},
		{"telegram", scopeOf(b.ID, "intg_telegram"), ids(ownShared, s2, t1, t2)},
		{"an integration without files", scopeOf(b.ID, "intg_discord"), ids(ownShared, s2, t2)},
		{"other bot", allOf(o.ID), ids(ob)},
		{"other bot, slack", scopeOf(o.ID, "intg_slack"), ids(ob)},
		{"unknown bot", allOf("bot_unknown"), ids()},
	} {
		for _, limit := range []int{1, 2, 100} {
			got := e.listFiles(t, store.FileFilter{FileVisibility: tc.v}, limit)
			same(t, fileIDs(got), tc.want, "ListFiles %s, limit %d", tc.name, limit)
			for _, f := range got {
				same(t, f, files[f.ID], "listed file %s", f.Key)
			}
		}
	}
}

func testListFilesFilters(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	o := e.bot(t, w.ID, "o")
	files := map[string]platform.File{}
	mk := func(bot platform.Bot, scope, key string, index bool, tags map[string]string) platform.File {
		f := e.newFile(bot, scope, key)
		f.Index, f.Tags = index, tags
		f = e.putFile(t, f)
		files[f.Key] = f
		return f
	}
	mk(b, "", "f1", true, map[string]string{"team": "core", "env": "prod"})
	mk(b, "", "f2", false, map[string]string{"team": "core", "env": "staging"})
	mk(b, "", "f3", true, map[string]string{"team": "growth", "env": "prod"})
	mk(b, "", "f4", false, map[string]string{})
	mk(b, "", "f5", false, map[string]string{"team": "growth", "owner": "core"})
	mk(b, "intg_slack", "f6", false, map[string]string{"team": "core", "env": "prod"})
	ob := mk(o, "", "ob", true, map[string]string{"team": "core", "env": "prod"})
	ids := func(keys ...string) []string {
		out := []string{}
		for _, k := range keys {
			out = append(out, files[k].ID)
		}
		return out
	}
	yes, no := true, false
	all := allOf(b.ID)
	for _, tc := range []struct {
		name string
		f    store.FileFilter
		want []string // in createdAt order, which is creation order here
	}{
		{"no filter", store.FileFilter{FileVisibility: all}, ids("f1", "f2", "f3", "f4", "f5", "f6")},
		{"empty tag maps", store.FileFilter{FileVisibility: all, Tags: map[string][]string{}, NotTags: map[string][]string{}}, ids("f1", "f2", "f3", "f4", "f5", "f6")},
		{"one tag value", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core")}, ids("f1", "f2", "f6")},
		{"values of a key are ORed", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core", "team", "growth")}, ids("f1", "f2", "f3", "f5", "f6")},
		{"keys are ANDed", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core", "env", "prod")}, ids("f1", "f6")},
		{"AND of ORs", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core", "team", "growth", "env", "prod")}, ids("f1", "f3", "f6")},
		{"value matches under its own key only", store.FileFilter{FileVisibility: all, Tags: tagq("owner", "core")}, ids("f5")},
		{"unmatched value", store.FileFilter{FileVisibility: all, Tags: tagq("team", "nobody")}, ids()},
		{"unmatched key", store.FileFilter{FileVisibility: all, Tags: tagq("region", "eu")}, ids()},
		{"values are case-sensitive", store.FileFilter{FileVisibility: all, Tags: tagq("team", "Core")}, ids()},
		{"one matching key and one unmatched", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core", "region", "eu")}, ids()},
		{"key with no values matches nothing", store.FileFilter{FileVisibility: all, Tags: map[string][]string{"team": {}}}, ids()},
		{"not one value", store.FileFilter{FileVisibility: all, NotTags: tagq("env", "prod")}, ids("f2", "f4", "f5")},
		{"not any of a key's values", store.FileFilter{FileVisibility: all, NotTags: tagq("env", "prod", "env", "staging")}, ids("f4", "f5")},
		{"not any of several keys", store.FileFilter{FileVisibility: all, NotTags: tagq("env", "prod", "team", "growth")}, ids("f2", "f4")},
		{"not an unmatched value", store.FileFilter{FileVisibility: all, NotTags: tagq("team", "nobody")}, ids("f1", "f2", "f3", "f4", "f5", "f6")},
		{"not under another key", store.FileFilter{FileVisibility: all, NotTags: tagq("owner", "prod")}, ids("f1", "f2", "f3", "f4", "f5", "f6")},
		{"not a key with no values", store.FileFilter{FileVisibility: all, NotTags: map[string][]string{"team": {}}}, ids("f1", "f2", "f3", "f4", "f5", "f6")},
		{"tags and not tags", store.FileFilter{FileVisibility: all, Tags: tagq("team", "core"), NotTags: tagq("env", "prod")}, ids("f2")},
		{"ids", store.FileFilter{FileVisibility: all, IDs: []string{files["f4"].ID, files["f1"].ID, ob.ID, "file_unknown"}}, ids("f1", "f4")},
		{"ids and tags", store.FileFilter{FileVisibility: all, IDs: ids("f1", "f2", "f3"), Tags: tagq("team", "core")}, ids("f1", "f2")},
		{"indexed", store.FileFilter{FileVisibility: all, Indexed: &yes}, ids("f1", "f3")},
		{"not indexed", store.FileFilter{FileVisibility: all, Indexed: &no}, ids("f2", "f4", "f5", "f6")},
		{"indexed and tags", store.FileFilter{FileVisibility: all, Indexed: &yes, Tags: tagq("team", "core")}, ids("f1")},
		{"bot scope and tags", store.FileFilter{FileVisibility: scopeOf(b.ID, ""), Tags: tagq("team", "core")}, ids("f1", "f2")},
		{"integration scope and tags", store.FileFilter{FileVisibility: scopeOf(b.ID, "intg_slack"), Tags: tagq("team", "core")}, ids("f6")},
		{"integration scope and ids", store.FileFilter{FileVisibility: scopeOf(b.ID, "intg_slack"), IDs: ids("f1", "f6")}, ids("f6")},
		{"other bot", store.FileFilter{FileVisibility: allOf(o.ID), Tags: tagq("team", "core")}, []string{ob.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 100} {
				got := e.listFiles(t, tc.f, limit)
				same(t, fileIDs(got), tc.want, "ListFiles limit %d", limit)
				for _, f := range got {
					same(t, f, files[f.Key], "listed file %s", f.Key)
				}
			}
		})
	}
}

// fileKey is a file's position in a listing: sort value (a number, or text
// for key and status), then id.
type fileKey struct {
	v    int64
	text string
	id   string
}

func fileKeyOf(f platform.File, field string) fileKey {
	k := fileKey{id: f.ID}
	switch field {
	case "key":
		k.text = f.Key
	case "status":
		k.text = f.Status
	case "size":
		k.v = -1 // no size yet sorts before every size
		if f.Size != nil {
			k.v = *f.Size
		}
	case "updatedAt":
		k.v = mt(f.UpdatedAt).UnixMicro()
	default:
		k.v = mt(f.CreatedAt).UnixMicro()
	}
	return k
}

// fileListedBefore reports whether x comes before y in a listing.
func fileListedBefore(x, y fileKey, desc bool) bool {
	if desc {
		x, y = y, x
	}
	if x.text != y.text {
		return x.text < y.text
	}
	return x.v < y.v || x.v == y.v && x.id < y.id
}

func fileOrder(fs []platform.File, field string, desc bool) []string {
	fs = append([]platform.File{}, fs...)
	sort.Slice(fs, func(i, j int) bool { return fileListedBefore(fileKeyOf(fs[i], field), fileKeyOf(fs[j], field), desc) })
	return fileIDs(fs)
}

// sortedFile creates a file with the given sort values; status selects how
// it got there (pending and upload_failed files have no size).
func (e *env) sortedFile(t *testing.T, b platform.Bot, id, scope, key string, created, updated time.Time, size int64, status string) platform.File {
	t.Helper()
	f := e.newFile(b, scope, key)
	if id != "" {
		f.ID = id
	}
	f.CreatedAt, f.UpdatedAt = created, updated
	f.Index = status == platform.FileIndexPending
	switch status {
	case platform.FileUploadPending:
		return e.putFile(t, f)
	case platform.FileUploadFailed:
		f.UpdatedAt = created
		f = e.putFile(t, f)
		got, err := e.s.FailUpload(e.ctx, f.ID, 1, "failed", updated)
		must(t, err, "FailUpload")
		f.Status, f.FailedReason, f.UpdatedAt = platform.FileUploadFailed, "failed", updated
		same(t, normFile(got), normFile(f), "FailUpload result")
		return normFile(f)
	default:
		f.UpdatedAt = created
		f = e.putFile(t, f)
		u := e.upload(f, size)
		u.Status, u.Now = status, updated
		return e.complete(t, f, u)
	}
}

func testListFilesSort(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	o := e.bot(t, w.ID, "o")
	base := mt(e.now()) // whole microseconds: offsets below one stay in it
	s := time.Second
	const (
		pending   = platform.FileUploadPending
		failed    = platform.FileUploadFailed
		completed = platform.FileUploadCompleted
		indexing  = platform.FileIndexPending
	)
	// Ties in every column, ids not in any column's order, null and zero
	// sizes, and two times that differ only below the microsecond.
	rows := []struct {
		id, scope, key   string
		created, updated time.Duration
		size             int64
		status           string
	}{
		{"file_g", "", "delta", 3 * s, 5 * s, 30, completed},
		{"file_c", "", "alpha", s + 100, 5 * s, 0, pending},
		{"file_a", "intg_slack", "delta", 3 * s, 0, 0, completed},
		{"file_h", "", "bravo", 2 * s, s, 30, indexing},
		{"file_e", "intg_slack", "alpha", s + 900, 9 * s, 0, failed},
		{"file_b", "", "echo", 3 * s, 2 * s, 7, completed},
		{"file_f", "", "charlie", 0, 2 * s, 0, pending},
		{"file_d", "intg_slack", "bravo", 2 * s, 7 * s, 7, indexing},
		{"file_i", "", "foxtrot", 4 * s, 7 * s, 0, failed},
	}
	var files []platform.File
	for _, r := range rows {
		files = append(files, e.sortedFile(t, b, r.id, r.scope, r.key, base.Add(r.created), base.Add(r.updated), r.size, r.status))
	}
	// Same values on another bot's file.
	e.sortedFile(t, o, "", "", "delta", base.Add(2*s), base.Add(2*s), 7, completed)

	// Spot-check the expected orders themselves.
	same(t, fileOrder(files, "createdAt", false), []string{"file_f", "file_c", "file_e", "file_d", "file_h", "file_a", "file_b", "file_g", "file_i"}, "expected createdAt asc")
	same(t, fileOrder(files, "key", false), []string{"file_c", "file_e", "file_d", "file_h", "file_f", "file_a", "file_g", "file_b", "file_i"}, "expected key asc")
	same(t, fileOrder(files, "size", false), []string{"file_c", "file_e", "file_f", "file_i", "file_a", "file_b", "file_d", "file_g", "file_h"}, "expected size asc")
	same(t, fileOrder(files, "status", true), []string{"file_f", "file_c", "file_i", "file_e", "file_g", "file_b", "file_a", "file_h", "file_d"}, "expected status desc")

	for _, field := range []string{"", "key", "size", "createdAt", "updatedAt", "status"} {
		for _, desc := range []bool{false, true} {
			want := fileOrder(files, field, desc)
			for _, limit := range []int{1, 2, 3, 9, 50} {
				t.Run(fmt.Sprintf("field=%q desc=%v limit=%d", field, desc, limit), func(t *testing.T) {
					got := e.listFiles(t, store.FileFilter{FileVisibility: allOf(b.ID), SortField: field, Descending: desc}, limit)
					same(t, fileIDs(got), want, "ListFiles order")
				})
			}
		}
	}
	// With a visibility and a filter as well.
	want := []string{"file_i", "file_b", "file_g", "file_f", "file_h", "file_c"} // key desc, bot scope
	same(t, fileIDs(e.listFiles(t, store.FileFilter{FileVisibility: scopeOf(b.ID, ""), SortField: "key", Descending: true}, 2)), want, "ListFiles key desc, bot scope")
}

// testListFilesKeysetUnderWrites pages through files while others are
// inserted and deleted between pages: no row may repeat, rows that exist
// throughout may not be skipped, deleted rows not yet reached never show,
// and inserted rows show exactly when they sort after the last row returned.
func testListFilesKeysetUnderWrites(t *testing.T, e *env) {
	a := e.account(t, "a")
	for _, field := range []string{"key", "size", "createdAt", "updatedAt", "status"} {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s desc=%v", field, desc), func(t *testing.T) {
				w, _ := e.workspace(t, a)
				b := e.bot(t, w.ID, "b")
				base := e.now()
				statuses := []string{platform.FileUploadCompleted, platform.FileIndexPending}
				current := map[string]platform.File{}
				throughout := map[string]bool{}
				scopes := 0
				// mk creates a file in a scope of its own, so keys never clash.
				mk := func(id, key string, created, updated time.Time, size int64, status string) platform.File {
					scopes++
					f := e.sortedFile(t, b, id, fmt.Sprintf("intg_w%02d", scopes), key, created, updated, size, status)
					current[f.ID] = f
					return f
				}
				for i := range 10 {
					// Pairs share every sort value; updated times run the other way.
					f := mk("", fmt.Sprintf("k%02d", i/2), base.Add(time.Duration(i/2)*time.Second), base.Add(time.Duration(10-i/2)*time.Second),
						int64(10*(i/2+1)), statuses[i/2%2])
					throughout[f.ID] = true
				}
				del := func(id string) {
					_, err := e.s.DeleteFile(e.ctx, b.ID, id)
					must(t, err, "DeleteFile")
					delete(current, id)
					delete(throughout, id)
				}
				unseen := func(k fileKey) []string {
					var out []string
					all := make([]platform.File, 0, len(current))
					for _, f := range current {
						all = append(all, f)
					}
					for _, id := range fileOrder(all, field, desc) {
						if throughout[id] && fileListedBefore(k, fileKeyOf(current[id], field), desc) {
							out = append(out, id)
						}
					}
					return out
				}
				// like creates a file whose sort value is above, at or below
				// that of f, with the given id ("" for a new one).
				like := func(f platform.File, dir int, id string) platform.File {
					key, created, updated := "x"+f.Key, e.now(), e.now()
					size, status := int64(5), platform.FileUploadCompleted
					switch field {
					case "key":
						key = f.Key
						if dir > 0 {
							key += "z"
						} else if dir < 0 {
							key = key[:len(key)-1]
						}
					case "size":
						size = *f.Size + int64(dir)
					case "createdAt":
						created = f.CreatedAt.Add(time.Duration(dir) * time.Hour)
					case "updatedAt":
						updated = f.UpdatedAt.Add(time.Duration(dir) * time.Hour)
					case "status":
						status = f.Status
						if dir > 0 {
							status = platform.FileUploadFailed // after both
						} else if dir < 0 {
							status = platform.FileIndexCompleted // before both
						}
					}
					return mk(id, key, created, updated, size, status)
				}

				seen := map[string]bool{}
				var got []string
				mustAppear, mustNotAppear := map[string]bool{}, map[string]bool{}
				deletedUnseen := map[string]bool{}
				var last *fileKey
				var lastFile platform.File
				token := ""
				for page := 1; ; page++ {
					if page > 50 {
						t.Fatalf("more than 50 pages")
					}
					rows, next, err := e.s.ListFiles(e.ctx, store.FileFilter{Page: store.Page{Token: token, Limit: 3}, FileVisibility: allOf(b.ID), SortField: field, Descending: desc})
					must(t, err, "ListFiles page %d", page)
					for _, f := range rows {
						if seen[f.ID] {
							t.Fatalf("page %d repeats %s", page, f.ID)
						}
						if _, ok := current[f.ID]; !ok {
							t.Fatalf("page %d returns %s, which was deleted", page, f.ID)
						}
						same(t, f, current[f.ID], "listed file %s", f.ID)
						k := fileKeyOf(f, field)
						if last != nil && !fileListedBefore(*last, k, desc) {
							t.Fatalf("page %d: %v is listed after %v, out of order", page, k, *last)
						}
						last, lastFile = &k, f
						seen[f.ID] = true
						got = append(got, f.ID)
					}
					if next == "" {
						break
					}
					if len(rows) == 0 {
						t.Fatalf("page %d is empty but has a nextToken", page)
					}
					token = next
					if page > 2 {
						continue
					}
					rest := unseen(*last)
					if len(rest) < 2 {
						t.Fatalf("page %d: too few rows left to test with", page)
					}
					if page == 1 {
						del(last.id)           // the row the cursor points at
						del(rest[len(rest)-1]) // a row not reached yet
						deletedUnseen[rest[len(rest)-1]] = true
					} else {
						del(got[0])  // a row seen long ago
						del(rest[0]) // the very next row
						deletedUnseen[rest[0]] = true
					}
					for _, f := range []platform.File{
						like(lastFile, 1, ""),
						like(lastFile, -1, ""),
						like(lastFile, 0, last.id+"0"),              // same value, id just above
						like(lastFile, 0, last.id[:len(last.id)-1]), // same value, id just below
					} {
						if fileListedBefore(*last, fileKeyOf(f, field), desc) {
							mustAppear[f.ID] = true
						} else {
							mustNotAppear[f.ID] = true
						}
					}
				}
				checkWalk(t, seen, throughout, mustAppear, mustNotAppear, deletedUnseen)
			})
		}
	}
}

func testListFilesInvalidToken(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	f := e.newFile(b, "", "k")
	f.Tags = map[string]string{"t": "v"}
	e.putFile(t, f)
	enc := base64.RawURLEncoding.EncodeToString
	tokens := map[string]string{
		"not base64":      "!!not a token!!",
		"not JSON":        enc([]byte("not json")),
		"JSON without id": enc([]byte(`{"v":12,"s":"k"}`)),
		"JSON array":      enc([]byte(`[1,2]`)),
	}
	lists := map[string]func(token string) error{
		"ListFileTags": func(token string) error {
			_, _, err := e.s.ListFileTags(e.ctx, allOf(b.ID), store.Page{Token: token, Limit: 10})
			return err
		},
		"ListFileTagValues": func(token string) error {
			_, _, err := e.s.ListFileTagValues(e.ctx, allOf(b.ID), "t", store.Page{Token: token, Limit: 10})
			return err
		},
	}
	for _, field := range []string{"", "key", "size", "createdAt", "updatedAt", "status"} {
		lists["ListFiles "+field] = func(token string) error {
			_, _, err := e.s.ListFiles(e.ctx, store.FileFilter{Page: store.Page{Token: token, Limit: 10}, FileVisibility: allOf(b.ID), SortField: field})
			return err
		}
	}
	for lname, list := range lists {
		must(t, list(""), "%s first page", lname)
		for tname, token := range tokens {
			wantInvalidQuery(t, list(token), "%s with nextToken %s", lname, tname)
		}
	}
}

func testFileTags(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	o := e.bot(t, w.ID, "o")
	mk := func(bot platform.Bot, scope, key string, share bool, tags map[string]string) platform.File {
		f := e.newFile(bot, scope, key)
		f.Tags = tags
		if share {
			f.AccessPolicies = []string{platform.PolicyIntegrations}
		}
		return e.putFile(t, f)
	}
	mk(b, "", "own", false, map[string]string{"team": "core", "env": "prod", "note": ""})
	mk(b, "", "own2", true, map[string]string{"team": "growth", "tier": "gold"})
	mk(b, "", "own3", false, map[string]string{"team": "core", "note": "a"})
	s1 := mk(b, "intg_slack", "s1", false, map[string]string{"team": "core", "channel": "c1", "note": "b"})
	mk(b, "intg_slack", "s2", false, map[string]string{"channel": "c2"})
	mk(b, "intg_telegram", "t1", false, map[string]string{"secret": "x", "team": "red"})
	mk(o, "", "ob", true, map[string]string{"zzz": "1", "team": "blue"})

	for _, tc := range []struct {
		name   string
		v      store.FileVisibility
		keys   []string
		values map[string][]string
	}{
		{"all", allOf(b.ID), []string{"channel", "env", "note", "secret", "team", "tier"}, map[string][]string{
			"team": {"core", "growth", "red"}, "channel": {"c1", "c2"}, "note": {"", "a", "b"}, "zzz": {}, "unknown": {},
		}},
		{"bot scope", scopeOf(b.ID, ""), []string{"env", "note", "team", "tier"}, map[string][]string{
			"team": {"core", "growth"}, "note": {"", "a"}, "channel": {},
		}},
		{"slack", scopeOf(b.ID, "intg_slack"), []string{"channel", "note", "team", "tier"}, map[string][]string{
			"team": {"core", "growth"}, "channel": {"c1", "c2"}, "note": {"b"}, "env": {},
		}},
		{"telegram", scopeOf(b.ID, "intg_telegram"), []string{"secret", "team", "tier"}, map[string][]string{
			"team": {"growth", "red"}, "channel": {}, "tier": {"gold"},
		}},
		{"other bot", allOf(o.ID), []string{"team", "zzz"}, map[string][]string{"team": {"blue"}, "env": {}}},
		{"unknown bot", allOf("bot_unknown"), []string{}, map[string][]string{"team": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 100} {
				keys := collect(t, "ListFileTags", limit, func(token string) ([]string, string, error) {
					return e.s.ListFileTags(e.ctx, tc.v, store.Page{Token: token, Limit: limit})
				})
				same(t, keys, tc.keys, "ListFileTags limit %d", limit)
				for key, want := range tc.values {
					vals := collect(t, "ListFileTagValues", limit, func(token string) ([]string, string, error) {
						return e.s.ListFileTagValues(e.ctx, tc.v, key, store.Page{Token: token, Limit: limit})
					})
					same(t, vals, want, "ListFileTagValues %s limit %d", key, limit)
				}
			}
		})
	}

	// Deleting the only file with a tag removes it from the lists.
	_, err := e.s.DeleteFile(e.ctx, b.ID, s1.ID)
	must(t, err, "DeleteFile")
	vals, _, err := e.s.ListFileTagValues(e.ctx, allOf(b.ID), "channel", store.Page{Limit: 10})
	must(t, err, "ListFileTagValues")
	same(t, vals, []string{"c2"}, "channel values after delete")
	vals, _, err = e.s.ListFileTagValues(e.ctx, allOf(b.ID), "note", store.Page{Limit: 10})
	must(t, err, "ListFileTagValues")
	same(t, vals, []string{"", "a"}, "note values after delete")
}

func testStorage(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	p := func(v int64) *int64 { return &v }

	same(t, e.storage(t, w.ID), platform.Storage{}, "storage of a new workspace")
	same(t, e.storage(t, "wkspace_unknown"), platform.Storage{}, "storage of an unknown workspace")

	// Usage given to SetStorageLimits is not stored.
	must(t, e.s.SetStorageLimits(e.ctx, w.ID, platform.Storage{FileBytes: 999, VectorBytes: 888, MaxFileBytes: p(1), MaxStorage: p(2), MaxVectorBytes: p(3)}), "SetStorageLimits")
	same(t, e.storage(t, w.ID), platform.Storage{MaxFileBytes: p(1), MaxStorage: p(2), MaxVectorBytes: p(3)}, "storage after SetStorageLimits")
	same(t, e.storage(t, w2.ID), platform.Storage{}, "other workspace after SetStorageLimits")

	f := e.newFile(b, "", "f")
	f.Index = true
	f = e.putFile(t, f)
	e.complete(t, f, e.upload(f, 1<<40)) // the stored limits are the service's business
	same(t, e.storage(t, w.ID), platform.Storage{FileBytes: 1 << 40, VectorBytes: 1 << 40, MaxFileBytes: p(1), MaxStorage: p(2), MaxVectorBytes: p(3)}, "storage after an upload")

	must(t, e.s.SetStorageLimits(e.ctx, w.ID, platform.Storage{MaxStorage: p(5 << 40)}), "SetStorageLimits partly")
	same(t, e.storage(t, w.ID), platform.Storage{FileBytes: 1 << 40, VectorBytes: 1 << 40, MaxStorage: p(5 << 40)}, "storage after a partial SetStorageLimits")
	must(t, e.s.SetStorageLimits(e.ctx, w.ID, platform.Storage{}), "SetStorageLimits reset")
	same(t, e.storage(t, w.ID), platform.Storage{FileBytes: 1 << 40, VectorBytes: 1 << 40}, "storage after resetting limits")
	must(t, e.s.SetStorageLimits(e.ctx, w.ID, platform.Storage{MaxFileBytes: p(0), MaxStorage: p(0), MaxVectorBytes: p(0)}), "SetStorageLimits zeros")
	same(t, e.storage(t, w.ID), platform.Storage{FileBytes: 1 << 40, VectorBytes: 1 << 40, MaxFileBytes: p(0), MaxStorage: p(0), MaxVectorBytes: p(0)}, "zero limits are limits")

	must(t, e.deleteWorkspace(e.ctx, w.ID), "DeleteWorkspace")
	same(t, e.storage(t, w.ID), platform.Storage{}, "storage of a deleted workspace")
	e.wantNoFile(t, f.ID, "file of a deleted workspace")
	same(t, e.storage(t, w2.ID), platform.Storage{}, "other workspace after delete")
}

func testSecret(t *testing.T, e *env) {
	v1 := []byte{0, 1, 2, 0xff, 0xfe, 'a', 0}
	v2 := []byte("second value")
	secret := func(name string, value []byte) []byte {
		t.Helper()
		got, err := e.s.Secret(e.ctx, name, value)
		must(t, err, "Secret %s", name)
		return got
	}
	same(t, secret("url-signing", v1), v1, "first Secret call")
	same(t, secret("url-signing", v2), v1, "second Secret call with another value")
	same(t, secret("url-signing", v1), v1, "third Secret call")
	same(t, secret("other", v2), v2, "another name")
	same(t, secret("url-signing", v2), v1, "first name after another")
	same(t, secret("URL-SIGNING", v2), v2, "names are case-sensitive")

	// Processes starting at once all end up with one value.
	const n = 8
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = e.s.Secret(e.ctx, "raced", []byte(fmt.Sprintf("value %d", i)))
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		must(t, errs[i], "Secret from goroutine %d", i)
		same(t, got[i], got[0], "Secret from goroutine %d", i)
	}
	same(t, secret("raced", []byte("late")), got[0], "Secret after the race")
}

// Deleting a bot or a workspace deletes its files: their storage is
// released, their jobs go, and their content's blob keys are returned.
func testDeleteBotWithFiles(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	gone := e.bot(t, w.ID, "gone")
	stay := e.bot(t, w.ID, "stay")

	idx := e.newFile(gone, "", "idx")
	idx.Index = true
	idx = e.putFile(t, idx)
	idx = e.complete(t, idx, e.upload(idx, 100))
	plain := e.putFile(t, e.newFile(gone, "", "plain"))
	plain = e.complete(t, plain, e.upload(plain, 10))
	pending := e.putFile(t, e.newFile(gone, "", "pending"))
	kept := e.putFile(t, e.newFile(stay, "", "kept"))
	kept = e.complete(t, kept, e.upload(kept, 1))
	e.wantUsage(t, w.ID, 111, 100, "before DeleteBot")

	blobs, err := e.s.DeleteBot(e.ctx, w.ID, gone.ID)
	must(t, err, "DeleteBot")
	sort.Strings(blobs)
	same(t, blobs, sorted(idx.BlobKey, plain.BlobKey), "content keys of the deleted bot's files")
	e.wantUsage(t, w.ID, 1, 0, "after DeleteBot")
	e.wantNoJobs(t, idx.ID, "jobs of the deleted bot's indexed file")
	for _, f := range []platform.File{idx, plain, pending} {
		e.wantNoFile(t, f.ID, "file %s of the deleted bot", f.Key)
	}
	e.wantFile(t, kept, "file of the other bot")

	blobs, err = e.s.DeleteWorkspace(e.ctx, w.ID)
	must(t, err, "DeleteWorkspace")
	same(t, blobs, []string{kept.BlobKey}, "content keys of the deleted workspace's files")
	e.wantNoFile(t, kept.ID, "file of the deleted workspace")
	if _, err := e.s.DeleteBot(e.ctx, w.ID, stay.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("DeleteBot in a deleted workspace: %v, want ErrNotFound", err)
	}
}
