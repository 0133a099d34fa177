package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/migratedata"
)

// migrateData copies a stopped embedded install into PostgreSQL and a
// bucket (docs/deploy.md, "Moving an embedded install to scale-out").
func migrateData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate-data", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the embedded install's data directory (its server stopped)")
	toDB := fs.String("to-database", "", "the PostgreSQL database to copy into: postgres://…, empty or holding an unfinished run of this copy")
	toBlob := fs.String("to-blob", "", "the bucket to copy file contents into: s3://BUCKET/PREFIX?endpoint=… (credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
	batch := fs.Int("batch", 500, "rows per INSERT")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cli.Usagef("migrate-data: %v", err)
	}
	switch {
	case fs.NArg() > 0:
		return cli.Usagef("migrate-data: unexpected argument %q", fs.Arg(0))
	case *from == "":
		return cli.Usagef("migrate-data: --from is required (the data directory)")
	case *toDB == "":
		return cli.Usagef("migrate-data: --to-database is required (postgres://…)")
	case *toBlob == "":
		return cli.Usagef("migrate-data: --to-blob is required (s3://BUCKET/PREFIX?endpoint=…)")
	case !strings.HasPrefix(*toDB, "postgres://") && !strings.HasPrefix(*toDB, "postgresql://"):
		return cli.Usagef("migrate-data: --to-database must be a postgres:// URL")
	}
	target, err := config.S3Target(*toBlob)
	if err != nil {
		return fmt.Errorf("migrate-data: --to-blob: %w", err)
	}
	if err := checkStopped(*from); err != nil {
		return fmt.Errorf("migrate-data: %w", err)
	}
	rep, err := migratedata.Run(ctx, migratedata.Options{DataDir: *from, DatabaseURL: *toDB, Blob: target, BatchSize: *batch, Log: stdout})
	for _, k := range rep.Missing {
		fmt.Fprintf(stderr, "warning: file content %s is named by the database but missing from %s (it answered 404 before the move too)\n", k, *from)
	}
	if err != nil {
		return fmt.Errorf("migrate-data: %w", err)
	}
	var rows int64
	for _, t := range rep.Tables {
		rows += t.Target
	}
	fmt.Fprintf(stdout, "checked: %d tables, %d rows, the same on both sides; %d file contents (%d bytes), each with the same size and SHA-256 in the bucket\n",
		len(rep.Tables), rows, rep.Blobs, rep.BlobBytes)
	fmt.Fprintf(stdout, "start the servers with: botplatform serve --database-url … --blob-url …\n")
	return nil
}

// checkStopped refuses a data directory a server is running on: a
// running server holds its node id's lock (see nodeID).
func checkStopped(dataDir string) error {
	if _, err := os.Stat(dataDir); err != nil {
		return err
	}
	paths, err := filepath.Glob(filepath.Join(dataDir, "nodes", "*.lock"))
	if err != nil {
		return err
	}
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		err = lockFile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("a server is running on %s (%s: %v): stop it first, and keep it stopped until the move is done; what it wrote after the copy would be lost", dataDir, p, err)
		}
	}
	return nil
}
