package main

// End-to-end tests of file indexing and search (compat-notes §2.2: upsertFile
// with index true, searchFiles, listFilePassages, setFilePassages; spec
// 4.1.1: indexing.configuration): every supported format indexed and found,
// failures, each configuration member the standard pipeline covers, search
// parameters and visibility, passages, removal, and a restart.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestIndexing runs every indexing scenario against one real server per
// backend (the reaper runs every second, for the expiry scenario).
func TestIndexing(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"formats", testIndexFormats},
		{"failures", testIndexFailures},
		{"chunk_length", testIndexChunkLength},
		{"paragraph_length", testIndexParagraphLength},
		{"stack", testIndexStack},
		{"embedded_context", testIndexEmbeddedContext},
		{"search_params", testSearchParams},
		{"search_filters", testSearchFilters},
		{"search_visibility", testSearchVisibility},
		{"list_passages", testListFilePassages},
		{"set_passages", testSetFilePassages},
		{"removal", testIndexRemoval},
	}, "--reaper-interval", "1s")
}

// ---------------------------------------------------------------- helpers

// indexTimeout bounds the wait for a file's indexing to end.
const indexTimeout = 30 * time.Second

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

// ---------------------------------------------------------------- formats

func testIndexFormats(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "formats")
	f := e.f
	cases := []struct {
		key, contentType string
		content          []byte
		query, want      string
		page             int // the page of the expected passage (PDF)
	}{
		{"notes.txt", "text/plain", []byte("Garden diary\n\nThe aardvark digs burrows under the fence every night.\n\nTomatoes ripened early this year.\n"),
			"aardvark burrows", "The aardvark digs burrows under the fence every night.", 0},
		{"birds.md", "text/markdown", []byte("# Birds\n\n## Kingfisher\n\nThe kingfisher has bright **turquoise** plumage.\n\n## Owls\n\nOwls hunt at night.\n"),
			"turquoise plumage", "The kingfisher has bright turquoise plumage.", 0},
		{"coast.html", "text/html", []byte(`<!DOCTYPE html><html><head><title>Coast</title><script>var hidden = "lighthouse script";</script></head>` +
			`<body><h1>Coast</h1><p>The lighthouse keeper polishes the <b>lens</b>.</p><p>Gulls circle the harbour.</p></body></html>`),
			"lighthouse keeper lens", "The lighthouse keeper polishes the lens.", 0},
		{"animals.csv", "text/csv", []byte("animal,habitat,diet\nquokka,Rottnest Island,leaves\nwombat,forest,grass\n"),
			"quokka Rottnest", "Rottnest Island", 0},
		{"service.json", "application/json", []byte(`{"service":{"name":"narwhal tusk tracker","port":8080},"owner":"marine lab"}`),
			"narwhal tusk", "narwhal tusk tracker", 0},
		{"report.pdf", "application/pdf", parseFixture(t, "handmade.pdf"),
			"zebras stripes", "The second page talks about zebras and their stripes.", 2},
		{"handbook.docx", docxType, parseFixture(t, "handmade.docx"),
			"misbehaving bot", "one misbehaving bot cannot slow the others down", 0},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = f.startIndexed(s, c.key, c.content, map[string]any{"contentType": c.contentType}).ID
	}
	for i, c := range cases {
		t.Run(c.contentType, func(t *testing.T) {
			f := f
			f.c.t = t
			got := f.mustIndexed(ids[i])
			if got.IndexingStack == nil || *got.IndexingStack != "v2" || !got.Index || got.ContentType != c.contentType {
				t.Errorf("indexed %s: indexingStack %v, index %v, contentType %s", c.key, got.IndexingStack, got.Index, got.ContentType)
			}
			hits := f.search(c.query)
			if len(hits) == 0 || hits[0].File.ID != ids[i] || !strings.Contains(hits[0].Content, c.want) {
				t.Fatalf("search %q: want %q of %s first; got:%s", c.query, c.want, c.key, describeHits(hits))
			}
			h := hits[0]
			if h.File.Key != c.key || h.File.ContentType != c.contentType || h.Meta.Type != "chunk" {
				t.Errorf("search %q: first passage %+v", c.query, h)
			}
			if c.page != 0 && (h.Meta.PageNumber == nil || *h.Meta.PageNumber != c.page) {
				t.Errorf("search %q: pageNumber %v, want %d", c.query, ptrInt(h.Meta.PageNumber), c.page)
			}
			ps := f.allPassages(ids[i])
			if len(ps) == 0 {
				t.Fatalf("%s has no passages", c.key)
			}
			for _, p := range ps {
				if c.contentType == "application/pdf" {
					if p.Meta.PageNumber == nil {
						t.Errorf("PDF passage without pageNumber: %+v", p)
					}
				} else if p.Meta.PageNumber != nil {
					t.Errorf("%s passage with pageNumber %d", c.contentType, *p.Meta.PageNumber)
				}
				if p.Meta.Type != "chunk" {
					t.Errorf("%s passage of type %q", c.key, p.Meta.Type)
				}
			}
			switch c.contentType {
			case "application/pdf":
				if !strings.Contains(ps[0].Content, "Quarterly Report") || *ps[0].Meta.PageNumber != 1 || ps[0].Meta.Subtype != "title" {
					t.Errorf("first PDF passage: %+v", ps[0])
				}
			case "text/html":
				for _, p := range ps {
					if strings.Contains(p.Content, "script") || strings.Contains(p.Content, "var hidden") {
						t.Errorf("an HTML script was indexed: %q", p.Content)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------- failures

func testIndexFailures(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "failures")
	f := e.f
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	img := f.startIndexed(s, "pelican.png", png, map[string]any{"contentType": "image/png"})
	corrupt := f.startIndexed(s, "broken.pdf", []byte("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\ngarbage pelican\n%%EOF\n"), nil)
	half := parseFixture(t, "handmade.pdf")
	truncated := f.startIndexed(s, "truncated.pdf", half[:len(half)/3], nil)
	good := f.index(s, "good.txt", []byte("A pelican is a large water bird."), nil)

	got := f.waitIndexed(img.ID)
	if got.Status != "indexing_failed" {
		t.Fatalf("PNG: status %s, want indexing_failed", got.Status)
	}
	reason := deref(got.FailedStatusReason)
	for _, want := range append([]string{"image/png"}, supportedTypes...) {
		if !strings.Contains(reason, want) {
			t.Errorf("PNG failure reason %q does not name %q", reason, want)
		}
	}
	for _, x := range []apiFile{corrupt, truncated} {
		got := f.waitIndexed(x.ID)
		if got.Status != "indexing_failed" {
			t.Errorf("%s: status %s, want indexing_failed", x.Key, got.Status)
			continue
		}
		reason := deref(got.FailedStatusReason)
		if !strings.Contains(reason, "PDF") || len(reason) > 400 || strings.ContainsAny(reason, "{}\x00") ||
			strings.Contains(reason, "runtime error") || strings.Contains(reason, "goroutine") {
			t.Errorf("%s: failure reason %q is not a readable sentence about the PDF", x.Key, reason)
		}
	}
	// Failed files have no passages and are not searched.
	for _, x := range []apiFile{img, corrupt, truncated} {
		if ps, _ := f.passagesPage(x.ID, ""); len(ps) != 0 {
			t.Errorf("%s: failed file has passages %v", x.Key, contents(ps))
		}
	}
	hits := f.search("pelican")
	if len(hits) == 0 || !reflect.DeepEqual(hitFiles(hits), map[string]bool{good.ID: true}) {
		t.Errorf("search pelican: want only %s:%s", good.Key, describeHits(hits))
	}
	// The content of a file that failed indexing is still there.
	if r := s.fetch(t, f.getFile(img.ID).URL); r.Status != 200 || string(r.Body) != string(png) {
		t.Errorf("content of the PNG after failed indexing: %d", r.Status)
	}

	// Files over 95 MB cannot be indexed: the upsert says so.
	f.upsert(map[string]any{"key": "huge.pdf", "size": 95<<20 + 1, "index": true}).fail(400, "InvalidPayload", "size", "95")
	f.mustUpsert(map[string]any{"key": "huge.pdf", "size": 95 << 20, "index": true})
}

// ---------------------------------------------------------------- configuration

// words returns the words of passages, in order.
func words(ss []string) []string { return strings.Fields(strings.Join(ss, " ")) }

func testIndexChunkLength(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "chunklen")
	f := e.f
	topics := []string{"astronomy", "botany", "chemistry", "geology", "history", "music", "painting", "physics", "poetry", "zoology"}
	var paras []string
	for i, topic := range topics {
		var b strings.Builder
		for j := range 3 {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "Sentence %d of paragraph %d is about %s and goes on for a few more words.", j+1, i+1, topic)
		}
		paras = append(paras, b.String())
	}
	content := []byte("# Topics\n\n" + strings.Join(paras, "\n\n") + "\n")
	want := words(append([]string{"Topics"}, paras...))

	limits := []int{0, 300, 100} // 0: the default, 1000
	counts := make([]int, len(limits))
	ids := make([]string, len(limits))
	for i, limit := range limits {
		var extra map[string]any
		if limit > 0 {
			extra = indexConf(map[string]any{"chunking": map[string]any{"maximumChunkLength": limit}})
		}
		ids[i] = f.startIndexed(s, fmt.Sprintf("topics-%d.md", limit), content, extra).ID
	}
	for i, limit := range limits {
		f.mustIndexed(ids[i])
		ps := f.allPassages(ids[i])
		counts[i] = len(ps)
		most := limit
		if most == 0 {
			most = 1000
		}
		longest := 0
		for _, p := range ps {
			longest = max(longest, utf8.RuneCountInString(p.Content))
		}
		if longest > most {
			t.Errorf("maximumChunkLength %d: a passage of %d characters", limit, longest)
		}
		if got := words(contents(ps)); !reflect.DeepEqual(got, want) {
			t.Errorf("maximumChunkLength %d: the passages do not hold the text once, in order:\n%q", limit, contents(ps))
		}
	}
	if !(counts[0] < counts[1] && counts[1] < counts[2]) {
		t.Errorf("passages with maximumChunkLength default/300/100: %v, want more with each smaller limit", counts)
	}
}

func testIndexParagraphLength(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "paralen")
	f := e.f
	const (
		a = "Heads up."
		b = "The quarterly maintenance window starts at midnight and lasts two hours."
		c = "Short."
		d = "Another long paragraph about something else entirely that runs on."
	)
	content := []byte(strings.Join([]string{a, b, c, d}, "\n\n") + "\n")
	type variant struct {
		name string
		conf map[string]any
	}
	chunking := map[string]any{"maximumChunkLength": 100}
	variants := []variant{
		{"realtime", map[string]any{"chunking": chunking}},
		{"realtime-min", map[string]any{"chunking": chunking, "parsing": map[string]any{"minimumParagraphLength": 50}}},
		{"legacy", map[string]any{"stack": "legacy"}},
		{"legacy-min", map[string]any{"stack": "legacy", "parsing": map[string]any{"minimumParagraphLength": 50}}},
	}
	ids := map[string]string{}
	for _, v := range variants {
		ids[v.name] = f.startIndexed(s, v.name+".md", content, indexConf(v.conf)).ID
	}
	got := map[string][]string{}
	for _, v := range variants {
		f.mustIndexed(ids[v.name])
		got[v.name] = contents(f.allPassages(ids[v.name]))
	}
	// Legacy: one passage per paragraph, unless a short one is merged with
	// the next.
	if want := []string{a, b, c, d}; !reflect.DeepEqual(got["legacy"], want) {
		t.Errorf("legacy passages %q, want %q", got["legacy"], want)
	}
	if want := []string{a + "\n\n" + b, c + "\n\n" + d}; !reflect.DeepEqual(got["legacy-min"], want) {
		t.Errorf("legacy passages with minimumParagraphLength 50: %q, want %q", got["legacy-min"], want)
	}
	// realtime-v1 packs paragraphs up to 100 characters: "Short." joins
	// the passage before it, unless it was merged with the paragraph after.
	if want := []string{a + "\n\n" + b + "\n\n" + c, d}; !reflect.DeepEqual(got["realtime"], want) {
		t.Errorf("realtime passages %q, want %q", got["realtime"], want)
	}
	if want := []string{a + "\n\n" + b, c + "\n\n" + d}; !reflect.DeepEqual(got["realtime-min"], want) {
		t.Errorf("realtime passages with minimumParagraphLength 50: %q, want %q", got["realtime-min"], want)
	}
}

func testIndexStack(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "stack")
	f := e.f
	content := []byte("# Notes\n\nFirst note.\n\nSecond note.\n\nThird note.\n\nFourth note.\n")
	stacks := []struct {
		key     string
		conf    map[string]any
		stack   string
		content []string
	}{
		{"default.md", nil, "v2", []string{"Notes", "First note.\n\nSecond note.\n\nThird note.\n\nFourth note."}},
		{"realtime.md", map[string]any{"stack": "realtime-v1"}, "v2", []string{"Notes", "First note.\n\nSecond note.\n\nThird note.\n\nFourth note."}},
		{"legacy.md", map[string]any{"stack": "legacy"}, "v1", []string{"Notes", "First note.", "Second note.", "Third note.", "Fourth note."}},
	}
	ids := make([]string, len(stacks))
	for i, st := range stacks {
		var extra map[string]any
		if st.conf != nil {
			extra = indexConf(st.conf)
		}
		ids[i] = f.startIndexed(s, st.key, content, extra).ID
	}
	for i, st := range stacks {
		got := f.mustIndexed(ids[i])
		if got.IndexingStack == nil || *got.IndexingStack != st.stack {
			t.Errorf("%s: indexingStack %v, want %s", st.key, got.IndexingStack, st.stack)
		}
		if ps := contents(f.allPassages(ids[i])); !reflect.DeepEqual(ps, st.content) {
			t.Errorf("%s: passages %q, want %q", st.key, ps, st.content)
		}
	}
}

// testIndexEmbeddedContext: chunking.embeddedContextLevels and
// chunking.embedBreadcrumb put the enclosing headings into the embedded
// text (realtime-v1 only), so a query made of heading words finds the body
// passage under them by vector similarity. The body shares no word with
// the query; a distractor shares only character trigrams with it (no word
// full-text search would match). The body ranks before the distractor only
// when the headings of the query were embedded with it.
func testIndexEmbeddedContext(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "context")
	f := e.f
	const body = "The herd crosses the river at dawn."
	content := []byte("# Savanna Wildlife\n\n## Zebra Migration\n\n### Crossing\n\n" + body + "\n")
	distractor := f.index(s, "distractor.md", []byte("Migrants and zebus.\n"), map[string]any{"tags": map[string]any{"ctx": "distractor"}})
	variants := []struct {
		name  string
		conf  map[string]any
		found bool // the body ranks before the distractor
	}{
		{"none", map[string]any{"chunking": map[string]any{"embeddedContextLevels": 0, "embedBreadcrumb": false}}, false},
		{"default", map[string]any{}, false},
		{"levels1", map[string]any{"chunking": map[string]any{"embeddedContextLevels": 1}}, false}, // "Crossing" only
		{"levels2", map[string]any{"chunking": map[string]any{"embeddedContextLevels": 2}}, true},
		{"levels3", map[string]any{"chunking": map[string]any{"embeddedContextLevels": 3}}, true},
		{"breadcrumb", map[string]any{"chunking": map[string]any{"embedBreadcrumb": true}}, true},
		{"legacy", map[string]any{"stack": "legacy", "chunking": map[string]any{"embeddedContextLevels": 3, "embedBreadcrumb": true}}, false},
	}
	ids := make([]string, len(variants))
	for i, v := range variants {
		ids[i] = f.startIndexed(s, v.name+".md", content, map[string]any{"tags": map[string]any{"ctx": v.name},
			"indexing": map[string]any{"configuration": v.conf}}).ID
	}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := f
			f.c.t = t
			f.mustIndexed(ids[i])
			hits := f.search("zebra migration", "tags.ctx", v.name, "tags.ctx", "distractor")
			bodyAt, distractorAt := -1, -1
			for j, h := range hits {
				switch {
				case h.File.ID == ids[i] && h.Content == body:
					bodyAt = j
				case h.File.ID == distractor.ID && distractorAt < 0:
					distractorAt = j
				case h.File.ID != ids[i] && h.File.ID != distractor.ID:
					t.Errorf("the tag filter let %s through", h.File.Key)
				}
			}
			if bodyAt < 0 || distractorAt < 0 {
				t.Fatalf("search did not return the body and the distractor:%s", describeHits(hits))
			}
			if hits[0].File.ID != ids[i] || hits[0].Content != "Zebra Migration" {
				t.Errorf("the heading matching the query is not first:%s", describeHits(hits))
			}
			if found := bodyAt < distractorAt; found != v.found {
				t.Errorf("body before the distractor: %v, want %v:%s", found, v.found, describeHits(hits))
			}
		})
	}
}

// ---------------------------------------------------------------- search

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

// ---------------------------------------------------------------- passages

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

// ---------------------------------------------------------------- removal

func testIndexRemoval(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "removal")
	f := e.f
	vector := func() int64 { t.Helper(); return storageUsage(t, e.ws, "knowledgebase_vector_storage") }
	if v := vector(); v != 0 {
		t.Fatalf("vector storage of a new workspace: %d", v)
	}
	// gone: no passage of the file holding word is found any more (the
	// vector half of the search returns other passages of the file too).
	gone := func(what, word, fileID string) {
		t.Helper()
		for _, h := range f.search(word, "limit", "50") {
			if h.File.ID == fileID && strings.Contains(strings.ToLower(h.Content), word) {
				t.Errorf("%s: search %q still finds %q", what, word, h.Content)
			}
		}
	}
	found := func(what, word, fileID string) {
		t.Helper()
		hits := f.search(word, "limit", "50")
		if len(hits) == 0 || hits[0].File.ID != fileID || !strings.Contains(strings.ToLower(hits[0].Content), word) {
			t.Errorf("%s: search %q does not find file %s first:%s", what, word, fileID, describeHits(hits))
		}
	}
	noPassages := func(what, idOrKey string) {
		t.Helper()
		r := f.passagesRaw(idOrKey, "")
		if r.Status == 404 {
			return
		}
		if ps, _ := f.passagesPage(idOrKey, ""); len(ps) != 0 {
			t.Errorf("%s: listFilePassages still lists %q", what, contents(ps))
		}
	}
	walrus := []byte("The walrus rests on the ice floe.")
	toucan := []byte("The toucan eats ripe papaya.")
	ibis := []byte("The ibis wades through the marsh.")
	del := f.index(s, "walrus.md", walrus, nil)
	rep := f.index(s, "toucan.md", toucan, nil)
	exp := f.index(s, "ibis.md", ibis, nil)
	kept := f.index(s, "kept.md", []byte("The kept file mentions walrus, toucan and ibis once more."), nil)
	total := int64(len(walrus) + len(toucan) + len(ibis) + int(*kept.Size))
	if v := vector(); v != total {
		t.Errorf("vector storage %d, want %d", v, total)
	}
	found("indexed", "walrus", del.ID)
	found("indexed", "toucan", rep.ID)
	found("indexed", "ibis", exp.ID)

	// Deleting.
	f.del(del.ID).ok()
	gone("deleted", "walrus", del.ID)
	noPassages("deleted", del.ID)
	if v := vector(); v != total-int64(len(walrus)) {
		t.Errorf("vector storage after deleting: %d, want %d", v, total-int64(len(walrus)))
	}
	total -= int64(len(walrus))

	// Replacing: the old passages go at once; the new content is indexed.
	hornbill := []byte("The hornbill nests in hollow trees.")
	up := f.mustUpsert(map[string]any{"key": "toucan.md", "size": len(hornbill), "index": true})
	if up.ID != rep.ID {
		t.Fatalf("replacing changed the id")
	}
	gone("replaced", "toucan", rep.ID)
	noPassages("replaced", rep.ID)
	if v := vector(); v != total-int64(len(toucan)) {
		t.Errorf("vector storage after replacing: %d, want %d", v, total-int64(len(toucan)))
	}
	if r := s.upload(t, up.UploadURL, up.ContentType, hornbill); r.Status != 200 {
		t.Fatalf("upload of the replacement: %d %s", r.Status, r.Body)
	}
	f.mustIndexed(rep.ID)
	found("replacement", "hornbill", rep.ID)
	gone("replaced", "toucan", rep.ID)
	if got := contents(f.allPassages(rep.ID)); !reflect.DeepEqual(got, []string{string(hornbill)}) {
		t.Errorf("passages of the replaced file: %q", got)
	}
	total += int64(len(hornbill)) - int64(len(toucan))
	if v := vector(); v != total {
		t.Errorf("vector storage after the new upload: %d, want %d", v, total)
	}
	// Replacing with an unindexed file.
	plain := f.create(s, "toucan.md", []byte("unindexed"), map[string]any{"index": false})
	if plain.Status != "upload_completed" {
		t.Errorf("unindexed replacement: %s", plain.Status)
	}
	gone("replaced by an unindexed file", "hornbill", rep.ID)
	noPassages("replaced by an unindexed file", rep.ID)
	total -= int64(len(hornbill))
	if v := vector(); v != total {
		t.Errorf("vector storage after replacing with an unindexed file: %d, want %d", v, total)
	}

	// Expiring: the reaper (every second here) deletes the file once its
	// expiry has passed. An expiry in the past cannot be set through the
	// API, so it is set in the database, as an operator would.
	ctx := context.Background()
	st, err := openStore(ctx, config.Config{DataDir: s.DataDir, DatabaseURL: s.DatabaseURL})
	if err != nil {
		t.Fatalf("open the server's store: %v", err)
	}
	defer st.Close()
	pf, err := st.GetFile(ctx, "", exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Minute)
	pf.ExpiresAt = &past
	if err := st.UpdateFile(ctx, pf); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(indexTimeout)
	for f.get(exp.ID).Status != 404 {
		if time.Now().After(deadline) {
			t.Fatalf("the expired file was not reaped within %s", indexTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	gone("expired", "ibis", exp.ID)
	noPassages("expired", exp.ID)
	total -= int64(len(ibis))
	if v := vector(); v != total {
		t.Errorf("vector storage after expiry: %d, want %d", v, total)
	}
	// The file that stayed is still found first for each word.
	for _, w := range []string{"walrus", "toucan", "ibis"} {
		if hits := f.search(w); len(hits) == 0 || hits[0].File.ID != kept.ID {
			t.Errorf("search %q after the removals:%s", w, describeHits(hits))
		}
	}
}

// ---------------------------------------------------------------- restart

// TestIndexingRestart: indexing jobs still to do when the server stops
// are done after it starts again. The first run's embeddings server refuses
// every request, so no job can complete before the stop; on SQLite (one
// process owns the database), jobs a crashed run had claimed are taken back
// too.
func TestIndexingRestart(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"model not loaded"}}`, http.StatusBadRequest)
			}))
			defer refusing.Close()
			dir, dbURL := storage(t, backend)
			s := startServer(t, dir, dbURL, "--embeddings-url", refusing.URL+"/v1", "--embeddings-model", "test")
			f := s.files(t, s.Boot.Token, str(t, s.owner(t).createBot(map[string]any{"name": "restart"}), "id"))
			const n = 6
			ids := make([]string, n)
			for i := range n {
				ids[i] = f.startIndexed(s, fmt.Sprintf("doc-%d.md", i), []byte(fmt.Sprintf("Document %d mentions the restart marker word quetzal.", i)), nil).ID
			}
			stopServer(t, s)

			ctx := context.Background()
			st, err := openStore(ctx, config.Config{DataDir: dir, DatabaseURL: dbURL})
			if err != nil {
				t.Fatalf("open the store: %v", err)
			}
			for _, id := range ids {
				got, err := st.GetFile(ctx, "", id)
				if err != nil || got.Status != platform.FileIndexPending {
					t.Fatalf("file %s after the first run: %s %v, want indexing_pending", id, got.Status, err)
				}
			}
			if backend == "sqlite" {
				// A run that crashed while indexing left jobs claimed.
				now := time.Now()
				claimed, err := st.ClaimJobs(ctx, platform.JobIndexFile, "crashed-run", now.Add(time.Minute), now.Add(10*time.Minute), n/2)
				if err != nil || len(claimed) != n/2 {
					t.Fatalf("claim jobs as a crashed run: %d %v", len(claimed), err)
				}
			}
			st.Close()

			s2 := startServer(t, dir, dbURL)
			f.c.s = s2
			for _, id := range ids {
				f.mustIndexed(id)
			}
			if hits := f.search("quetzal", "limit", "20"); len(hitFiles(hits)) != n {
				t.Errorf("after the restart, search finds %d files, want %d:%s", len(hitFiles(hits)), n, describeHits(hits))
			}
		})
	}
}
