package indexing

import (
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/indexing/benchdata"
	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/embed"
	"github.com/botplatform/botplatform/internal/indexing/parse"
	"github.com/botplatform/botplatform/internal/platform"
)

// BenchmarkIndexingThroughput indexes about 10 MB of Markdown and plain
// text (200 files of 50 KB) through the service's job path: the files are
// uploaded (not timed), then the workers (GOMAXPROCS of them) claim the
// jobs, read the content from the blob store, parse, chunk, embed with the
// built-in embedder and store the passages. Reported: MB/s (10^6 bytes of
// file content per second of wall time) and MB/s per core (divided by
// GOMAXPROCS).
//
//	go test -run '^$' -bench IndexingThroughput -benchtime 1x -count 3 ./internal/indexing/
func BenchmarkIndexingThroughput(b *testing.B) {
	docs := benchdata.Prose(1, 50_000, 10_000_000)
	var total int
	for _, d := range docs {
		total += len(d.Content)
	}
	procs := runtime.GOMAXPROCS(0)
	for _, backend := range backends() {
		b.Run(backend, func(b *testing.B) {
			logMachine(b)
			var took time.Duration
			for b.Loop() {
				b.StopTimer()
				f := newFixture(b, backend, procs)
				for _, d := range docs {
					f.upload(b, d.Key, d.ContentType, d.Content)
				}
				b.StartTimer()
				took += f.indexAll(b, 5*time.Minute)
			}
			mbps := float64(total) / 1e6 * float64(b.N) / took.Seconds()
			b.ReportMetric(mbps, "MB/s")
			b.ReportMetric(mbps/float64(procs), "MB/s/core")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: %d files, %.1f MB, %d workers: %.2f s per run, %.2f MB/s, %.2f MB/s per core",
				backend, len(docs), float64(total)/1e6, procs, took.Seconds()/float64(b.N), mbps, mbps/float64(procs))
		})
	}
}

// BenchmarkIndexingPipeline is the CPU part of indexing alone, parse, chunk
// and embed, on one core, for comparison with the whole job path.
func BenchmarkIndexingPipeline(b *testing.B) {
	docs := benchdata.Prose(1, 50_000, 10_000_000)
	var total int64
	for _, d := range docs {
		total += int64(len(d.Content))
	}
	emb := embed.NewBuiltin()
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range docs {
			doc, err := parse.Parse(d.ContentType, d.Key, d.Content)
			must(b, err)
			ps := chunk.Chunk(doc, config{Stack: StackRealtime}.options())
			texts := make([]string, len(ps))
			for i, p := range ps {
				texts[i] = p.Embed
			}
			_, err = emb.Embed(b.Context(), texts)
			must(b, err)
		}
	}
}

// search100k builds the 100,000-passage bot of BenchmarkSearch100k: 1,000
// indexed files of 100 passages of 1 to 6 sentences, with their built-in
// vectors, stored with CompleteIndexing.
func search100k(b *testing.B, backend string) *fixture {
	const files, per = 1000, 100
	texts := benchdata.Passages(1, files*per)
	vecs, err := embed.NewBuiltin().Embed(b.Context(), texts)
	must(b, err)
	f := newFixture(b, backend, 1)
	start := time.Now()
	for i := range files {
		file := f.upload(b, fmt.Sprintf("kb/doc-%04d.md", i), "text/markdown", []byte("x"))
		ps := make([]platform.Passage, per)
		for j := range ps {
			k := i*per + j
			ps[j] = platform.Passage{ID: platform.NewID("psg_"), FileID: file.ID, BotID: f.bot.ID, Position: j, Content: texts[k],
				Type: platform.PassageChunk, Subtype: "paragraph", Breadcrumb: []string{"Doc", "Section"}, Vector: vecs[k]}
		}
		must(b, f.st.CompleteIndexing(f.ctx, file.ID, file.Generation, "v2", ps, time.Now()))
	}
	b.Logf("%s: stored %d passages in %v", backend, files*per, time.Since(start).Round(time.Millisecond))
	return f
}

// BenchmarkSearch100k measures Search (searchFiles' defaults: hybrid, 10
// results, no context) over 100,000 passages of one bot: 960 queries (the
// retrieval benchmark's, asked three ways), one at a time, after one search
// that loads the vector index. Reported: p50 and p99 latency.
//
//	go test -run '^$' -bench Search100k -benchtime 1x -count 3 ./internal/indexing/
func BenchmarkSearch100k(b *testing.B) {
	qs := benchdata.AllQueries(1, 3)
	for _, backend := range backends() {
		b.Run(backend, func(b *testing.B) {
			logMachine(b)
			f := search100k(b, backend)
			start := time.Now()
			_, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: "warm up", Limit: 10, ContextDepth: 1})
			must(b, err)
			b.Logf("first search (loads the vector index): %v", time.Since(start).Round(time.Millisecond))
			var lat []time.Duration
			for b.Loop() {
				lat = lat[:0]
				for _, q := range qs {
					t0 := time.Now()
					res, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: q.Text, Limit: 10, ContextDepth: 1})
					lat = append(lat, time.Since(t0))
					must(b, err)
					if len(res) == 0 {
						b.Fatalf("no result for %q", q.Text)
					}
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
			var sum time.Duration
			for _, l := range lat {
				sum += l
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(pct(0.50)), "p50-ms")
			b.ReportMetric(ms(pct(0.99)), "p99-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: %d queries: mean %.2f ms, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", backend, len(lat),
				ms(sum/time.Duration(len(lat))), ms(pct(0.5)), ms(pct(0.9)), ms(pct(0.99)), ms(lat[len(lat)-1]))
		})
	}
}
