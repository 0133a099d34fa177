package indexing

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// TestVectorsFollowTheDatabase: the vector half of a search sees at once
// what another process sharing the database stored, replaced or deleted
// (passages written to the store directly, not by this service), with no
// window in which the loaded vectors are taken as current; a file that is
// not indexed (queued again) is not searched though its vectors are held.
func TestVectorsFollowTheDatabase(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 0)
			store := func(file platform.File, texts ...string) {
				t.Helper()
				vecs, err := f.svc.emb.Embed(f.ctx, texts)
				must(t, err)
				ps := make([]platform.Passage, len(texts))
				for i, text := range texts {
					ps[i] = platform.Passage{ID: platform.NewID("psg_"), FileID: file.ID, BotID: f.bot.ID, Position: i, Content: text,
						Type: platform.PassageChunk, Breadcrumb: []string{}, Vector: vecs[i]}
				}
				must(t, f.st.CompleteIndexing(f.ctx, file.ID, file.Generation, "v2", ps, time.Now()))
			}
			top := func(text string) string {
				t.Helper()
				res, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: text, Limit: 1, Mode: "vector"})
				must(t, err)
				if len(res) == 0 {
					return ""
				}
				return res[0].Passage.Content
			}
			a := f.upload(t, "a.md", "text/markdown", []byte("a"))
			store(a, "walruses rest on the arctic sea ice", "penguins nest on antarctic rocks")
			if got := top("walruses rest on the arctic sea ice"); got != "walruses rest on the arctic sea ice" {
				t.Fatalf("first search: %q", got)
			}
			// Stored by another process: found by the very next search.
			b := f.upload(t, "b.md", "text/markdown", []byte("b"))
			store(b, "volcanoes erupt molten basalt lava")
			if got := top("volcanoes erupt molten basalt lava"); got != "volcanoes erupt molten basalt lava" {
				t.Fatalf("a passage stored meanwhile: top %q", got)
			}
			// Replaced: the new text is found, the old one no longer.
			store(a, "glaciers carve deep fjords slowly")
			if got := top("glaciers carve deep fjords slowly"); got != "glaciers carve deep fjords slowly" {
				t.Fatalf("a passage replaced meanwhile: top %q", got)
			}
			if got := top("penguins nest on antarctic rocks"); got == "penguins nest on antarctic rocks" {
				t.Fatalf("a replaced passage is still found")
			}
			// Queued for indexing again, a file is not searched until it is
			// indexed, though its passages are still stored: the best
			// passage's file is checked, and the search goes on without it.
			must(t, f.st.QueueIndexing(f.ctx, b.ID, []byte(`{"fileId":"`+b.ID+`"}`), time.Now()))
			if got := top("volcanoes erupt molten basalt lava"); got == "volcanoes erupt molten basalt lava" || got == "" {
				t.Fatalf("a file queued for indexing again is searched: top %q", got)
			}
			b, err := f.st.GetFile(f.ctx, "", b.ID) // as the queued job reads it
			must(t, err)
			// Many changes in a row, each seen by the search that follows it.
			for i := range 5 {
				text := fmt.Sprintf("comet number %d crosses the orbit of jupiter %d", i, i)
				store(b, text)
				if got := top(text); got != text {
					t.Fatalf("change %d: top %q", i, got)
				}
			}
		})
	}
}

// statsSpy serves the stats of old, when set, instead of the database's
// (a search that read them before another loaded newer passages), and
// counts the loads of a bot's vectors from its first passage.
type statsSpy struct {
	Store
	old          *[3]int64 // maxSeq, count, changes
	loadsFromTop int
}

func (s *statsSpy) PassageStats(ctx context.Context, botID string) (int64, int, int64, error) {
	if s.old != nil {
		return s.old[0], int(s.old[1]), s.old[2], nil
	}
	return s.Store.PassageStats(ctx, botID)
}

func (s *statsSpy) PassageVectors(ctx context.Context, botID string, afterSeq, upToSeq int64) ([]platform.Passage, error) {
	if afterSeq == 0 {
		s.loadsFromTop++
	}
	return s.Store.PassageVectors(ctx, botID, afterSeq, upToSeq)
}

// TestVectorsKeepANewerLoad: a search that read the bot's stats before
// another search loaded passages stored since uses that newer index; it
// does not take those passages for deleted ones and reload every vector.
func TestVectorsKeepANewerLoad(t *testing.T) {
	f := newFixture(t, "sqlite", 0)
	spy := &statsSpy{Store: f.st}
	svc := New(spy, f.blobs, platform.SystemClock{}, Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	storeText := func(key, text string) {
		t.Helper()
		file := f.upload(t, key, "text/markdown", []byte(key))
		vecs, err := svc.emb.Embed(f.ctx, []string{text})
		must(t, err)
		must(t, f.st.CompleteIndexing(f.ctx, file.ID, file.Generation, "v2", []platform.Passage{{ID: platform.NewID("psg_"), FileID: file.ID,
			BotID: f.bot.ID, Content: text, Type: platform.PassageChunk, Breadcrumb: []string{}, Vector: vecs[0]}}, time.Now()))
	}
	storeText("a.md", "walruses rest on the ice")
	storeText("b.md", "penguins nest on rocks")
	maxSeq, count, changes, err := f.st.PassageStats(f.ctx, f.bot.ID)
	must(t, err)
	_, err = svc.vectors(f.ctx, f.bot.ID)
	must(t, err)
	storeText("c.md", "volcanoes erupt lava")
	idx, err := svc.vectors(f.ctx, f.bot.ID) // the newer passage, loaded
	must(t, err)
	if idx.rows != 3 || spy.loadsFromTop != 1 {
		t.Fatalf("after a passage stored: %d rows, %d loads from the first passage", idx.rows, spy.loadsFromTop)
	}
	spy.old = &[3]int64{maxSeq, int64(count), changes}
	idx, err = svc.vectors(f.ctx, f.bot.ID)
	must(t, err)
	if idx.rows != 3 || spy.loadsFromTop != 1 {
		t.Fatalf("a search with older stats: %d rows, %d loads from the first passage (want 3 rows, no reload)", idx.rows, spy.loadsFromTop)
	}
}
