package backup

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Reporter is told of each scheduled backup (the server's metrics).
type Reporter interface {
	Backup(ok bool, took time.Duration, end time.Time)
}

// Schedule takes backups of a data directory on a cron schedule into a
// directory of its own, one backup-YYYYMMDDTHHMMSSZ directory each, and
// keeps the newest Keep.
type Schedule struct {
	DataDir, Dir, Version string
	Keep                  int
	Log                   *slog.Logger
	Report                Reporter
	// Done, when set, is told of each backup taken (the audit log).
	Done func(ctx context.Context, to string, m Manifest) error
	when cron.Schedule
}

// NewSchedule parses spec: five cron fields ("0 3 * * *") or a descriptor
// (@daily, @every 6h), in UTC.
func NewSchedule(spec string, s Schedule) (*Schedule, error) {
	when, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("backup-cron %q: %v", spec, err)
	}
	s.when = when
	return &s, nil
}

// namePrefix starts the name of every scheduled backup.
const namePrefix = "backup-"

// Run takes the backups until ctx ends. A backup that fails is logged and
// reported; the next is taken on schedule.
func (s *Schedule) Run(ctx context.Context) {
	for {
		next := s.when.Next(time.Now().UTC())
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		s.Once(ctx)
	}
}

// Once takes one backup now, then removes the oldest beyond Keep.
func (s *Schedule) Once(ctx context.Context) {
	start := time.Now().UTC()
	to := filepath.Join(s.Dir, namePrefix+start.Format("20060102T150405Z"))
	s.Log.Info("backup started", "to", to)
	err := os.MkdirAll(s.Dir, 0o700)
	var m Manifest
	if err == nil {
		m, err = Create(ctx, s.DataDir, to, s.Version)
	}
	took := time.Since(start)
	if s.Report != nil {
		s.Report.Backup(err == nil, took, time.Now())
	}
	if err != nil {
		s.Log.Error("backup failed", "to", to, "error", err, "duration_ms", took.Milliseconds())
		return
	}
	s.Log.Info("backup done", "to", to, "files", len(m.Files), "bytes", m.Size(), "duration_ms", took.Milliseconds())
	if s.Done != nil {
		if err := s.Done(ctx, to, m); err != nil {
			s.Log.Error("recording the backup in the audit log", "to", to, "error", err)
		}
	}
	removed, err := prune(s.Dir, s.Keep)
	for _, r := range removed {
		s.Log.Info("backup removed", "path", r, "keep", s.Keep)
	}
	if err != nil {
		s.Log.Error("removing old backups", "dir", s.Dir, "error", err)
	}
}

// prune removes the oldest scheduled backups of dir beyond keep, and what
// an interrupted one left (its hidden partial directory), once an hour old.
func prune(dir string, keep int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names, removed []string
	for _, e := range ents {
		switch {
		case !e.IsDir():
		case strings.HasPrefix(e.Name(), namePrefix):
			names = append(names, e.Name())
		case strings.HasPrefix(e.Name(), "."+namePrefix) && strings.Contains(e.Name(), ".partial-"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				p := filepath.Join(dir, e.Name())
				if err := os.RemoveAll(p); err != nil {
					return removed, err
				}
				removed = append(removed, p)
			}
		}
	}
	sort.Strings(names) // their names are their times
	for len(names) > keep {
		p := filepath.Join(dir, names[0])
		if err := os.RemoveAll(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
		names = names[1:]
	}
	return removed, nil
}
