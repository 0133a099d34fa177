package sqlstore

import (
	"context"
	"sync"
	"time"
)

// A planner that has no statistics on rows written in bulk plans for the
// table as it last saw it: straight after a few thousand files were
// indexed, PostgreSQL took the bot's files to be a handful and joined each
// of them to every candidate passage (a search took a second instead of
// 40 ms) until autovacuum analyzed the tables, up to a minute later, or
// later still on a busy server. So the store analyzes them itself once
// indexing has changed enough of them: the rows written since the last
// analysis must exceed analyzeBase plus analyzeScale of the rows then
// counted (autovacuum's default rule), at most once every analyzeEvery,
// in the background, analyzeDelay after the write (so that one analysis
// covers a burst of writes).
const (
	analyzeBase  = 50
	analyzeScale = 0.1
)

var (
	analyzeEvery = 10 * time.Second
	analyzeDelay = time.Second
)

// analyzer refreshes the planner's statistics after bulk writes, with the
// dialect's Analyze statements.
type analyzer struct {
	s      *Store
	ctx    context.Context // ended by stop
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu   sync.Mutex
	rows int64 // written since the last analysis
	// threshold is how many rows must be written before the next analysis.
	threshold int64
	last      time.Time // when the last analysis ended
	running   bool      // a goroutine is waiting to analyze
	stopped   bool
}

func newAnalyzer(s *Store) *analyzer {
	ctx, cancel := context.WithCancel(context.Background())
	return &analyzer{s: s, ctx: ctx, cancel: cancel, threshold: analyzeBase}
}

// wrote records that n rows of the analyzed tables were written, and
// analyzes them soon if that makes enough.
func (a *analyzer) wrote(n int) {
	if a == nil || n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rows += int64(n)
	if a.running || a.stopped || a.rows <= a.threshold {
		return
	}
	a.running = true
	a.done.Add(1)
	go a.run()
}

// run analyzes the tables once the waits allow, and again while enough
// rows were written meanwhile.
func (a *analyzer) run() {
	defer a.done.Done()
	for {
		a.mu.Lock()
		wait := max(analyzeDelay, time.Until(a.last.Add(analyzeEvery)))
		a.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-a.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		a.mu.Lock()
		counted := a.rows
		a.mu.Unlock()
		analyzed, total, err := a.s.analyze(a.ctx)
		a.mu.Lock()
		a.last = time.Now()
		// On an error autovacuum analyzes the tables in time anyway: this
		// only hastens it. An analysis that ran counted the rows written
		// before it, even when reading the planner's count failed after it
		// (a busy server refusing a connection): they are not analyzed
		// again for the next small write.
		if analyzed {
			a.rows -= counted
		}
		if err == nil {
			a.threshold = analyzeBase + int64(analyzeScale*float64(total))
		}
		a.running = err == nil && a.rows > a.threshold && !a.stopped
		again := a.running
		a.mu.Unlock()
		if !again {
			return
		}
	}
}

// stop cancels a pending or running analysis and waits for it.
func (a *analyzer) stop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.cancel()
	a.done.Wait()
}

// analyze runs the dialect's Analyze statements (analyzed tells that they
// ran) and returns the rows the planner now counts in the analyzed tables.
func (s *Store) analyze(ctx context.Context) (analyzed bool, total int64, err error) {
	if _, err := s.w.ExecContext(ctx, s.d.Analyze.Statement); err != nil {
		return false, 0, err
	}
	err = s.w.QueryRowContext(ctx, s.d.Analyze.Rows).Scan(&total)
	return true, total, err
}
