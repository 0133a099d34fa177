// Package migratedata moves an embedded install to scale-out: it copies a
// stopped server's data directory (the SQLite database and the file
// contents under blobs/) into a PostgreSQL database and an S3-compatible
// bucket, checks counts and checksums, and can be run again after an
// interruption to finish the copy.
package migratedata

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/botplatform/botplatform/internal/backup"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/blob/s3"
	"github.com/botplatform/botplatform/internal/store/postgres"
	"github.com/botplatform/botplatform/internal/store/sqlite"
)

// Options say what to copy where.
type Options struct {
	DataDir     string                         // the embedded install's data directory; its server is stopped
	DatabaseURL string                         // the target PostgreSQL database
	Blob        blob.S3Config                  // the target bucket (and prefix)
	BatchSize   int                            // rows per INSERT; 0 means 500
	Log         io.Writer                      // progress lines; nil for none
	Progress    func(table string, rows int64) // called after each committed batch, when set
}

// Report is what a run copied and checked.
type Report struct {
	Tables      []TableCount
	Blobs       int   // contents in the bucket, checked
	BlobBytes   int64 // their bytes
	BlobsCopied int   // of them, copied by this run (the others were there from an earlier run)
	Missing     []string
}

// TableCount is one table's rows on each side after the copy.
type TableCount struct {
	Name           string
	Source, Target int64
}

// storageSecret is the secret under which a database records its file
// storage's identity (see blob.Attach).
const storageSecret = "file-storage"

// Run copies, then checks the copy; any difference is an error (the
// report then says which).
func Run(ctx context.Context, o Options) (Report, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	dbPath := filepath.Join(o.DataDir, "botplatform.db")
	if _, err := os.Stat(dbPath); err != nil {
		return Report{}, fmt.Errorf("no SQLite database in %s: %w", o.DataDir, err)
	}
	bucket, err := s3.New(ctx, o.Blob, nil)
	if err != nil {
		return Report{}, fmt.Errorf("to-blob: %w", err)
	}
	dst, err := postgres.Open(ctx, o.DatabaseURL, 0) // applies the migrations
	if err != nil {
		return Report{}, fmt.Errorf("to-database: %w", err)
	}
	defer dst.Close()

	// A snapshot: the data directory is only read, and a database an
	// older version wrote is brought to this version's schema.
	tmp, err := os.MkdirTemp(o.DataDir, ".migrate-data-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, "botplatform.db")
	keys, err := backup.Snapshot(ctx, dbPath, snap)
	if err != nil {
		return Report{}, err
	}
	src, err := sqlite.Open(ctx, snap)
	if err != nil {
		return Report{}, fmt.Errorf("snapshot of %s: %w", dbPath, err)
	}
	defer src.Close()

	c := &copier{o: o, src: src.Pools()["write"], dst: dst.Pools()["main"], srcStore: src, dstStore: dst}
	if err := c.sameSchema(ctx); err != nil {
		return Report{}, err
	}
	identity, err := c.identity(ctx)
	if err != nil {
		return Report{}, err
	}
	if err := c.plan(ctx); err != nil {
		return Report{}, err
	}
	if err := c.checkTarget(ctx, identity); err != nil {
		return Report{}, err
	}
	storeID, err := storageID(identity)
	if err != nil {
		return Report{}, err
	}
	if got, err := bucket.ID(ctx, storeID); err != nil {
		return Report{}, fmt.Errorf("to-blob: %w", err)
	} else if got != storeID {
		return Report{}, fmt.Errorf("to-blob: %s already holds the files of another installation (storage id %s, this one's is %s): use an empty prefix", bucket, got, storeID)
	}

	local, err := blob.NewFS(filepath.Join(o.DataDir, "blobs"))
	if err != nil {
		return Report{}, err
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var rep Report
	sums, err := copyBlobs(ctx, local, bucket, keys, &rep, o.Log)
	if err != nil {
		return rep, err
	}
	if err := c.copyTables(ctx); err != nil {
		return rep, err
	}
	return rep, c.verify(ctx, bucket, sums, &rep)
}

// sameSchema refuses a source and a target at different migrations: the
// columns would not match (the source was migrated by opening it, so only a
// database newer than this binary differs).
func (c *copier) sameSchema(ctx context.Context) error {
	const versions = `SELECT version FROM schema_migrations ORDER BY version`
	a, err := list[int64](ctx, c.src, versions)
	if err != nil {
		return err
	}
	b, err := list[int64](ctx, c.dst, versions)
	if err != nil {
		return err
	}
	if !slices.Equal(a, b) {
		return fmt.Errorf("the data directory's database has migrations %v, the target database %v: use the botplatform version that last ran on the data directory", a, b)
	}
	return nil
}

// identity is the source's record of its file storage: copied with the
// secrets, it also marks a target that holds an earlier run of this copy.
func (c *copier) identity(ctx context.Context) ([]byte, error) {
	var v []byte
	err := c.src.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, storageSecret).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("the database in %s has no file storage id: start serve on it once, stop it, then migrate", c.o.DataDir)
	}
	return v, err
}

// checkTarget accepts an empty target, or one holding an earlier run of
// this copy (the same file storage record); anything else would mix two
// installations.
func (c *copier) checkTarget(ctx context.Context, identity []byte) error {
	var rows int64
	for _, t := range c.tables {
		if !t.exists {
			continue
		}
		n, err := count(ctx, c.dst, t.name)
		if err != nil {
			return err
		}
		rows += n
	}
	if rows == 0 {
		return nil
	}
	var v []byte
	err := c.dst.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = $1`, storageSecret).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if !bytes.Equal(v, identity) {
		return fmt.Errorf("to-database: the database holds other data (%d rows, not from an earlier run of this migration): migrate into an empty database or schema", rows)
	}
	fmt.Fprintf(c.o.Log, "the target holds an earlier run of this migration (interrupted, or complete): finishing it\n")
	return nil
}
