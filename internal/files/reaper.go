package files

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// orphanAge is how old stored content must be before the reaper removes
// it for lack of a file referring to it: older than any upload in flight.
const orphanAge = 2 * time.Hour

// ReapOnce deletes the files whose expiry has passed, with their content,
// removes temporary upload files abandoned for more than an hour, and, once
// an hour, content no file refers to (left by a crash between storing an
// upload and recording it). It returns how many files it deleted.
func (s *Service) ReapOnce(ctx context.Context) (int, error) {
	n := 0
	for {
		expired, err := s.store.ExpiredFiles(ctx, s.clock.Now(), 100)
		if err != nil || len(expired) == 0 {
			if _, serr := s.blobs.Sweep(ctx, time.Hour); serr != nil && err == nil {
				err = serr
			}
			if oerr := s.removeOrphans(ctx); oerr != nil && err == nil {
				err = oerr
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

// removeOrphans deletes stored content older than orphanAge that no file
// refers to, at most once an hour. Content keys name the file and the
// generation they were stored for (see newBlobKey). Content of a
// generation still waiting for its upload stays whatever its age: an
// upload (or copy, whose hard link keeps the source's old time) may be
// about to record it; it goes once the file is replaced or deleted.
func (s *Service) removeOrphans(ctx context.Context) error {
	now := s.clock.Now()
	s.orphanMu.Lock()
	due := now.Sub(s.lastOrphanSweep) >= time.Hour
	if due {
		s.lastOrphanSweep = now
	}
	s.orphanMu.Unlock()
	if !due {
		return nil
	}
	return s.blobs.Walk(ctx, func(key string, mod time.Time) error {
		if now.Sub(mod) < orphanAge {
			return nil
		}
		id, gen, ok := blobKeyOwner(key)
		if !ok {
			return nil
		}
		f, err := s.store.GetFile(ctx, "", id)
		if err != nil && !errors.Is(err, platform.ErrNotFound) {
			return err
		}
		if err == nil && (f.BlobKey == key || (f.Generation == gen && f.Status == platform.FileUploadPending)) {
			return nil
		}
		s.removeBlob(ctx, key)
		return nil
	})
}
