package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// Group commit for SQLite. SQLite has one writer; each transaction pays for
// BEGIN, COMMIT and the write-ahead-log append, which dominate small writes.
// Concurrent write transactions are therefore queued and run together in
// one database transaction, each inside its own savepoint: a failing one is
// rolled back alone, the others commit together, and every caller learns
// its own result only once the commit is done. The outcome is the same as
// running them one after the other. A write that finds no other running or
// queued runs at once in its caller's goroutine: one writer at a time pays
// no handing over to the batching goroutine and back.

// maxBatch bounds the work one commit waits for.
const maxBatch = 64

type batchReq struct {
	ctx  context.Context
	f    func(tx *sql.Tx) error
	done chan error
}

type batcher struct {
	s       *Store
	reqs    chan *batchReq
	writing sync.Mutex   // held while a write runs: a lone caller's, or a batch
	queued  atomic.Int32 // callers handing their write to the loop
	wg      sync.WaitGroup
	once    sync.Once
	stop    chan struct{}
}

// EnableGroupCommit makes write transactions share commits. Use it where
// writes are serialised anyway (SQLite's single writer connection).
func (s *Store) EnableGroupCommit() {
	b := &batcher{s: s, reqs: make(chan *batchReq), stop: make(chan struct{})}
	b.wg.Add(1)
	go b.loop()
	s.batch = b
}

func (b *batcher) do(ctx context.Context, f func(tx *sql.Tx) error) error {
	if b.queued.Load() == 0 && b.writing.TryLock() {
		defer b.writing.Unlock()
		select {
		case <-b.stop:
			return sql.ErrConnDone
		default:
		}
		return b.s.runTx(ctx, f)
	}
	r := &batchReq{ctx: ctx, f: f, done: make(chan error, 1)}
	b.queued.Add(1)
	select {
	case b.reqs <- r:
	case <-ctx.Done():
		b.queued.Add(-1)
		return ctx.Err()
	case <-b.stop:
		b.queued.Add(-1)
		return sql.ErrConnDone
	}
	return <-r.done // once queued, it runs: wait for its outcome
}

func (b *batcher) close() {
	b.once.Do(func() { close(b.stop) })
	b.wg.Wait()
}

func (b *batcher) loop() {
	defer b.wg.Done()
	for {
		var first *batchReq
		select {
		case first = <-b.reqs:
		case <-b.stop:
			return
		}
		b.queued.Add(-1)
		b.writing.Lock() // after the lone write running, if any
		batch := []*batchReq{first}
	fill:
		for len(batch) < maxBatch {
			select {
			case r := <-b.reqs:
				b.queued.Add(-1)
				batch = append(batch, r)
			default:
				break fill
			}
		}
		b.run(batch)
		b.writing.Unlock()
	}
}

func (b *batcher) run(batch []*batchReq) {
	if len(batch) == 1 {
		r := batch[0]
		r.done <- b.s.runTx(r.ctx, r.f)
		return
	}
	results := make([]error, len(batch))
	err := b.s.runTx(context.Background(), func(tx *sql.Tx) error {
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			if _, err := tx.Exec(`SAVEPOINT batch_item`); err != nil {
				return err
			}
			if results[i] = r.f(tx); results[i] != nil {
				if _, err := tx.Exec(`ROLLBACK TO batch_item`); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(`RELEASE batch_item`); err != nil {
				return err
			}
		}
		return nil
	})
	for i, r := range batch {
		if err != nil && results[i] == nil {
			results[i] = err
		}
		r.done <- results[i]
	}
}
