//go:build unix

package indexing

import (
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
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
			var took, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				f := newFixture(b, backend, procs)
				for _, d := range docs {
					f.upload(b, d.Key, d.ContentType, d.Content)
				}
				b.StartTimer()
				c0 := cpuTime()
				took += f.indexAll(b, 5*time.Minute)
				cpu += cpuTime() - c0
			}
			mb := float64(total) / 1e6 * float64(b.N)
			mbps := mb / took.Seconds()
			b.ReportMetric(mbps, "MB/s")
			b.ReportMetric(mbps/float64(procs), "MB/s/core")
			b.ReportMetric(mb/cpu.Seconds(), "MB/cpu-s")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: %d files, %.1f MB, %d workers: %.2f s per run, %.2f MB/s, %.2f MB/s per core; this process used %.2f CPU-s per run: %.2f MB per CPU-second; load average %s",
				backend, len(docs), float64(total)/1e6, procs, took.Seconds()/float64(b.N), mbps, mbps/float64(procs), cpu.Seconds()/float64(b.N), mb/cpu.Seconds(), loadAvg())
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
// indexed files of 100 passages (benchdata.LargeKB), with their built-in
// vectors, stored with CompleteIndexing.
func search100k(b *testing.B, backend string) *fixture {
	return search100kOn(b, retrievalFixture(b, backend))
}

func search100kOn(b *testing.B, f *fixture) *fixture {
	return searchFixtureOn(b, f, 1000)
}

// searchFixtureOn stores files indexed files of 100 passages each
// (benchdata.LargeKB) in f's bot, with their built-in vectors, with
// CompleteIndexing.
func searchFixtureOn(b *testing.B, f *fixture, files int) *fixture {
	const per = 100
	backend := f.st.Dialect()
	kb := benchdata.LargeKB(1, files, per, 0)
	var texts []string
	for _, ps := range kb.Files {
		texts = append(texts, ps...)
	}
	vecs, err := embed.NewBuiltin().Embed(b.Context(), texts)
	must(b, err)
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
// retrieval benchmark's, each about the names of one of the files), one at
// a time, after one search that loads the vector index. Reported: p50 and
// p99 latency.
//
//	go test -run '^$' -bench Search100k -benchtime 1x -count 3 ./internal/indexing/
func BenchmarkSearch100k(b *testing.B) {
	qs := benchdata.LargeKB(1, 1000, 100, 960).Queries
	for _, backend := range backends() {
		b.Run(backend, func(b *testing.B) {
			logMachine(b)
			benchSearch(b, search100k(b, backend), qs)
		})
	}
}

// BenchmarkSearchScale is BenchmarkSearch100k at the passage counts of
// BOTPLATFORM_BENCH_PASSAGES (comma-separated, default 100000,1000000),
// each a bot of its own, on both databases; it also reports the first
// search after the index was stored (which loads the vector index) and the
// Go heap that search kept.
//
//	BOTPLATFORM_TEST_DATABASE_URL=postgres://… go test -run '^$' -bench SearchScale -benchtime 1x -timeout 2h ./internal/indexing/
func BenchmarkSearchScale(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if env := os.Getenv("BOTPLATFORM_BENCH_PASSAGES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 100 {
				b.Fatalf("BOTPLATFORM_BENCH_PASSAGES: %q is not a passage count of at least 100", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, backend := range backends() {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", backend, n), func(b *testing.B) {
				logMachine(b)
				files := n / 100
				qs := benchdata.LargeKB(1, files, 100, 960).Queries
				benchSearch(b, searchFixtureOn(b, retrievalFixture(b, backend), files), qs)
			})
		}
	}
}

// benchSearch times one search that loads the vector index, then qs one
// at a time (after VACUUM ANALYZE on PostgreSQL), and reports their p50,
// p99 and max, the first search's time and the heap it kept.
func benchSearch(b *testing.B, f *fixture, qs []string) {
	backend := f.st.Dialect()
	heapBefore := heapInUse()
	start := time.Now()
	_, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: "warm up", Limit: 10, ContextDepth: 1})
	must(b, err)
	first := time.Since(start)
	kept := heapInUse() - heapBefore
	b.Logf("first search (loads the vector index): %v; heap kept %.0f MB", first.Round(time.Millisecond), float64(kept)/1e6)
	if f.analyze != nil {
		// Straight after a bulk load the store's own analysis (a
		// second or so after the last write) may not have run yet,
		// and without a vacuum the count of the vector cache check
		// cannot use an index-only scan; autovacuum vacuums and
		// analyzes a table within about a minute of such a change.
		// Measured both ways: 100 queries before, all after VACUUM
		// ANALYZE.
		var before []time.Duration
		for _, q := range qs[:100] {
			t0 := time.Now()
			_, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: q, Limit: 10, ContextDepth: 1})
			before = append(before, time.Since(t0))
			must(b, err)
		}
		sort.Slice(before, func(i, j int) bool { return before[i] < before[j] })
		b.Logf("before VACUUM ANALYZE, 100 queries: p50 %.2f ms, p99 %.2f ms, max %.2f ms", float64(before[50])/1e6, float64(before[98])/1e6, float64(before[99])/1e6)
		t0 := time.Now()
		f.analyze(b)
		b.Logf("VACUUM ANALYZE: %v", time.Since(t0).Round(time.Millisecond))
	}
	var lat []time.Duration
	b.Logf("load average before: %s", loadAvg())
	for b.Loop() {
		lat = lat[:0]
		for _, q := range qs {
			t0 := time.Now()
			res, err := f.svc.Search(f.ctx, Query{Visibility: f.vis, Text: q, Limit: 10, ContextDepth: 1})
			lat = append(lat, time.Since(t0))
			must(b, err)
			if len(res) == 0 {
				b.Fatalf("no result for %q", q)
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
	b.ReportMetric(float64(first)/1e6, "first-ms")
	b.ReportMetric(float64(kept)/1e6, "heap-MB")
	b.Logf("%s: %d queries: mean %.2f ms, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms; load average after: %s", backend, len(lat),
		ms(sum/time.Duration(len(lat))), ms(pct(0.5)), ms(pct(0.9)), ms(pct(0.99)), ms(lat[len(lat)-1]), loadAvg())
}

// heapInUse is the Go heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the system's load average (1, 5, 15 minutes), which says how
// busy the machine was: benchmarks share it with whatever else runs.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// BenchmarkSearchQuality100k is the retrieval benchmark at scale: its 240
// documents are indexed in a bot that already holds the 100,000 passages
// of BenchmarkSearch100k, which compete with the relevant passages. The
// same metrics as BenchmarkRetrieval.
//
//	go test -run '^$' -bench SearchQuality100k -benchtime 1x ./internal/indexing/
func BenchmarkSearchQuality100k(b *testing.B) {
	for _, backend := range backends() {
		b.Run(backend, func(b *testing.B) {
			logMachine(b)
			f := search100k(b, backend)
			if f.analyze != nil {
				f.analyze(b)
			}
			var r retrieval
			for b.Loop() {
				r = runRetrievalOn(b, f, benchdata.Generate(retrievalSeed))
			}
			b.Log(r.table(backend + " with 100,000 other passages"))
			b.ReportMetric(r.overall["text"].Recall5(), "recall5-text")
			b.ReportMetric(r.overall["hybrid"].Recall5(), "recall5-hybrid")
			b.ReportMetric(r.overall["text"].MRR(), "mrr-text")
			b.ReportMetric(r.overall["hybrid"].MRR(), "mrr-hybrid")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// vacuumAnalyze does what autovacuum does soon after a bulk load.
func vacuumAnalyze(b testing.TB, db *sql.DB) {
	for _, t := range []string{"passages", "files"} {
		_, err := db.Exec(`VACUUM ANALYZE ` + t)
		must(b, err)
	}
}
