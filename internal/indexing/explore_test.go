package indexing

// TEMPORARY exploration of fusion parameters; not shipped.

import (
	"context"
	"fmt"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/indexing/benchdata"
)

type ranked struct {
	q        benchdata.Query
	text     []int64
	vec      []int64
	rel      map[int64]bool
	relCount int
}

func TestExploreFusion(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	backend := os.Getenv("EXPLORE")
	c := benchdata.Generate(retrievalSeed)
	f := newFixture(t, backend, 4)
	for _, d := range c.Docs {
		f.upload(t, d.Key, d.ContentType, d.Content)
	}
	f.indexAll(t, 2*time.Minute)
	all := f.passages(t)
	heading := map[int64]bool{}
	for _, p := range all {
		if p.Subtype == "title" || p.Subtype == "subtitle" {
			heading[p.Seq] = true
		}
	}
	fmt.Println("passages", len(all), "headings", len(heading))
	noHead := func(l []int64) []int64 {
		var out []int64
		for _, s := range l {
			if !heading[s] {
				out = append(out, s)
			}
		}
		return out
	}
	var rs []ranked
	for _, q := range c.Queries {
		r := ranked{q: q, rel: map[int64]bool{}}
		for _, p := range all {
			if q.Relevant(p.Content) {
				r.rel[p.Seq] = true
			}
		}
		r.relCount = len(r.rel)
		var err error
		r.text, err = f.st.SearchText(f.ctx, f.vis, nil, nil, q.Text, 500)
		must(t, err)
		r.vec, err = f.svc.searchVectors(f.ctx, Query{Visibility: f.vis, Text: q.Text}, 500)
		must(t, err)
		rs = append(rs, r)
	}
	eval := func(name string, fuse func(r ranked) []int64) {
		var rec, mrr float64
		var recT, mrrT float64
		nT := 0
		for _, r := range rs {
			out := fuse(r)
			found, rr := 0, 0.0
			for i, s := range out {
				if i >= 10 {
					break
				}
				if r.rel[s] {
					if i < 5 {
						found++
					}
					if rr == 0 {
						rr = 1 / float64(i+1)
					}
				}
			}
			rec += float64(found) / float64(r.relCount)
			mrr += rr
			for _, v := range r.q.Variations {
				if v == "typo" {
					recT += float64(found) / float64(r.relCount)
					mrrT += rr
					nT++
				}
			}
		}
		n := float64(len(rs))
		fmt.Printf("%-40s recall5 %.3f  mrr %.3f   typo: %.3f %.3f\n", name, rec/n, mrr/n, recT/float64(nT), mrrT/float64(nT))
	}
	rank := func(r ranked, k float64, wt, wv float64, nt, nv int) []int64 {
		sc := map[int64]float64{}
		for i, s := range r.text[:min(nt, len(r.text))] {
			sc[s] += wt / (k + float64(i+1))
		}
		for i, s := range r.vec[:min(nv, len(r.vec))] {
			sc[s] += wv / (k + float64(i+1))
		}
		out := make([]int64, 0, len(sc))
		for s := range sc {
			out = append(out, s)
		}
		sort.Slice(out, func(i, j int) bool {
			if sc[out[i]] != sc[out[j]] {
				return sc[out[i]] > sc[out[j]]
			}
			return out[i] < out[j]
		})
		return out
	}
	eval("text", func(r ranked) []int64 { return r.text })
	eval("vector", func(r ranked) []int64 { return r.vec })
	eval("vector without headings", func(r ranked) []int64 { return noHead(r.vec) })
	eval("text without headings", func(r ranked) []int64 { return noHead(r.text) })
	for _, k := range []float64{10, 60} {
		eval(fmt.Sprintf("rrf k=%v n=50, vec without headings", k), func(r ranked) []int64 {
			r.vec = noHead(r.vec)
			return rank(r, k, 1, 1, 50, 50)
		})
		eval(fmt.Sprintf("rrf k=%v n=50, both without headings", k), func(r ranked) []int64 {
			r.vec, r.text = noHead(r.vec), noHead(r.text)
			return rank(r, k, 1, 1, 50, 50)
		})
	}
	for _, k := range []float64{1, 5, 10, 20, 30, 60, 100} {
		for _, n := range []int{10, 20, 50, 100} {
			eval(fmt.Sprintf("rrf k=%v n=%d", k, n), func(r ranked) []int64 { return rank(r, k, 1, 1, n, n) })
		}
	}
	for _, k := range []float64{1, 5, 10, 20, 60} {
		for _, wv := range []float64{0.2, 0.3, 0.5, 0.7} {
			eval(fmt.Sprintf("rrf k=%v n=50 wv=%v", k, wv), func(r ranked) []int64 { return rank(r, k, 1, wv, 50, 50) })
		}
	}
	// Where is the relevant passage in each list?
	hist := func(name string, get func(r ranked) []int64) {
		buckets := map[string]int{}
		for _, r := range rs {
			pos := -1
			for i, s := range get(r) {
				if r.rel[s] {
					pos = i
					break
				}
			}
			switch {
			case pos < 0:
				buckets["none"]++
			case pos == 0:
				buckets["1"]++
			case pos < 5:
				buckets["2-5"]++
			case pos < 10:
				buckets["6-10"]++
			case pos < 50:
				buckets["11-50"]++
			default:
				buckets[">50"]++
			}
		}
		fmt.Println(name, buckets)
	}
	hist("text", func(r ranked) []int64 { return r.text })
	hist("vector", func(r ranked) []int64 { return r.vec })
}

func TestExploreExamples(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	c := benchdata.Generate(retrievalSeed)
	f := newFixture(t, "sqlite", 4)
	for _, d := range c.Docs {
		f.upload(t, d.Key, d.ContentType, d.Content)
	}
	f.indexAll(t, 2*time.Minute)
	all := f.passages(t)
	bySeq := map[int64]string{}
	for _, p := range all {
		bySeq[p.Seq] = p.Content
	}
	short := func(s string) string {
		if len(s) > 160 {
			s = s[:160]
		}
		return fmt.Sprintf("%q", s)
	}
	shown := 0
	for _, q := range c.Queries {
		text, _ := f.st.SearchText(f.ctx, f.vis, nil, nil, q.Text, 50)
		vec, _ := f.svc.searchVectors(f.ctx, Query{Visibility: f.vis, Text: q.Text}, 50)
		pos := func(l []int64) int {
			for i, s := range l {
				if q.Relevant(bySeq[s]) {
					return i + 1
				}
			}
			return -1
		}
		pt, pv := pos(text), pos(vec)
		if pt == 1 && (pv > 3 || pv < 0) && shown < 25 {
			shown++
			fmt.Printf("\nQ %q (%s %v) text=%d vec=%d\n  vec1: %s\n  vec2: %s\n", q.Text, q.Collection, q.Variations, pt, pv, short(bySeq[vec[0]]), short(bySeq[vec[1]]))
		}
	}
}

type timedStore struct {
	store.Store
	mu    sync.Mutex
	times map[string]time.Duration
	n     map[string]int
}

func (s *timedStore) rec(name string, t0 time.Time) {
	s.mu.Lock()
	s.times[name] += time.Since(t0)
	s.n[name]++
	s.mu.Unlock()
}

func (s *timedStore) CompleteIndexing(ctx context.Context, fileID string, gen int64, stack string, ps []platform.Passage, now time.Time) error {
	defer s.rec("CompleteIndexing", time.Now())
	return s.Store.CompleteIndexing(ctx, fileID, gen, stack, ps, now)
}
func (s *timedStore) ClaimJobs(ctx context.Context, kind string, now, lease time.Time, limit int) ([]platform.Job, error) {
	defer s.rec("ClaimJobs", time.Now())
	return s.Store.ClaimJobs(ctx, kind, now, lease, limit)
}
func (s *timedStore) FinishJob(ctx context.Context, id string, a bool, b []platform.BotState, c []platform.LogEntry, now time.Time) error {
	defer s.rec("FinishJob", time.Now())
	return s.Store.FinishJob(ctx, id, a, b, c, now)
}
func (s *timedStore) GetFile(ctx context.Context, a, id string) (platform.File, error) {
	defer s.rec("GetFile", time.Now())
	return s.Store.GetFile(ctx, a, id)
}

func TestExploreIndexingTime(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	docs := benchdata.Prose(1, 50_000, 10_000_000)
	f := newFixture(t, os.Getenv("EXPLORE"), 2)
	ts := &timedStore{Store: f.st, times: map[string]time.Duration{}, n: map[string]int{}}
	f.svc.store = ts
	for _, d := range docs {
		f.upload(t, d.Key, d.ContentType, d.Content)
	}
	took := f.indexAll(t, 5*time.Minute)
	fmt.Println("took", took)
	for k, v := range ts.times {
		fmt.Println(k, ts.n[k], v)
	}
}
