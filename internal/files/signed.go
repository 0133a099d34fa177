package files

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/signing"
)

// Signed URLs authenticate themselves (the official client sends no
// credentials with them). They carry the file id, its content generation,
// an expiry, for uploads whether the x-amz-tagging header is required, for
// a passage's image the passage, and an HMAC-SHA256 over the URL's kind and
// all of these (signing.MAC: no value can move to another field and keep
// the signature valid).

// signatureVersion starts every signed message; URLs signed under an older
// scheme do not verify.
const signatureVersion = "botplatform signed url v2"

// SignedRequest is what a signed URL carries.
type SignedRequest struct {
	FileID, Gen, Expires, Tagging, Signature string
	Passage                                  string // a passage's image, not the content
}

// ParseSigned reads a signed URL: the file id from its path, the rest from
// its query.
func ParseSigned(fileID string, q url.Values) SignedRequest {
	return SignedRequest{FileID: fileID, Gen: q.Get("gen"), Expires: q.Get("expires"), Tagging: q.Get("tagging"),
		Signature: q.Get("signature"), Passage: q.Get("passage")}
}

// signature is the MAC of a URL of kind ("upload" or "content") with r's
// fields (r.Signature aside).
func (s *Service) signature(kind string, r SignedRequest) string {
	return signing.MAC(s.secret, signatureVersion, kind, r.FileID, r.Gen, r.Expires, r.Tagging, r.Passage)
}

// signed reports whether r carries the signature of its fields for kind.
func (s *Service) signed(kind string, r SignedRequest) bool {
	return signing.Valid(s.secret, r.Signature, signatureVersion, kind, r.FileID, r.Gen, r.Expires, r.Tagging, r.Passage)
}

// signedURL is f's URL of kind, valid for ttl; for a passage's image when
// passageID is set.
func (s *Service) signedURL(kind string, f platform.File, ttl time.Duration, passageID string) string {
	r := SignedRequest{FileID: f.ID, Gen: itoa(f.Generation), Expires: itoa(s.clock.Now().Add(ttl).Unix()), Passage: passageID}
	if kind == "upload" && f.PublicNow && f.Has(platform.PolicyPublicContent) {
		r.Tagging = "public=true"
	}
	q := url.Values{"gen": {r.Gen}, "expires": {r.Expires}, "signature": {s.signature(kind, r)}}
	if r.Tagging != "" {
		q.Set("tagging", r.Tagging)
	}
	if r.Passage != "" {
		q.Set("passage", r.Passage)
	}
	return s.cfg.PublicURL + "/v1/files/" + kind + "/" + f.ID + "?" + q.Encode()
}

// PassageImageURL is the signed, short-lived url of the image of one of
// f's passages (a page indexed as an image): the file's content url with
// the passage named, and signed with it.
func (s *Service) PassageImageURL(f platform.File, passageID string) string {
	return s.signedURL("content", f, s.cfg.DownloadURLTTL, passageID)
}

// UploadURL is where the file's current content generation is uploaded.
func (s *Service) UploadURL(f platform.File) string {
	return s.signedURL("upload", f, s.cfg.UploadURLTTL, "")
}

// BaseURL is the address upload and content URLs start with.
func (s *Service) BaseURL() string { return s.cfg.PublicURL }

// ContentURL is the file's url: permanent for public content, otherwise
// signed and short-lived.
func (s *Service) ContentURL(f platform.File) string {
	if f.Has(platform.PolicyPublicContent) {
		return s.cfg.PublicURL + "/v1/files/public/" + f.ID
	}
	return s.signedURL("content", f, s.cfg.DownloadURLTTL, "")
}

var errBadURL = platform.Errorf(platform.TypeForbidden, "this URL is invalid or has expired; get a new one from the Files API")

// verify checks a signed URL and returns the file it designates at the
// generation it was signed for.
func (s *Service) verify(ctx context.Context, kind string, r SignedRequest) (platform.File, error) {
	if !s.signed(kind, r) {
		return platform.File{}, errBadURL
	}
	exp, err := strconv.ParseInt(r.Expires, 10, 64)
	if err != nil || s.clock.Now().After(time.Unix(exp, 0)) {
		return platform.File{}, errBadURL
	}
	f, err := s.store.GetFile(ctx, "", r.FileID)
	if errors.Is(err, platform.ErrNotFound) && kind == "content" {
		// A genuine url of a deleted file: the content is gone, like the file.
		return f, platform.NotFound("file", r.FileID)
	}
	if errors.Is(err, platform.ErrNotFound) || (err == nil && itoa(f.Generation) != r.Gen) {
		return f, platform.Errorf(platform.TypeForbidden, "this URL is stale: the file was replaced or deleted")
	}
	return f, err
}
