package main

// Files API end-to-end: listFiles filters, sorting and pagination;
// listFileTags and listFileTagValues.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testListFilesFilters(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "filters").f
	mk := func(key string, tags map[string]any, index bool) apiFile {
		return f.mustUpsert(map[string]any{"key": key, "size": 1, "tags": tags, "index": index})
	}
	mk("f1", map[string]any{"color": "red", "size": "s", "note": "a b+c"}, true)
	mk("f2", map[string]any{"color": "blue", "size": "m"}, false)
	mk("f3", map[string]any{"color": "green", "size": "s"}, true)
	mk("f4", map[string]any{"size": "m"}, false)
	ids := map[string]string{}
	for _, x := range f.list("").Files {
		ids[x.Key] = x.ID
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"f1", "f2", "f3", "f4"}},
		{"?tags.color=red", []string{"f1"}},
		{"?tags.color=red&tags.color=blue", []string{"f1", "f2"}},
		{"?tags.color.not=red", []string{"f2", "f3", "f4"}},
		{"?tags.color.not=red&tags.color.not=blue", []string{"f3", "f4"}},
		{"?tags.color=red&tags.size=s", []string{"f1"}},
		{"?tags.color=blue&tags.size=s", nil},
		{"?tags.size=s&tags.color.not=green", []string{"f1"}},
		{"?tags.color=purple", nil},
		{"?tags.nosuchtag=x", nil},
		{"?tags.note=a%20b%2Bc", []string{"f1"}},
		{"?tags=" + url.QueryEscape(`{"color":"red"}`), []string{"f1"}},
		{"?tags=" + url.QueryEscape(`{"color":["red","blue"]}`), []string{"f1", "f2"}},
		{"?tags=" + url.QueryEscape(`{"color":{"not":"red"}}`), []string{"f2", "f3", "f4"}},
		{"?tags=" + url.QueryEscape(`{"color":{"not":["red","blue"]},"size":"s"}`), []string{"f3"}},
		{"?tags=" + url.QueryEscape(`{"color":["red","green"],"size":"s"}`), []string{"f1", "f3"}},
		{"?tags=" + url.QueryEscape(`{"size":"m"}`) + "&tags.color=blue", []string{"f2"}},
		{"?indexed=true", []string{"f1", "f3"}},
		{"?indexed=false", []string{"f2", "f4"}},
		{"?indexed=true&tags.size=m", nil},
		{"?ids=" + ids["f1"] + "&ids=" + ids["f4"], []string{"f1", "f4"}},
		{"?ids=" + ids["f1"] + "&ids=file_nope", []string{"f1"}},
		{"?ids=" + ids["f1"] + "&ids=" + ids["f2"] + "&tags.color=blue", []string{"f2"}},
	} {
		got := sortedKeysOf(f.listAll(tc.query, 100))
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("listFiles%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	fifty := make([]string, 50)
	for i := range fifty {
		fifty[i] = "ids=file_" + strconv.Itoa(i)
	}
	fifty[0] = "ids=" + ids["f3"]
	if got := keysOf(f.list("?" + strings.Join(fifty, "&")).Files); !reflect.DeepEqual(got, []string{"f3"}) {
		t.Errorf("50 ids: %v", got)
	}
	for _, tc := range []struct{ query, mention string }{
		{"?" + strings.Join(fifty, "&") + "&ids=file_51", "ids"},
		{"?indexed=maybe", "indexed"},
		{"?indexed=1", "indexed"},
		{"?sortField=name", "sortField"},
		{"?sortDirection=up", "sortDirection"},
		{"?pageSize=0", "pageSize"},
		{"?pageSize=101", "pageSize"},
		{"?pageSize=x", "pageSize"},
		{"?nextToken=garbage", "nextToken"},
		{"?tags=" + url.QueryEscape(`{"color":`), "tags"},
		{"?tags=" + url.QueryEscape(`["red"]`), "tags"},
		{"?tags=" + url.QueryEscape(`{"color":1}`), "tags.color"},
		{"?tags=" + url.QueryEscape(`{"color":{"in":"red"}}`), "tags.color"},
	} {
		f.do(http.MethodGet, "/v1/files"+tc.query, nil).fail(400, "InvalidQuery", tc.mention)
	}
}

func testListFilesSort(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "sort").f
	// Created in this order, with sizes out of order, some without content.
	specs := []struct {
		key     string
		content string
		upload  bool
		index   bool
	}{
		{"m.txt", "12345", true, false},
		{"b.txt", "1", true, true},
		{"z.txt", "123", false, false},
		{"a.txt", "1234567", true, false},
		{"k.txt", "12", false, false},
		{"c.txt", "1234", true, false},
	}
	ids := map[string]string{}
	for _, sp := range specs {
		if sp.upload {
			ids[sp.key] = f.create(s, sp.key, []byte(sp.content), map[string]any{"index": sp.index}).ID
		} else {
			ids[sp.key] = f.mustUpsert(map[string]any{"key": sp.key, "size": len(sp.content)}).ID
		}
	}
	f.update(ids["m.txt"], map[string]any{"tags": map[string]any{"touched": "1"}}).file() // m.txt is updated last
	var created []string
	for _, sp := range specs {
		created = append(created, sp.key)
	}
	reversed := func(v []string) []string {
		out := append([]string(nil), v...)
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	byKey := append([]string(nil), created...)
	sort.Strings(byKey)
	for _, pageSize := range []int{1, 2, 100} {
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", created},
			{"?sortField=createdAt", created},
			{"?sortField=createdAt&sortDirection=asc", created},
			{"?sortField=createdAt&sortDirection=desc", reversed(created)},
			{"?sortField=key", byKey},
			{"?sortField=key&sortDirection=desc", reversed(byKey)},
		} {
			if got := keysOf(f.listAll(tc.query, pageSize)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("listFiles%s pageSize %d: %v, want %v", tc.query, pageSize, got, tc.want)
			}
		}
		// size: files without content (size null) come first ascending.
		checkOrder(t, f.listAll("?sortField=size", pageSize), pageSize, "size", false, func(a, b apiFile) int { return cmpSize(a.Size, b.Size) })
		checkOrder(t, f.listAll("?sortField=size&sortDirection=desc", pageSize), pageSize, "size", true, func(a, b apiFile) int { return cmpSize(a.Size, b.Size) })
		checkOrder(t, f.listAll("?sortField=status", pageSize), pageSize, "status", false, func(a, b apiFile) int { return strings.Compare(a.Status, b.Status) })
		checkOrder(t, f.listAll("?sortField=status&sortDirection=desc", pageSize), pageSize, "status", true, func(a, b apiFile) int { return strings.Compare(a.Status, b.Status) })
		checkOrder(t, f.listAll("?sortField=updatedAt", pageSize), pageSize, "updatedAt", false, func(a, b apiFile) int { return strings.Compare(a.UpdatedAt, b.UpdatedAt) })
		up := f.listAll("?sortField=updatedAt&sortDirection=desc", pageSize)
		checkOrder(t, up, pageSize, "updatedAt", true, func(a, b apiFile) int { return strings.Compare(a.UpdatedAt, b.UpdatedAt) })
		if len(up) > 0 && up[0].Key != "m.txt" {
			t.Errorf("sortField=updatedAt desc starts with %s, want m.txt (updated last)", up[0].Key)
		}
	}
	sizes := keysOf(f.listAll("?sortField=size", 100))
	if want := []string{"k.txt", "z.txt", "b.txt", "c.txt", "m.txt", "a.txt"}; !reflect.DeepEqual(sizes[2:], want[2:]) ||
		!reflect.DeepEqual(sortedStrings(sizes[:2]), want[:2]) {
		t.Errorf("sortField=size: %v, want %v (no content first)", sizes, want)
	}
}

func sortedStrings(v []string) []string {
	out := append([]string(nil), v...)
	sort.Strings(out)
	return out
}

func cmpSize(a, b *int64) int {
	x, y := int64(-1), int64(-1)
	if a != nil {
		x = *a
	}
	if b != nil {
		y = *b
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// checkOrder requires files sorted by cmp (descending when desc), with all
// six files once each.
func checkOrder(t *testing.T, files []apiFile, pageSize int, field string, desc bool, cmp func(a, b apiFile) int) {
	t.Helper()
	if len(files) != 6 || len(uniq(keysOf(files))) != 6 {
		t.Errorf("sortField=%s pageSize %d: %v, want the 6 files once each", field, pageSize, keysOf(files))
	}
	for i := 1; i < len(files); i++ {
		c := cmp(files[i-1], files[i])
		if (!desc && c > 0) || (desc && c < 0) {
			t.Errorf("sortField=%s desc=%v pageSize %d: %s before %s", field, desc, pageSize, files[i-1].Key, files[i].Key)
		}
	}
}

func uniq(v []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range v {
		m[x] = true
	}
	return m
}

// testListFilesPagination pages through 25 files 10 at a time while files
// are added and deleted between pages: every file that exists throughout
// appears exactly once, the others at most once.
func testListFilesPagination(t *testing.T, s *testServer) {
	f := newFilesEnv(t, s, "paging").f
	for _, query := range []string{"", "?sortField=key&sortDirection=desc", "?sortField=size", "?sortField=updatedAt&sortDirection=desc"} {
		t.Run(strings.TrimPrefix(query, "?"), func(t *testing.T) {
			f := f
			f.c.t = t
			prefix := fmt.Sprintf("p%d/", time.Now().UnixNano())
			var initial []apiFile
			for i := range 25 {
				key, tags := fmt.Sprintf("%sf-%02d", prefix, i), map[string]any{"run": prefix}
				if strings.Contains(query, "size") && i%3 != 0 { // real sizes, some null
					initial = append(initial, f.create(s, key, bytes.Repeat([]byte("x"), i%4), map[string]any{"tags": tags}))
				} else {
					initial = append(initial, f.mustUpsert(map[string]any{"key": key, "size": i % 4, "tags": tags}))
				}
			}
			deleted := map[string]bool{}
			remove := func(x apiFile) { f.del(x.ID).ok(); deleted[x.ID] = true }
			seen := map[string]int{}
			q := query + sep(query) + "tags.run=" + url.QueryEscape(prefix) + "&pageSize=10"
			next := ""
			for page := 1; ; page++ {
				pq := q
				if next != "" {
					pq += "&nextToken=" + url.QueryEscape(next)
				}
				l := f.list(pq)
				if len(l.Files) > 10 {
					t.Fatalf("page %d has %d files", page, len(l.Files))
				}
				for _, x := range l.Files {
					seen[x.ID]++
				}
				if next = l.Next; next == "" {
					break
				}
				if page > 10 {
					t.Fatal("nextToken never ends")
				}
				switch page {
				case 1:
					remove(initial[0])
					remove(initial[13])
					remove(initial[24])
					f.mustUpsert(map[string]any{"key": prefix + "new-1", "size": 2, "tags": map[string]any{"run": prefix}})
					f.mustUpsert(map[string]any{"key": prefix + "a-new-2", "size": 0, "tags": map[string]any{"run": prefix}})
				case 2:
					remove(initial[7])
					f.mustUpsert(map[string]any{"key": prefix + "z-new-3", "size": 3, "tags": map[string]any{"run": prefix}})
				}
			}
			for _, x := range initial {
				if n := seen[x.ID]; deleted[x.ID] && n > 1 || !deleted[x.ID] && n != 1 {
					t.Errorf("%s (deleted %v) seen %d times", x.Key, deleted[x.ID], n)
				}
			}
			for id, n := range seen {
				if n > 1 {
					t.Errorf("file %s seen %d times", id, n)
				}
			}
		})
	}
}

func testListFileTags(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "file-tags")
	f := e.f
	if got := f.strList("/v1/files/tags", "tags", 10); len(got) != 0 {
		t.Errorf("tags of a bot without files: %v", got)
	}
	for i, tags := range []map[string]any{
		{"color": "red", "size": "s", "a": "1"},
		{"color": "blue", "shape": "round"},
		{"color": "red", "weight": "heavy"},
		{"color": "green", "size": "m", "zone": "eu west"},
		{"color": "amber"},
		{"color": ""}, // an empty value is a value
	} {
		f.mustUpsert(map[string]any{"key": fmt.Sprintf("t%d", i), "size": 1, "tags": tags})
	}
	want := []string{"a", "color", "shape", "size", "weight", "zone"}
	for _, ps := range []int{1, 2, 4, 100} {
		if got := f.strList("/v1/files/tags", "tags", ps); !reflect.DeepEqual(got, want) {
			t.Errorf("listFileTags pageSize %d: %v, want %v", ps, got, want)
		}
		if got := f.strList("/v1/files/tags/color/values", "values", ps); !reflect.DeepEqual(got, []string{"", "amber", "blue", "green", "red"}) {
			t.Errorf("listFileTagValues color pageSize %d: %v", ps, got)
		}
	}
	if got := f.strList("/v1/files/tags/zone/values", "values", 10); !reflect.DeepEqual(got, []string{"eu west"}) {
		t.Errorf("zone values: %v", got)
	}
	if got := f.strList("/v1/files/tags/nosuch/values", "values", 10); len(got) != 0 {
		t.Errorf("values of an unknown tag: %v", got)
	}
	f.do(http.MethodGet, "/v1/files/tags?pageSize=0", nil).fail(400, "InvalidQuery", "pageSize")
	f.do(http.MethodGet, "/v1/files/tags/color/values?nextToken=garbage", nil).fail(400, "InvalidQuery", "nextToken")
	// Another bot's tags are not listed, nor are its values.
	other := s.files(t, e.ws.token, e.newBot(t, "file-tags-other"))
	other.mustUpsert(map[string]any{"key": "o", "size": 1, "tags": map[string]any{"color": "ultraviolet", "other": "x"}})
	if got := f.strList("/v1/files/tags", "tags", 3); !reflect.DeepEqual(got, want) {
		t.Errorf("listFileTags after another bot's file: %v", got)
	}
	if got := other.strList("/v1/files/tags/color/values", "values", 1); !reflect.DeepEqual(got, []string{"ultraviolet"}) {
		t.Errorf("the other bot's color values: %v", got)
	}
	// Removing a tag removes it from the listing.
	for _, x := range f.list("?tags.zone=" + url.QueryEscape("eu west")).Files {
		f.update(x.ID, map[string]any{"tags": map[string]any{"zone": nil}}).file()
	}
	if got := f.strList("/v1/files/tags", "tags", 100); !reflect.DeepEqual(got, []string{"a", "color", "shape", "size", "weight"}) {
		t.Errorf("listFileTags after removing zone: %v", got)
	}
}
