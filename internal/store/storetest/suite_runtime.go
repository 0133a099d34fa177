package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ---- runtime fixtures ----

// Job kinds of the runtime tests; kinds are free text to a store.
const (
	kindA = "kind_a"
	kindB = "kind_b"
)

// newJob returns an unsaved job; created at t0, so that ListJobs (oldest
// created first, then id) lists jobs of a subject by id.
func newJob(id, kind, subject string, runAfter time.Time) platform.Job {
	return platform.Job{ID: id, Kind: kind, Subject: subject,
		Payload:  json.RawMessage(fmt.Sprintf(`{"job":%q,"n":[1,2.5,null,true]}`, id)),
		Status:   platform.JobPending,
		RunAfter: runAfter, CreatedAt: t0}
}

func (e *env) enqueue(t *testing.T, js ...platform.Job) {
	t.Helper()
	for _, j := range js {
		must(t, e.s.EnqueueJob(e.ctx, j), "EnqueueJob %s", j.ID)
	}
}

// nodeA is the node the tests' claims are made by.
const nodeA = "node-a"

func (e *env) claim(t *testing.T, kind string, now, leaseUntil time.Time, limit int) []platform.Job {
	t.Helper()
	js, err := e.s.ClaimJobs(e.ctx, kind, nodeA, now, leaseUntil, limit)
	must(t, err, "ClaimJobs(%s, %v, limit %d)", kind, now, limit)
	return js
}

// wantClaim claims and checks that exactly want come back, in order, each
// running with the given number of attempts.
func (e *env) wantClaim(t *testing.T, kind string, now, leaseUntil time.Time, limit int, attempts []int, want []platform.Job, format string, args ...any) {
	t.Helper()
	if len(attempts) != len(want) {
		t.Fatalf("wantClaim: %d attempts for %d jobs", len(attempts), len(want))
	}
	exp := make([]platform.Job, len(want))
	for i, j := range want {
		exp[i] = jobAs(j, platform.JobRunning, attempts[i])
	}
	got := e.claim(t, kind, now, leaseUntil, limit)
	if len(got) == 0 && len(exp) == 0 {
		return
	}
	same(t, got, exp, format, args...)
}

// jobAs is j as the store returns it with that status and attempt count.
func jobAs(j platform.Job, status string, attempts int) platform.Job {
	j.Status, j.Attempts = status, attempts
	j.RunAfter, j.CreatedAt = mt(j.RunAfter), mt(j.CreatedAt)
	return j
}

// wantJobs checks ListJobs(subject) field by field.
func (e *env) wantJobs(t *testing.T, subject string, want []platform.Job, format string, args ...any) {
	t.Helper()
	got := e.jobs(t, subject)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	same(t, got, want, format, args...)
}

func jobIDs(js []platform.Job) []string {
	return mapSlice(js, func(j platform.Job) string { return j.ID })
}

// saveStates enqueues a job of its own subject and finishes it with states.
func (e *env) saveStates(t *testing.T, states ...platform.BotState) {
	t.Helper()
	j := newJob(platform.NewID("job_"), "state_writer", platform.NewID("subj_"), t0)
	e.enqueue(t, j)
	must(t, e.s.FinishJob(e.ctx, j.ID, false, states, nil, e.now()), "FinishJob saving states")
}

func state(botID, scope, scopeID, value string) platform.BotState {
	return platform.BotState{BotID: botID, Scope: scope, ScopeID: scopeID, Value: json.RawMessage(value)}
}

// states is what BotStates returns for the scope/value pairs.
func states(kv ...string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = json.RawMessage(kv[i+1])
	}
	return out
}

func (e *env) wantStates(t *testing.T, botID, userID, convID string, want map[string]json.RawMessage, format string, args ...any) {
	t.Helper()
	got, err := e.s.BotStates(e.ctx, botID, userID, convID)
	must(t, err, "BotStates(%s, %q, %q)", botID, userID, convID)
	if got == nil {
		got = map[string]json.RawMessage{}
	}
	// Compare as strings so that a failure prints the JSON text.
	gs, ws := map[string]string{}, map[string]string{}
	for k, v := range got {
		gs[k] = string(v)
	}
	for k, v := range want {
		ws[k] = string(v)
	}
	same(t, gs, ws, "%s: BotStates(%s, %q, %q)", fmt.Sprintf(format, args...), botID, userID, convID)
}

// ---- jobs ----

func testEnqueueJob(t *testing.T, e *env) {
	e.wantJobs(t, "subj_1", nil, "ListJobs of a new store")
	j1 := newJob("job_2", kindA, "subj_1", t0.Add(time.Second))
	j1.Status, j1.Attempts = "", 0 // a store queues jobs pending, unattempted
	j2 := newJob("job_1", kindB, "subj_1", t0.Add(-time.Hour))
	j2.Payload = json.RawMessage(`{"text":"ünïcødé 'q' \"dq\" \\"}`)
	j3 := newJob("job_3", kindA, "subj_2", t0)
	e.enqueue(t, j1, j2, j3)
	e.wantJobs(t, "subj_1", []platform.Job{jobAs(j2, platform.JobPending, 0), jobAs(j1, platform.JobPending, 0)}, "jobs of subj_1")
	e.wantJobs(t, "subj_2", []platform.Job{jobAs(j3, platform.JobPending, 0)}, "jobs of subj_2")

	dup := newJob(j1.ID, kindB, "subj_3", t0.Add(time.Minute))
	wantErr(t, e.s.EnqueueJob(e.ctx, dup), platform.ErrConflict, "EnqueueJob with a taken id")
	e.wantJobs(t, "subj_3", nil, "jobs of the rejected duplicate's subject")
	e.wantJobs(t, "subj_1", []platform.Job{jobAs(j2, platform.JobPending, 0), jobAs(j1, platform.JobPending, 0)}, "jobs of subj_1 after a rejected duplicate")
}

// testQueuedWakes: the channel Queued hands out for a kind is closed once a
// job of that kind is committed, and only then.
func testQueuedWakes(t *testing.T, e *env) {
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	a, b := e.s.Queued(kindA), e.s.Queued(kindB)
	if closed(a) || closed(b) {
		t.Fatal("a channel is closed before any job was queued")
	}
	j := newJob("job_q1", kindA, "subj_q", t0.Add(time.Hour)) // due later: it wakes the workers all the same
	e.enqueue(t, j)
	if !closed(a) {
		t.Error("queueing a job of kind A did not close the channel of kind A")
	}
	if closed(b) {
		t.Error("queueing a job of kind A closed the channel of kind B")
	}
	again := e.s.Queued(kindA)
	if closed(again) {
		t.Error("the channel taken after the wake-up is closed already")
	}
	wantErr(t, e.s.EnqueueJob(e.ctx, j), platform.ErrConflict, "EnqueueJob with a taken id")
	if closed(again) {
		t.Error("a job that was not queued closed the channel")
	}
}

func testClaimJobs(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Minute)
	s := time.Second
	// Ids are chosen so that run_after order differs from id order.
	a1 := newJob("job_z1", kindA, "s1", now.Add(-3*s)) // head of s1
	a2 := newJob("job_a2", kindA, "s1", now.Add(-2*s)) // behind a1
	b2 := newJob("job_b2", kindA, "s2", now.Add(-s))   // behind b1: same run_after, greater id
	b1 := newJob("job_b1", kindA, "s2", now.Add(-s))   // head of s2
	cf := newJob("job_c0", kindA, "s3", now.Add(time.Hour))
	cd := newJob("job_c9", kindA, "s3", now.Add(-s/2)) // due; the later, future job does not block it
	d := newJob("job_d", kindA, "s4", now.Add(time.Hour))
	eB := newJob("job_e0", kindB, "s5", now.Add(-10*s)) // another kind: neither claimed nor blocking
	e1 := newJob("job_e1", kindA, "s5", now.Add(-s))
	f := newJob("job_f", kindA, "s6", now)                       // due exactly now
	g := newJob("job_g", kindA, "s7", now.Add(time.Microsecond)) // due a microsecond later
	e.enqueue(t, a1, a2, b2, b1, cf, cd, d, eB, e1, f, g)

	e.wantClaim(t, kindA, now, lease, 100, []int{1, 1, 1, 1, 1}, []platform.Job{a1, b1, e1, cd, f}, "first claim")
	e.wantJobs(t, "s1", []platform.Job{jobAs(a2, platform.JobPending, 0), jobAs(a1, platform.JobRunning, 1)}, "jobs of s1 after the claim")
	e.wantJobs(t, "s5", []platform.Job{jobAs(eB, platform.JobPending, 0), jobAs(e1, platform.JobRunning, 1)}, "jobs of s5 after the claim")
	e.wantJobs(t, "s3", []platform.Job{jobAs(cf, platform.JobPending, 0), jobAs(cd, platform.JobRunning, 1)}, "jobs of s3 after the claim")

	// Nothing more: the heads are held, the rest is blocked or not due.
	e.wantClaim(t, kindA, now, lease, 100, nil, nil, "second claim at the same time")
	e.wantClaim(t, kindA, lease.Add(-time.Microsecond), lease.Add(time.Hour), 100, []int{1}, []platform.Job{g}, "claim before the lease expires")

	// The other kind is claimed on its own.
	e.wantClaim(t, kindB, now, lease, 100, []int{1}, []platform.Job{eB}, "claim of the other kind")

	// Finishing a head makes the next job of its subject claimable.
	must(t, e.s.FinishJob(e.ctx, a1.ID, false, nil, nil, now), "FinishJob a1")
	must(t, e.s.FinishJob(e.ctx, b1.ID, false, nil, nil, now), "FinishJob b1")
	e.wantClaim(t, kindA, now, lease, 100, []int{1, 1}, []platform.Job{a2, b2}, "claim after finishing the heads")

	// Expired leases are claimed again, with one more attempt; g's lease
	// (taken later, until lease+1h) is still live, d is still not due.
	later := lease.Add(time.Microsecond)
	e.wantClaim(t, kindA, later, later.Add(time.Minute), 100, []int{2, 2, 2, 2, 2}, []platform.Job{a2, b2, e1, cd, f}, "claim after the leases expired")
	e.wantClaim(t, kindA, later, later.Add(time.Minute), 100, nil, nil, "claim again after re-claiming")
	e.wantJobs(t, "s2", []platform.Job{jobAs(b2, platform.JobRunning, 2)}, "jobs of s2 after the re-claim")

	_, err := e.s.ClaimJobs(e.ctx, "kind_unknown", nodeA, later, later, 10)
	must(t, err, "ClaimJobs of an unknown kind")
}

func testClaimJobsLimit(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Minute)
	// 30 subjects of 3 jobs each, queued last subject first, with ids
	// decreasing as run_after increases: the claim order is neither the
	// order of queueing nor that of ids.
	const subjects = 30
	heads := make([]platform.Job, subjects)
	for s := subjects - 1; s >= 0; s-- {
		subj := fmt.Sprintf("subj_%02d", s)
		for k := range 3 {
			j := newJob(fmt.Sprintf("job_%02d_%d", subjects-s, k), kindA, subj,
				now.Add(-time.Duration(subjects-s)*time.Second+time.Duration(k)*time.Millisecond))
			e.enqueue(t, j)
			if k == 0 {
				heads[s] = j
			}
		}
	}
	ones := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	e.wantClaim(t, kindA, now, lease, 7, ones(7), heads[:7], "claim of 7")
	e.wantClaim(t, kindA, now, lease, 1, ones(1), heads[7:8], "claim of 1")
	e.wantClaim(t, kindA, now, lease, 100, ones(22), heads[8:], "claim of the rest: one job per subject")
	e.wantClaim(t, kindA, now, lease, 100, nil, nil, "claim with every subject held")
}

// testClaimJobsConcurrent has several workers claim and finish the jobs of
// many subjects at once: every job is handled exactly once, a subject's jobs
// in order, and never two jobs of a subject at the same time.
func testClaimJobsConcurrent(t *testing.T, e *env) {
	const subjects, perSubject, workers = 20, 10, 4
	const total = subjects * perSubject
	base := mt(t0)
	now := base.Add(time.Hour)
	lease := now.Add(time.Hour) // no lease expires during the test
	want := map[string][]string{}
	// Queued round-robin over the subjects, but a subject's jobs are due
	// one after the other (all of subj_00, then all of subj_01...), so
	// that the earliest jobs due are all of one subject; ids decrease along
	// a subject while run_after increases.
	for k := range perSubject {
		for s := range subjects {
			subj := fmt.Sprintf("subj_%02d", s)
			j := newJob(fmt.Sprintf("job_%02d_%02d", s, perSubject-k), kindA, subj,
				base.Add(time.Duration(s*perSubject+k)*time.Microsecond))
			e.enqueue(t, j)
			want[subj] = append(want[subj], j.ID)
		}
	}
	// A job of another kind on one subject, due first: it is neither
	// claimed nor does it hold the subject back.
	other := newJob("job_other", kindB, "subj_00", base.Add(-time.Hour))
	e.enqueue(t, other)

	ctx, cancel := context.WithTimeout(e.ctx, 90*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		held    = map[string]string{} // subject → job held
		handled = map[string]int{}
		order   = map[string][]string{}
		done    atomic.Int64
		claims  atomic.Int64
		wg      sync.WaitGroup
	)
	errs := make(chan error, 10*total)
	report := func(err error) {
		select {
		case errs <- err:
		default: // enough to fail the test
		}
	}
	for w := range workers {
		wg.Go(func() {
			for done.Load() < total && ctx.Err() == nil {
				js, err := e.s.ClaimJobs(ctx, kindA, fmt.Sprint("node-", w), now, lease, 3)
				if err != nil {
					if ctx.Err() == nil {
						report(fmt.Errorf("worker %d: ClaimJobs: %w", w, err))
					}
					return
				}
				if len(js) == 0 {
					time.Sleep(200 * time.Microsecond)
					continue
				}
				claims.Add(1)
				mu.Lock()
				for _, j := range js {
					if h, ok := held[j.Subject]; ok {
						report(fmt.Errorf("worker %d claimed %s while %s of subject %s is held", w, j.ID, h, j.Subject))
					}
					held[j.Subject] = j.ID
					handled[j.ID]++
					order[j.Subject] = append(order[j.Subject], j.ID)
					if j.Kind != kindA || j.Status != platform.JobRunning || j.Attempts != 1 {
						report(fmt.Errorf("worker %d claimed %s: kind %q status %q attempts %d, want %s running 1",
							w, j.ID, j.Kind, j.Status, j.Attempts, kindA))
					}
				}
				mu.Unlock()
				for _, j := range js {
					time.Sleep(100 * time.Microsecond) // "work", widening any overlap
					// The job is released in the bookkeeping before
					// FinishJob, as the store releases it only when
					// FinishJob commits.
					mu.Lock()
					if held[j.Subject] == j.ID {
						delete(held, j.Subject)
					}
					mu.Unlock()
					if err := e.s.FinishJob(ctx, j.ID, false, nil, nil, now); err != nil {
						report(fmt.Errorf("worker %d: FinishJob %s: %w", w, j.ID, err))
						return
					}
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 20 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d errors", n)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("gave up after %d of %d jobs: %v", done.Load(), total, err)
	}
	if len(handled) != total {
		t.Fatalf("%d distinct jobs handled, want %d", len(handled), total)
	}
	for id, c := range handled {
		if c != 1 {
			t.Errorf("job %s handled %d times, want once", id, c)
		}
	}
	same(t, order, want, "order in which each subject's jobs were handled")
	for subj := range want {
		var rest []platform.Job
		if subj == other.Subject {
			rest = []platform.Job{jobAs(other, platform.JobPending, 0)}
		}
		e.wantJobs(t, subj, rest, "jobs left of %s", subj)
	}
	t.Logf("%d jobs in %d claims", total, claims.Load())
}

func testFinishJob(t *testing.T, e *env) {
	b := e.chatBot(t)
	o := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")
	now := mt(t0)
	lease := now.Add(time.Minute)
	j1 := newJob("job_1", platform.JobBotEvent, c.ID, now.Add(-time.Second))
	j2 := newJob("job_2", platform.JobBotEvent, c.ID, now)
	e.enqueue(t, j1, j2)
	e.wantClaim(t, platform.JobBotEvent, now, lease, 10, []int{1}, []platform.Job{j1}, "claim j1")

	logAt := e.now()
	window := store.LogFilter{BotID: b.ID, Start: logAt.Add(-time.Hour), End: logAt.Add(time.Hour)}
	logs1 := []platform.LogEntry{
		{ID: "log_1", BotID: b.ID, Timestamp: logAt, Level: "info", Message: "handled ünïcødé", UserID: u.ID, ConversationID: c.ID, WorkflowID: "wf_1"},
		{ID: "log_2", BotID: b.ID, Timestamp: logAt.Add(time.Millisecond), Level: "error", Message: "second"},
	}
	st1 := []platform.BotState{
		state(b.ID, platform.StateBot, "", `{"n":1}`),
		state(b.ID, platform.StateUser, u.ID, `{"name":"ünïcødé"}`),
		state(b.ID, platform.StateConversation, c.ID, `{"turn":1,"l":[1,2.5,null,true]}`),
	}
	must(t, e.s.FinishJob(e.ctx, j1.ID, false, st1, logs1, e.now()), "FinishJob j1")
	e.wantJobs(t, c.ID, []platform.Job{jobAs(j2, platform.JobPending, 0)}, "jobs after FinishJob j1")
	e.wantStates(t, b.ID, u.ID, c.ID, states("bot", `{"n":1}`, "user", `{"name":"ünïcødé"}`, "conversation", `{"turn":1,"l":[1,2.5,null,true]}`), "states after FinishJob j1")
	same(t, e.allLogs(t, window), mapSlice(logs1, normLog), "logs after FinishJob j1")
	wantErr(t, e.s.FinishJob(e.ctx, j1.ID, false, nil, nil, e.now()), platform.ErrNotFound, "FinishJob j1 twice")

	// The next job updates one state, adds another bot's and no log.
	e.wantClaim(t, platform.JobBotEvent, now, lease, 10, []int{1}, []platform.Job{j2}, "claim j2")
	st2 := []platform.BotState{
		state(b.ID, platform.StateConversation, c.ID, `{"turn":2}`),
		state(o.ID, platform.StateBot, "", `{"other":true}`),
	}
	must(t, e.s.FinishJob(e.ctx, j2.ID, false, st2, nil, e.now()), "FinishJob j2")
	e.wantJobs(t, c.ID, nil, "jobs after FinishJob j2")
	e.wantStates(t, b.ID, u.ID, c.ID, states("bot", `{"n":1}`, "user", `{"name":"ünïcødé"}`, "conversation", `{"turn":2}`), "states after FinishJob j2")
	e.wantStates(t, o.ID, "", "", states("bot", `{"other":true}`), "the other bot's states after FinishJob j2")
	same(t, e.allLogs(t, window), mapSlice(logs1, normLog), "logs after FinishJob j2")

	t.Run("unknown job saves nothing", func(t *testing.T) {
		st := []platform.BotState{
			state(b.ID, platform.StateBot, "", `{"n":99}`),
			state(b.ID, platform.StateUser, "user_new", `{"new":true}`),
		}
		lg := []platform.LogEntry{{ID: "log_3", BotID: b.ID, Timestamp: logAt.Add(2 * time.Millisecond), Level: "info", Message: "must not stay"}}
		wantErr(t, e.s.FinishJob(e.ctx, "job_unknown", false, st, lg, e.now()), platform.ErrNotFound, "FinishJob of an unknown job")
		wantErr(t, e.s.FinishJob(e.ctx, j2.ID, false, st, lg, e.now()), platform.ErrNotFound, "FinishJob of a finished job")
		e.wantStates(t, b.ID, u.ID, c.ID, states("bot", `{"n":1}`, "user", `{"name":"ünïcødé"}`, "conversation", `{"turn":2}`), "states after rejected FinishJob")
		e.wantStates(t, b.ID, "user_new", "", states("bot", `{"n":1}`), "states of the rejected user state")
		same(t, e.allLogs(t, window), mapSlice(logs1, normLog), "logs after rejected FinishJob")
	})

	t.Run("a failing log undoes the job's deletion and states", func(t *testing.T) {
		j3 := newJob("job_3", platform.JobBotEvent, c.ID, now)
		e.enqueue(t, j3)
		dupLog := []platform.LogEntry{logs1[0]}
		wantErr(t, e.s.FinishJob(e.ctx, j3.ID, false, []platform.BotState{state(b.ID, platform.StateBot, "", `{"n":42}`)}, dupLog, e.now()),
			platform.ErrConflict, "FinishJob with a taken log id")
		e.wantJobs(t, c.ID, []platform.Job{jobAs(j3, platform.JobPending, 0)}, "jobs after the failed FinishJob")
		e.wantStates(t, b.ID, "", "", states("bot", `{"n":1}`), "states after the failed FinishJob")
	})
}

// jobDone is the status of a finished job kept (FinishJob with keep).
const jobDone = "done"

// testKeptJobs checks FinishJob with keep and PurgeJobs: a kept job stays as
// a done row that blocks re-queueing its id but neither runs again nor holds
// its subject back, until PurgeJobs removes it.
func testKeptJobs(t *testing.T, e *env) {
	b := e.chatBot(t)
	now := mt(t0)
	lease := now.Add(time.Minute)
	s := time.Second
	k1 := newJob("job_k1", kindA, "s1", now.Add(-2*s))
	n1 := newJob("job_n1", kindA, "s1", now.Add(-s))
	e.enqueue(t, k1, n1)
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{k1}, "claim k1")
	logAt := e.now()
	window := store.LogFilter{BotID: b.ID, Start: logAt.Add(-time.Hour), End: logAt.Add(time.Hour)}
	lg := []platform.LogEntry{{ID: "log_k1", BotID: b.ID, Timestamp: logAt, Level: "info", Message: "kept"}}
	must(t, e.s.FinishJob(e.ctx, k1.ID, true, []platform.BotState{state(b.ID, platform.StateBot, "", `{"k":1}`)}, lg, e.now()), "FinishJob k1, keep")
	e.wantJobs(t, "s1", []platform.Job{jobAs(k1, jobDone, 1), jobAs(n1, platform.JobPending, 0)}, "jobs after keeping k1")
	e.wantStates(t, b.ID, "", "", states("bot", `{"k":1}`), "states after keeping k1")
	same(t, e.allLogs(t, window), mapSlice(lg, normLog), "logs after keeping k1")

	// The done row does not hold its subject back, and is never claimed.
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{n1}, "claim after keeping k1")
	must(t, e.s.FinishJob(e.ctx, n1.ID, false, nil, nil, now), "FinishJob n1")
	e.wantClaim(t, kindA, now.Add(time.Hour), now.Add(2*time.Hour), 10, nil, nil, "claim with only a done job")
	n, err := e.s.ReleaseJobs(e.ctx, kindA, "")
	must(t, err, "ReleaseJobs")
	same(t, n, 0, "ReleaseJobs count with only a done job")
	at, ok, err := e.s.NextJobAt(e.ctx, kindA, time.Time{})
	must(t, err, "NextJobAt")
	if ok {
		t.Fatalf("NextJobAt with only a done job = %v, true; want false", at)
	}
	e.wantJobs(t, "s1", []platform.Job{jobAs(k1, jobDone, 1)}, "jobs after claims, release and NextJobAt")

	// Its id stays taken; it cannot be finished, kept or retried again.
	again := newJob(k1.ID, kindA, "s1", now)
	wantErr(t, e.s.EnqueueJob(e.ctx, again), platform.ErrConflict, "EnqueueJob of a kept job's id")
	wantErr(t, e.s.FinishJob(e.ctx, k1.ID, true, []platform.BotState{state(b.ID, platform.StateBot, "", `{"k":2}`)},
		[]platform.LogEntry{{ID: "log_k2", BotID: b.ID, Timestamp: logAt, Level: "info", Message: "twice"}}, e.now()),
		platform.ErrNotFound, "FinishJob, keep, of a done job")
	e.wantStates(t, b.ID, "", "", states("bot", `{"k":1}`), "states after keeping a done job")
	same(t, e.allLogs(t, window), mapSlice(lg, normLog), "logs after keeping a done job")
	wantErr(t, e.s.RetryJob(e.ctx, k1.ID, now), platform.ErrNotFound, "RetryJob of a done job")
	e.wantJobs(t, "s1", []platform.Job{jobAs(k1, jobDone, 1)}, "jobs after the rejected calls")

	t.Run("PurgeJobs", func(t *testing.T) {
		d2 := newJob("job_d2", kindA, "s2", now.Add(5*s))
		p2 := newJob("job_p2", kindA, "s2", now.Add(-time.Hour)) // pending, older than any cut-off
		r3 := newJob("job_r3", kindA, "s3", now.Add(-time.Hour)) // running
		dB := newJob("job_db", kindB, "s1", now.Add(-time.Hour)) // done, of the other kind
		e.enqueue(t, d2, dB)
		e.wantClaim(t, kindA, now.Add(5*s), lease.Add(time.Hour), 10, []int{1}, []platform.Job{d2}, "claim d2")
		must(t, e.s.FinishJob(e.ctx, d2.ID, true, nil, nil, now), "FinishJob d2, keep")
		e.wantClaim(t, kindB, now, lease, 10, []int{1}, []platform.Job{dB}, "claim dB")
		must(t, e.s.FinishJob(e.ctx, dB.ID, true, nil, nil, now), "FinishJob dB, keep")
		e.enqueue(t, p2, r3)
		e.wantClaim(t, kindA, now, lease.Add(time.Hour), 10, []int{1, 1}, []platform.Job{p2, r3}, "claim p2 and r3")
		must(t, e.s.RetryJob(e.ctx, p2.ID, now.Add(-time.Hour)), "RetryJob p2") // pending again

		purge := func(t *testing.T, kind string, before time.Time, want int) {
			t.Helper()
			n, err := e.s.PurgeJobs(e.ctx, kind, before)
			must(t, err, "PurgeJobs(%s, %v)", kind, before)
			same(t, n, want, "PurgeJobs(%s, %v) count", kind, before)
		}
		purge(t, kindA, now, 1) // k1 only: d2 is due later
		e.wantJobs(t, "s1", []platform.Job{jobAs(dB, jobDone, 1)}, "jobs of s1 after purging kind a")
		e.wantJobs(t, "s2", []platform.Job{jobAs(d2, jobDone, 1), jobAs(p2, platform.JobPending, 1)}, "jobs of s2 after the first purge")
		purge(t, kindA, d2.RunAfter, 0) // due before, not at
		purge(t, kindA, d2.RunAfter.Add(time.Microsecond), 1)
		e.wantJobs(t, "s2", []platform.Job{jobAs(p2, platform.JobPending, 1)}, "jobs of s2 after the second purge")
		e.wantJobs(t, "s3", []platform.Job{jobAs(r3, platform.JobRunning, 1)}, "jobs of s3 after the purges")
		purge(t, kindA, now.Add(time.Hour), 0)
		purge(t, kindB, now.Add(time.Hour), 1)
		e.wantJobs(t, "s1", nil, "jobs of s1 after purging kind b")
		// The purged id is free again.
		e.enqueue(t, newJob(k1.ID, kindA, "s1", now))
	})
}

func testRetryJob(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Minute)
	s := time.Second
	j := newJob("job_1", kindA, "s1", now.Add(-s))
	head := newJob("job_2", kindA, "s2", now.Add(-s))
	next := newJob("job_3", kindA, "s2", now.Add(20*s))
	e.enqueue(t, j, head, next)
	e.wantClaim(t, kindA, now, lease, 10, []int{1, 1}, []platform.Job{j, head}, "first claim")

	retryAt := now.Add(10 * s)
	must(t, e.s.RetryJob(e.ctx, j.ID, retryAt), "RetryJob j")
	must(t, e.s.RetryJob(e.ctx, head.ID, retryAt), "RetryJob head")
	// Where a retried job keeps its place (its run_after) is the store's
	// business: only its status, attempts and due time are checked.
	js := e.jobs(t, "s1")
	if len(js) != 1 || js[0].ID != j.ID || js[0].Status != platform.JobPending || js[0].Attempts != 1 {
		t.Fatalf("jobs of s1 after RetryJob = %s, want %s pending after 1 attempt", show(js), j.ID)
	}
	at, ok, err := e.s.NextJobAt(e.ctx, kindA, now)
	must(t, err, "NextJobAt")
	same(t, []any{at, ok}, []any{retryAt, true}, "NextJobAt after RetryJob")

	// Not before runAfter, though the lease it had is still live.
	e.wantClaim(t, kindA, retryAt.Add(-time.Microsecond), lease, 10, nil, nil, "claim before the retry time")
	got := e.claim(t, kindA, retryAt, lease, 10)
	type claimed struct {
		ID, Status string
		Attempts   int
	}
	same(t, mapSlice(got, func(j platform.Job) claimed { return claimed{j.ID, j.Status, j.Attempts} }),
		[]claimed{{j.ID, platform.JobRunning, 2}, {head.ID, platform.JobRunning, 2}}, "claim at the retry time")

	// A retried job still ahead of its subject's next job keeps it waiting.
	e.wantClaim(t, kindA, now.Add(30*s), now.Add(time.Hour), 10, nil, nil, "claim with the retried jobs held")
	must(t, e.s.FinishJob(e.ctx, head.ID, false, nil, nil, now), "FinishJob head")
	e.wantClaim(t, kindA, now.Add(30*s), now.Add(time.Hour), 10, []int{1}, []platform.Job{next}, "claim after finishing the retried head")

	wantErr(t, e.s.RetryJob(e.ctx, "job_unknown", retryAt), platform.ErrNotFound, "RetryJob of an unknown job")
	wantErr(t, e.s.RetryJob(e.ctx, head.ID, retryAt), platform.ErrNotFound, "RetryJob of a finished job")
}

// testClaimJobsRunningHoldsSubject: a job queued with an earlier run_after
// than its subject's running job (a recurring event fired late, another
// process's clock behind) must wait until the running job is finished: a
// subject's jobs run one at a time.
func testClaimJobsRunningHoldsSubject(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Minute)
	j1 := newJob("job_1", kindA, "s1", now.Add(-time.Second))
	e.enqueue(t, j1)
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{j1}, "claim j1")
	j0 := newJob("job_0", kindA, "s1", now.Add(-2*time.Second))
	e.enqueue(t, j0)
	e.wantClaim(t, kindA, now, lease, 10, nil, nil, "claim while j1 runs, with j0 queued before it")
	must(t, e.s.FinishJob(e.ctx, j1.ID, false, nil, nil, now), "FinishJob j1")
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{j0}, "claim after finishing j1")
}

// testRetryJobKeepsOrder: a job handed back for a retry stays ahead of the
// jobs of its subject queued after it, which wait for it to be finished: a
// subject's jobs run in order.
func testRetryJobKeepsOrder(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Minute)
	s := time.Second
	j1 := newJob("job_1", kindA, "s1", now.Add(-s))
	e.enqueue(t, j1)
	e.wantClaim(t, kindA, now, lease, 10, []int{1}, []platform.Job{j1}, "claim j1")
	must(t, e.s.RetryJob(e.ctx, j1.ID, now.Add(10*s)), "RetryJob j1")
	j2 := newJob("job_2", kindA, "s1", now) // queued during j1's backoff
	e.enqueue(t, j2)
	e.wantClaim(t, kindA, now.Add(s), lease, 10, nil, nil, "claim during j1's backoff")
	got := e.claim(t, kindA, now.Add(10*s), lease, 10)
	if len(got) != 1 || got[0].ID != j1.ID || got[0].Attempts != 2 {
		t.Fatalf("claim at j1's retry time = %s, want %s (attempt 2)", show(jobIDs(got)), j1.ID)
	}
	must(t, e.s.FinishJob(e.ctx, j1.ID, false, nil, nil, now), "FinishJob j1")
	e.wantClaim(t, kindA, now.Add(10*s), lease, 10, []int{1}, []platform.Job{j2}, "claim after finishing j1")
}

func testReleaseJobs(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Hour)
	j1 := newJob("job_1", kindA, "s1", now.Add(-2*time.Second))
	j2 := newJob("job_2", kindA, "s2", now.Add(-time.Second))
	j3 := newJob("job_3", kindA, "s3", now.Add(time.Second)) // not due at the first claim
	k1 := newJob("job_4", kindB, "s1", now.Add(-time.Second))
	e.enqueue(t, j1, j2, j3, k1)

	n, err := e.s.ReleaseJobs(e.ctx, kindA, "")
	must(t, err, "ReleaseJobs with nothing claimed")
	same(t, n, 0, "ReleaseJobs count with nothing claimed")

	e.wantClaim(t, kindA, now, lease, 10, []int{1, 1}, []platform.Job{j1, j2}, "claim of kind a")
	e.wantClaim(t, kindB, now, lease, 10, []int{1}, []platform.Job{k1}, "claim of kind b")

	n, err = e.s.ReleaseJobs(e.ctx, kindA, "")
	must(t, err, "ReleaseJobs")
	same(t, n, 2, "ReleaseJobs count")
	e.wantJobs(t, "s1", []platform.Job{jobAs(j1, platform.JobPending, 1), jobAs(k1, platform.JobRunning, 1)}, "jobs of s1 after ReleaseJobs")
	e.wantJobs(t, "s2", []platform.Job{jobAs(j2, platform.JobPending, 1)}, "jobs of s2 after ReleaseJobs")

	// Claimable at once, their lease notwithstanding; the other kind's
	// job stays held.
	later := now.Add(time.Second)
	e.wantClaim(t, kindA, later, lease, 10, []int{2, 2, 1}, []platform.Job{j1, j2, j3}, "claim after ReleaseJobs")
	e.wantClaim(t, kindB, later, lease, 10, nil, nil, "claim of kind b after releasing kind a")

	n, err = e.s.ReleaseJobs(e.ctx, kindB, "")
	must(t, err, "ReleaseJobs of kind b")
	same(t, n, 1, "ReleaseJobs count of kind b")
	e.wantJobs(t, "s1", []platform.Job{jobAs(j1, platform.JobRunning, 2), jobAs(k1, platform.JobPending, 1)}, "jobs of s1 after releasing kind b")
	n, err = e.s.ReleaseJobs(e.ctx, "kind_unknown", "")
	must(t, err, "ReleaseJobs of an unknown kind")
	same(t, n, 0, "ReleaseJobs count of an unknown kind")
}

// testReleaseJobsOfNode: a node starting again hands back the jobs it had
// claimed, and leaves alone those another node holds.
func testReleaseJobsOfNode(t *testing.T, e *env) {
	now := mt(t0)
	lease := now.Add(time.Hour)
	j1 := newJob("job_1", kindA, "s1", now.Add(-2*time.Second))
	j2 := newJob("job_2", kindA, "s2", now.Add(-time.Second))
	e.enqueue(t, j1, j2)
	e.wantClaim(t, kindA, now, lease, 1, []int{1}, []platform.Job{j1}, "claim by node a")
	js, err := e.s.ClaimJobs(e.ctx, kindA, "node-b", now, lease, 10)
	must(t, err, "ClaimJobs by node b")
	same(t, len(js), 1, "jobs claimed by node b")

	n, err := e.s.ReleaseJobs(e.ctx, kindA, "node-c")
	must(t, err, "ReleaseJobs of a node holding nothing")
	same(t, n, 0, "ReleaseJobs count of a node holding nothing")
	n, err = e.s.ReleaseJobs(e.ctx, kindA, nodeA)
	must(t, err, "ReleaseJobs of node a")
	same(t, n, 1, "ReleaseJobs count of node a")
	e.wantJobs(t, "s1", []platform.Job{jobAs(j1, platform.JobPending, 1)}, "node a's job after it is released")
	e.wantJobs(t, "s2", []platform.Job{jobAs(j2, platform.JobRunning, 1)}, "node b's job after node a's are released")
	// Released, node a's job is claimable at once; node b's stays held.
	e.wantClaim(t, kindA, now.Add(time.Second), lease, 10, []int{2}, []platform.Job{j1}, "claim after releasing node a")
}

// testJobQueues: the unfinished jobs by kind, due now, due later and
// running, with the oldest due one's time; done jobs are left out.
func testJobQueues(t *testing.T, e *env) {
	now := t0
	queues := func(what string) []store.JobQueue {
		t.Helper()
		qs, err := e.s.JobQueues(e.ctx, now)
		must(t, err, "JobQueues %s", what)
		return qs
	}
	if qs := queues("on an empty store"); len(qs) != 0 {
		t.Fatalf("JobQueues on an empty store: %+v", qs)
	}
	e.enqueue(t,
		newJob("job_1", kindA, "s1", now.Add(-3*time.Second)),
		newJob("job_2", kindA, "s2", now.Add(-2*time.Second)),
		newJob("job_3", kindA, "s1", now.Add(-time.Second)), // due, behind job_1
		newJob("job_4", kindA, "s3", now.Add(time.Hour)),
		newJob("job_5", kindB, "s4", now),
		newJob("job_6", kindB, "s5", now.Add(-time.Minute)),
	)
	claimed, err := e.s.ClaimJobs(e.ctx, kindB, nodeA, now, now.Add(time.Minute), 1)
	must(t, err, "ClaimJobs")
	if len(claimed) != 1 || claimed[0].ID != "job_6" {
		t.Fatalf("claimed %+v, want job_6", claimed)
	}
	claimed, err = e.s.ClaimJobs(e.ctx, kindA, nodeA, now, now.Add(time.Minute), 1)
	must(t, err, "ClaimJobs")
	if len(claimed) != 1 || claimed[0].ID != "job_1" {
		t.Fatalf("claimed %+v, want job_1", claimed)
	}
	must(t, e.s.FinishJob(e.ctx, "job_1", true, nil, nil, now), "FinishJob") // kept as done
	got := queues("with jobs")
	want := []store.JobQueue{
		{Kind: kindA, Due: 2, Scheduled: 1, Running: 0, OldestDue: mt(now.Add(-2 * time.Second))},
		{Kind: kindB, Due: 1, Scheduled: 0, Running: 1, OldestDue: mt(now)},
	}
	if len(got) != len(want) {
		t.Fatalf("JobQueues = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Due != w.Due || g.Scheduled != w.Scheduled || g.Running != w.Running || !sameInstant(g.OldestDue, w.OldestDue) {
			t.Fatalf("JobQueues[%d] = %+v, want %+v", i, g, w)
		}
	}
}

func testNextJobAt(t *testing.T, e *env) {
	now := t0 // below the microsecond on purpose
	next := func(t *testing.T, kind string, after time.Time) (time.Time, bool) {
		t.Helper()
		at, ok, err := e.s.NextJobAt(e.ctx, kind, after)
		must(t, err, "NextJobAt(%s)", kind)
		return at, ok
	}
	if at, ok := next(t, kindA, now); ok {
		t.Fatalf("NextJobAt on an empty store = %v, true; want false", at)
	}
	j1 := newJob("job_1", kindA, "s1", now.Add(5*time.Second))
	j2 := newJob("job_2", kindA, "s2", now.Add(2*time.Second))
	j3 := newJob("job_3", kindA, "s2", now.Add(3*time.Second))
	k1 := newJob("job_4", kindB, "s3", now.Add(time.Second))
	e.enqueue(t, j1, j2, j3, k1)

	check := func(t *testing.T, kind string, after, want time.Time, wantOK bool, what string) {
		t.Helper()
		at, ok := next(t, kind, after)
		if ok != wantOK || (ok && !sameInstant(at, mt(want))) {
			t.Fatalf("%s: NextJobAt(%s, %v) = %v, %v; want %v, %v", what, kind, after, at, ok, mt(want), wantOK)
		}
	}
	check(t, kindA, now, j2.RunAfter, true, "queued jobs")
	check(t, kindB, now, k1.RunAfter, true, "queued jobs")
	check(t, "kind_unknown", now, time.Time{}, false, "unknown kind")
	// Only what falls due after `after` counts: what was due by then, the
	// claim made at that moment has seen.
	check(t, kindA, mt(j2.RunAfter).Add(-time.Microsecond), j2.RunAfter, true, "just before j2's time")
	check(t, kindA, mt(j1.RunAfter), time.Time{}, false, "after every job's time")
	// Only the first job of each subject counts: j3 waits for j2, and
	// whoever finishes j2 looks again.
	check(t, kindA, mt(j2.RunAfter), j1.RunAfter, true, "after j2's time, j3 behind it")

	// Neither do running jobs, nor the pending ones behind them.
	e.wantClaim(t, kindA, now.Add(2*time.Second), now.Add(time.Hour), 10, []int{1}, []platform.Job{j2}, "claim j2")
	check(t, kindA, now.Add(2*time.Second), j1.RunAfter, true, "j2 running")
	e.wantClaim(t, kindA, now.Add(5*time.Second), now.Add(time.Hour), 10, []int{1}, []platform.Job{j1}, "claim j1")
	check(t, kindA, now, time.Time{}, false, "j1 and j2 running, j3 behind j2")
	must(t, e.s.FinishJob(e.ctx, j2.ID, false, nil, nil, now), "FinishJob j2")
	check(t, kindA, now, j3.RunAfter, true, "j2 finished: j3 first of its subject")
	check(t, kindA, now.Add(5*time.Second), time.Time{}, false, "j3 due")
	e.wantClaim(t, kindA, now.Add(5*time.Second), now.Add(time.Hour), 10, []int{1}, []platform.Job{j3}, "claim j3")
	check(t, kindA, now, time.Time{}, false, "every job running")
	check(t, kindB, now, k1.RunAfter, true, "kind b untouched")
}

// sameInstant compares times exactly, location included.
func sameInstant(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() }

// ---- states, versions, recurring bots, conversations ----

func testBotStates(t *testing.T, e *env) {
	b := e.chatBot(t)
	o := e.chatBot(t)
	u1 := e.chatUser(t, b.ID, "u1")
	u2 := e.chatUser(t, b.ID, "u2")
	c1 := e.conversation(t, b.ID, u1.ID, "c1")
	c2 := e.conversation(t, b.ID, u2.ID, "c2")

	e.wantStates(t, b.ID, u1.ID, c1.ID, states(), "no states yet")
	e.saveStates(t,
		state(b.ID, platform.StateBot, "", `{"b":1}`),
		state(b.ID, platform.StateUser, u1.ID, `{"u":1}`),
		state(b.ID, platform.StateUser, u2.ID, `{"u":2}`),
		state(b.ID, platform.StateConversation, c1.ID, `{"c":1}`),
		state(b.ID, platform.StateConversation, c2.ID, `{"c":2}`),
		// the same scope ids under another bot
		state(o.ID, platform.StateBot, "", `{"o":1}`),
		state(o.ID, platform.StateUser, u1.ID, `{"ou":1}`),
		state(o.ID, platform.StateConversation, c1.ID, `{"oc":1}`),
		// one id in two scopes
		state(b.ID, platform.StateUser, "shared", `{"su":1}`),
		state(b.ID, platform.StateConversation, "shared", `{"sc":1}`),
		// the bot's state is the one with no scope id; other scopes are
		// not loaded
		state(b.ID, platform.StateBot, u1.ID, `{"stray":1}`),
		state(b.ID, platform.StateBot, c1.ID, `{"stray":2}`),
		state(b.ID, "workflow", u1.ID, `{"wf":1}`),
	)
	for _, tc := range []struct {
		bot, user, conv string
		want            map[string]json.RawMessage
	}{
		{b.ID, u1.ID, c1.ID, states("bot", `{"b":1}`, "user", `{"u":1}`, "conversation", `{"c":1}`)},
		{b.ID, u2.ID, c2.ID, states("bot", `{"b":1}`, "user", `{"u":2}`, "conversation", `{"c":2}`)},
		{b.ID, u1.ID, c2.ID, states("bot", `{"b":1}`, "user", `{"u":1}`, "conversation", `{"c":2}`)},
		{b.ID, "", "", states("bot", `{"b":1}`)},
		{b.ID, u2.ID, "", states("bot", `{"b":1}`, "user", `{"u":2}`)},
		{b.ID, "", c1.ID, states("bot", `{"b":1}`, "conversation", `{"c":1}`)},
		{b.ID, "user_unknown", "conv_unknown", states("bot", `{"b":1}`)},
		{b.ID, c1.ID, u1.ID, states("bot", `{"b":1}`)}, // ids in the wrong scopes
		{b.ID, "shared", "", states("bot", `{"b":1}`, "user", `{"su":1}`)},
		{b.ID, "", "shared", states("bot", `{"b":1}`, "conversation", `{"sc":1}`)},
		{o.ID, u1.ID, c1.ID, states("bot", `{"o":1}`, "user", `{"ou":1}`, "conversation", `{"oc":1}`)},
		{o.ID, u2.ID, c2.ID, states("bot", `{"o":1}`)},
		{"bot_unknown", u1.ID, c1.ID, states()},
	} {
		e.wantStates(t, tc.bot, tc.user, tc.conv, tc.want, "states")
	}

	// A bot without bot state.
	n := e.chatBot(t)
	e.saveStates(t, state(n.ID, platform.StateUser, u1.ID, `"just a string"`))
	e.wantStates(t, n.ID, u1.ID, c1.ID, states("user", `"just a string"`), "states of a bot without bot state")
}

func testBotVersion(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "versioned")
	o := e.bot(t, w2.ID, "other")
	version := func(t *testing.T, id string) (string, time.Time) {
		t.Helper()
		ws, at, err := e.s.BotVersion(e.ctx, id)
		must(t, err, "BotVersion %s", id)
		return ws, at
	}
	check := func(t *testing.T, bot platform.Bot, what string) {
		t.Helper()
		ws, at := version(t, bot.ID)
		if ws != bot.WorkspaceID || !sameInstant(at, mt(bot.UpdatedAt)) {
			t.Fatalf("%s: BotVersion = %s, %v; want %s, %v", what, ws, at, bot.WorkspaceID, mt(bot.UpdatedAt))
		}
	}
	check(t, b, "new bot")
	check(t, o, "bot of another workspace")

	u := b
	u.Code = "export default { v: 2 }"
	u.UpdatedAt = e.now()
	must(t, e.s.UpdateBot(e.ctx, u), "UpdateBot")
	check(t, u, "updated bot")
	if _, at := version(t, b.ID); at.Equal(mt(b.UpdatedAt)) {
		t.Fatalf("BotVersion did not change with UpdateBot")
	}
	check(t, o, "the other bot after UpdateBot")

	_, _, err := e.s.BotVersion(e.ctx, "bot_unknown")
	wantErr(t, err, platform.ErrNotFound, "BotVersion of an unknown bot")
	must(t, e.deleteBot(e.ctx, w.ID, b.ID), "DeleteBot")
	_, _, err = e.s.BotVersion(e.ctx, b.ID)
	wantErr(t, err, platform.ErrNotFound, "BotVersion of a deleted bot")
}

func testRecurringBots(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	withSpec := func(wsID, name string, spec platform.BotSpec) platform.Bot {
		t.Helper()
		b := e.newBot(wsID, name)
		b.Spec = spec
		must(t, e.s.CreateBot(e.ctx, b), "CreateBot %s", name)
		return b
	}
	tick := json.RawMessage(`{"tick":{"type":"ping","schedule":{"cron":"*/5 * * * *"},"payload":{"x":[1,2.5,null,true]}}}`)
	r1 := withSpec(w.ID, "r1", platform.BotSpec{Description: "recurring", RecurringEvents: tick, Events: json.RawMessage(`{"ping":{"schema":{}}}`)})
	r2 := withSpec(w2.ID, "r2", platform.BotSpec{RecurringEvents: json.RawMessage(`{"a":{"type":"x","schedule":{"cron":"0 * * * *"},"payload":{}},"b":{"type":"y","schedule":{"cron":"1 * * * *"},"payload":{}}}`)})
	e.bot(t, w.ID, "plain")
	withSpec(w.ID, "empty", platform.BotSpec{RecurringEvents: json.RawMessage(`{}`)})
	withSpec(w.ID, "mentions", platform.BotSpec{Description: `has "recurringEvents" in text`,
		Events: json.RawMessage(`{"recurringEvents":{"schema":{}}}`), Configuration: json.RawMessage(`{"data":{"recurringEvents":1}}`)})
	n := withSpec(w2.ID, "later", platform.BotSpec{Description: "none yet"})

	check := func(t *testing.T, want []platform.Bot, what string) {
		t.Helper()
		got, err := e.s.RecurringBots(e.ctx)
		must(t, err, "RecurringBots")
		type row struct {
			ID, WorkspaceID string
			Spec            platform.BotSpec
			UpdatedAt       time.Time
		}
		rows := mapSlice(got, func(b platform.Bot) row { return row{b.ID, b.WorkspaceID, b.Spec, mt(b.UpdatedAt)} })
		exp := mapSlice(want, func(b platform.Bot) row { return row{b.ID, b.WorkspaceID, b.Spec, mt(b.UpdatedAt)} })
		sortByID(rows, func(r row) string { return r.ID })
		sortByID(exp, func(r row) string { return r.ID })
		if len(rows) == 0 && len(exp) == 0 {
			return
		}
		same(t, rows, exp, "%s: RecurringBots", what)
	}
	check(t, []platform.Bot{r1, r2}, "created bots")

	n.Spec.RecurringEvents = tick
	n.UpdatedAt = e.now()
	must(t, e.s.UpdateBot(e.ctx, n), "UpdateBot adding recurring events")
	r1.Spec.RecurringEvents = nil
	r1.UpdatedAt = e.now()
	must(t, e.s.UpdateBot(e.ctx, r1), "UpdateBot removing recurring events")
	check(t, []platform.Bot{r2, n}, "after updates")

	must(t, e.deleteBot(e.ctx, w2.ID, r2.ID), "DeleteBot")
	check(t, []platform.Bot{n}, "after DeleteBot")
	must(t, e.deleteWorkspace(e.ctx, w2.ID), "DeleteWorkspace")
	check(t, nil, "after DeleteWorkspace")
}

func testGetConversationByID(t *testing.T, e *env) {
	b := e.chatBot(t)
	o := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	ou := e.chatUser(t, o.ID, "")
	c := e.conversation(t, b.ID, u.ID, "conv-fid")
	d := e.conversation(t, o.ID, ou.ID, "")
	for _, want := range []platform.Conversation{c, d} {
		got, err := e.s.GetConversationByID(e.ctx, want.ID)
		must(t, err, "GetConversationByID %s", want.ID)
		same(t, got, normConversation(want), "GetConversationByID %s", want.ID)
	}
	_, err := e.s.GetConversationByID(e.ctx, c.FID)
	wantErr(t, err, platform.ErrNotFound, "GetConversationByID by foreign id")
	_, err = e.s.GetConversationByID(e.ctx, "conv_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetConversationByID unknown id")
	must(t, e.s.DeleteConversation(e.ctx, c.ID), "DeleteConversation")
	_, err = e.s.GetConversationByID(e.ctx, c.ID)
	wantErr(t, err, platform.ErrNotFound, "GetConversationByID of a deleted conversation")
	got, err := e.s.GetConversationByID(e.ctx, d.ID)
	must(t, err, "GetConversationByID of the other bot's conversation")
	same(t, got, normConversation(d), "the other bot's conversation after DeleteConversation")
}

// ---- deletions ----

func testRuntimeDeletes(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)

	type fixture struct {
		bot    platform.Bot
		u1, u2 platform.ChatUser
		c1, c2 platform.Conversation
		jobs   []platform.Job // about JobSubjectBot(bot)
	}
	fill := func(wsID, name string) fixture {
		t.Helper()
		f := fixture{bot: e.bot(t, wsID, name)}
		f.u1, f.u2 = e.chatUser(t, f.bot.ID, "u1"), e.chatUser(t, f.bot.ID, "u2")
		f.c1, f.c2 = e.conversation(t, f.bot.ID, f.u1.ID, "c1"), e.conversation(t, f.bot.ID, f.u2.ID, "c2")
		subj := platform.JobSubjectBot(f.bot.ID)
		f.jobs = []platform.Job{
			newJob(platform.NewID("job_"), "recurring_event", subj, t0),
			newJob(platform.NewID("job_"), "scheduled_event", subj, t0.Add(time.Hour)),
		}
		sortByID(f.jobs, func(j platform.Job) string { return j.ID }) // ListJobs order: created_at, then id
		e.enqueue(t, f.jobs...)
		e.saveStates(t,
			state(f.bot.ID, platform.StateBot, "", `{"bot":"`+name+`"}`),
			state(f.bot.ID, platform.StateUser, f.u1.ID, `{"u":1}`),
			state(f.bot.ID, platform.StateUser, f.u2.ID, `{"u":2}`),
			state(f.bot.ID, platform.StateConversation, f.c1.ID, `{"c":1}`),
			state(f.bot.ID, platform.StateConversation, f.c2.ID, `{"c":2}`),
		)
		return f
	}
	full := func(f fixture, u platform.ChatUser, c platform.Conversation) map[string]json.RawMessage {
		uv, cv := `{"u":1}`, `{"c":1}`
		if u.ID == f.u2.ID {
			uv = `{"u":2}`
		}
		if c.ID == f.c2.ID {
			cv = `{"c":2}`
		}
		return states("bot", `{"bot":"`+f.bot.Name+`"}`, "user", uv, "conversation", cv)
	}
	wantIntact := func(t *testing.T, f fixture, what string) {
		t.Helper()
		e.wantStates(t, f.bot.ID, f.u1.ID, f.c1.ID, full(f, f.u1, f.c1), "%s: %s", what, f.bot.Name)
		e.wantStates(t, f.bot.ID, f.u2.ID, f.c2.ID, full(f, f.u2, f.c2), "%s: %s", what, f.bot.Name)
		e.wantJobs(t, platform.JobSubjectBot(f.bot.ID), mapSlice(f.jobs, func(j platform.Job) platform.Job { return jobAs(j, platform.JobPending, 0) }),
			"%s: jobs of %s", what, f.bot.Name)
	}
	wantBotGone := func(t *testing.T, f fixture, what string) {
		t.Helper()
		e.wantStates(t, f.bot.ID, f.u1.ID, f.c1.ID, states(), "%s: %s", what, f.bot.Name)
		e.wantStates(t, f.bot.ID, f.u2.ID, f.c2.ID, states(), "%s: %s", what, f.bot.Name)
		e.wantJobs(t, platform.JobSubjectBot(f.bot.ID), nil, "%s: jobs of %s", what, f.bot.Name)
	}

	gone := fill(w.ID, "gone")
	keep := fill(w.ID, "keep")
	inWS := fill(w2.ID, "in-ws")
	inWS2 := fill(w2.ID, "in-ws-2")

	t.Run("DeleteConversation", func(t *testing.T) {
		must(t, e.s.DeleteConversation(e.ctx, keep.c2.ID), "DeleteConversation")
		e.wantStates(t, keep.bot.ID, keep.u2.ID, keep.c2.ID, states("bot", `{"bot":"keep"}`, "user", `{"u":2}`), "states after DeleteConversation")
		e.wantStates(t, keep.bot.ID, keep.u1.ID, keep.c1.ID, full(keep, keep.u1, keep.c1), "the other conversation's states")
		// A conversation created again with the same id starts afresh.
		again := keep.c2
		must(t, e.s.CreateConversation(e.ctx, again), "CreateConversation with the deleted id")
		e.wantStates(t, keep.bot.ID, "", again.ID, states("bot", `{"bot":"keep"}`), "states of the re-created conversation")
		for _, f := range []fixture{gone, inWS, inWS2} {
			wantIntact(t, f, "after DeleteConversation")
		}
	})

	t.Run("DeleteChatUser", func(t *testing.T) {
		must(t, e.s.DeleteChatUser(e.ctx, keep.u2.ID), "DeleteChatUser")
		e.wantStates(t, keep.bot.ID, keep.u2.ID, keep.c1.ID, states("bot", `{"bot":"keep"}`, "conversation", `{"c":1}`), "states after DeleteChatUser")
		e.wantStates(t, keep.bot.ID, keep.u1.ID, keep.c1.ID, full(keep, keep.u1, keep.c1), "the other user's states")
		again := keep.u2
		must(t, e.s.CreateChatUser(e.ctx, again), "CreateChatUser with the deleted id")
		e.wantStates(t, keep.bot.ID, again.ID, "", states("bot", `{"bot":"keep"}`), "states of the re-created user")
		for _, f := range []fixture{gone, inWS, inWS2} {
			wantIntact(t, f, "after DeleteChatUser")
		}
	})

	t.Run("DeleteBot", func(t *testing.T) {
		must(t, e.deleteBot(e.ctx, w.ID, gone.bot.ID), "DeleteBot")
		wantBotGone(t, gone, "after DeleteBot")
		// A bot created again with the same id has no states left over.
		reborn := e.newBot(w.ID, "reborn")
		reborn.ID = gone.bot.ID
		for i := range reborn.Integrations {
			reborn.Integrations[i].BotID = reborn.ID
		}
		must(t, e.s.CreateBot(e.ctx, reborn), "CreateBot with the deleted id")
		e.wantStates(t, reborn.ID, gone.u1.ID, gone.c1.ID, states(), "states of the re-created bot")
		e.wantStates(t, keep.bot.ID, keep.u1.ID, keep.c1.ID, full(keep, keep.u1, keep.c1), "the other bot's states after DeleteBot")
		e.wantJobs(t, platform.JobSubjectBot(keep.bot.ID), mapSlice(keep.jobs, func(j platform.Job) platform.Job { return jobAs(j, platform.JobPending, 0) }),
			"the other bot's jobs after DeleteBot")
		for _, f := range []fixture{inWS, inWS2} {
			wantIntact(t, f, "after DeleteBot")
		}
	})

	t.Run("DeleteWorkspace", func(t *testing.T) {
		must(t, e.deleteWorkspace(e.ctx, w2.ID), "DeleteWorkspace")
		wantBotGone(t, inWS, "after DeleteWorkspace")
		wantBotGone(t, inWS2, "after DeleteWorkspace")
		e.wantStates(t, keep.bot.ID, keep.u1.ID, keep.c1.ID, full(keep, keep.u1, keep.c1), "the other workspace's states after DeleteWorkspace")
		e.wantJobs(t, platform.JobSubjectBot(keep.bot.ID), mapSlice(keep.jobs, func(j platform.Job) platform.Job { return jobAs(j, platform.JobPending, 0) }),
			"the other workspace's jobs after DeleteWorkspace")
	})
}

// testNoCodeNoBotEvents: messages and events in a conversation of a bot
// without code queue nothing for it (there is nothing to run); once code is
// deployed, they do.
func testNoCodeNoBotEvents(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.newBot(w.ID, "codeless")
	b.Code = ""
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
	u := e.chatUser(t, b.ID, "u")
	c := e.conversation(t, b.ID, u.ID, "c")
	at := e.now()
	wantQueued := func(want bool, queued bool, err error, what string) {
		t.Helper()
		must(t, err, "%s", what)
		if queued != want {
			t.Fatalf("%s: queued %v, want %v", what, queued, want)
		}
	}
	queued, err := e.s.CreateMessage(e.ctx, platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{"type":"text","text":"hi"}`), CreatedAt: at})
	wantQueued(false, queued, err, "CreateMessage")
	queued, err = e.s.CreateChatEvent(e.ctx, platform.ChatEvent{ID: platform.NewID("evt_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{}`), CreatedAt: at})
	wantQueued(false, queued, err, "CreateChatEvent")
	if js := e.jobs(t, c.ID); len(js) != 0 {
		t.Fatalf("a bot without code got %d jobs: %s", len(js), show(js))
	}
	b.Code = "bot.on.message(() => {})"
	must(t, e.s.UpdateBot(e.ctx, b), "UpdateBot")
	m := platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{"type":"text","text":"hi"}`), CreatedAt: at}
	queued, err = e.s.CreateMessage(e.ctx, m)
	wantQueued(true, queued, err, "CreateMessage after deploying")
	bm := platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{"type":"text","text":"hi"}`), CreatedAt: at, IsBot: true}
	queued, err = e.s.CreateMessage(e.ctx, bm)
	wantQueued(false, queued, err, "the bot's own CreateMessage")
	queued, err = e.s.CreateChatEvent(e.ctx, platform.ChatEvent{ID: platform.NewID("evt_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{}`), CreatedAt: at, IsBot: true})
	wantQueued(false, queued, err, "the bot's own CreateChatEvent")
	e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m.ID, at}}, "jobs once code is deployed")

	// A message or event dated ahead of the clock (dates a millisecond
	// apart in a fast exchange) is due when it was written, not at its date.
	due := at.Add(time.Second)
	m2 := platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{"type":"text","text":"hi"}`),
		CreatedAt: due.Add(5 * time.Millisecond), DueAt: due}
	queued, err = e.s.CreateMessage(e.ctx, m2)
	wantQueued(true, queued, err, "CreateMessage dated ahead")
	ev := platform.ChatEvent{ID: platform.NewID("evt_"), ConversationID: c.ID, UserID: u.ID, Payload: []byte(`{}`),
		CreatedAt: due.Add(6 * time.Millisecond), DueAt: due.Add(time.Millisecond)}
	queued, err = e.s.CreateChatEvent(e.ctx, ev)
	wantQueued(true, queued, err, "CreateChatEvent dated ahead")
	e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m.ID, at}, {"message", m2.ID, due}, {"event", ev.ID, due.Add(time.Millisecond)}},
		"jobs of messages dated ahead of the clock")
}

// testExtendLease: a running job whose lease is extended is not taken
// over when the first lease runs out; a job no longer running cannot be
// extended.
func testExtendLease(t *testing.T, e *env) {
	now := mt(t0)
	j1 := newJob("job_1", kindA, "s1", now.Add(-time.Second))
	e.enqueue(t, j1)
	e.wantClaim(t, kindA, now, now.Add(time.Minute), 10, []int{1}, []platform.Job{j1}, "first claim")
	must(t, e.s.ExtendLease(e.ctx, j1.ID, now.Add(time.Hour)), "ExtendLease")
	e.wantClaim(t, kindA, now.Add(2*time.Minute), now.Add(3*time.Minute), 10, nil, nil, "claim after the first lease, extended")
	e.wantClaim(t, kindA, now.Add(2*time.Hour), now.Add(3*time.Hour), 10, []int{2}, []platform.Job{j1}, "claim after the extended lease")
	must(t, e.s.FinishJob(e.ctx, j1.ID, false, nil, nil, now.Add(2*time.Hour)), "FinishJob")
	wantErr(t, e.s.ExtendLease(e.ctx, j1.ID, now.Add(4*time.Hour)), platform.ErrNotFound, "ExtendLease of a finished job")
	wantErr(t, e.s.ExtendLease(e.ctx, "job_unknown", now), platform.ErrNotFound, "ExtendLease of an unknown job")
}
