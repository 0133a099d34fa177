package files

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// PassageImage serves a passage image's signed url: its MIME type and
// bytes.
func (s *Service) PassageImage(ctx context.Context, r SignedRequest) (string, []byte, error) {
	f, err := s.verify(ctx, "content", r)
	if err != nil {
		return "", nil, err
	}
	typ, img, err := s.store.PassageImage(ctx, f.ID, r.Passage)
	if errors.Is(err, platform.ErrNotFound) {
		return "", nil, platform.NotFound("passage image", r.Passage)
	}
	return typ, img, err
}

// Upload stores the content of a file sent to its uploadUrl. The body is
// streamed to the blob store, counted and hashed. Content larger than
// declared, than the maximum file size, or than the workspace's remaining
// storage ends the upload in upload_failed with the reason (the error
// returned then says so too).
func (s *Service) Upload(ctx context.Context, r SignedRequest, tagging string, body io.Reader) (platform.File, error) {
	f, err := s.verify(ctx, "upload", r)
	if err != nil {
		return f, err
	}
	if r.Tagging != "" && tagging != r.Tagging {
		return f, platform.Errorf(platform.TypeForbidden, "this upload requires the header x-amz-tagging: %s (publicContentImmediatelyAccessible)", r.Tagging)
	}
	return s.receive(ctx, f, body)
}

// receive stores body as the content of f, a file whose upload URL was
// verified (or that the server itself writes), within its declared size and
// the workspace's quotas.
func (s *Service) receive(ctx context.Context, f platform.File, body io.Reader) (platform.File, error) {
	if f.Status != platform.FileUploadPending {
		return s.uploadAgain(ctx, f, body)
	}
	lim, err := s.limits(ctx, f.WorkspaceID)
	if err != nil {
		return f, err
	}
	// fail records the upload as failed and says why. When it had ended
	// already (another PUT to this URL, a client's retry or the original,
	// recorded its content since this one was checked), this PUT is
	// answered as a retry instead: 200 for the same bytes (sent, read
	// when the body was stored), else stale.
	fail := func(sent *blob.Info, t platform.ErrorType, format string, args ...any) (platform.File, error) {
		reason := fmt.Sprintf(format, args...)
		_, err := s.store.FailUpload(ctx, f.ID, f.Generation, reason, s.clock.Now())
		switch {
		case errors.Is(err, platform.ErrConflict) && sent != nil:
			return s.sameContent(ctx, f, *sent)
		case errors.Is(err, platform.ErrConflict):
			return s.uploadEnded(ctx, f, body)
		case err != nil:
			return f, err
		}
		return f, platform.Errorf(t, "upload failed: %s", reason)
	}
	if f.DeclaredSize > lim.MaxFile {
		return fail(nil, platform.TypePayloadTooLarge, "the file's size (%d bytes) exceeds the maximum file size of %d bytes", f.DeclaredSize, lim.MaxFile)
	}
	if free := lim.MaxStorage - lim.UsedStorage; f.DeclaredSize > free {
		return fail(nil, platform.TypeQuotaExceeded, "file storage quota exceeded: %d bytes used of %d, this file needs %d", lim.UsedStorage, lim.MaxStorage, f.DeclaredSize)
	}
	if free := lim.MaxVector - lim.UsedVector; f.Index && f.DeclaredSize > free {
		return fail(nil, platform.TypeQuotaExceeded, "vector storage quota exceeded: %d bytes used of %d, this file needs %d", lim.UsedVector, lim.MaxVector, f.DeclaredSize)
	}
	key := newBlobKey(f)
	info, err := s.blobs.Put(ctx, key, body, f.DeclaredSize)
	if errors.Is(err, blob.ErrTooLarge) {
		// More bytes than declared: not the content of any PUT that
		// could have been recorded.
		return fail(nil, platform.TypePayloadTooLarge, "the content is larger than the declared size of %d bytes", f.DeclaredSize)
	}
	if err != nil {
		// A cut connection or a storage failure: nothing was kept and the
		// file stays upload_pending, so the same URL can be used again.
		if ctx.Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) {
			return f, platform.Errorf(platform.TypeInvalidPayload, "the upload ended before the content did; nothing was stored, and the same URL can be used again")
		}
		return f, err
	}
	status := platform.FileUploadCompleted
	if f.Index {
		status = platform.FileIndexPending
	}
	done, err := s.store.CompleteUpload(ctx, store.Upload{
		FileID: f.ID, Generation: f.Generation, BlobKey: key, Size: info.Size, SHA256: info.SHA256, Status: status,
		MaxStorage: lim.MaxStorage, MaxVector: lim.MaxVector, Now: s.clock.Now(),
	})
	var qe *store.QuotaError
	switch {
	case errors.As(err, &qe):
		s.removeBlob(ctx, key)
		return fail(&info, platform.TypeQuotaExceeded, "%s", qe.Error())
	case errors.Is(err, platform.ErrConflict):
		// Another upload to this URL (a client's retry, or a concurrent
		// sender) was recorded first; this one's content goes, and the
		// answer is 200 when both sent the same bytes.
		s.removeBlob(ctx, key)
		return s.sameContent(ctx, f, info)
	case err != nil:
		s.removeBlob(ctx, key)
		return f, err
	}
	return done, nil
}

// newBlobKey names the content of one upload (or copy) to f's current
// generation: "<file id>.<generation>.<random>". Every uploader writes its
// own blob, so concurrent PUTs to one uploadUrl never overwrite or remove
// each other's content; the one recorded is the one served.
func newBlobKey(f platform.File) string {
	return f.ID + "." + strconv.FormatInt(f.Generation, 10) + "." + rand.Text()
}

// blobKeyOwner parses a content key: the file id and generation it was
// stored for (both the current and the older "<id>.<generation>" form).
func blobKeyOwner(key string) (id string, gen int64, ok bool) {
	id, rest, ok := strings.Cut(key, ".")
	if !ok {
		return "", 0, false
	}
	g, _, _ := strings.Cut(rest, ".")
	gen, err := strconv.ParseInt(g, 10, 64)
	return id, gen, err == nil
}

// uploadEnded answers a PUT whose upload ended while it was being checked
// (its body not read yet): as uploadAgain does, if f's generation is still
// the file's.
func (s *Service) uploadEnded(ctx context.Context, f platform.File, body io.Reader) (platform.File, error) {
	cur, err := s.reload(ctx, f)
	if err != nil {
		return f, err
	}
	if cur.Generation != f.Generation {
		return cur, errStaleUpload(cur, f.Generation)
	}
	return s.uploadAgain(ctx, cur, body)
}

// uploadAgain answers a PUT to the uploadUrl of a generation whose upload
// has already ended: a client's retry of the recorded content gets 200
// (uploads are idempotent), anything else is refused as stale. The body is
// hashed, not stored, and read no further than the recorded size allows.
func (s *Service) uploadAgain(ctx context.Context, f platform.File, body io.Reader) (platform.File, error) {
	if !uploaded(f) {
		return f, errStaleUpload(f, f.Generation)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(body, *f.Size+1))
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) {
			return f, platform.Errorf(platform.TypeInvalidPayload, "the upload ended before the content did")
		}
		return f, err
	}
	return s.sameContent(ctx, f, blob.Info{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// sameContent returns the file, reloaded, when its recorded content is the
// one described by got (same generation, size and SHA-256); else the
// upload is stale.
func (s *Service) sameContent(ctx context.Context, f platform.File, got blob.Info) (platform.File, error) {
	cur, err := s.reload(ctx, f)
	if err != nil {
		return f, err
	}
	if cur.Generation == f.Generation && uploaded(cur) && *cur.Size == got.Size && cur.SHA256 == got.SHA256 {
		return cur, nil
	}
	return cur, errStaleUpload(cur, f.Generation)
}

// reload reads an uploadUrl's file again; gone, the URL is stale.
func (s *Service) reload(ctx context.Context, f platform.File) (platform.File, error) {
	cur, err := s.store.GetFile(ctx, "", f.ID)
	if errors.Is(err, platform.ErrNotFound) {
		return cur, platform.Errorf(platform.TypeForbidden, "this URL is stale: the file was deleted")
	}
	return cur, err
}

// errStaleUpload says why an upload to generation gen of a file, now cur,
// was not recorded.
func errStaleUpload(cur platform.File, gen int64) error {
	switch {
	case cur.Generation != gen:
		return platform.Errorf(platform.TypeForbidden, "this URL is stale: the file was replaced")
	case uploaded(cur):
		return platform.Errorf(platform.TypeForbidden, "this URL is stale: other content was already uploaded to it (the file is %s); upsert the file again to upload new content", cur.Status)
	}
	return platform.Errorf(platform.TypeForbidden, "this URL is stale: the file is %s; upsert it again to upload new content", cur.Status)
}

// uploaded reports whether f has content to serve.
func uploaded(f platform.File) bool { return f.Size != nil && f.BlobKey != "" }

// Content opens the content behind a signed url.
func (s *Service) Content(ctx context.Context, r SignedRequest) (platform.File, blob.Reader, error) {
	f, err := s.contentFile(ctx, r)
	if err != nil {
		return f, nil, err
	}
	return s.open(ctx, f)
}

// PublicContent opens the content of a public_content file: once processing
// finished, or right after the upload with publicContentImmediatelyAccessible.
func (s *Service) PublicContent(ctx context.Context, id string) (platform.File, blob.Reader, error) {
	f, err := s.publicFile(ctx, id)
	if err != nil {
		return f, nil, err
	}
	return s.open(ctx, f)
}

// Redirects tells whether downloads go to the blob store's presigned URLs
// (ContentLocation, PublicContentLocation) rather than through Content.
func (s *Service) Redirects() bool { return s.cfg.RedirectDownloads }

// redirectTTL is how long a presigned URL the server redirects to lasts:
// a client follows the redirect at once, and the store checks the expiry
// only when the download starts.
const redirectTTL = 5 * time.Minute

// ContentLocation checks a signed url as Content does and returns, instead
// of the content, a presigned URL of the blob store that serves it.
func (s *Service) ContentLocation(ctx context.Context, r SignedRequest) (string, error) {
	f, err := s.contentFile(ctx, r)
	if err != nil {
		return "", err
	}
	return s.location(ctx, f)
}

// PublicContentLocation is ContentLocation for a public_content file.
func (s *Service) PublicContentLocation(ctx context.Context, id string) (string, error) {
	f, err := s.publicFile(ctx, id)
	if err != nil {
		return "", err
	}
	return s.location(ctx, f)
}

// contentFile is the file a signed content url designates.
func (s *Service) contentFile(ctx context.Context, r SignedRequest) (platform.File, error) {
	if r.Passage != "" {
		return platform.File{}, errBadURL // a passage image's url: PassageImage
	}
	return s.verify(ctx, "content", r)
}

// publicFile is a public_content file whose content may be downloaded.
func (s *Service) publicFile(ctx context.Context, id string) (platform.File, error) {
	f, err := s.store.GetFile(ctx, "", id)
	if err != nil || !f.Has(platform.PolicyPublicContent) {
		return f, platform.NotFound("file", id)
	}
	switch f.Status {
	case platform.FileUploadCompleted, platform.FileIndexCompleted, platform.FileIndexFailed:
	case platform.FileIndexPending:
		if !f.PublicNow {
			return f, platform.Errorf(platform.TypeResourceNotFound, "file %q is still being processed", id)
		}
	default:
		return f, platform.NotFound("file", id)
	}
	return f, nil
}

func (s *Service) open(ctx context.Context, f platform.File) (platform.File, blob.Reader, error) {
	if err := hasContent(f); err != nil {
		return f, nil, err
	}
	rd, err := s.blobs.Open(ctx, f.BlobKey)
	if errors.Is(err, blob.ErrNotFound) {
		return f, nil, platform.Errorf(platform.TypeResourceNotFound, "the content of file %q is gone", f.ID)
	}
	return f, rd, err
}

func (s *Service) location(ctx context.Context, f platform.File) (string, error) {
	if err := hasContent(f); err != nil {
		return "", err
	}
	p, ok := s.blobs.(blob.Presigner)
	if !ok || !s.cfg.RedirectDownloads {
		return "", errors.New("files: downloads are not redirected")
	}
	return p.PresignGet(ctx, f.BlobKey, redirectTTL, f.ContentType)
}

func hasContent(f platform.File) error {
	if !uploaded(f) {
		return platform.Errorf(platform.TypeResourceNotFound, "file %q has no content yet (status %s)", f.ID, f.Status)
	}
	return nil
}
