package storetest

import (
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
	// GetFiles reads the same, and leaves out what does not exist.
	fs, err := e.s.GetFiles(e.ctx, []string{"file_unknown", id, id})
	must(t, err, "GetFiles %s", id)
	if len(fs) != 1 {
		t.Fatalf("GetFiles([unknown %s %s]) = %d files, want 1", id, id, len(fs))
	}
	same(t, fs[0], f, "GetFiles %s", id)
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
