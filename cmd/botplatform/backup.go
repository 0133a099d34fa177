package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/backup"
	"github.com/botplatform/botplatform/internal/blob/s3"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
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
	data, to, err := backupFlags("backup", "to", "the directory to write the backup to (it must not exist), or s3://BUCKET/PREFIX?endpoint=… (an empty prefix; credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)", args, stderr)
	if err != nil {
		return err
	}
	var m backup.Manifest
	if strings.HasPrefix(to, "s3://") {
		m, err = backupToBucket(ctx, data, to)
	} else {
		m, err = backup.Create(ctx, data, to, version)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s: %d files, %d bytes, listed with their SHA-256 in %s\n", data, to, len(m.Files), m.Size(), backup.ManifestName)
	// The backup is whole whatever happens next: a failure to record it is
	// a warning.
	if err := recordBackupIn(ctx, data, "botplatform backup", to, m); err != nil {
		fmt.Fprintf(stderr, "warning: the backup was not recorded in the audit log: %v\n", err)
	}
	return nil
}

// recordBackupIn records a backup in the audit log of every workspace of
// the data directory's database.
func recordBackupIn(ctx context.Context, data, how, to string, m backup.Manifest) error {
	st, err := openStore(ctx, config.Config{DataDir: data})
	if err != nil {
		return err
	}
	defer st.Close()
	return recordBackup(ctx, audit.NewRecorder(st, platform.SystemClock{}), how, to, m)
}

// recordBackup records BACKUP_CREATED, by the server, in every workspace.
func recordBackup(ctx context.Context, r *audit.Recorder, how, to string, m backup.Manifest) error {
	return r.RecordEverywhere(ctx, audit.Record{Actor: audit.System, Action: audit.BackupCreated, ResourceName: filepath.Base(to),
		Value: fmt.Sprintf("%s to %s: %d files, %d bytes", how, to, len(m.Files), m.Size())})
}

// restoreData checks a backup whole, then makes a new data directory of it.
func restoreData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	data, from, err := backupFlags("restore", "from", "the backup's directory, or its s3://BUCKET/PREFIX?endpoint=… URL", args, stderr)
	if err != nil {
		return err
	}
	var m backup.Manifest
	if strings.HasPrefix(from, "s3://") {
		m, err = restoreFromBucket(ctx, from, data)
	} else {
		m, err = backup.Restore(ctx, from, data)
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored the backup of %s (%d files, checked) into %s; start the server with --data %s\n",
		m.CreatedAt.Format("2006-01-02 15:04:05 UTC"), len(m.Files), data, data)
	return nil
}

// besideData makes a temporary directory next to the data directory (on
// its file system, which holds a backup's worth), for a backup on its way
// to or from a bucket.
func besideData(data, pattern string) (string, error) {
	abs, err := filepath.Abs(data)
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(filepath.Dir(abs), pattern)
}

// backupToBucket writes a backup of data beside it, then copies it into
// the bucket at the s3:// URL to (whose prefix must be empty), the
// manifest last: a backup cut short has none, and restore refuses it.
func backupToBucket(ctx context.Context, data, to string) (backup.Manifest, error) {
	target, err := config.S3Target(to)
	if err != nil {
		return backup.Manifest{}, fmt.Errorf("--to: %w", err)
	}
	tmp, err := besideData(data, ".botplatform-backup-")
	if err != nil {
		return backup.Manifest{}, err
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, "backup")
	m, err := backup.Create(ctx, data, local, version)
	if err != nil {
		return m, err
	}
	return m, s3.UploadDir(ctx, target, local, backup.ManifestName)
}

// restoreFromBucket copies the backup at the s3:// URL from beside data,
// then restores it as one in a directory: checked whole before anything
// is written to data.
func restoreFromBucket(ctx context.Context, from, data string) (backup.Manifest, error) {
	source, err := config.S3Target(from)
	if err != nil {
		return backup.Manifest{}, fmt.Errorf("--from: %w", err)
	}
	tmp, err := besideData(data, ".botplatform-restore-")
	if err != nil {
		return backup.Manifest{}, err
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, "backup")
	if err := s3.DownloadDir(ctx, source, local); err != nil {
		return backup.Manifest{}, err
	}
	return backup.Restore(ctx, local, data)
}
