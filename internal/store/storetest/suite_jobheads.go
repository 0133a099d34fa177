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

// testFinishJobClaimNext: finishing a job can claim its subject's next job
// in the same transaction, exactly as ClaimJobs would (running, leased to
// the node, one more attempt); nothing when the next is not due or there
// is none, and never another subject's job; the finished job's states and
// logs are saved as FinishJob saves them. It says whether a job of the
// subject waits unclaimed (for a claim to look at again).
func testFinishJobClaimNext(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Hour)
	at := func(t time.Time) func() time.Time { return func() time.Time { return t } }
	j1 := newJob("job_1", kindA, "s1", now)
	j2 := newJob("job_2", kindA, "s1", now.Add(time.Millisecond))
	j3 := newJob("job_3", kindA, "s1", now.Add(time.Hour)) // not due at now
	other := newJob("job_9", kindA, "s2", now)
	e.enqueue(t, j1, j2, j3)
	e.wantClaim(t, kindA, now, lease, 1, []int{1}, []platform.Job{j1}, "claim the first job")
	e.enqueue(t, other)

	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	next, waiting, err := e.s.FinishJobClaimNext(e.ctx, j1.ID, false, []platform.BotState{state(b.ID, platform.StateBot, "", `{"n":1}`)}, nil, nodeA, at(now.Add(time.Second)), time.Hour)
	must(t, err, "FinishJobClaimNext %s", j1.ID)
	if next == nil || waiting {
		t.Fatalf("FinishJobClaimNext of job_1: next %v, waiting %v; want job_2, not waiting", next, waiting)
	}
	same(t, *next, jobAs(j2, platform.JobRunning, 1), "the next job claimed")
	e.wantStates(t, b.ID, "", "", states("bot", `{"n":1}`), "states saved by FinishJobClaimNext")
	e.wantJobs(t, "s1", []platform.Job{jobAs(j2, platform.JobRunning, 1), jobAs(j3, platform.JobPending, 0)}, "after finishing job_1")
	// job_2 runs (leased): ClaimJobs takes the other subject's job only.
	e.wantClaim(t, kindA, now.Add(time.Second), lease, 10, []int{1}, []platform.Job{other}, "claim beside the job taken over")
	must(t, e.s.FinishJob(e.ctx, other.ID, false, nil, nil, now), "FinishJob %s", other.ID)

	// The next one is not due: nothing is claimed, and it stays pending.
	next, waiting, err = e.s.FinishJobClaimNext(e.ctx, j2.ID, false, nil, nil, nodeA, at(now.Add(time.Second)), time.Hour)
	must(t, err, "FinishJobClaimNext %s", j2.ID)
	if next != nil {
		t.Fatalf("FinishJobClaimNext of job_2 claimed %s, not due", next.ID)
	}
	if !waiting {
		t.Fatal("FinishJobClaimNext of job_2: job_3 is left, not due, and waiting is false")
	}
	e.wantJobs(t, "s1", []platform.Job{jobAs(j3, platform.JobPending, 0)}, "after finishing job_2")
	e.wantClaim(t, kindA, now.Add(2*time.Hour), lease.Add(2*time.Hour), 10, []int{1}, []platform.Job{j3}, "the last one, once due")
	// None left: nil, and a job that is not there is not found.
	next, waiting, err = e.s.FinishJobClaimNext(e.ctx, j3.ID, true, nil, nil, nodeA, at(now.Add(2*time.Hour)), time.Hour)
	must(t, err, "FinishJobClaimNext %s", j3.ID)
	if next != nil || waiting {
		t.Fatalf("FinishJobClaimNext of the last job: next %v, waiting %v; want neither", next, waiting)
	}
	_, _, err = e.s.FinishJobClaimNext(e.ctx, "job_unknown", false, nil, nil, nodeA, at(now), time.Hour)
	wantErr(t, err, platform.ErrNotFound, "FinishJobClaimNext of an unknown job")
}
