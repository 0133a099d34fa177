package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// Sweep implements blob.Store: it aborts the multipart uploads of Puts
// that received nothing for olderThan (since they began or since their
// latest part), which only a crashed or stalled Put leaves. A bucket
// lifecycle rule (AbortIncompleteMultipartUpload) does the same, later.
func (s *Store) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.name(""), true) {
		if u.Err != nil {
			errs = append(errs, u.Err)
			break
		}
		if !u.Initiated.Before(cutoff) {
			continue
		}
		last, err := s.lastPart(ctx, u.Key, u.UploadID)
		if err != nil {
			if code := minio.ToErrorResponse(err).Code; code != "NoSuchUpload" { // finished meanwhile
				errs = append(errs, err)
			}
			continue
		}
		if !last.Before(cutoff) {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil {
			if code := minio.ToErrorResponse(err).Code; code != "NoSuchUpload" {
				errs = append(errs, err)
			}
			continue
		}
		removed++
	}
	if err := ctx.Err(); err != nil {
		return removed, fmt.Errorf("blob: sweep: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("blob: sweep: %w", err)
	}
	return removed, nil
}

// lastPart is when the latest part of an upload arrived (zero: none).
func (s *Store) lastPart(ctx context.Context, name, id string) (time.Time, error) {
	var last time.Time
	marker := 0
	for {
		res, err := s.core.ListObjectParts(ctx, s.bucket, name, id, marker, 1000)
		if err != nil {
			return last, err
		}
		for _, p := range res.ObjectParts {
			if p.LastModified.After(last) {
				last = p.LastModified
			}
		}
		if !res.IsTruncated || res.NextPartNumberMarker <= marker {
			return last, nil
		}
		marker = res.NextPartNumberMarker
	}
}

// idName is the object holding the store's id.
func (s *Store) idName() string { return s.prefix + "store-id" }

// ID implements blob.Store. The first id is written with If-None-Match: *,
// so that of concurrent first calls only one writes and all read its id.
func (s *Store) ID(ctx context.Context, id string) (string, error) {
	if cur, err := s.readID(ctx); err == nil || !notFound(err) {
		return cur, err
	}
	opts := minio.PutObjectOptions{ContentType: "text/plain"}
	opts.SetMatchETagExcept("*")
	err := s.writeID(ctx, id, opts)
	switch code := minio.ToErrorResponse(err).Code; {
	case err == nil:
		return id, nil
	case code == minio.PreconditionFailed || code == "ConditionalRequestConflict":
		return s.readID(ctx)
	}
	return "", err
}

// SetID implements blob.Store.
func (s *Store) SetID(ctx context.Context, id string) error {
	return s.writeID(ctx, id, minio.PutObjectOptions{ContentType: "text/plain"})
}

func (s *Store) writeID(ctx context.Context, id string, opts minio.PutObjectOptions) error {
	body := []byte(id + "\n")
	_, err := s.core.PutObject(ctx, s.bucket, s.idName(), bytes.NewReader(body), int64(len(body)), "", "", opts)
	return err
}

func (s *Store) readID(ctx context.Context) (string, error) {
	body, _, _, err := s.core.GetObject(ctx, s.bucket, s.idName(), minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 1<<10))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("%s is empty", s.idName())
	}
	return id, nil
}
