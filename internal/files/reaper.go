package files

import (
	"context"
	"strconv"
	"time"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ReapOnce deletes the files whose expiry has passed, with their content,
// and removes temporary upload files abandoned for more than an hour. It
// returns how many files it deleted.
func (s *Service) ReapOnce(ctx context.Context) (int, error) {
	n := 0
	for {
		expired, err := s.store.ExpiredFiles(ctx, s.clock.Now(), 100)
		if err != nil || len(expired) == 0 {
			if _, serr := s.blobs.Sweep(ctx, time.Hour); serr != nil && err == nil {
				err = serr
			}
			return n, err
		}
		progress := false
		for _, f := range expired {
			deleted, err := s.store.DeleteExpiredFile(ctx, f.ID, s.clock.Now())
			if err != nil {
				continue // deleted meanwhile, or its expiry was pushed back
			}
			s.removeBlob(ctx, deleted.BlobKey)
			n++
			progress = true
		}
		if !progress {
			return n, nil
		}
	}
}

// RunReaper calls ReapOnce every interval until ctx ends.
func (s *Service) RunReaper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := s.ReapOnce(ctx); err != nil {
			s.log.Warn("file reaper", "err", err)
		} else if n > 0 {
			s.log.Info("expired files deleted", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
