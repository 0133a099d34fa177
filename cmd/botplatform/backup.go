package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/backup"
)

// backupFlags parses the flags of backup and restore: the data directory
// (--data, BOTPLATFORM_DATA) and the directory named by dirFlag.
func backupFlags(name, dirFlag, dirUsage string, args []string, stderr io.Writer) (data, dir string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&data, "data", cmp.Or(os.Getenv("BOTPLATFORM_DATA"), "./data"), "the server's data directory")
	fs.StringVar(&dir, dirFlag, "", dirUsage)
	dbURL := fs.String("database-url", os.Getenv("BOTPLATFORM_DATABASE_URL"), "the server's database, when not SQLite")
	blobURL := new(string)
	if name == "backup" {
		blobURL = fs.String("blob-url", os.Getenv("BOTPLATFORM_BLOB_URL"), "the server's file storage, when not the data directory")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", "", err
		}
		return "", "", cli.Usagef("%s: %v", name, err)
	}
	switch {
	case fs.NArg() > 0:
		return "", "", cli.Usagef("%s: unexpected argument %q", name, fs.Arg(0))
	case dir == "":
		return "", "", cli.Usagef("%s: --%s is required", name, dirFlag)
	case *dbURL != "":
		return "", "", fmt.Errorf("%s: the server's database is PostgreSQL: back it up with pg_dump, and its file contents with a copy of %s/blobs (docs/data.md)", name, data)
	case *blobURL != "":
		// A backup copies file contents from the data directory; with a
		// bucket it would hold a database without them.
		return "", "", fmt.Errorf("%s: the server's file contents are in a bucket (--blob-url), not in %s: back up the bucket with the object store's tools and the database as docs/deploy.md#backups says", name, data)
	}
	return data, dir, nil
}

// backupData writes a backup of a data directory, its server running or not.
func backupData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	data, to, err := backupFlags("backup", "to", "the directory to write the backup to (it must not exist)", args, stderr)
	if err != nil {
		return err
	}
	m, err := backup.Create(ctx, data, to, version)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	var size int64
	for _, e := range m.Files {
		size += e.Size
	}
	fmt.Fprintf(stdout, "backed up %s to %s: %d files, %d bytes, listed with their SHA-256 in %s\n", data, to, len(m.Files), size, backup.ManifestName)
	return nil
}

// restoreData checks a backup whole, then makes a new data directory of it.
func restoreData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	data, from, err := backupFlags("restore", "from", "the backup's directory", args, stderr)
	if err != nil {
		return err
	}
	m, err := backup.Restore(ctx, from, data)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored the backup of %s (%d files, checked) into %s; start the server with --data %s\n",
		m.CreatedAt.Format("2006-01-02 15:04:05 UTC"), len(m.Files), data, data)
	return nil
}
