package main

// Indexing end-to-end: searchFiles parameters, filters and visibility.

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// handbook: one passage per block (legacy), positions 0–9.
var handbook = []string{
	"Employee Handbook",
	"Onboarding",
	"New hires receive a laptop on their first day.",
	"The buddy program pairs each newcomer with a mentor.",
	"Security training must be completed within a week.",
	"Payroll",
	"Salaries are paid on the last business day of each month.",
	"Expense reports are reimbursed with the next salary.",
	"Overtime is compensated at one and a half times the hourly rate.",
	"Tax forms are available in the portal every January.",
}

func handbookMarkdown() []byte {
	h := handbook
	return []byte("# " + h[0] + "\n\n## " + h[1] + "\n\n" + strings.Join(h[2:5], "\n\n") + "\n\n## " + h[5] + "\n\n" + strings.Join(h[6:], "\n\n") + "\n")
}

func contextOf(h searchHit, typ string) []string {
	var out []string
	for _, c := range h.Context {
		if c.Type == typ {
			out = append(out, c.Text)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	return reflect.DeepEqual(sortedStrings(slices.Clone(a)), sortedStrings(slices.Clone(b)))
}

func testSearchParams(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "search")
	f := e.f
	hb := f.index(s, "handbook.md", handbookMarkdown(), indexConf(map[string]any{"stack": "legacy"}))
	travel := f.index(s, "travel.md", []byte("# Travel Policy\n\nTravel expense claims need receipts.\n\nHotel expense limits depend on the city.\n\n"+
		"Meals are an expense the company covers on trips.\n"), indexConf(map[string]any{"stack": "legacy"}))
	if got := contents(f.allPassages(hb.ID)); !reflect.DeepEqual(got, handbook) {
		t.Fatalf("handbook passages %q, want %q", got, handbook)
	}

	// The target passage (position 7) comes first, with no context unless
	// asked for.
	const q = "expense reports reimbursed"
	target := handbook[7]
	first := func(params ...string) searchHit {
		t.Helper()
		hits := f.search(q, params...)
		if len(hits) == 0 || hits[0].File.ID != hb.ID || hits[0].Content != target {
			t.Fatalf("search %q %v: want %q first:%s", q, params, target, describeHits(hits))
		}
		if p := hits[0].Meta.Position; p == nil || *p != 7 || hits[0].Meta.Subtype != "paragraph" {
			t.Errorf("search %q: meta %+v, want position 7, paragraph", q, hits[0].Meta)
		}
		return hits[0]
	}
	if h := first(); len(h.Context) != 0 {
		t.Errorf("context without withContext: %+v", h.Context)
	}
	for _, tc := range []struct {
		params     []string
		before     []string
		after      []string
		breadcrumb string
	}{
		{[]string{"withContext", "true"}, handbook[6:7], handbook[8:9], ""}, // contextDepth defaults to 1
		{[]string{"withContext", "true", "contextDepth", "0"}, nil, nil, ""},
		{[]string{"withContext", "true", "contextDepth", "2"}, handbook[5:7], handbook[8:10], ""},
		{[]string{"withContext", "true", "contextDepth", "10"}, handbook[:7], handbook[8:], ""},
		{[]string{"withContext", "false", "contextDepth", "3"}, nil, nil, ""},
		{[]string{"includeBreadcrumb", "true"}, nil, nil, "Employee Handbook > Payroll"},
		{[]string{"includeBreadcrumb", "false"}, nil, nil, ""},
		{[]string{"includeBreadcrumb", "true", "withContext", "true", "contextDepth", "1"}, handbook[6:7], handbook[8:9], "Employee Handbook > Payroll"},
	} {
		h := first(tc.params...)
		if got := contextOf(h, "preceding"); !sameSet(got, tc.before) {
			t.Errorf("%v: preceding context %q, want %q", tc.params, got, tc.before)
		}
		if got := contextOf(h, "subsequent"); !sameSet(got, tc.after) {
			t.Errorf("%v: subsequent context %q, want %q", tc.params, got, tc.after)
		}
		var wantCrumb []string
		if tc.breadcrumb != "" {
			wantCrumb = []string{tc.breadcrumb}
		}
		if got := contextOf(h, "breadcrumb"); !reflect.DeepEqual(got, wantCrumb) {
			t.Errorf("%v: breadcrumb context %q, want %q", tc.params, got, wantCrumb)
		}
	}

	// limit: 1 to 50, default 10.
	total := len(f.search("expense", "limit", "50"))
	if total < 4 || total > 50 {
		t.Errorf("limit 50: %d passages", total)
	}
	if hits := f.search("expense"); len(hits) != min(10, total) {
		t.Errorf("default limit: %d passages, want %d", len(hits), min(10, total))
	}
	for _, n := range []int{1, 3} {
		if hits := f.search("expense", "limit", fmt.Sprint(n)); len(hits) != min(n, total) {
			t.Errorf("limit %d: %d passages", n, len(hits))
		}
	}
	for _, bad := range []string{"0", "51", "-1", "ten", "1.5"} {
		f.searchRaw("query", "expense", "limit", bad).fail(400, "InvalidQuery", "limit")
	}
	for _, bad := range []string{"-1", "11", "x"} {
		f.searchRaw("query", "expense", "contextDepth", bad).fail(400, "InvalidQuery", "contextDepth")
	}
	for _, name := range []string{"withContext", "includeBreadcrumb", "consolidate"} {
		f.searchRaw("query", "expense", name, "yes").fail(400, "InvalidQuery", name)
	}
	f.searchRaw().fail(400, "InvalidQuery", "query")
	f.searchRaw("query", "").fail(400, "InvalidQuery", "query")
	f.searchRaw("limit", "5").fail(400, "InvalidQuery", "query")
	f.searchRaw("query", strings.Repeat("expense ", 600)).fail(400, "InvalidQuery", "query")
	// A query with no searchable word does not fail.
	f.search("?!")

	// consolidate: one passage per file, of type consolidated, holding the
	// file's passages that matched, in the file's order.
	plain := f.search("expense", "limit", "8")
	cons := f.search("expense", "limit", "8", "consolidate", "true")
	if len(cons) != len(hitFiles(plain)) || !reflect.DeepEqual(hitFiles(cons), hitFiles(plain)) {
		t.Fatalf("consolidate: %d passages for files %v, want one per file of%s", len(cons), hitFiles(cons), describeHits(plain))
	}
	if len(cons) != 2 {
		t.Errorf("consolidate: %d files, want both", len(cons))
	}
	for _, c := range cons {
		if c.Meta.Type != "consolidated" {
			t.Errorf("consolidated passage of type %q", c.Meta.Type)
		}
		var parts []searchHit
		for _, p := range plain {
			if p.File.ID == c.File.ID {
				parts = append(parts, p)
			}
		}
		slices.SortFunc(parts, func(a, b searchHit) int { return *a.Meta.Position - *b.Meta.Position })
		at := 0
		for _, p := range parts {
			i := strings.Index(c.Content[at:], p.Content)
			if i < 0 {
				t.Errorf("consolidated passage of %s lacks %q in order: %q", c.File.Key, p.Content, c.Content)
				break
			}
			at += i + len(p.Content)
		}
		if c.File.ID == travel.ID && !strings.Contains(c.Content, "Hotel expense limits") {
			t.Errorf("consolidated travel passage: %q", c.Content)
		}
	}
}

func testSearchFilters(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "filters")
	f := e.f
	hr := f.index(s, "hr.md", []byte("Expense reports are reimbursed monthly."), map[string]any{"tags": map[string]any{"dept": "hr", "lang": "en"}})
	fin := f.index(s, "finance.md", []byte("Expense claims need receipts."), map[string]any{"tags": map[string]any{"dept": "finance", "lang": "en"}})
	ops := f.index(s, "ops.md", []byte("Expense cards are issued by operations."), map[string]any{"tags": map[string]any{"dept": "ops", "lang": "fr"}})
	f.mustUpsert(map[string]any{"key": "pending.md", "size": 10, "index": true, "tags": map[string]any{"dept": "hr"}}) // no content
	all := map[string]bool{hr.ID: true, fin.ID: true, ops.ID: true}
	for _, tc := range []struct {
		params []string
		want   []string
	}{
		{nil, []string{hr.ID, fin.ID, ops.ID}},
		{[]string{"tags.dept", "finance"}, []string{fin.ID}},
		{[]string{"tags.dept", "finance", "tags.dept", "hr"}, []string{fin.ID, hr.ID}},
		{[]string{"tags.dept.not", "finance"}, []string{hr.ID, ops.ID}},
		{[]string{"tags.lang", "en", "tags.dept.not", "hr"}, []string{fin.ID}},
		{[]string{"tags.lang", "de"}, nil},
		{[]string{"tags.color", "red"}, nil},
		{[]string{"tags", `{"dept":"hr"}`}, []string{hr.ID}},
		{[]string{"tags", `{"dept":["hr","ops"]}`}, []string{hr.ID, ops.ID}},
		{[]string{"tags", `{"dept":{"not":"hr"}}`}, []string{fin.ID, ops.ID}},
		{[]string{"tags", `{"lang":"en","dept":{"not":["hr"]}}`}, []string{fin.ID}},
	} {
		hits := f.search("expense", tc.params...)
		want := map[string]bool{}
		for _, id := range tc.want {
			want[id] = true
		}
		if got := hitFiles(hits); !reflect.DeepEqual(got, want) {
			t.Errorf("tags %v: files %v, want %v:%s", tc.params, got, want, describeHits(hits))
		}
		for _, h := range hits {
			if all[h.File.ID] && h.File.Tags["dept"] == "" {
				t.Errorf("passage file without its tags: %+v", h.File)
			}
		}
	}
	f.searchRaw("query", "expense", "tags", "{bad").fail(400, "InvalidQuery", "tags")
	// The file object of a passage carries the file's metadata.
	hits := f.search("receipts", "tags.dept", "finance")
	if len(hits) != 1 || !reflect.DeepEqual(hits[0].File.Tags, map[string]string{"dept": "finance", "lang": "en"}) ||
		hits[0].File.CreatedAt != fin.CreatedAt || hits[0].File.UpdatedAt != f.getFile(fin.ID).UpdatedAt || hits[0].File.ContentType != "text/markdown" {
		t.Errorf("passage file %+v, want that of %+v", hits, fin)
	}
}

func testSearchVisibility(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "visibility")
	bot := e.f
	private := bot.index(s, "private.md", []byte("Pelican colony notes kept by the bot."), nil)
	shared := bot.index(s, "shared.md", []byte("Pelican colony notes shared with integrations."), map[string]any{"accessPolicies": []any{"integrations"}})
	i1 := bot.with("x-integration-id", "intver_1", "x-integration-name", "slack", "x-integration-alias", "slack")
	i2 := bot.with("x-integration-id", "intver_2", "x-integration-name", "teams", "x-integration-alias", "teams")
	own1 := i1.index(s, "private.md", []byte("Pelican colony notes of the slack integration."), nil)
	own2 := i2.index(s, "own.md", []byte("Pelican colony notes of the teams integration."), nil)

	check := func(c filesClient, who string, want ...string) {
		t.Helper()
		hits := c.search("pelican colony", "limit", "50")
		wantSet := map[string]bool{}
		for _, id := range want {
			wantSet[id] = true
		}
		if got := hitFiles(hits); !reflect.DeepEqual(got, wantSet) {
			t.Errorf("%s finds files %v, want %v:%s", who, got, wantSet, describeHits(hits))
		}
	}
	check(bot, "the bot", private.ID, shared.ID, own1.ID, own2.ID)
	check(i1, "integration 1", shared.ID, own1.ID)
	check(i2, "integration 2", shared.ID, own2.ID)
	viewer, _ := e.ws.addMember("viewer")
	vf := s.files(t, viewer.token, e.bot)
	vf.readOnly = true
	check(vf, "a viewer", private.ID, shared.ID, own1.ID, own2.ID)

	// Another bot of the workspace finds none of them, and its own file
	// stays out of this bot's results.
	other := s.files(t, e.ws.token, e.newBot(t, "visibility-other"))
	check(other, "another bot")
	theirs := other.index(s, "theirs.md", []byte("Pelican colony notes of another bot."), nil)
	check(other, "another bot", theirs.ID)
	check(bot, "the bot", private.ID, shared.ID, own1.ID, own2.ID)
	// A bot of another workspace is not reachable at all.
	dev, _ := e.ws.addMember("developer")
	elsewhere := s.newWorkspace(t, "visibility-elsewhere")
	foreign := s.files(t, dev.token, str(t, elsewhere.createBot(map[string]any{"name": "foreign"}), "id"))
	foreign.searchRaw("query", "pelican").fail(404, "ResourceNotFound")
	s.files(t, "", e.bot).searchRaw("query", "pelican").fail(401, "Unauthorized")

	// Passages follow the same visibility.
	i2.passagesRaw(private.ID, "").fail(404, "ResourceNotFound")
	i2.passagesRaw(own1.ID, "").fail(404, "ResourceNotFound")
	other.passagesRaw(private.ID, "").fail(404, "ResourceNotFound")
	if ps, _ := i2.passagesPage(shared.ID, ""); len(ps) != 1 {
		t.Errorf("integration 2 lists %d passages of the shared file, want 1", len(ps))
	}
	// The key namespace of an integration: its own "private.md".
	if ps, _ := i1.passagesPage("private.md", ""); len(ps) != 1 || !strings.Contains(ps[0].Content, "slack") {
		t.Errorf("integration 1's private.md passages: %+v", ps)
	}
	if ps, _ := bot.passagesPage("private.md", ""); len(ps) != 1 || !strings.Contains(ps[0].Content, "kept by the bot") {
		t.Errorf("the bot's private.md passages: %+v", ps)
	}
	// "integrations" grants read, search and list, not changes: an
	// integration may not replace the passages of the bot's shared file.
	if r := i2.do(http.MethodPut, "/v1/files/"+shared.ID+"/passages", map[string]any{"passages": []any{map[string]any{"content": "hijacked"}}}); r.Status == 200 {
		t.Errorf("an integration replaced the passages of a bot's shared file")
		bot.mustIndexed(shared.ID)
	} else {
		r.fail(403, "Forbidden")
	}
	if ps := contents(bot.allPassages(shared.ID)); !reflect.DeepEqual(ps, []string{"Pelican colony notes shared with integrations."}) {
		t.Errorf("passages of the shared file: %q", ps)
	}
	i2.do(http.MethodPut, "/v1/files/"+private.ID+"/passages", map[string]any{"passages": []any{map[string]any{"content": "x"}}}).fail(404, "ResourceNotFound")
}
