package main

// Files API end-to-end: updateFileMetadata, copyFile, deleteFile, and the
// workspace quota routes of the Admin API.

import (
	"bytes"
	"io/fs"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testUpdateFileMetadata(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "update").f
	orig := f.create(s, "u.txt", []byte("content"), map[string]any{
		"metadata": map[string]any{"a": 1, "b": "keep", "c": map[string]any{"x": 1}},
		"tags":     map[string]any{"t1": "v1", "t2": "v2"},
	})
	nextMillisecond() // updatedAt (millisecond precision) must move
	got := f.update(orig.ID, map[string]any{
		"metadata": map[string]any{"a": nil, "c": "scalar", "d": []any{1, "two"}},
		"tags":     map[string]any{"t1": nil, "t3": "v3"},
	}).file()
	if want := map[string]any{"b": "keep", "c": "scalar", "d": []any{1.0, "two"}}; !reflect.DeepEqual(got.Metadata, want) {
		t.Errorf("metadata after merge: %v, want %v", got.Metadata, want)
	}
	if want := map[string]string{"t2": "v2", "t3": "v3"}; !reflect.DeepEqual(got.Tags, want) {
		t.Errorf("tags after merge: %v, want %v", got.Tags, want)
	}
	if got.ID != orig.ID || got.Status != "upload_completed" || *got.Size != 7 || got.CreatedAt != orig.CreatedAt || got.UpdatedAt == orig.UpdatedAt {
		t.Errorf("update changed more than it should: %+v", got)
	}
	if g := f.getFile(orig.ID); !reflect.DeepEqual(g.Tags, got.Tags) || !reflect.DeepEqual(g.Metadata, got.Metadata) {
		t.Errorf("getFile after update: %v %v", g.Tags, g.Metadata)
	}
	if r := s.fetch(t, got.URL); string(r.Body) != "content" {
		t.Errorf("content after update: %q", r.Body)
	}
	// Tag filters see the new tags.
	if l := f.list("?tags.t3=v3"); len(l.Files) != 1 {
		t.Errorf("tags.t3=v3 lists %v", keysOf(l.Files))
	}
	if l := f.list("?tags.t1=v1"); len(l.Files) != 0 {
		t.Errorf("removed tag still matches: %v", keysOf(l.Files))
	}
	// An empty update changes nothing.
	if g := f.update(orig.ID, map[string]any{}).file(); !reflect.DeepEqual(g.Tags, got.Tags) || !reflect.DeepEqual(g.Metadata, got.Metadata) {
		t.Errorf("empty update: %v %v", g.Tags, g.Metadata)
	}

	// accessPolicies replace the list.
	pub := f.update(orig.ID, map[string]any{"accessPolicies": []any{"public_content", "integrations"}}).file()
	if !reflect.DeepEqual(sortedStrings(pub.AccessPolicies), []string{"integrations", "public_content"}) || !strings.Contains(pub.URL, "/v1/files/public/") {
		t.Errorf("after setting policies: %v %s", pub.AccessPolicies, pub.URL)
	}
	if r := s.fetch(t, pub.URL); r.Status != 200 || string(r.Body) != "content" {
		t.Errorf("public content after the update: %d", r.Status)
	}
	if got := f.update(orig.ID, map[string]any{"accessPolicies": []any{"integrations"}}).file(); !reflect.DeepEqual(got.AccessPolicies, []string{"integrations"}) {
		t.Errorf("policies: %v", got.AccessPolicies)
	}

	// expiresAt: set (minute precision), remove with null, refuse bad values.
	exp := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Minute).Add(42*time.Second + 7*time.Millisecond)
	got = f.update(orig.ID, map[string]any{"expiresAt": exp.Format(time.RFC3339Nano)}).file()
	if want := exp.Truncate(time.Minute).Format("2006-01-02T15:04:05.000Z"); got.ExpiresAt == nil || *got.ExpiresAt != want {
		t.Errorf("expiresAt %v, want %s", got.ExpiresAt, want)
	}
	for _, bad := range []any{"soon", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), time.Now().Add(91 * 24 * time.Hour).UTC().Format(time.RFC3339), 5, true} {
		f.update(orig.ID, map[string]any{"expiresAt": bad}).fail(400, "InvalidPayload", "expiresAt")
	}
	if g := f.getFile(orig.ID); g.ExpiresAt == nil {
		t.Error("a refused expiresAt removed the expiry")
	}
	got = f.update(orig.ID, map[string]any{"expiresAt": nil}).file()
	if got.ExpiresAt != nil {
		t.Errorf("expiresAt null left %v", *got.ExpiresAt)
	}
	if f.getFile(orig.ID).ExpiresAt != nil {
		t.Error("getFile still has an expiry")
	}

	// Validation.
	f.update(orig.ID, map[string]any{"tags": map[string]any{"k": strings.Repeat("x", 1001)}}).fail(400, "InvalidPayload", "tags.k")
	f.update(orig.ID, map[string]any{"tags": map[string]any{"k": strings.Repeat("x", 1000)}}).file()
	f.update(orig.ID, map[string]any{"tags": map[string]any{"k": 5}}).fail(400, "InvalidPayload", "tags.k")
	f.update(orig.ID, map[string]any{"key": "renamed"}).fail(400, "InvalidPayload", "key")
	f.update(orig.ID, map[string]any{"size": 5}).fail(400, "InvalidPayload", "size")
	f.update(orig.ID, map[string]any{"accessPolicies": []any{"world"}}).fail(400, "InvalidPayload", "accessPolicies")
	f.update(orig.ID, map[string]any{"metadata": "x"}).fail(400, "InvalidPayload", "metadata")
	if g := f.getFile(orig.ID); g.Key != "u.txt" || len(g.Tags["k"]) != 1000 {
		t.Errorf("refused updates changed the file: %+v", g)
	}
}

func testCopyFile(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "copy")
	f := e.f
	content := []byte("the source content")
	src := f.create(s, "docs/src.txt", content, map[string]any{"tags": map[string]any{"k": "v"}, "metadata": map[string]any{"m": 1}})
	check := func(got apiFile, key, bot string) {
		t.Helper()
		if got.Key != key || got.BotID != bot || got.ID == src.ID || got.Status != "upload_completed" || got.Size == nil ||
			*got.Size != int64(len(content)) || got.Tags["k"] != "v" || got.Metadata["m"] != 1.0 || got.ContentType != "text/plain" {
			t.Errorf("copy %s: %+v", key, got)
		}
		if r := s.fetch(t, got.URL); r.Status != 200 || !bytes.Equal(r.Body, content) {
			t.Errorf("copy %s content: %d %q", key, r.Status, r.Body)
		}
	}
	byID := f.copy(src.ID, "copies/by-id.txt", nil).file()
	check(byID, "copies/by-id.txt", e.bot)
	check(f.getFile(byID.ID), "copies/by-id.txt", e.bot)
	byKey := f.copy("docs/src.txt", "copies/by-key.txt", nil).file()
	check(byKey, "copies/by-key.txt", e.bot)
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 3*int64(len(content)) {
		t.Errorf("usage after two copies %d, want %d", u, 3*len(content))
	}
	// An existing destination is replaced only with overwrite.
	f.copy(src.ID, "copies/by-id.txt", nil).fail(409, "AlreadyExists", "overwrite")
	f.copy(src.ID, "copies/by-id.txt", map[string]any{"overwrite": false}).fail(409, "AlreadyExists")
	other := f.create(s, "other.txt", []byte("other"), nil)
	over := f.copy(other.ID, "copies/by-id.txt", map[string]any{"overwrite": true}).file()
	if over.ID != byID.ID {
		t.Errorf("overwrite made a new file %s (was %s)", over.ID, byID.ID)
	}
	if r := s.fetch(t, over.URL); string(r.Body) != "other" {
		t.Errorf("overwritten copy content: %q", r.Body)
	}
	f.copy(src.ID, "copies/x.txt", map[string]any{"overwrite": "yes"}).fail(400, "InvalidPayload", "overwrite")
	f.copy(src.ID, "copies/x.txt", map[string]any{"force": true}).fail(400, "InvalidPayload", "force")
	// The source is untouched.
	if got := f.getFile(src.ID); got.Key != "docs/src.txt" || got.Status != "upload_completed" {
		t.Errorf("source after copies: %+v", got)
	}
	if r := s.fetch(t, src.URL); !bytes.Equal(r.Body, content) {
		t.Errorf("source content after copies: %q", r.Body)
	}

	// To another bot of the same workspace.
	otherBot := e.newBot(t, "copy-dest")
	to := f.with("x-destination-bot-id", otherBot).copy(src.ID, "imported.txt", nil).file()
	check(to, "imported.txt", otherBot)
	dest := s.files(t, e.ws.token, otherBot)
	if got := dest.getFile(to.ID); got.Owner["type"] != "bot" || got.Owner["id"] != otherBot {
		t.Errorf("copy in the other bot: owner %v", got.Owner)
	}
	f.get(to.ID).fail(404, "ResourceNotFound") // it is the other bot's file
	f.with("x-destination-bot-id", otherBot).copy(src.ID, "imported.txt", nil).fail(409, "AlreadyExists")
	f.with("x-destination-bot-id", otherBot).copy(src.ID, "imported.txt", map[string]any{"overwrite": true}).file()
	// Not to a bot of another workspace, nor to an unknown one.
	elsewhere := s.newWorkspace(t, "copy-elsewhere")
	foreign := str(t, elsewhere.createBot(map[string]any{"name": "foreign"}), "id")
	f.with("x-destination-bot-id", foreign).copy(src.ID, "leak.txt", nil).fail(404, "ResourceNotFound")
	f.with("x-destination-bot-id", "bot_nope").copy(src.ID, "leak.txt", nil).fail(404, "ResourceNotFound")
	if l := s.files(t, elsewhere.token, foreign).list(""); len(l.Files) != 0 {
		t.Errorf("the foreign bot got files: %v", keysOf(l.Files))
	}
	// Unknown sources, and sources without content.
	f.copy("file_nope", "x.txt", nil).fail(404, "ResourceNotFound")
	f.copy("no/such/key", "x.txt", nil).fail(404, "ResourceNotFound")
	pending := f.mustUpsert(map[string]any{"key": "pending.txt", "size": 3})
	f.copy(pending.ID, "x.txt", nil).fail(400, "InvalidPayload")
	// Keys that look like the content routes' names still work.
	f.create(s, "public", []byte("p"), nil)
	if got := f.copy("public", "public-copy", nil); got.Status != 200 {
		t.Errorf("copyFile of the key \"public\": status %d %s", got.Status, got.Body)
	}
	// The copy is within quota or fails like an upload.
	setQuotas(t, e.ws, map[string]any{"file_storage_bytes": storageUsage(t, e.ws, "file_storage_bytes") + 5})
	failed := f.copy(src.ID, "over-quota.txt", nil)
	if failed.Status == 200 {
		if got := failed.file(); got.Status != "upload_failed" || got.FailedStatusReason == nil {
			t.Errorf("copy over the storage quota: %+v", got)
		}
	} else {
		failed.fail(403, "QuotaExceeded")
	}
}

func testDeleteFile(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "delete")
	f := e.f
	keep := f.create(s, "keep.txt", []byte("keep"), nil)
	x := f.create(s, "x.txt", []byte("0123456789"), map[string]any{"index": true, "tags": map[string]any{"only": "x"}})
	p := f.create(s, "p.txt", []byte("public"), map[string]any{"accessPolicies": []any{"public_content"}})
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 20 {
		t.Fatalf("usage %d, want 20", u)
	}
	if u := storageUsage(t, e.ws, "knowledgebase_vector_storage"); u != 10 {
		t.Fatalf("vector usage %d, want 10", u)
	}
	r := f.del(x.ID)
	if m := r.ok(); len(m) != 0 {
		t.Errorf("deleteFile returned %s, want {}", r.Body)
	}
	f.get(x.ID).fail(404, "ResourceNotFound")
	f.del(x.ID).fail(404, "ResourceNotFound")
	s.fetch(t, x.URL).fail(404, "ResourceNotFound")
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 10 {
		t.Errorf("usage after delete %d, want 10", u)
	}
	if u := storageUsage(t, e.ws, "knowledgebase_vector_storage"); u != 0 {
		t.Errorf("vector usage after delete %d, want 0", u)
	}
	if got := f.strList("/v1/files/tags", "tags", 10); len(got) != 0 {
		t.Errorf("tags of the deleted file still listed: %v", got)
	}
	f.del(p.ID).ok()
	s.fetch(t, p.URL).fail(404, "ResourceNotFound")
	if got := keysOf(f.list("").Files); !reflect.DeepEqual(got, []string{"keep.txt"}) {
		t.Errorf("after deletes: %v", got)
	}
	if r := s.fetch(t, keep.URL); string(r.Body) != "keep" {
		t.Errorf("the other file's content: %q", r.Body)
	}
	// A deleted key can be used again, as a new file.
	again := f.create(s, "x.txt", []byte("new"), nil)
	if again.ID == x.ID {
		t.Errorf("a new file with a deleted key got the deleted id")
	}
	// The body the client sends is {} (or nothing); others are refused.
	f.do(http.MethodDelete, "/v1/files/"+again.ID, `{"force":true}`).fail(400, "InvalidPayload", "force")
	f.do(http.MethodDelete, "/v1/files/"+again.ID, nil).ok()
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 4 {
		t.Errorf("usage at the end %d, want 4", u)
	}
}

func testQuotasAPI(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "quotas")
	owner := e.ws.in("")
	path := "/v1/admin/workspaces/" + e.ws.ws
	type quota struct {
		Type   string `json:"type"`
		Value  int64  `json:"value"`
		Period string `json:"period"`
	}
	list := func(c client) map[string]quota {
		t.Helper()
		var out struct {
			Quotas []quota `json:"quotas"`
		}
		c.get(path + "/quotas").decode(&out)
		m := map[string]quota{}
		for _, q := range out.Quotas {
			m[q.Type] = q
		}
		if len(out.Quotas) != 5 || len(m) != 5 {
			t.Fatalf("quotas: %+v, want the three storage types, ai_spend and table_row_count", out.Quotas)
		}
		return m
	}
	defaults := list(owner)
	period := time.Now().UTC().Format("2006-01")
	for _, typ := range []string{"file_storage_bytes", "knowledgebase_vector_storage", "file_max_size_bytes"} {
		q, ok := defaults[typ]
		if !ok || q.Value <= 0 || q.Period != period {
			t.Errorf("quota %s: %+v", typ, q)
		}
		var one struct {
			Quota quota `json:"quota"`
		}
		owner.get(path + "/quota?type=" + typ).decode(&one)
		if one.Quota != q {
			t.Errorf("getWorkspaceQuota %s: %+v, want %+v", typ, one.Quota, q)
		}
		if u := storageUsage(t, e.ws, typ); u != 0 {
			t.Errorf("usage %s of an empty workspace: %d", typ, u)
		}
	}
	if d := defaults["file_storage_bytes"].Value; d != 10<<30 {
		t.Errorf("community file storage %d, want 10 GiB", d)
	}
	owner.get(path+"/quota?type=bogus").fail(400, "InvalidQuery", "type")
	owner.get(path+"/quota").fail(400, "InvalidQuery", "type")
	owner.get(path+"/usages?type=bogus").fail(400, "InvalidQuery", "type")

	// Set, and see it in every view.
	var out struct {
		Quotas []quota `json:"quotas"`
	}
	owner.put(path+"/quotas", map[string]any{"file_storage_bytes": 1000, "file_max_size_bytes": 0}).decode(&out)
	if len(out.Quotas) != 5 {
		t.Errorf("setQuotas returned %+v", out.Quotas)
	}
	got := list(owner)
	if got["file_storage_bytes"].Value != 1000 || got["file_max_size_bytes"].Value != 0 ||
		got["knowledgebase_vector_storage"] != defaults["knowledgebase_vector_storage"] {
		t.Errorf("after setting: %+v", got)
	}
	// A zero maximum file size refuses every non-empty upload.
	up := e.f.mustUpsert(map[string]any{"key": "z.txt", "size": 1})
	s.upload(t, up.UploadURL, "text/plain", []byte("z")).fail(413, "PayloadTooLarge")
	// Validation: negatives, unknown types, non-integers.
	owner.put(path+"/quotas", map[string]any{"file_storage_bytes": -1}).fail(400, "InvalidPayload", "file_storage_bytes")
	owner.put(path+"/quotas", map[string]any{"knowledgebase_vector_storage": -5}).fail(400, "InvalidPayload", "knowledgebase_vector_storage")
	owner.put(path+"/quotas", map[string]any{"bandwidth": 5}).fail(400, "InvalidPayload", "bandwidth")
	owner.put(path+"/quotas", map[string]any{"file_storage_bytes": 1.5}).fail(400, "InvalidPayload", "file_storage_bytes")
	owner.put(path+"/quotas", map[string]any{"file_storage_bytes": "1000"}).fail(400, "InvalidPayload", "file_storage_bytes")
	if got := list(owner); got["file_storage_bytes"].Value != 1000 {
		t.Errorf("refused updates changed the quota: %+v", got)
	}
	// null returns to the plan's default.
	owner.put(path+"/quotas", map[string]any{"file_storage_bytes": nil, "file_max_size_bytes": nil}).ok()
	if got := list(owner); !reflect.DeepEqual(got, defaults) {
		t.Errorf("after resetting: %+v, want %+v", got, defaults)
	}

	// Members read; only administrators change.
	dev, _ := e.ws.addMember("developer")
	viewer, _ := e.ws.addMember("viewer")
	adm, _ := e.ws.addMember("administrator")
	list(dev.in(""))
	list(viewer.in(""))
	dev.in("").put(path+"/quotas", map[string]any{"file_storage_bytes": 5}).fail(403, "Forbidden")
	viewer.in("").put(path+"/quotas", map[string]any{"file_storage_bytes": 5}).fail(403, "Forbidden")
	if got := list(owner); got["file_storage_bytes"] != defaults["file_storage_bytes"] {
		t.Errorf("a developer changed the quota: %+v", got)
	}
	adm.in("").put(path+"/quotas", map[string]any{"file_storage_bytes": 5}).ok()
	if got := list(owner); got["file_storage_bytes"].Value != 5 {
		t.Errorf("the administrator's change: %+v", got)
	}
	// Outsiders do not see the workspace.
	stranger := s.as(t, s.issueToken(t, uniqueEmail("stranger")), "")
	stranger.get(path+"/quotas").fail(404, "ResourceNotFound")
	stranger.put(path+"/quotas", map[string]any{"file_storage_bytes": 5}).fail(404, "ResourceNotFound")
	stranger.get(path+"/usages?type=file_storage_bytes").fail(404, "ResourceNotFound")
	s.as(t, "", "").get(path+"/quotas").fail(401, "Unauthorized")
	owner.get("/v1/admin/workspaces/wkspace_nope/quotas").fail(404, "ResourceNotFound")
}

// Deleting a bot deletes its files: storage is released and their content
// leaves the disk.
func testDeleteBotWithFiles(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "delete-bot")
	x := e.f.create(s, "x.txt", []byte("0123456789"), map[string]any{"index": true})
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 10 {
		t.Fatalf("usage %d, want 10", u)
	}
	e.ws.del("/v1/admin/bots/" + e.bot).ok()
	s.fetch(t, x.URL).fail(404, "ResourceNotFound")
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 0 {
		t.Errorf("usage after deleting the bot %d, want 0", u)
	}
	if u := storageUsage(t, e.ws, "knowledgebase_vector_storage"); u != 0 {
		t.Errorf("vector usage after deleting the bot %d, want 0", u)
	}
	blobs := filepath.Join(s.DataDir, "blobs", "objects")
	_ = filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), x.ID+".") {
			t.Errorf("content %s of the deleted bot's file is still on disk", p)
		}
		return nil
	})
}
