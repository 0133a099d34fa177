package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// BenchmarkClaimWithOthersPending measures ClaimJobs for one bot's
// conversation while other bots have n pending events queued behind their
// running ones (10 subjects of n/10 due jobs, each headed by a job held under
// a live lease): what a bot waits for while others flood their queues with
// scheduled events. Each op claims one job; queueing and finishing it are not
// timed. BOTPLATFORM_BENCH_EXPLAIN=1 logs PostgreSQL's EXPLAIN ANALYZE of the
// claim.
func BenchmarkClaimWithOthersPending(b *testing.B) {
	for _, backend := range storetest.Backends {
		for _, n := range []int{0, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/others=%d", backend, n), func(b *testing.B) {
				benchClaim(b, storetest.Open(b, backend), n)
			})
		}
	}
}

func benchClaim(b *testing.B, s *sqlstore.Store, n int) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const subjects = 10
	for i := range n {
		j := platform.Job{ID: fmt.Sprintf("job_other_%06d", i), Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(fmt.Sprintf("bot_other_%d", i%subjects)),
			Payload: []byte(`{"type":"scheduled"}`), RunAfter: t0.Add(time.Duration(i) * time.Microsecond), CreatedAt: t0}
		if err := s.EnqueueJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	now := t0.Add(time.Hour)
	if n > 0 {
		heads, err := s.ClaimJobs(ctx, platform.JobBotEvent, "", now, now.Add(24*time.Hour), 2*subjects)
		if err != nil || len(heads) != subjects {
			b.Fatalf("claiming the other bots' heads: %d, %v", len(heads), err)
		}
	}
	conv := "cnv_mine"
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		now = now.Add(time.Millisecond)
		id := fmt.Sprintf("job_mine_%09d", i)
		if err := s.EnqueueJob(ctx, platform.Job{ID: id, Kind: platform.JobBotEvent, Subject: conv, Payload: []byte(`{"type":"message"}`), RunAfter: now, CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		got, err := s.ClaimJobs(ctx, platform.JobBotEvent, "", now, now.Add(time.Minute), 4)
		b.StopTimer()
		if err != nil || len(got) != 1 || got[0].ID != id {
			b.Fatalf("claim %d: %v, %v", i, got, err)
		}
		if err := s.FinishJob(ctx, id, false, nil, nil, now); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	if os.Getenv("BOTPLATFORM_BENCH_EXPLAIN") != "" {
		plan, err := s.ExplainClaim(ctx, platform.JobBotEvent, now, 4)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("EXPLAIN ANALYZE with %d pending: %s", n, plan)
	}
}

// BenchmarkNextJobAtWithOthersPending measures NextJobAt, which the
// dispatcher calls between claims to know how long it may sleep, while
// other bots have n events scheduled in the future (10 subjects of n/10).
func BenchmarkNextJobAtWithOthersPending(b *testing.B) {
	for _, backend := range storetest.Backends {
		for _, n := range []int{0, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/others=%d", backend, n), func(b *testing.B) {
				s := storetest.Open(b, backend)
				ctx := context.Background()
				now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
				for i := range n {
					j := platform.Job{ID: fmt.Sprintf("job_other_%06d", i), Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(fmt.Sprintf("bot_other_%d", i%10)),
						Payload: []byte(`{"type":"scheduled"}`), RunAfter: now.Add(time.Hour + time.Duration(i)*time.Second), CreatedAt: now}
					if err := s.EnqueueJob(ctx, j); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					at, ok, err := s.NextJobAt(ctx, platform.JobBotEvent, now)
					if err != nil || (n > 0 && (!ok || !at.Equal(now.Add(time.Hour)))) {
						b.Fatalf("NextJobAt = %v, %v, %v; want %v", at, ok, err, now.Add(time.Hour))
					}
				}
			})
		}
	}
}
