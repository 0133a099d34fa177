package indexing

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/embed"
	"github.com/botplatform/botplatform/internal/platform"
)

// dot is the dot product the scan must reproduce bit for bit: in order of
// dimension, into four sums by dimension modulo 4 (the last len%4 into the
// first), added up in the end.
func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// TestVectorScan: the scan by dimension ranks and scores the passages
// exactly as a dot product of whole vectors does, for sparse and dense
// queries, dimensions that are not a multiple of 4, blocks cut anywhere,
// files left out or none, and the parallel scan of a large index.
func TestVectorScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vector := func(dim, every int) []float32 {
		v := make([]float32, dim)
		for i := range v {
			switch r.IntN(every) {
			case 0:
				v[i] = float32(r.NormFloat64())
			case 1:
				v[i] = float32(math.Copysign(0, -1))
			}
		}
		return v
	}
	for _, tc := range []struct{ dim, n, every int }{
		{256, 3*scanBlock + 17, 8}, {256, 40, 1}, {7, 1000, 3}, {1, 10, 1}, {1536, 300, 1}, {256, 2*parallelScan + 5, 10},
	} {
		t.Run(fmt.Sprintf("dim=%d,n=%d", tc.dim, tc.n), func(t *testing.T) {
			idx := &vectorIndex{}
			rows := make([][]float32, tc.n)
			for i := range rows {
				rows[i] = vector(tc.dim, 2) // passages: half non-zero
				idx.add(platform.Passage{Seq: int64(i + 1), FileID: fmt.Sprintf("file_%d", i%7), Vector: rows[i]})
			}
			idx.add(platform.Passage{Seq: int64(tc.n + 1), FileID: "file_0"}) // a heading: no vector
			for trial := range 5 {
				q := vector(tc.dim, tc.every)
				allowed := []string{"file_0", "file_1", "file_2", "file_3", "file_4", "file_5", "file_6"}
				switch trial % 3 {
				case 1:
					allowed = allowed[2:]
				case 2:
					allowed = nil // every file
				}
				in := map[string]bool{}
				for _, f := range allowed {
					in[f] = true
				}
				type want struct {
					seq   int64
					score float32
				}
				var all []want
				for i, row := range rows {
					if allowed == nil || in[fmt.Sprintf("file_%d", i%7)] {
						all = append(all, want{int64(i + 1), dot(q, row)})
					}
				}
				sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
				const limit = 25
				seqs, sims, files := idx.top(q, allowed, limit)
				if len(seqs) != min(limit, len(all)) {
					t.Fatalf("trial %d: %d results, want %d", trial, len(seqs), min(limit, len(all)))
				}
				for k := range seqs {
					if seqs[k] != all[k].seq || math.Float32bits(sims[k]) != math.Float32bits(all[k].score) && !(sims[k] == 0 && all[k].score == 0) {
						t.Fatalf("trial %d: result %d is passage %d at %v, want %d at %v", trial, k, seqs[k], sims[k], all[k].seq, all[k].score)
					}
					if want := fmt.Sprintf("file_%d", (seqs[k]-1)%7); files[k] != want {
						t.Fatalf("trial %d: result %d's file is %s, want %s", trial, k, files[k], want)
					}
				}
			}
		})
	}
}

// TestBuiltinQueriesAreSparse: the built-in embedder's vector of a
// question has few non-zero dimensions, the only ones the scan reads.
func TestBuiltinQueriesAreSparse(t *testing.T) {
	vs, err := embed.NewBuiltin().Embed(context.Background(), []string{"how do I reset my password for the billing portal", "refund"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if q := queryOf(v); len(q.at) == 0 || len(q.at)*3 > len(v) {
			t.Errorf("query %d: %d non-zero dimensions of %d", i, len(q.at), len(v))
		}
	}
}
