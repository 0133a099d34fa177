package indexing

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/indexing/embed"
)

// TestSearchFindsOtherWords: a question asked in other words than the
// document ("parcel" for "package") is answered by the default search
// through the built-in lexicon, which full-text search alone does not
// find; and full-text search ranks alike on every database (BM25 in Go).
func TestSearchFindsOtherWords(t *testing.T) {
	docs := map[string]string{
		"lost.md":    "# Lost deliveries\n\nIf your package does not arrive within 10 days, we send a replacement at no cost.",
		"returns.md": "# Returns\n\nYou can return an unused item within 30 days of delivery for a full refund.",
		"sizes.md":   "# Sizes\n\nOur hiking boots come in sizes 36 to 47, in half sizes too.",
		"care.md":    "# Caring for boots\n\nClean your boots after every walk and let them dry away from heat.",
	}
	rankings := map[string][][]string{}
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			for key, text := range docs {
				f.upload(t, key, "text/markdown", []byte(text))
			}
			f.indexAll(t, time.Minute)
			search := func(text, mode string) []string {
				t.Helper()
				res, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: text, Limit: 5, Mode: mode})
				must(t, err)
				var out []string
				for _, r := range res {
					out = append(out, r.Passage.Content)
				}
				return out
			}
			const lost = "If your package does not arrive"
			if got := search("my parcel never turned up", ""); len(got) == 0 || !strings.HasPrefix(got[0], lost) {
				t.Errorf("default search for a parcel: %q, want the lost-package passage first", got)
			}
			if got := search("my parcel never turned up", "text"); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, lost) }) {
				t.Errorf("full-text search alone found the package for a parcel: %q", got)
			}
			for _, q := range []string{"boots sizes", "refund for a returned item", "clean boots"} {
				rankings[q] = append(rankings[q], search(q, "text"))
			}
		})
	}
	for q, rs := range rankings {
		for _, r := range rs[1:] {
			if !slices.Equal(r, rs[0]) {
				t.Errorf("%q ranks differently on the databases: %q, %q", q, rs[0], r)
			}
		}
	}
}

// TestVectorWeight: the built-in embedder's vectors weigh less than the
// words in the fusion; a model's weigh as much.
func TestVectorWeight(t *testing.T) {
	if w := (&Service{emb: embed.NewBuiltin()}).vectorWeight(); w != builtinVectorWeight {
		t.Errorf("built-in embedder: %v", w)
	}
	if w := (&Service{emb: embed.NewOpenAI("http://127.0.0.1:1/v1", "m", "", 8, nil)}).vectorWeight(); w != 1 {
		t.Errorf("a model's embeddings: %v", w)
	}
}

// TestSearchBoostsAnswers: a question asking how much ranks the passage
// holding an amount above one that only names the thing, which BM25 alone
// ranks first (it is shorter).
func TestSearchBoostsAnswers(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			f.upload(t, "tracking.md", "text/markdown", []byte("# Tracking\n\nEvery shipping is tracked."))
			f.upload(t, "islands.md", "text/markdown", []byte("# Islands\n\nShipping to the islands is €12.50 for each parcel we send there."))
			f.indexAll(t, time.Minute)
			first := func(expand bool) string { return firstText(t, f, "how much is shipping", expand) }
			if got := first(false); !strings.HasPrefix(got, "Every shipping") {
				t.Fatalf("BM25 alone ranks %q first: the test needs the shorter passage first", got)
			}
			if got := first(true); !strings.HasPrefix(got, "Shipping to the islands") {
				t.Errorf("the default ranks %q first, want the passage with the amount", got)
			}
		})
	}
}

// TestSearchLeavesOutFiller: words that say nothing about what is asked
// ("stuff", "really") do not decide the default ranking, which full-text
// search alone lets them do; a question of nothing but such words still
// searches for them.
func TestSearchLeavesOutFiller(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			f.upload(t, "boots.md", "text/markdown", []byte("# Wet boots\n\nStuff wet boots with newspaper and let them dry slowly."))
			f.upload(t, "repairs.md", "text/markdown", []byte("# Repairs\n\nOur workshop repairs outdoor gear, also gear bought from other shops, and fixes zips and seams."))
			f.indexAll(t, time.Minute)
			first := func(text string, expand bool) string { return firstText(t, f, text, expand) }
			const q = "do you really fix stuff"
			if got := first(q, false); !strings.HasPrefix(got, "Stuff wet boots") {
				t.Fatalf("BM25 alone ranks %q first: the test needs the filler to win there", got)
			}
			if got := first(q, true); !strings.HasPrefix(got, "Our workshop repairs") {
				t.Errorf("the default ranks %q first, want the repairs passage", got)
			}
			if got := first("stuff", true); !strings.HasPrefix(got, "Stuff wet boots") {
				t.Errorf("a question of filler alone: %q first", got)
			}
		})
	}
}

// firstText is the content of the passage searchText ranks first for text.
func firstText(t *testing.T, f *fixture, text string, expand bool) string {
	t.Helper()
	seqs, _, err := f.svc.searchText(f.ctx, Query{Visibility: f.vis, Text: text}, 5, expand)
	must(t, err)
	if len(seqs) == 0 {
		t.Fatalf("%q found nothing", text)
	}
	ps, err := f.st.PassagesBySeq(f.ctx, seqs[:1])
	must(t, err)
	return ps[0].Content
}

// TestSearchCompounds: a compound word finds a passage that writes it in
// two ("rainjacket" → rain jacket), and two words find the passage that writes
// them as one ("surf boards" → surfboards), in the default ranking; full-
// text search alone finds neither.
func TestSearchCompounds(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			f.upload(t, "rental.md", "text/markdown", []byte("# Rentals\n\nWe rent surfboards and wetsuits by the day."))
			f.upload(t, "notices.md", "text/markdown", []byte("# Notices\n\nThe notice boards in our stores list the coming events."))
			f.upload(t, "care.md", "text/markdown", []byte("# Care\n\nRinse your rain jacket with fresh water after a trip to the beach."))
			f.upload(t, "weather.md", "text/markdown", []byte("# Weather\n\nRain is forecast for the whole weekend."))
			f.indexAll(t, time.Minute)
			for _, c := range []struct{ query, text, want string }{
				{"surf boards", "The notice boards", "We rent surfboards"},
				{"rainjacket", "", "Rinse your rain jacket"},
			} {
				seqs, _, err := f.svc.searchText(f.ctx, Query{Visibility: f.vis, Text: c.query}, 5, false)
				must(t, err)
				if c.text == "" && len(seqs) > 0 {
					t.Errorf("%q: full-text search alone found %d passages, want none", c.query, len(seqs))
				}
				if c.text != "" {
					if got := firstText(t, f, c.query, false); !strings.HasPrefix(got, c.text) {
						t.Fatalf("%q: BM25 alone ranks %q first: the test needs %q there", c.query, got, c.text)
					}
				}
				if got := firstText(t, f, c.query, true); !strings.HasPrefix(got, c.want) {
					t.Errorf("%q: the default ranks %q first, want %q", c.query, got, c.want)
				}
			}
		})
	}
}
