package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// KeepLease renews the lease of the claimed job id every third of lease
// until stop is called: a job runs as long as its node lives, however long
// it takes, and a node that dies has its jobs taken over within lease.
func KeepLease(ctx context.Context, st interface {
	ExtendLease(ctx context.Context, id string, until time.Time) error
}, clock platform.Clock, id string, lease time.Duration, log *slog.Logger) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := st.ExtendLease(ctx, id, clock.Now().Add(lease)); err != nil {
					log.Warn("extending a job's lease", "job", id, "err", err)
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
