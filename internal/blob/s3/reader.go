package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/botplatform/botplatform/internal/blob"
)

// Open implements blob.Store. It asks for the blob's size and version
// (ETag); the content is fetched on the first Read, and again from the
// new offset after a Seek, always for that version.
func (s *Store) Open(ctx context.Context, key string) (blob.Reader, error) {
	if err := blob.CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	st, err := s.client.StatObject(ctx, s.bucket, s.name(key), minio.StatObjectOptions{})
	if notFound(err) {
		return nil, fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	return &reader{s: s, ctx: ctx, key: key, etag: st.ETag, info: blob.Info{Size: st.Size, ModTime: st.LastModified}}, nil
}

// errChanged is a Reader's error once its blob was replaced or deleted.
var errChanged = errors.New("the blob was replaced or deleted while it was read")

// reader is an open blob: a position, and the response it reads from
// while reading on from where that response is.
type reader struct {
	s    *Store
	ctx  context.Context
	key  string
	etag string
	info blob.Info

	off     int64         // the position Read reads from
	body    io.ReadCloser // nil: none open
	bodyOff int64         // where body is
}

func (r *reader) Info() blob.Info { return r.info }

func (r *reader) Read(p []byte) (int, error) {
	if r.off >= r.info.Size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.body == nil || r.bodyOff != r.off {
		if err := r.fetch(); err != nil {
			return 0, err
		}
	}
	if rest := r.info.Size - r.off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	r.bodyOff = r.off
	if err == io.EOF {
		r.closeBody()
		if r.off < r.info.Size {
			err = io.ErrUnexpectedEOF
		} else {
			err = nil
		}
	}
	if err != nil {
		r.closeBody()
		return n, fmt.Errorf("blob: read %q: %w", r.key, err)
	}
	return n, nil
}

// fetch opens the blob's version from r.off to its end.
func (r *reader) fetch() error {
	r.closeBody()
	opts := minio.GetObjectOptions{}
	if err := opts.SetMatchETag(r.etag); err != nil {
		return err
	}
	if r.off > 0 {
		if err := opts.SetRange(r.off, 0); err != nil {
			return err
		}
	}
	body, got, _, err := r.s.core.GetObject(r.ctx, r.s.bucket, r.s.name(r.key), opts)
	if err != nil {
		if code := minio.ToErrorResponse(err).Code; code == minio.PreconditionFailed || notFound(err) {
			err = errChanged
		}
		return fmt.Errorf("blob: read %q: %w", r.key, err)
	}
	// A gateway may test If-Match against one version and send another
	// (the Versity posix backend checks the ETag at the path, then opens
	// the path again): the response must be the rest of the version that
	// was opened, no more and no less.
	if rest := r.info.Size - r.off; got.Size != rest || (got.ETag != "" && got.ETag != r.etag) {
		body.Close()
		return fmt.Errorf("blob: read %q: %w", r.key, errChanged)
	}
	r.body, r.bodyOff = body, r.off
	return nil
}

func (r *reader) closeBody() {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
}

func (r *reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.info.Size
	default:
		return 0, errors.New("blob: seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("blob: seek: negative position")
	}
	r.off = offset
	return offset, nil
}

func (r *reader) Close() error {
	r.closeBody()
	return nil
}

var _ blob.Presigner = (*Store)(nil)

// PresignGet implements blob.Presigner: a presigned GET of key's object,
// which the bucket answers with contentType and no caching beyond the
// client's.
func (s *Store) PresignGet(ctx context.Context, key string, expiry time.Duration, contentType string) (string, error) {
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	q := url.Values{"response-cache-control": {"private, max-age=0"}}
	if contentType != "" {
		q.Set("response-content-type", contentType)
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, s.name(key), expiry, q)
	if err != nil {
		return "", fmt.Errorf("blob: presign %q: %w", key, err)
	}
	return u.String(), nil
}
