// Package s3 is a blob.Store in an S3-compatible bucket (AWS S3, MinIO, Versity, Ceph, …).
package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/botplatform/botplatform/internal/blob"
)

// Store keeps blobs in a bucket, under its prefix:
//
//	PREFIX/objects/<key>  the blobs
//	PREFIX/store-id       the store's id (see blob.Attach)
//
// A Put reads its content one part at a time (blob.S3Config.PartSize) and
// makes it visible only once the whole was read, counted within its
// maximum and hashed: content that fits in one part goes up in one PUT at
// the end; larger content goes up as a multipart upload, completed only
// then and aborted on any failure. A Put cut short by a crash leaves an
// incomplete multipart upload, invisible to readers, which Sweep aborts.
//
// A Reader reads the version of the blob it opened (every request it makes
// carries that version's ETag): should the blob be replaced or deleted
// under it, it fails rather than mix two contents.
type Store struct {
	client *minio.Client
	core   minio.Core
	bucket string
	prefix string
	part   int64
	bufs   sync.Pool
	where  string
}

var _ blob.Store = (*Store)(nil)

// DefaultPartSize is the part size of multipart uploads when the
// configuration sets none: each Put in progress holds one part in memory.
const DefaultPartSize = 8 << 20

// minPartSize is S3's smallest part but the last.
const minPartSize = 5 << 20

// maxParts is S3's largest number of parts in one upload, maxPartSize its
// largest part.
const (
	maxParts    = 10000
	maxPartSize = 5 << 30
)

// New connects to the bucket of c and checks that it exists and that the
// credentials may read it. wrap, when not nil, wraps the client's HTTP
// transport (to measure requests).
func New(ctx context.Context, c blob.S3Config, wrap func(http.RoundTripper) http.RoundTripper) (*Store, error) {
	if c.PartSize == 0 {
		c.PartSize = DefaultPartSize
	}
	if c.PartSize < minPartSize {
		return nil, fmt.Errorf("s3: part size %d is below S3's minimum of %d bytes", c.PartSize, minPartSize)
	}
	var transport http.RoundTripper
	if wrap != nil {
		base, err := minio.DefaultTransport(c.Secure)
		if err != nil {
			return nil, fmt.Errorf("s3: %w", err)
		}
		transport = wrap(base)
	}
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken),
		Secure:    c.Secure,
		Region:    c.Region,
		Transport: transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	s := &Store{client: client, core: minio.Core{Client: client}, bucket: c.Bucket, prefix: c.Prefix, part: c.PartSize, where: c.String()}
	s.bufs.New = func() any { b := make([]byte, s.part); return &b }
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3: bucket %q at %s: %w", c.Bucket, c.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3: bucket %q does not exist at %s: create it first", c.Bucket, c.Endpoint)
	}
	return s, nil
}

// Check implements blob.Store: the bucket answers, and exists.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err == nil && !ok {
		err = fmt.Errorf("bucket %q does not exist", s.bucket)
	}
	return err
}

// String is where the store is, as an s3:// URL without credentials.
func (s *Store) String() string { return s.where }

// name is the object that holds key's blob.
func (s *Store) name(key string) string { return s.prefix + "objects/" + key }

// notFound tells whether err is S3's answer for a missing object.
func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == minio.NoSuchKey || code == "NotFound"
}

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, max int64) (blob.Info, error) {
	if err := blob.CheckKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, fmt.Errorf("blob: put %q: %w", key, err)
	}
	info, err := s.put(ctx, s.name(key), r, max)
	if errors.Is(err, blob.ErrTooLarge) {
		return blob.Info{}, fmt.Errorf("%w: more than %d bytes for %q", blob.ErrTooLarge, max, key)
	}
	if err != nil {
		return blob.Info{}, fmt.Errorf("blob: put %q: %w", key, err)
	}
	return info, nil
}

// put streams r into the object name, as Put describes.
func (s *Store) put(ctx context.Context, name string, r io.Reader, max int64) (blob.Info, error) {
	src := blob.ContextReader(ctx, r)
	if max >= 0 && max < math.MaxInt64 {
		src = &io.LimitedReader{R: src, N: max + 1} // one byte more tells "too large" from "exactly max"
	}
	part := s.part
	if max > 0 && max < math.MaxInt64 && max/maxParts >= part {
		part = min(max/maxParts+1, maxPartSize) // content of size max fits in maxParts parts
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := *bp
	if int64(len(buf)) != part {
		buf = make([]byte, part)
	}
	h := sha256.New()
	var n int64
	var up *upload
	fail := func(err error) (blob.Info, error) {
		if up != nil {
			up.abort()
		}
		return blob.Info{}, err
	}
	for {
		m, err := fill(src, buf)
		h.Write(buf[:m])
		n += int64(m)
		if err != nil && err != io.EOF {
			return fail(err)
		}
		if max >= 0 && n > max {
			return fail(blob.ErrTooLarge)
		}
		if err == io.EOF { // the whole content was read, counted and hashed
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			sum := hex.EncodeToString(h.Sum(nil))
			var done minio.UploadInfo
			if up == nil {
				done, err = s.core.PutObject(ctx, s.bucket, name, bytes.NewReader(buf[:m]), int64(m), "", sum, signed)
			} else {
				done, err = up.complete(buf[:m])
			}
			if err != nil {
				return fail(err)
			}
			return s.committed(ctx, name, done.ETag, n, sum)
		}
		if up == nil {
			id, err := s.core.NewMultipartUpload(ctx, s.bucket, name, minio.PutObjectOptions{})
			if err != nil {
				return fail(err)
			}
			up = &upload{s: s, ctx: ctx, name: name, id: id}
		}
		if len(up.parts) == maxParts {
			return fail(fmt.Errorf("more than %d parts of %d bytes", maxParts, part))
		}
		if err := up.add(buf); err != nil {
			return fail(err)
		}
	}
}

// committed returns the Info of the version a Put just stored (its ETag):
// its modification time is the bucket's, or now when another Put has
// replaced it already.
func (s *Store) committed(ctx context.Context, name, etag string, n int64, sum string) (blob.Info, error) {
	opts := minio.StatObjectOptions{}
	if err := opts.SetMatchETag(etag); err != nil {
		return blob.Info{}, err
	}
	info := blob.Info{Size: n, SHA256: sum, ModTime: time.Now()}
	st, err := s.client.StatObject(ctx, s.bucket, name, opts)
	switch code := minio.ToErrorResponse(err).Code; {
	case err == nil:
		info.ModTime = st.LastModified
	case code != minio.PreconditionFailed && !notFound(err):
		return blob.Info{}, fmt.Errorf("checking the stored object: %w", err)
	}
	return info, nil
}

// signed sends content with its SHA-256 in the request's signature, which
// the bucket checks: the hash is computed once per part, where the
// client's default (over plain HTTP) signs every 64 KiB chunk apart.
var signed = minio.PutObjectOptions{DisableContentSha256: true}

// upload is a multipart upload in progress.
type upload struct {
	s     *Store
	ctx   context.Context
	name  string
	id    string
	parts []minio.CompletePart
}

// add uploads p as the next part, signed with its SHA-256.
func (u *upload) add(p []byte) error {
	n := len(u.parts) + 1
	sum := sha256.Sum256(p)
	got, err := u.s.core.PutObjectPart(u.ctx, u.s.bucket, u.name, u.id, n, bytes.NewReader(p), int64(len(p)),
		minio.PutObjectPartOptions{Sha256Hex: hex.EncodeToString(sum[:]), DisableContentSha256: true})
	if err != nil {
		return err
	}
	u.parts = append(u.parts, minio.CompletePart{PartNumber: n, ETag: got.ETag})
	return nil
}

// complete uploads last, unless empty, and makes the object visible.
func (u *upload) complete(last []byte) (minio.UploadInfo, error) {
	if len(last) > 0 {
		if err := u.add(last); err != nil {
			return minio.UploadInfo{}, err
		}
	}
	return u.s.core.CompleteMultipartUpload(u.ctx, u.s.bucket, u.name, u.id, u.parts, minio.PutObjectOptions{})
}

// abort drops the upload's parts, even when its context has ended; should
// that fail, Sweep aborts it later.
func (u *upload) abort() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), time.Minute)
	defer cancel()
	_ = u.s.core.AbortMultipartUpload(ctx, u.s.bucket, u.name, u.id)
}

// fill reads into buf until it is full (nil error) or r ends (io.EOF) or
// fails. Unlike io.ReadFull it passes r's own io.ErrUnexpectedEOF on: a
// cut connection must not read as the end of the content.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Copy implements blob.Store, by a copy inside the bucket: nothing goes
// through this process, and the copy appears whole or not at all.
func (s *Store) Copy(ctx context.Context, src, dst string) error {
	if err := blob.CheckKey(src); err != nil {
		return err
	}
	if err := blob.CheckKey(dst); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: copy %q to %q: %w", src, dst, err)
	}
	var err error
	if src == dst {
		_, err = s.client.StatObject(ctx, s.bucket, s.name(src), minio.StatObjectOptions{})
	} else {
		_, err = s.client.ComposeObject(ctx, minio.CopyDestOptions{Bucket: s.bucket, Object: s.name(dst)},
			minio.CopySrcOptions{Bucket: s.bucket, Object: s.name(src)})
	}
	if notFound(err) {
		return fmt.Errorf("%w: %q", blob.ErrNotFound, src)
	}
	if err != nil {
		return fmt.Errorf("blob: copy %q to %q: %w", src, dst, err)
	}
	return nil
}

// Delete implements blob.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.name(key), minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	return nil
}

// Walk implements blob.Store.
func (s *Store) Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn fails
	dir := s.name("")
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("blob: walk: %w", o.Err)
		}
		key := strings.TrimPrefix(o.Key, dir)
		if !blob.ValidKey(key) {
			continue // not a blob of this store
		}
		if err := fn(key, o.LastModified); err != nil {
			return err
		}
	}
	return ctx.Err()
}
