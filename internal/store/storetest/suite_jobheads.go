package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// testJobHeadUnderConcurrentWrites: a job queued while the running job of
// its subject is being finished becomes claimable once that one is finished,
// whichever transaction commits first (claims read only each subject's head,
// which both transactions maintain).
func testJobHeadUnderConcurrentWrites(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Hour)
	cur := newJob("job_000", kindA, "s1", now)
	e.enqueue(t, cur)
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{cur}, "claim the first job")
	for i := 1; i <= 30; i++ {
		next := newJob(fmt.Sprintf("job_%03d", i), kindA, "s1", now.Add(time.Duration(i)*time.Millisecond))
		var wg sync.WaitGroup
		var ferr, qerr error
		wg.Add(2)
		go func() { defer wg.Done(); ferr = e.s.FinishJob(e.ctx, cur.ID, false, nil, nil, now) }()
		go func() { defer wg.Done(); qerr = e.s.EnqueueJob(e.ctx, next) }()
		wg.Wait()
		must(t, ferr, "FinishJob %s", cur.ID)
		must(t, qerr, "EnqueueJob %s", next.ID)
		e.wantClaim(t, kindA, now.Add(time.Second), lease, 10, []int{1}, []platform.Job{next}, "round %d: claim the job queued while %s finished", i, cur.ID)
		cur = next
	}
}
