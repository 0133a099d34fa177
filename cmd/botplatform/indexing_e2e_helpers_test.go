package main

// Helpers of the indexing end-to-end tests: the search hit and passage
// objects checked member by member, searchFiles and listFilePassages
// callers, and waits for a file's indexing to end.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// indexTimeout bounds the wait for a file's indexing to end (a hang guard,
// as signalTimeout).
const indexTimeout = 90 * time.Second

// docxType is the content type of Word documents.
const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// supportedTypes are the content types that can be indexed.
var supportedTypes = []string{"text/plain", "text/markdown", "text/html", "application/pdf", docxType, "text/csv", "application/json"}

// parseFixture reads a file of the parsers' test data (the PDF package
// holds the PDF fixtures).
func parseFixture(t *testing.T, name string) []byte {
	t.Helper()
	pkg := "parse"
	if filepath.Ext(name) == ".pdf" {
		pkg = "pdf"
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "indexing", pkg, "testdata", name))
	if err != nil {
		t.Fatalf("parser fixture: %v", err)
	}
	return b
}

// hitMeta is meta of a search or listed passage.
type hitMeta struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	PageNumber *int   `json:"pageNumber"`
	Position   *int   `json:"position"`
	SourceURL  string `json:"sourceUrl"`
}

type hitContext struct {
	Text string `json:"text"`
	Type string `json:"type"`
}

// searchHit is a searchFiles passage.
type searchHit struct {
	Content string  `json:"content"`
	Score   float64 `json:"score"`
	Meta    hitMeta `json:"meta"`
	File    struct {
		ID          string            `json:"id"`
		Key         string            `json:"key"`
		ContentType string            `json:"contentType"`
		Metadata    map[string]any    `json:"metadata"`
		Tags        map[string]string `json:"tags"`
		CreatedAt   string            `json:"createdAt"`
		UpdatedAt   string            `json:"updatedAt"`
	} `json:"file"`
	Context []hitContext `json:"context"`
}

// filePassage is a listFilePassages passage.
type filePassage struct {
	ID      string  `json:"id"`
	Content string  `json:"content"`
	Meta    hitMeta `json:"meta"`
}

var (
	passageTypes    = []string{"chunk", "summary", "consolidated", "image"}
	passageSubtypes = []string{"title", "subtitle", "paragraph", "blockquote", "list", "table", "code", "image", "page"}
	contextTypes    = []string{"preceding", "subsequent", "current", "breadcrumb"}
)

// objectKeys decodes raw as an object and requires its keys to include
// required and to be among allowed.
func objectKeys(t *testing.T, what string, raw json.RawMessage, required, allowed []string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("%s: not an object: %s", what, raw)
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: lacks %q: %s", what, k, raw)
		}
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: unexpected field %q: %s", what, k, raw)
		}
	}
	return m
}

// checkMeta checks a passage's meta against compat-notes §2.2.
func checkMeta(t *testing.T, what string, raw json.RawMessage) hitMeta {
	t.Helper()
	objectKeys(t, what+".meta", raw, nil, []string{"type", "subtype", "pageNumber", "position", "sourceUrl"})
	var m hitMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s.meta: %v: %s", what, err, raw)
	}
	if !slices.Contains(passageTypes, m.Type) {
		t.Errorf("%s: meta.type %q is not one of %v", what, m.Type, passageTypes)
	}
	if m.Subtype != "" && !slices.Contains(passageSubtypes, m.Subtype) {
		t.Errorf("%s: meta.subtype %q is not one of %v", what, m.Subtype, passageSubtypes)
	}
	if m.PageNumber != nil && *m.PageNumber < 1 {
		t.Errorf("%s: meta.pageNumber %d", what, *m.PageNumber)
	}
	if m.Position == nil || *m.Position < 0 {
		t.Errorf("%s: meta.position %v, want a position", what, m.Position)
	}
	return m
}

// checkHit checks the shape of one search passage.
func checkHit(t *testing.T, what string, raw json.RawMessage) searchHit {
	t.Helper()
	m := objectKeys(t, what, raw, []string{"content", "score", "meta", "file"}, []string{"content", "score", "meta", "file", "context"})
	var h searchHit
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("%s: %v: %s", what, err, raw)
	}
	h.Meta = checkMeta(t, what, m["meta"])
	fileFields := []string{"id", "key", "contentType", "metadata", "tags", "createdAt", "updatedAt"}
	objectKeys(t, what+".file", m["file"], fileFields, fileFields)
	if h.Content == "" || h.File.ID == "" || h.File.Key == "" || h.File.ContentType == "" || h.File.Metadata == nil || h.File.Tags == nil {
		t.Errorf("%s: incomplete passage: %s", what, raw)
	}
	for _, ts := range []string{h.File.CreatedAt, h.File.UpdatedAt} {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
			t.Errorf("%s: file timestamp %q is not ISO 8601 UTC", what, ts)
		}
	}
	if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score <= 0 {
		t.Errorf("%s: score %v", what, h.Score)
	}
	for i, c := range h.Context {
		if c.Text == "" || !slices.Contains(contextTypes, c.Type) {
			t.Errorf("%s: context[%d] = %+v", what, i, c)
		}
	}
	return h
}

// searchRaw sends searchFiles with the query parameters given as name,
// value pairs.
func (f filesClient) searchRaw(params ...string) *response {
	f.c.t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		v.Add(params[i], params[i+1])
	}
	return f.do(http.MethodGet, "/v1/files/search?"+v.Encode(), nil)
}

// search sends searchFiles for query (and more parameters) and checks the
// response's shape: passages best first.
func (f filesClient) search(query string, params ...string) []searchHit {
	f.c.t.Helper()
	t := f.c.t
	r := f.searchRaw(append([]string{"query", query}, params...)...)
	var out struct {
		Passages []json.RawMessage `json:"passages"`
	}
	r.decode(&out)
	if out.Passages == nil {
		t.Fatalf("%s: no passages array: %s", r.what, r.Body)
	}
	objectKeys(t, r.what, r.Body, []string{"passages"}, []string{"passages"})
	hits := make([]searchHit, len(out.Passages))
	for i, raw := range out.Passages {
		hits[i] = checkHit(t, fmt.Sprintf("%s: passages[%d]", r.what, i), raw)
		if i > 0 && hits[i].Score > hits[i-1].Score {
			t.Errorf("%s: passages not best first: score %v after %v", r.what, hits[i].Score, hits[i-1].Score)
		}
	}
	return hits
}

// hitFiles is the set of file ids among hits.
func hitFiles(hits []searchHit) map[string]bool {
	out := map[string]bool{}
	for _, h := range hits {
		out[h.File.ID] = true
	}
	return out
}

func describeHits(hits []searchHit) string {
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "\n  %d. %s@%v %.5f %q", i, h.File.Key, ptrInt(h.Meta.Position), h.Score, tail(h.Content, 80))
	}
	return b.String()
}

func ptrInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// passagesRaw sends listFilePassages for an id or key with a raw query.
func (f filesClient) passagesRaw(idOrKey, query string) *response {
	f.c.t.Helper()
	return f.do(http.MethodGet, "/v1/files/"+url.PathEscape(idOrKey)+"/passages"+query, nil)
}

// passagesPage sends listFilePassages and checks the shape.
func (f filesClient) passagesPage(idOrKey, query string) ([]filePassage, string) {
	f.c.t.Helper()
	t := f.c.t
	r := f.passagesRaw(idOrKey, query)
	var out struct {
		Passages []json.RawMessage `json:"passages"`
		Meta     *struct {
			NextToken *string `json:"nextToken"`
		} `json:"meta"`
	}
	r.decode(&out)
	if out.Passages == nil || out.Meta == nil {
		t.Fatalf("%s: want passages and meta: %s", r.what, r.Body)
	}
	ps := make([]filePassage, len(out.Passages))
	for i, raw := range out.Passages {
		what := fmt.Sprintf("%s: passages[%d]", r.what, i)
		m := objectKeys(t, what, raw, []string{"id", "content", "meta"}, []string{"id", "content", "meta"})
		if err := json.Unmarshal(raw, &ps[i]); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		ps[i].Meta = checkMeta(t, what, m["meta"])
		if ps[i].ID == "" || ps[i].Content == "" {
			t.Errorf("%s: %s", what, raw)
		}
	}
	next := ""
	if out.Meta.NextToken != nil {
		next = *out.Meta.NextToken
	}
	return ps, next
}

// allPassages lists every passage of a file, in order (positions 0, 1, …).
func (f filesClient) allPassages(idOrKey string) []filePassage {
	f.c.t.Helper()
	var all []filePassage
	next := ""
	for page := 0; ; page++ {
		q := "?limit=200"
		if next != "" {
			q += "&nextToken=" + url.QueryEscape(next)
		}
		ps, n := f.passagesPage(idOrKey, q)
		all = append(all, ps...)
		if next = n; next == "" {
			break
		}
		if page > 50 {
			f.c.t.Fatalf("listFilePassages %s: nextToken never ends", idOrKey)
		}
	}
	for i, p := range all {
		if p.Meta.Position == nil || *p.Meta.Position != i {
			f.c.t.Errorf("listFilePassages %s: passage %d has position %v", idOrKey, i, ptrInt(p.Meta.Position))
		}
	}
	return all
}

func contents(ps []filePassage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Content
	}
	return out
}

// waitIndexed polls getFile until the file's indexing ended (completed or
// failed) and returns it.
func (f filesClient) waitIndexed(id string) apiFile {
	f.c.t.Helper()
	deadline := time.Now().Add(indexTimeout)
	for {
		got := f.getFile(id)
		switch got.Status {
		case "indexing_completed", "indexing_failed":
			return got
		case "indexing_pending":
		default:
			f.c.t.Fatalf("file %s (%s) is %s while waiting for its indexing", got.Key, id, got.Status)
		}
		if time.Now().After(deadline) {
			f.c.t.Fatalf("file %s (%s) still %s after %s", got.Key, id, got.Status, indexTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustIndexed waits for the file's indexing and requires it completed.
func (f filesClient) mustIndexed(id string) apiFile {
	f.c.t.Helper()
	got := f.waitIndexed(id)
	if got.Status != "indexing_completed" {
		f.c.t.Fatalf("indexing of %s: %s (%v), want indexing_completed", got.Key, got.Status, deref(got.FailedStatusReason))
	}
	return got
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// startIndexed upserts key with index true (and extra) and uploads
// content, without waiting for the indexing.
func (f filesClient) startIndexed(s *testServer, key string, content []byte, extra map[string]any) apiFile {
	f.c.t.Helper()
	body := map[string]any{"index": true}
	for k, v := range extra {
		body[k] = v
	}
	got := f.create(s, key, content, body)
	if got.Status != "indexing_pending" && got.Status != "indexing_completed" && got.Status != "indexing_failed" {
		f.c.t.Fatalf("indexed upload of %s: status %s (%v)", key, got.Status, deref(got.FailedStatusReason))
	}
	return got
}

// index uploads an indexed file and waits until it is indexed.
func (f filesClient) index(s *testServer, key string, content []byte, extra map[string]any) apiFile {
	f.c.t.Helper()
	return f.mustIndexed(f.startIndexed(s, key, content, extra).ID)
}

// indexConf is the extra of an upsert with that indexing configuration.
func indexConf(conf map[string]any) map[string]any {
	return map[string]any{"indexing": map[string]any{"configuration": conf}}
}
