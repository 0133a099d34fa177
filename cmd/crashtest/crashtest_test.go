package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/harness"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestCrashConsistency runs five kill-and-restart cycles of the real
// server on each backend (PostgreSQL when BOTPLATFORM_TEST_DATABASE_URL is
// set). The server binary is BOTPLATFORM_BIN (make sets it), or built here.
// CRASHTEST_SEED replays a failed run.
func TestCrashConsistency(t *testing.T) {
	bin, cleanup, err := harness.Binary(os.Getenv("BOTPLATFORM_BIN"))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			db := backend
			if backend == "postgres" {
				if db = os.Getenv(storetest.PostgresEnv); db == "" {
					t.Skipf("set %s to run the PostgreSQL variant", storetest.PostgresEnv)
				}
			}
			args := []string{"--bin", bin, "--cycles", "5", "--database", db}
			if seed := os.Getenv("CRASHTEST_SEED"); seed != "" {
				args = append(args, "--seed", seed)
			}
			var out bytes.Buffer
			err := run(context.Background(), args, &out, &out)
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				t.Log(line)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
