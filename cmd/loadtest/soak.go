package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database size of a PostgreSQL schema

	"github.com/botplatform/botplatform/internal/harness"
)

// sample is one reading of the server's figures.
type sample struct {
	at         time.Duration // since the load began
	rss        int64
	goroutines int
	heap       int64
	fds        int
	cpu        float64 // cores used since the previous sample
	db         int64   // database bytes: SQLite files, or the PostgreSQL schema's relations
	blobs      int64   // file contents on disk
}

// soak samples the server every interval until stopped.
type soak struct {
	srv     *harness.Server
	dataDir string
	dbURL   string
	out     io.Writer
	http    *http.Client
	mu      sync.Mutex
	samples []sample
	done    chan struct{}
	stopped chan struct{}
}

func newSoak(srv *harness.Server, dataDir, dbURL string, out io.Writer) *soak {
	return &soak{srv: srv, dataDir: dataDir, dbURL: dbURL, out: out, http: &http.Client{Timeout: 10 * time.Second},
		done: make(chan struct{}), stopped: make(chan struct{})}
}

func (s *soak) run(ctx context.Context, every time.Duration) {
	defer close(s.stopped)
	var db *sql.DB
	if s.dbURL != "" {
		var err error
		if db, err = sql.Open("pgx", s.dbURL); err != nil {
			fmt.Fprintln(s.out, "soak: database:", err)
		} else {
			defer db.Close()
		}
	}
	fmt.Fprintf(s.out, "%8s %10s %10s %10s %6s %6s %10s %10s\n", "t", "rss", "heap", "goroutines", "fds", "cpu", "db", "blobs")
	began := time.Now()
	lastCPU, _ := harness.CPUTime(s.srv.PID())
	lastAt := began
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.done:
			return
		case <-ctx.Done():
			return
		}
		smp := sample{at: time.Since(began)}
		if p, err := harness.Proc(s.srv.PID()); err == nil {
			smp.rss, smp.fds = p.RSSBytes, p.OpenFiles
		}
		if cpu, err := harness.CPUTime(s.srv.PID()); err == nil {
			now := time.Now()
			smp.cpu = float64(cpu-lastCPU) / float64(now.Sub(lastAt))
			lastCPU, lastAt = cpu, now
		}
		smp.goroutines, smp.heap = s.runtime()
		smp.db = s.dbSize(ctx, db)
		smp.blobs, _ = harness.DirSize(filepath.Join(s.dataDir, "blobs"))
		s.mu.Lock()
		s.samples = append(s.samples, smp)
		s.mu.Unlock()
		fmt.Fprintf(s.out, "%8s %10s %10s %10d %6d %6.2f %10s %10s\n", smp.at.Round(time.Second), mb(smp.rss), mb(smp.heap),
			smp.goroutines, smp.fds, smp.cpu, mb(smp.db), mb(smp.blobs))
	}
}

func (s *soak) stop() {
	close(s.done)
	<-s.stopped
}

// runtime reads the goroutines and the heap from the debug listener.
func (s *soak) runtime() (int, int64) {
	if s.srv.DebugURL == "" {
		return 0, 0
	}
	resp, err := s.http.Get(s.srv.DebugURL + "/debug/runtime")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var fig struct {
		Goroutines     int   `json:"goroutines"`
		HeapAllocBytes int64 `json:"heapAllocBytes"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&fig)
	return fig.Goroutines, fig.HeapAllocBytes
}

func (s *soak) dbSize(ctx context.Context, db *sql.DB) int64 {
	if db != nil {
		var n int64
		_ = db.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
		return n
	}
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(filepath.Join(s.dataDir, "botplatform.db"+suffix)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// report prints each figure's first sample after warm-up, its last, the
// drift between them and the highest value.
func (s *soak) report(w io.Writer, warmup time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var after []sample
	for _, smp := range s.samples {
		if smp.at >= warmup {
			after = append(after, smp)
		}
	}
	if len(after) < 2 {
		fmt.Fprintf(w, "soak: fewer than two samples after the %s warm-up; no drift to report\n", warmup)
		return
	}
	first, last := after[0], after[len(after)-1]
	fmt.Fprintf(w, "\nsoak drift from %s (after %s warm-up) to %s:\n", first.at.Round(time.Second), warmup, last.at.Round(time.Second))
	for _, f := range []struct {
		name  string
		value func(sample) float64
		unit  func(float64) string
	}{
		{"rss", func(s sample) float64 { return float64(s.rss) }, mbf},
		{"heap", func(s sample) float64 { return float64(s.heap) }, mbf},
		{"goroutines", func(s sample) float64 { return float64(s.goroutines) }, plain},
		{"open files", func(s sample) float64 { return float64(s.fds) }, plain},
		{"database", func(s sample) float64 { return float64(s.db) }, mbf},
		{"blobs", func(s sample) float64 { return float64(s.blobs) }, mbf},
		{"cpu (cores)", func(s sample) float64 { return s.cpu }, func(v float64) string { return fmt.Sprintf("%.2f", v) }},
	} {
		a, b := f.value(first), f.value(last)
		peak := 0.0
		for _, smp := range after {
			peak = max(peak, f.value(smp))
		}
		change := "n/a"
		if a != 0 {
			change = fmt.Sprintf("%+.1f%%", (b-a)/a*100)
		}
		fmt.Fprintf(w, "  %-12s %10s -> %10s  (%s, max %s)\n", f.name, f.unit(a), f.unit(b), change, f.unit(peak))
	}
}

func mb(n int64) string      { return mbf(float64(n)) }
func mbf(n float64) string   { return fmt.Sprintf("%.1fMB", n/(1<<20)) }
func plain(n float64) string { return fmt.Sprintf("%.0f", n) }
