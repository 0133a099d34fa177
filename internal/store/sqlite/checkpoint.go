package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// The writer's commits append pages to the write-ahead log; a checkpoint
// copies them into the database file, with an fsync of each. SQLite runs
// it in the commit that takes the log past wal_autocheckpoint pages, so
// that one request in a few hundred waited for two fsyncs (the p99 of a
// chat round trip on a disk was twice that on tmpfs). Here a goroutine on
// a connection of its own checkpoints instead, PASSIVE (it never waits for
// the writer or the readers, nor they for it); the writer's own threshold
// is raised to walBound, a bound on the log should the checkpointer fall
// behind.

// walBound is the writer's wal_autocheckpoint, in pages (of 4 KiB).
const walBound = 16384

// Checkpoint intervals: checkpointEvery while the log grows, backing off
// to checkpointIdle while it does not.
const (
	checkpointEvery = 100 * time.Millisecond
	checkpointIdle  = time.Second
)

// checkpointer checkpoints the database at path until stopped.
type checkpointer struct {
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
}

func startCheckpointer(path string) (*checkpointer, error) {
	db, err := pool(path, false, 1)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, cancel: cancel, done: make(chan struct{})}
	go c.loop(ctx)
	return c, nil
}

func (c *checkpointer) loop(ctx context.Context) {
	defer close(c.done)
	wait := checkpointEvery
	var last [2]int64
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		// busy is 1 when another checkpoint ran; log is the pages in the
		// log, done those now in the database file.
		var busy, log, done int64
		if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
			// The writer's own checkpoints bound the log meanwhile.
			wait = checkpointIdle
			continue
		}
		if now := [2]int64{log, done}; now != last {
			last, wait = now, checkpointEvery
		} else {
			wait = min(2*wait, checkpointIdle)
		}
	}
}

func (c *checkpointer) close() error {
	c.cancel()
	<-c.done
	return c.db.Close()
}
