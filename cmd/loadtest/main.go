// Command loadtest puts a bounded, mixed load on a botplatform server it
// starts on 127.0.0.1 (SQLite in a temporary data directory, or a fresh
// PostgreSQL schema): Admin listings, file upserts, uploads, downloads and
// searches, chat messages answered by a bot with state, message listings
// and event streams, at a set rate for a set time. It prints latency
// percentiles and errors per operation. With --soak it also samples the
// server's memory, goroutines, open files, CPU and database size, and
// prints the series and their drift after warm-up. See docs/reliability.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

func main() { harness.Main("loadtest", run) }

type options struct {
	bin      string
	database string
	rate     float64
	duration time.Duration
	workers  int
	users    int
	seed     uint64
	soak     bool
	every    time.Duration
	warmup   time.Duration
	maxErr   float64
	data     string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "", "botplatform binary (default: build ./cmd/botplatform of this module)")
	fs.StringVar(&o.database, "database", "sqlite", "sqlite, or a postgres:// URL (a fresh schema is created in it and dropped at the end)")
	fs.Float64Var(&o.rate, "rate", 40, "operations started per second, all kinds together")
	fs.DurationVar(&o.duration, "duration", time.Minute, "how long the load runs")
	fs.IntVar(&o.workers, "workers", 8, "operations in flight at most; a start that finds none free is counted as skipped")
	fs.IntVar(&o.users, "users", 16, "chat users, each with one conversation and an open event stream")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the random choices (0: random, printed)")
	fs.BoolVar(&o.soak, "soak", false, "sample the server's RSS, goroutines, open files, CPU and database size, and print their drift after warm-up")
	fs.DurationVar(&o.every, "sample-every", 10*time.Second, "soak: time between samples")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Minute, "soak: samples before this are warm-up; drift is measured from the first sample after it")
	fs.StringVar(&o.data, "data", "", "data directory, kept at the end (default: a temporary one, removed)")
	fs.Float64Var(&o.maxErr, "max-errors", 0.001, "share of failed operations above which the command fails")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.rate <= 0 || o.duration <= 0 || o.workers < 1 || o.users < 1 || o.every <= 0 {
		return o, errors.New("rate, duration, workers, users and sample-every must be positive")
	}
	if o.seed == 0 {
		o.seed = rand.Uint64()>>12 + 1
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	bin, cleanup, err := harness.Binary(o.bin)
	if err != nil {
		return err
	}
	defer cleanup()
	o.bin = bin
	data := o.data
	if data == "" {
		if data, err = os.MkdirTemp("", "loadtest-data-"); err != nil {
			return err
		}
		defer os.RemoveAll(data)
	}
	serveArgs := []string{"--addr", "127.0.0.1:0", "--data", data, "--log-level", "warn", "--debug-addr", "127.0.0.1:0"}
	dbURL := ""
	if o.database != "sqlite" {
		u, drop, err := storetest.NewSchema(o.database, "loadtest")
		if err != nil {
			return err
		}
		defer drop()
		dbURL = u
		serveArgs = append(serveArgs, "--database-url", u)
	}
	srv, err := harness.Start(ctx, o.bin, serveArgs, []string{"BOTPLATFORM_DATABASE_URL=", "BOTPLATFORM_ADMIN_TOKEN="}, 2*time.Minute)
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Stop(30 * time.Second); err != nil {
			fmt.Fprintln(stdout, "loadtest: the server did not stop cleanly:", err)
		}
	}()
	db := "sqlite"
	if dbURL != "" {
		db = "postgres"
	}
	fmt.Fprintf(stdout, "loadtest: seed %d, %s at %.0f op/s for %s, %d in flight at most, %s, server pid %d\n",
		o.seed, db, o.rate, o.duration, o.workers, o.bin, srv.PID())
	l, err := newLoad(ctx, o, srv, data)
	if err != nil {
		return err
	}
	var sampler *soak
	if o.soak {
		sampler = newSoak(srv, data, dbURL, stdout)
		go sampler.run(ctx, o.every)
	}
	l.run(ctx)
	if sampler != nil {
		sampler.stop()
	}
	failed := l.report(stdout)
	if sampler != nil {
		sampler.report(stdout, o.warmup)
	}
	for _, level := range []string{"ERROR", "WARN"} {
		if lines := srv.LogLines(level); len(lines) > 0 {
			fmt.Fprintf(stdout, "server log lines at level %s: %d\n", level, len(lines))
			for _, l := range lines[:min(len(lines), 10)] {
				fmt.Fprintln(stdout, "  "+harness.Tail(l, 500))
			}
		}
	}
	if failed > o.maxErr {
		return fmt.Errorf("%.3f%% of the operations failed (limit %.3f%%)", failed*100, o.maxErr*100)
	}
	return nil
}
