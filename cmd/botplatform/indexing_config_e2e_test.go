package main

// Indexing end-to-end: each indexing.configuration member the standard
// pipeline covers (chunk and paragraph length, the stack, embedded context).

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

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
// passage under them by vector similarity too. The body shares no word of
// its own with the query; full-text search finds it by its heading path,
// in every variant, before a distractor that shares only character
// trigrams with the query (no word). The embedded headings show in the
// vector half: the body scores higher than without them (the scores are
// the fusion's, deterministic for these files) only when the headings of
// the query were embedded with it.
func testIndexEmbeddedContext(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "context")
	f := e.f
	const body = "The herd crosses the river at dawn."
	content := []byte("# Savanna Wildlife\n\n## Zebra Migration\n\n### Crossing\n\n" + body + "\n")
	distractor := f.index(s, "distractor.md", []byte("Migrants and zebus.\n"), map[string]any{"tags": map[string]any{"ctx": "distractor"}})
	variants := []struct {
		name  string
		conf  map[string]any
		found bool // the embedded headings lift the body's score
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
	var without float64 // the body's score with no heading embedded ("none", run first)
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
			if !slices.ContainsFunc(hits[:2], func(h searchHit) bool { return h.File.ID == ids[i] && h.Content == "Zebra Migration" }) {
				t.Errorf("the heading matching the query is not among the first two:%s", describeHits(hits))
			}
			if bodyAt > distractorAt {
				t.Errorf("the body (found by its heading path) after the distractor:%s", describeHits(hits))
			}
			score := hits[bodyAt].Score
			if v.name == "none" {
				without = score
				return
			}
			if found := score > without; found != v.found {
				t.Errorf("body scores %.5f, %.5f without embedded headings: higher %v, want %v:%s", score, without, found, v.found, describeHits(hits))
			}
		})
	}
}
