package main

// Indexing end-to-end: listFilePassages and setFilePassages.

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testListFilePassages(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "passages")
	f := e.f
	var paras []string
	for i := range 25 {
		paras = append(paras, fmt.Sprintf("Paragraph number %d of the long list.", i))
	}
	file := f.index(s, "long.md", []byte(strings.Join(paras, "\n\n")), indexConf(map[string]any{"stack": "legacy"}))
	all := f.allPassages(file.ID)
	if !reflect.DeepEqual(contents(all), paras) {
		t.Fatalf("passages %q, want %q", contents(all), paras)
	}
	if byKey := f.allPassages("long.md"); !reflect.DeepEqual(byKey, all) {
		t.Errorf("passages by key differ from those by id")
	}
	// Default page: 20.
	if ps, next := f.passagesPage(file.ID, ""); len(ps) != 20 || next == "" {
		t.Errorf("default page: %d passages, nextToken %q", len(ps), next)
	}
	for _, q := range []string{"limit", "pageSize"} {
		var got []filePassage
		next, pages := "", 0
		for {
			query := "?" + q + "=10"
			if next != "" {
				query += "&nextToken=" + url.QueryEscape(next)
			}
			ps, n := f.passagesPage("long.md", query)
			if len(ps) > 10 {
				t.Fatalf("%s=10: %d passages on a page", q, len(ps))
			}
			got = append(got, ps...)
			pages++
			if next = n; next == "" || pages > 10 {
				break
			}
		}
		if pages != 3 || !reflect.DeepEqual(got, all) {
			t.Errorf("pages of 10 by %s: %d pages, passages %q", q, pages, contents(got))
		}
	}
	if ps, next := f.passagesPage(file.ID, "?limit=200"); len(ps) != 25 || next != "" {
		t.Errorf("limit 200: %d passages, nextToken %q", len(ps), next)
	}
	if ps, next := f.passagesPage(file.ID, "?limit=25"); len(ps) != 25 || next != "" {
		t.Errorf("limit 25: %d passages, nextToken %q (want no token after the last passage)", len(ps), next)
	}
	for _, bad := range []string{"0", "201", "-1", "x"} {
		f.passagesRaw(file.ID, "?limit="+bad).fail(400, "InvalidQuery", "limit")
	}
	f.passagesRaw(file.ID, "?nextToken=garbage").fail(400, "InvalidQuery")
	f.passagesRaw("file_doesnotexist", "").fail(404, "ResourceNotFound")
	f.passagesRaw("no-such-key.md", "").fail(404, "ResourceNotFound")
	// A viewer may list passages.
	viewer, _ := e.ws.addMember("viewer")
	vf := s.files(t, viewer.token, e.bot)
	if ps, _ := vf.passagesPage(file.ID, "?limit=200"); len(ps) != 25 {
		t.Errorf("viewer lists %d passages", len(ps))
	}
	// A file not indexed, or not indexed yet, has none.
	plain := f.create(s, "plain.md", []byte("Plain text that is never indexed."), nil)
	if ps, _ := f.passagesPage(plain.ID, ""); len(ps) != 0 {
		t.Errorf("passages of an unindexed file: %q", contents(ps))
	}
}

func testSetFilePassages(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "setpassages")
	f := e.f
	file := f.index(s, "birds.md", []byte("# Birds\n\nOld text about sparrows.\n"), nil)
	before := f.getFile(file.ID)
	put := func(c filesClient, idOrKey string, body any) *response {
		t.Helper()
		return c.do(http.MethodPut, "/v1/files/"+url.PathEscape(idOrKey)+"/passages", body)
	}
	// Many passages, so that the file is still pending when read back.
	own := []any{
		map[string]any{"content": "Flamingos", "type": "title"},
		map[string]any{"content": "Flamingos stand on one leg in shallow lagoons.", "pageNumber": 3},
		map[string]any{"content": "- pink feathers\n- long legs", "type": "list"},
	}
	for i := range 500 {
		own = append(own, map[string]any{"content": fmt.Sprintf("Filler passage %d about wading birds and their habits.", i)})
	}
	r := put(f, file.ID, map[string]any{"passages": own})
	if r.ok(); strings.TrimSpace(string(r.Body)) != "{}" {
		t.Errorf("setFilePassages answered %s, want {}", r.Body)
	}
	if got := f.getFile(file.ID); got.Status != "indexing_pending" || !isoAfter(t, got.UpdatedAt, before.UpdatedAt) {
		t.Errorf("right after setFilePassages: status %s, updatedAt %s (before %s), want indexing_pending and later", got.Status, got.UpdatedAt, before.UpdatedAt)
	}
	got := f.mustIndexed(file.ID)
	if got.IndexingStack == nil || *got.IndexingStack != "v2" {
		t.Errorf("indexingStack after setFilePassages: %v", got.IndexingStack)
	}
	ps := f.allPassages(file.ID)
	if len(ps) != len(own) {
		t.Fatalf("%d passages after setFilePassages, want %d", len(ps), len(own))
	}
	for i, want := range []struct {
		content, subtype string
		page             int
	}{{"Flamingos", "title", 0}, {"Flamingos stand on one leg in shallow lagoons.", "paragraph", 3}, {"- pink feathers\n- long legs", "list", 0}} {
		p := ps[i]
		if p.Content != want.content || p.Meta.Subtype != want.subtype || p.Meta.Type != "chunk" ||
			(want.page == 0) != (p.Meta.PageNumber == nil) || (p.Meta.PageNumber != nil && *p.Meta.PageNumber != want.page) {
			t.Errorf("passage %d: %+v (page %v), want %+v", i, p, ptrInt(p.Meta.PageNumber), want)
		}
	}
	hits := f.search("shallow lagoons")
	if len(hits) == 0 || hits[0].Content != "Flamingos stand on one leg in shallow lagoons." || *hits[0].Meta.PageNumber != 3 {
		t.Errorf("search for the new text:%s", describeHits(hits))
	}
	for _, h := range f.search("sparrows") {
		if strings.Contains(h.Content, "sparrows") {
			t.Errorf("the old text is still found: %q", h.Content)
		}
	}
	// By key, and replacing again with fewer passages.
	put(f, "birds.md", map[string]any{"passages": []any{map[string]any{"content": "Herons fish alone."}}}).ok()
	f.mustIndexed(file.ID)
	if got := contents(f.allPassages(file.ID)); !reflect.DeepEqual(got, []string{"Herons fish alone."}) {
		t.Errorf("passages after the second setFilePassages: %q", got)
	}
	if hits := f.search("flamingos"); len(hits) != 1 || hits[0].Content != "Herons fish alone." {
		t.Errorf("search after replacing the passages:%s", describeHits(hits))
	}

	// Bad bodies name the field.
	for _, tc := range []struct {
		body any
		path string
	}{
		{map[string]any{}, "passages"},
		{map[string]any{"passages": "x"}, "passages"},
		{map[string]any{"passages": []any{map[string]any{"content": ""}}}, "passages.0.content"},
		{map[string]any{"passages": []any{map[string]any{"content": "ok"}, map[string]any{"type": "title"}}}, "passages.1"},
		{map[string]any{"passages": []any{map[string]any{"content": "ok", "type": "heading"}}}, "passages.0.type"},
		{map[string]any{"passages": []any{map[string]any{"content": "ok", "pageNumber": 0}}}, "passages.0.pageNumber"},
		{map[string]any{"passages": []any{map[string]any{"content": "ok", "colour": "red"}}}, "passages.0.colour"},
		{map[string]any{"passages": []any{}, "extra": 1}, "extra"},
	} {
		put(f, file.ID, tc.body).fail(400, "InvalidPayload", tc.path)
	}
	if got := f.getFile(file.ID); got.Status != "indexing_completed" {
		t.Errorf("a refused setFilePassages changed the status to %s", got.Status)
	}
	// Files that are not indexed, or have no content yet.
	plain := f.create(s, "plain.md", []byte("plain"), nil)
	put(f, plain.ID, map[string]any{"passages": []any{map[string]any{"content": "x"}}}).fail(400, "InvalidPayload", "index")
	pending := f.mustUpsert(map[string]any{"key": "pending.md", "size": 5, "index": true})
	put(f, pending.ID, map[string]any{"passages": []any{map[string]any{"content": "x"}}}).fail(400, "InvalidPayload")
	put(f, "file_doesnotexist", map[string]any{"passages": []any{map[string]any{"content": "x"}}}).fail(404, "ResourceNotFound")
	// Viewers may not.
	viewer, _ := e.ws.addMember("viewer")
	vf := s.files(t, viewer.token, e.bot)
	put(vf, file.ID, map[string]any{"passages": []any{map[string]any{"content": "viewer text"}}}).fail(403, "Forbidden")
	if got := contents(f.allPassages(file.ID)); !reflect.DeepEqual(got, []string{"Herons fish alone."}) {
		t.Errorf("passages after refused changes: %q", got)
	}
	// An empty list empties the file's passages.
	put(f, file.ID, map[string]any{"passages": []any{}}).ok()
	f.mustIndexed(file.ID)
	if ps := f.allPassages(file.ID); len(ps) != 0 {
		t.Errorf("passages after setting none: %q", contents(ps))
	}
}

// isoAfter reports whether ISO 8601 timestamp a is later than b.
func isoAfter(t *testing.T, a, b string) bool {
	t.Helper()
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		t.Fatalf("timestamps %q, %q: %v %v", a, b, err1, err2)
	}
	return ta.After(tb)
}
