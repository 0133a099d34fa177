package storetest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

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
				scopes := 0
				// mk creates a file in a scope of its own, so keys never clash.
				mk := func(id, key string, created, updated time.Time, size int64, status string) platform.File {
					scopes++
					return e.sortedFile(t, b, id, fmt.Sprintf("intg_w%02d", scopes), key, created, updated, size, status)
				}
				var initial []platform.File
				for i := range 10 {
					// Pairs share every sort value; updated times run the other way.
					initial = append(initial, mk("", fmt.Sprintf("k%02d", i/2), base.Add(time.Duration(i/2)*time.Second), base.Add(time.Duration(10-i/2)*time.Second),
						int64(10*(i/2+1)), statuses[i/2%2]))
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
				keysetWalk[platform.File, fileKey]{
					what:   "ListFiles",
					id:     func(f platform.File) string { return f.ID },
					key:    func(f platform.File) fileKey { return fileKeyOf(f, field) },
					before: func(x, y fileKey) bool { return fileListedBefore(x, y, desc) },
					order:  func(fs []platform.File) []string { return fileOrder(fs, field, desc) },
					list: func(token string) ([]platform.File, string, error) {
						return e.s.ListFiles(e.ctx, store.FileFilter{Page: store.Page{Token: token, Limit: 3}, FileVisibility: allOf(b.ID), SortField: field, Descending: desc})
					},
					like: like,
					del: func(id string) {
						_, err := e.s.DeleteFile(e.ctx, b.ID, id)
						must(t, err, "DeleteFile")
					},
					check: func(t *testing.T, got, want platform.File) { same(t, got, want, "listed file %s", got.ID) },
				}.run(t, initial)
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
	wantInvalidTokens(t, lists)
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
