// Command crashtest checks that botplatform loses nothing it acknowledged
// when it is killed: it starts `botplatform serve` as a child process, runs
// a mixed load (file upserts and uploads, concurrent retried uploads,
// indexing, chat messages to a bot whose code keeps state), kills the
// process with SIGKILL at a random moment, starts it again on the same data
// and checks the invariants listed in docs/reliability.md. Each run prints
// its seed; the same seed replays the same choices.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

func main() { harness.Main("crashtest", run) }

// options are the command's flags.
type options struct {
	cycles    int
	seed      uint64
	database  string // "sqlite" or a postgres:// URL
	bin       string
	data      string
	settle    time.Duration
	minLoad   time.Duration
	maxLoad   time.Duration
	users     int
	fileLoad  int
	doublePut float64
	keepGoing bool
	verbose   bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("crashtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.cycles, "cycles", 5, "kill-and-restart cycles")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of every random choice (0: a random seed, printed)")
	fs.StringVar(&o.database, "database", "sqlite", "sqlite, or a postgres:// URL (a fresh schema is created in it and dropped at the end)")
	fs.StringVar(&o.bin, "bin", "", "botplatform binary (default: build ./cmd/botplatform of this module)")
	fs.StringVar(&o.data, "data", "", "data directory (default: a temporary one, removed unless a check fails)")
	fs.DurationVar(&o.settle, "settle", time.Minute, "after a restart, how long queued work (replies, indexing) may take to finish; must exceed the leases the server waits out")
	fs.DurationVar(&o.minLoad, "min-load", 300*time.Millisecond, "shortest load before a kill")
	fs.DurationVar(&o.maxLoad, "max-load", 2500*time.Millisecond, "longest load before a kill")
	fs.IntVar(&o.users, "users", 6, "chat users, each sending to its conversation one message at a time")
	fs.IntVar(&o.fileLoad, "file-workers", 3, "concurrent file writers, each on its own keys")
	fs.Float64Var(&o.doublePut, "double-put", 0.3, "share of uploads sent twice at once, as a client retrying after a timeout does")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "run every cycle even after a failed check")
	fs.BoolVar(&o.verbose, "v", false, "print each cycle's operations and the server's error lines")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.cycles < 1 || o.users < 1 || o.fileLoad < 1 || o.minLoad <= 0 || o.maxLoad < o.minLoad || o.doublePut < 0 || o.doublePut > 1 {
		return o, errors.New("cycles, users and file-workers must be at least 1, 0 < min-load <= max-load, and double-put between 0 and 1")
	}
	if o.seed == 0 {
		o.seed = rand.Uint64()>>12 + 1 // short enough to retype
	}
	return o, nil
}

// run is main without the process, for the test.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "crashtest: seed %d, %d cycles, database %s\n", o.seed, o.cycles, redact(o.database))
	bin, cleanup, err := harness.Binary(o.bin)
	if err != nil {
		return err
	}
	defer cleanup()
	o.bin = bin
	keepData := o.data != ""
	if o.data == "" {
		if o.data, err = os.MkdirTemp("", "crashtest-data-"); err != nil {
			return err
		}
	}
	dbURL := ""
	if o.database != "sqlite" {
		u, drop, err := storetest.NewSchema(o.database, "crashtest")
		if err != nil {
			return err
		}
		dbURL = u
		defer func() {
			if !keepData {
				drop()
			}
		}()
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	h := &crash{opt: o, out: stdout, dataDir: o.data, dbURL: dbURL, addr: "127.0.0.1:" + strconv.Itoa(port)}
	res := h.run(ctx)
	fmt.Fprintf(stdout, "crashtest: %d cycles, %d kills, %d requests checked, %d failures, %s (seed %d, database %s)\n",
		res.cycles, res.kills, res.checked, len(res.failures), res.elapsed.Round(100*time.Millisecond), o.seed, redact(o.database))
	if len(res.failures) == 0 {
		if !keepData {
			os.RemoveAll(o.data)
		}
		return nil
	}
	byInvariant := map[string]int{}
	for _, f := range res.failures {
		byInvariant[f[strings.Index(f, "[")+1:strings.Index(f, "]")]]++
	}
	fmt.Fprintf(stdout, "crashtest: failures by invariant: %v\n", byInvariant)
	fmt.Fprintf(stdout, "crashtest: data kept in %s; replay with --seed %d\n", o.data, o.seed)
	keepData = true
	return fmt.Errorf("%d invariant failures", len(res.failures))
}

// freePort picks a port for every start of the server, so that the URLs it
// handed out before a kill (webhook, upload and download URLs) stay valid.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// redact hides a database URL's password.
func redact(u string) string {
	if u == "sqlite" {
		return u
	}
	return "postgres"
}
