package s3

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/botplatform/botplatform/internal/blob"
)

// A directory in a bucket: the files of a local directory as objects
// under a prefix, named by their paths in it (backups to object storage).

// UploadDir copies every file under dir into the bucket of c, under its
// prefix, which must hold no object yet. The file named last (a path
// relative to dir) goes last: whoever finds it finds every other one.
func UploadDir(ctx context.Context, c blob.S3Config, dir, last string) error {
	s, err := New(ctx, c, nil)
	if err != nil {
		return err
	}
	lctx, stopListing := context.WithCancel(ctx) // the listing ends at its first object
	defer stopListing()
	for o := range s.client.ListObjects(lctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true, MaxKeys: 1}) {
		if o.Err != nil {
			return fmt.Errorf("s3: listing %s: %w", s.where, o.Err)
		}
		return fmt.Errorf("s3: %s already holds objects (%s): choose another prefix", s.where, o.Key)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil && filepath.ToSlash(rel) != last {
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(last))); err != nil {
		return err
	}
	for _, rel := range append(files, last) {
		// FPutObject streams the file, in parts above its part size.
		if _, err := s.client.FPutObject(ctx, s.bucket, s.prefix+rel, filepath.Join(dir, filepath.FromSlash(rel)),
			minio.PutObjectOptions{PartSize: uint64(s.part)}); err != nil {
			return fmt.Errorf("s3: uploading %s to %s: %w", rel, s.where, err)
		}
	}
	return nil
}

// DownloadDir copies every object under the prefix of c into dir (which
// must not exist), each to its path under the prefix.
func DownloadDir(ctx context.Context, c blob.S3Config, dir string) error {
	s, err := New(ctx, c, nil)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	n := 0
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("s3: listing %s: %w", s.where, o.Err)
		}
		rel := strings.TrimPrefix(o.Key, s.prefix)
		clean := path.Clean(rel)
		if rel == "" || clean != rel || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
			return fmt.Errorf("s3: %s holds an object named %q, which is no file of a backup", s.where, o.Key)
		}
		to := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if err := s.client.FGetObject(ctx, s.bucket, o.Key, to, minio.GetObjectOptions{}); err != nil {
			return fmt.Errorf("s3: downloading %s from %s: %w", rel, s.where, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("s3: " + s.where + " holds no object")
	}
	return nil
}
