package main

// End-to-end tests of the Files API (spec 4.1, compat-notes §2.2): the
// scenario table, and upsertFile: strict body, bounds, keys and owners,
// content types, tags, expiry, replacing a file.

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFilesAPI runs every Files API scenario against one real server per
// backend. Scenarios run in parallel, each in its own workspace (quotas and
// usage are per workspace).
func TestFilesAPI(t *testing.T) {
	t.Parallel()
	scenarios := []scenario{
		{"upsert_strict_body", testUpsertStrictBody},
		{"upsert_indexing_bounds", testUpsertIndexingBounds},
		{"keys_and_owners", testFileKeysAndOwners},
		{"get_by_key", testGetFileByKey},
		{"content_type", testFileContentType},
		{"tags_and_expiry", testFileTagsAndExpiry},
		{"reupsert_erases_content", testFileReupsert},
		{"upload_statuses", testUploadStatuses},
		{"max_file_size", testMaxFileSize},
		{"storage_quota", testStorageQuota},
		{"vector_quota", testVectorQuota},
		{"upload_url", testUploadURL},
		{"cut_upload", testCutUpload},
		{"concurrent_uploads", testConcurrentUploads},
		{"content", testFileContent},
		{"public_content", testPublicContent},
		{"access", testFilesAccess},
		{"integrations", testFilesIntegrations},
		{"list_filters", testListFilesFilters},
		{"list_sort", testListFilesSort},
		{"list_pagination", testListFilesPagination},
		{"update_metadata", testUpdateFileMetadata},
		{"copy", testCopyFile},
		{"delete", testDeleteFile},
		{"delete_bot", testDeleteBotWithFiles},
		{"tags_listing", testListFileTags},
		{"quotas_api", testQuotasAPI},
	}
	// No indexing workers: these tests see indexed files in indexing_pending
	// (indexing_e2e_test.go covers what follows).
	runScenarios(t, scenarios, "--index-workers", "0")
}

// filesEnv is a fresh workspace with one bot, and the owner calling the
// Files API for it.
type filesEnv struct {
	ws  client // the owner in the workspace (Admin API)
	bot string
	f   filesClient
}

func newFilesEnv(t *testing.T, s *testServer, name string) filesEnv {
	t.Helper()
	ws := s.newWorkspace(t, name)
	bot := str(t, ws.createBot(map[string]any{"name": name}), "id")
	return filesEnv{ws: ws, bot: bot, f: s.files(t, ws.token, bot)}
}

func (e filesEnv) newBot(t *testing.T, name string) string {
	t.Helper()
	return str(t, e.ws.createBot(map[string]any{"name": name}), "id")
}

func testUpsertStrictBody(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "strict")
	f := e.f
	cfg := func(section string, member map[string]any) map[string]any {
		return map[string]any{"key": "k.txt", "size": 1, "indexing": map[string]any{"configuration": map[string]any{section: member}}}
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		path string
	}{
		{"unknown top-level", map[string]any{"key": "k", "size": 1, "colour": "red"}, "colour"},
		{"unknown in indexing", map[string]any{"key": "k", "size": 1, "indexing": map[string]any{"configuration": map[string]any{}, "extra": 1}}, "indexing.extra"},
		{"unknown in configuration", cfg("other", map[string]any{}), "indexing.configuration.other"},
		{"unknown in parsing", cfg("parsing", map[string]any{"mode": "agent", "depth": 1}), "indexing.configuration.parsing.depth"},
		{"unknown in chunking", cfg("chunking", map[string]any{"overlap": 1}), "indexing.configuration.chunking.overlap"},
		{"unknown in summarization", cfg("summarization", map[string]any{"enable": true, "model": "x"}), "indexing.configuration.summarization.model"},
		{"unknown in vision", cfg("vision", map[string]any{"ocr": true}), "indexing.configuration.vision.ocr"},
		{"indexing without configuration", map[string]any{"key": "k", "size": 1, "indexing": map[string]any{}}, "indexing.configuration"},
		{"missing key", map[string]any{"size": 1}, "key"},
		{"missing size", map[string]any{"key": "k"}, "size"},
		{"size not a number", map[string]any{"key": "k", "size": "12"}, "size"},
		{"negative size", map[string]any{"key": "k", "size": -1}, "size"},
		{"fractional size", map[string]any{"key": "k", "size": 1.5}, "size"},
		{"empty key", map[string]any{"key": "", "size": 1}, "key"},
		{"tags not strings", map[string]any{"key": "k", "size": 1, "tags": map[string]any{"n": 1}}, "tags.n"},
		{"bad access policy", map[string]any{"key": "k", "size": 1, "accessPolicies": []any{"everyone"}}, "accessPolicies"},
		{"index not boolean", map[string]any{"key": "k", "size": 1, "index": "yes"}, "index"},
		{"metadata not an object", map[string]any{"key": "k", "size": 1, "metadata": []any{1}}, "metadata"},
		{"publicContentImmediatelyAccessible not boolean", map[string]any{"key": "k", "size": 1, "publicContentImmediatelyAccessible": 1}, "publicContentImmediatelyAccessible"},
		{"parsing.mode", cfg("parsing", map[string]any{"mode": "fast"}), "indexing.configuration.parsing.mode"},
		{"summarization.modelType", cfg("summarization", map[string]any{"modelType": "cheap"}), "indexing.configuration.summarization.modelType"},
		{"stack", map[string]any{"key": "k", "size": 1, "indexing": map[string]any{"configuration": map[string]any{"stack": "v2"}}}, "indexing.configuration.stack"},
		{"smartCleanup not boolean", cfg("parsing", map[string]any{"smartCleanup": "yes"}), "indexing.configuration.parsing.smartCleanup"},
		{"transcribePages false", cfg("vision", map[string]any{"transcribePages": false}), "indexing.configuration.vision.transcribePages"},
		{"transcribePages string", cfg("vision", map[string]any{"transcribePages": "all"}), "indexing.configuration.vision.transcribePages"},
		{"indexPages strings", cfg("vision", map[string]any{"indexPages": []any{"1"}}), "indexing.configuration.vision.indexPages"},
		{"indexPages fractions", cfg("vision", map[string]any{"indexPages": []any{1.5}}), "indexing.configuration.vision.indexPages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := f
			f.c.t = t
			f.upsert(tc.body).fail(400, "InvalidPayload", tc.path)
		})
	}
	f.do(http.MethodPut, "/v1/files", `{"key":"k",`).fail(400, "InvalidPayload", "JSON")
	if l := f.list(""); len(l.Files) != 0 {
		t.Fatalf("refused upserts created files: %v", keysOf(l.Files))
	}

	// Every allowed value is accepted, and the configuration is kept in
	// metadata.indexing next to the caller's own metadata. (Not indexed:
	// for an indexed file the options also meet the plan and model rules,
	// tested in ai_indexing_e2e_test.go.)
	conf := map[string]any{
		"parsing":       map[string]any{"mode": "standard", "minimumParagraphLength": 50, "smartCleanup": true},
		"chunking":      map[string]any{"maximumChunkLength": 5000, "embeddedContextLevels": 0, "embedBreadcrumb": false},
		"summarization": map[string]any{"enable": true, "modelType": "accurate", "minimumInputLength": 1000, "outputTokenLimit": 10000, "generateMasterSummary": true},
		"stack":         "realtime-v1",
		"vision":        map[string]any{"transcribePages": true, "indexPages": []any{1, 2, 30}},
	}
	got := f.mustUpsert(map[string]any{"key": "doc.pdf", "size": 10, "index": false, "metadata": map[string]any{"source": "web"},
		"indexing": map[string]any{"configuration": conf}})
	want := map[string]any{"source": "web", "indexing": map[string]any{"configuration": jsonRoundTrip(t, conf)}}
	if !reflect.DeepEqual(got.Metadata, want) {
		t.Errorf("metadata %v, want %v", got.Metadata, want)
	}
	if !reflect.DeepEqual(f.getFile(got.ID).Metadata, want) {
		t.Errorf("getFile metadata %v, want %v", f.getFile(got.ID).Metadata, want)
	}
	for _, v := range []map[string]any{
		{"parsing": map[string]any{"mode": "agent"}, "stack": "legacy"},
		{"summarization": map[string]any{"modelType": "inexpensive"}, "vision": map[string]any{"indexPages": true, "transcribePages": []any{}}},
		{"summarization": map[string]any{"modelType": "balanced"}},
		{},
	} {
		f.mustUpsert(map[string]any{"key": "doc2.pdf", "size": 10, "indexing": map[string]any{"configuration": v}})
	}
	// Every documented property, at once.
	full := f.mustUpsert(map[string]any{"key": "full.txt", "size": 3, "tags": map[string]any{"a": "b"}, "index": false,
		"accessPolicies": []any{"integrations", "public_content"}, "contentType": "text/plain",
		"expiresAt": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "publicContentImmediatelyAccessible": true,
		"metadata": map[string]any{"n": 1.5, "nil": nil, "list": []any{"x"}}})
	if full.Status != "upload_pending" || full.Size != nil || full.ExpiresAt == nil || full.ContentType != "text/plain" ||
		!reflect.DeepEqual(full.Metadata, map[string]any{"n": 1.5, "nil": nil, "list": []any{"x"}}) {
		t.Errorf("upsert with every property: %+v", full)
	}

	// The Files API takes 1 MB bodies (spec 8).
	big := map[string]any{"key": "big", "size": 1, "metadata": map[string]any{"blob": strings.Repeat("x", 1<<20)}}
	f.upsert(big).fail(413, "PayloadTooLarge")
	// 95 MB is the indexing limit.
	f.upsert(map[string]any{"key": "huge.pdf", "size": 95<<20 + 1, "index": true}).fail(400, "InvalidPayload", "size")
	f.mustUpsert(map[string]any{"key": "huge.pdf", "size": 95 << 20, "index": true})
	f.mustUpsert(map[string]any{"key": "huge.bin", "size": 95<<20 + 1, "index": false})
}

func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func testUpsertIndexingBounds(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "bounds")
	for _, b := range []struct {
		section, member string
		min, max        int
	}{
		{"parsing", "minimumParagraphLength", 50, 2000},
		{"chunking", "maximumChunkLength", 100, 5000},
		{"chunking", "embeddedContextLevels", 0, 3},
		{"summarization", "minimumInputLength", 1000, 10000},
		{"summarization", "outputTokenLimit", 1000, 10000},
	} {
		t.Run(b.member, func(t *testing.T) {
			f := e.f
			f.c.t = t
			body := func(v any) map[string]any {
				return map[string]any{"key": "bounds-" + b.member, "size": 1,
					"indexing": map[string]any{"configuration": map[string]any{b.section: map[string]any{b.member: v}}}}
			}
			path := "indexing.configuration." + b.section + "." + b.member
			for _, v := range []int{b.min, b.max, (b.min + b.max) / 2} {
				got := f.mustUpsert(body(v))
				if n := field(t, got.Metadata, "indexing", "configuration", b.section, b.member); n != float64(v) {
					t.Errorf("%s = %d stored as %v", path, v, n)
				}
			}
			f.upsert(body(b.min-1)).fail(400, "InvalidPayload", path)
			f.upsert(body(b.max+1)).fail(400, "InvalidPayload", path)
			f.upsert(body(float64(b.min)+0.5)).fail(400, "InvalidPayload", path)
			f.upsert(body(strconv.Itoa(b.min))).fail(400, "InvalidPayload", path)
		})
	}
}

// testGetFileByKey: getFile takes a file's key where its id is expected, as
// the hosted platform does (@botpress/cognitive reads its model preferences,
// bot-><id>->models.config.json, that way): the caller's own key only,
// another bot's and another integration's are not found.
func testGetFileByKey(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "by-key")
	key := "bot->" + e.bot + "->models.config.json"
	a := e.f.mustUpsert(map[string]any{"key": key, "size": 2, "tags": map[string]any{"system": "true", "purpose": "config"}})
	if got := e.f.getFile(key); got.ID != a.ID || got.Key != key {
		t.Errorf("getFile(%q) = %s, want %s", key, got.ID, a.ID)
	}
	if got := e.f.getFile(a.ID); got.ID != a.ID {
		t.Errorf("getFile by id = %s", got.ID)
	}
	e.f.get("no-such-key.json").fail(404, "ResourceNotFound", "no-such-key.json")
	s.files(t, e.ws.token, e.newBot(t, "by-key-other")).get(key).fail(404, "ResourceNotFound")
	e.f.with("x-integration-name", "slack").get(key).fail(404, "ResourceNotFound")
}

func testFileKeysAndOwners(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "keys")
	other := e.newBot(t, "keys-other")
	f := e.f
	a := f.mustUpsert(map[string]any{"key": "same.txt", "size": 1})
	if a.BotID != e.bot || a.Key != "same.txt" || !strings.HasPrefix(a.ID, "file_") ||
		!reflect.DeepEqual(a.Owner, map[string]any{"type": "bot", "id": e.bot}) || a.Index || len(a.AccessPolicies) != 0 {
		t.Errorf("bot upsert: %+v", a)
	}
	if again := f.mustUpsert(map[string]any{"key": "same.txt", "size": 2}); again.ID != a.ID {
		t.Errorf("upsert of the same key made a new file %s (was %s)", again.ID, a.ID)
	}
	// The same key in another bot is another file.
	fo := s.files(t, e.ws.token, other)
	b := fo.mustUpsert(map[string]any{"key": "same.txt", "size": 1})
	if b.ID == a.ID || b.BotID != other {
		t.Errorf("same key in another bot: %+v", b)
	}
	// The same key from an integration is another file; each integration
	// has its own keys, by id, alias or name.
	byID := f.with("x-integration-id", "intver_123", "x-integration-name", "slack", "x-integration-alias", "slack-main")
	i := byID.mustUpsert(map[string]any{"key": "same.txt", "size": 1})
	if i.ID == a.ID || !reflect.DeepEqual(i.Owner, map[string]any{"type": "integration", "name": "slack", "alias": "slack-main"}) {
		t.Errorf("integration upsert: id %s (bot's %s), owner %v", i.ID, a.ID, i.Owner)
	}
	if again := byID.mustUpsert(map[string]any{"key": "same.txt", "size": 3}); again.ID != i.ID {
		t.Errorf("integration re-upsert made a new file %s (was %s)", again.ID, i.ID)
	}
	byAlias := f.with("x-integration-alias", "teams-1")
	j := byAlias.mustUpsert(map[string]any{"key": "same.txt", "size": 1})
	if j.ID == a.ID || j.ID == i.ID || j.Owner["type"] != "integration" || j.Owner["alias"] != "teams-1" {
		t.Errorf("integration by alias: %+v", j)
	}
	byName := f.with("x-integration-name", "zendesk")
	k := byName.mustUpsert(map[string]any{"key": "same.txt", "size": 1})
	if k.ID == a.ID || k.ID == i.ID || k.ID == j.ID || k.Owner["type"] != "integration" || k.Owner["name"] != "zendesk" {
		t.Errorf("integration by name: %+v", k)
	}
	if got := sortedKeysOf(f.list("").Files); !reflect.DeepEqual(got, []string{"same.txt", "same.txt", "same.txt", "same.txt"}) {
		t.Errorf("the bot lists %v, want its file and the three integrations' files", got)
	}
	// A user upload belongs to the bot's keys but is owned by the user.
	u := f.with("x-user-id", "user_42").mustUpsert(map[string]any{"key": "from-user.txt", "size": 1})
	if !reflect.DeepEqual(u.Owner, map[string]any{"type": "user", "id": "user_42"}) {
		t.Errorf("user upsert owner %v", u.Owner)
	}
	// Keys may hold any characters, slashes included.
	for _, key := range []string{"dir/sub/file name.txt", "ünï😀.md", "a+b=c?&d#e"} {
		got := f.mustUpsert(map[string]any{"key": key, "size": 1})
		if got.Key != key || f.getFile(got.ID).Key != key {
			t.Errorf("key %q came back as %q", key, got.Key)
		}
	}
	f.upsert(map[string]any{"key": strings.Repeat("k", 5000), "size": 1}).fail(400, "InvalidPayload", "key")
}

func testFileContentType(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "ctype").f
	for _, tc := range []struct{ key, explicit, want string }{
		{"report.pdf", "", "application/pdf"},
		{"REPORT.PDF", "", "application/pdf"},
		{"notes.md", "", "text/markdown"},
		{"dir.v2/readme", "", "application/octet-stream"},
		{"noext", "", "application/octet-stream"},
		{"weird.zzzunknown", "", "application/octet-stream"},
		{"page.html", "", "text/html"},
		{"data.json", "", "application/json"},
		{"image.png", "", "image/png"},
		{"report2.pdf", "text/plain", "text/plain"},
		{"noext2", "application/x-custom", "application/x-custom"},
	} {
		body := map[string]any{"key": tc.key, "size": 1}
		if tc.explicit != "" {
			body["contentType"] = tc.explicit
		}
		got := f.mustUpsert(body)
		if got.ContentType != tc.want {
			t.Errorf("key %q contentType %q: got %q, want %q", tc.key, tc.explicit, got.ContentType, tc.want)
		}
		if g := f.getFile(got.ID).ContentType; g != tc.want {
			t.Errorf("getFile %q: contentType %q, want %q", tc.key, g, tc.want)
		}
	}
	f.upsert(map[string]any{"key": "x", "size": 1, "contentType": ""}).fail(400, "InvalidPayload", "contentType")
	// The content is served with the file's type.
	got := f.create(s, "served.md", []byte("# hi"), nil)
	if ct := s.fetch(t, got.URL).Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
		t.Errorf("served Content-Type %q, want text/markdown", ct)
	}
}

func testFileTagsAndExpiry(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "tags").f
	long := strings.Repeat("x", 1000)
	wide := strings.Repeat("é", 1000) // 1000 characters, 2000 bytes
	got := f.mustUpsert(map[string]any{"key": "t", "size": 1, "tags": map[string]any{"long": long, "wide": wide, "empty": ""}})
	if got.Tags["long"] != long || got.Tags["wide"] != wide || got.Tags["empty"] != "" {
		t.Errorf("tags not kept: %d %d", len(got.Tags["long"]), len(got.Tags["wide"]))
	}
	f.upsert(map[string]any{"key": "t2", "size": 1, "tags": map[string]any{"ok": "x", "toolong": long + "x"}}).
		fail(400, "InvalidPayload", "tags.toolong")
	f.upsert(map[string]any{"key": "t2", "size": 1, "tags": map[string]any{"wide": wide + "é"}}).fail(400, "InvalidPayload", "tags.wide")

	now := time.Now().UTC()
	day := now.Add(48 * time.Hour)
	exp := time.Date(day.Year(), day.Month(), day.Day(), 10, 11, 12, 345e6, time.UTC)
	got = f.mustUpsert(map[string]any{"key": "e", "size": 1, "expiresAt": exp.Format("2006-01-02T15:04:05.000Z")})
	want := exp.Format("2006-01-02T15:04") + ":00.000Z"
	if got.ExpiresAt == nil || *got.ExpiresAt != want {
		t.Errorf("expiresAt %v, want %s (seconds and milliseconds dropped)", got.ExpiresAt, want)
	}
	if g := f.getFile(got.ID).ExpiresAt; g == nil || *g != want {
		t.Errorf("getFile expiresAt %v, want %s", g, want)
	}
	// An offset is converted to UTC.
	off := exp.In(time.FixedZone("x", 2*3600)).Format(time.RFC3339)
	if g := f.mustUpsert(map[string]any{"key": "e2", "size": 1, "expiresAt": off}); g.ExpiresAt == nil || *g.ExpiresAt != want {
		t.Errorf("expiresAt %s came back as %v, want %s", off, g.ExpiresAt, want)
	}
	if g := f.mustUpsert(map[string]any{"key": "e3", "size": 1}); g.ExpiresAt != nil {
		t.Errorf("a file without expiry has expiresAt %v", *g.ExpiresAt)
	}
	for _, tc := range []struct{ name, v string }{
		{"past", now.Add(-time.Hour).Format(time.RFC3339)},
		{"same minute", now.Format(time.RFC3339)},
		{"over 90 days", now.Add(90*24*time.Hour + 5*time.Minute).Format(time.RFC3339)},
		{"a year", now.AddDate(1, 0, 0).Format(time.RFC3339)},
		{"not a date", "tomorrow"},
		{"date only", day.Format("2006-01-02")},
	} {
		f.upsert(map[string]any{"key": "e4", "size": 1, "expiresAt": tc.v}).fail(400, "InvalidPayload", "expiresAt")
	}
	f.upsert(map[string]any{"key": "e4", "size": 1, "expiresAt": 12345}).fail(400, "InvalidPayload", "expiresAt")
	f.mustUpsert(map[string]any{"key": "e5", "size": 1, "expiresAt": now.Add(90*24*time.Hour - 5*time.Minute).Format(time.RFC3339)})
	f.mustUpsert(map[string]any{"key": "e6", "size": 1, "expiresAt": now.Add(3 * time.Minute).Format(time.RFC3339)})
}

func testFileReupsert(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "reupsert")
	f := e.f
	first := f.create(s, "r.txt", []byte("first content"), map[string]any{"tags": map[string]any{"v": "1"}})
	if first.Status != "upload_completed" || first.Size == nil || *first.Size != 13 {
		t.Fatalf("after upload: %+v", first)
	}
	oldURL, oldUpload := first.URL, f.getFile(first.ID).UploadURL
	if r := s.fetch(t, oldURL); r.Status != 200 || string(r.Body) != "first content" {
		t.Fatalf("content before the re-upsert: %d %q", r.Status, r.Body)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 13 {
		t.Errorf("usage %d, want 13", u)
	}
	nextMillisecond() // updatedAt (millisecond precision) must move
	second := f.mustUpsert(map[string]any{"key": "r.txt", "size": 6})
	if second.ID != first.ID || second.Status != "upload_pending" || second.Size != nil || second.CreatedAt != first.CreatedAt ||
		second.UpdatedAt == first.UpdatedAt || len(second.Tags) != 0 {
		t.Errorf("re-upsert: %+v (first %+v)", second, first)
	}
	if got := f.getFile(first.ID); got.Status != "upload_pending" || got.Size != nil {
		t.Errorf("getFile after re-upsert: status %s size %v", got.Status, got.Size)
	}
	// The old content is gone: its url and uploadUrl no longer work.
	if r := s.fetch(t, oldURL); r.Status != 404 && r.Status != 403 {
		t.Errorf("old url after re-upsert: status %d, want 404 or 403", r.Status)
	} else if r.Status == 404 {
		r.fail(404, "ResourceNotFound")
	} else {
		r.fail(403, "Forbidden")
	}
	s.upload(t, oldUpload, "text/plain", []byte("sneaky")).fail(403, "Forbidden")
	s.fetch(t, f.getFile(first.ID).URL).fail(404, "ResourceNotFound") // no content yet
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 0 {
		t.Errorf("usage after re-upsert %d, want 0", u)
	}
	if r := s.upload(t, second.UploadURL, "text/plain", []byte("second")); r.Status != 200 {
		t.Fatalf("upload of the new content: %d %s", r.Status, r.Body)
	}
	got := f.getFile(first.ID)
	if r := s.fetch(t, got.URL); r.Status != 200 || string(r.Body) != "second" {
		t.Errorf("content after the second upload: %d %q", r.Status, r.Body)
	}
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != 6 {
		t.Errorf("usage %d, want 6", u)
	}
}
