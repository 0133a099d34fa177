package main

// End-to-end tests of file indexing and search (compat-notes §2.2: upsertFile
// with index true, searchFiles, listFilePassages, setFilePassages; spec
// 4.1.1: indexing.configuration): the scenario table, every supported
// format indexed and found, failures, removal, and a restart. The
// configuration, search and passages scenarios are in indexing_config,
// indexing_search and indexing_passages_e2e_test.go.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

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
		{"search_explain", testSearchExplain},
		{"list_passages", testListFilePassages},
		{"set_passages", testSetFilePassages},
		{"removal", testIndexRemoval},
	}, "--reaper-interval", "1s")
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
