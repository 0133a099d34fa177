package sqlstore

import (
	"database/sql"
	"sync"
)

// queuedJobs tells this process's workers that jobs were queued: insertJob
// notes the kind in its transaction, and once that transaction commits
// every channel handed out for the kind is closed.
type queuedJobs struct {
	mu      sync.Mutex
	pending map[*sql.Tx][]string     // kinds queued by open transactions
	waiting map[string]chan struct{} // by kind: closed at the next commit that queues one
}

func (q *queuedJobs) note(tx *sql.Tx, kind string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending = map[*sql.Tx][]string{}
	}
	q.pending[tx] = append(q.pending[tx], kind)
}

// ended is called once tx has committed (committed) or rolled back.
func (q *queuedJobs) ended(tx *sql.Tx, committed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kinds, ok := q.pending[tx]
	if !ok {
		return
	}
	delete(q.pending, tx)
	if !committed {
		return
	}
	for _, k := range kinds {
		if c := q.waiting[k]; c != nil {
			close(c)
			delete(q.waiting, k)
		}
	}
}

func (q *queuedJobs) wait(kind string) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting == nil {
		q.waiting = map[string]chan struct{}{}
	}
	c := q.waiting[kind]
	if c == nil {
		c = make(chan struct{})
		q.waiting[kind] = c
	}
	return c
}

// Queued returns a channel closed once a transaction of this store that
// queues a job of kind commits after the call. A worker takes it before it
// claims, so that a job queued after the claim looked wakes it.
func (s *Store) Queued(kind string) <-chan struct{} { return s.queued.wait(kind) }
