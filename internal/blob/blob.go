// Package blob stores file contents under opaque keys. The metadata (names,
// owners, references) lives in the database; a Store only keeps the bytes.
// FS keeps them on a local filesystem; package s3 in an S3-compatible bucket.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Store keeps file contents under opaque keys. A key is 1 to 200 characters,
// each an ASCII letter or digit, '-', '_' or '.'; "." and ".." are not keys.
// Every method returns ErrInvalidKey for anything else.
type Store interface {
	// Put streams r into a new blob stored under key, atomically: the content
	// becomes visible under key only once fully written and synced; a failed or
	// interrupted Put leaves nothing visible under key (an existing blob stays
	// as it was) and no temporary file behind. It stops with ErrTooLarge,
	// after reading at most max+1 bytes, when r yields more than max bytes
	// (max < 0 means no limit). It returns the byte count and the SHA-256 (hex)
	// of what was written. Putting an existing key replaces it atomically.
	Put(ctx context.Context, key string, r io.Reader, max int64) (Info, error)
	// Open returns the blob for reading with seeking (for http.ServeContent
	// and Range requests), or ErrNotFound. Should the blob be replaced or
	// deleted while the Reader is open, the Reader goes on reading the old
	// content whole (FS) or fails (S3); it never mixes two contents.
	Open(ctx context.Context, key string) (Reader, error)
	// Copy makes dst a copy of src, atomically like Put, or returns
	// ErrNotFound when src does not exist.
	Copy(ctx context.Context, src, dst string) error
	// Delete removes the blob; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Sweep removes temporary files older than olderThan left by crashed Puts
	// (call it at start-up and periodically) and returns how many it removed.
	// olderThan must exceed the longest time a Put may go without receiving
	// data, or Sweep may fail such a Put (it then returns an error and leaves
	// nothing visible).
	Sweep(ctx context.Context, olderThan time.Duration) (int, error)
	// Walk calls fn with the key and modification time of every stored
	// blob, in no particular order, stopping at fn's first error.
	Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error
	// ID returns the id kept in the store (see Attach), first storing id
	// when the store has none: of concurrent calls on one store, every one
	// returns the same id.
	ID(ctx context.Context, id string) (string, error)
	// SetID replaces the id kept in the store.
	SetID(ctx context.Context, id string) error
	// Check tells, cheaply, whether the store answers (for readiness
	// probes): nil, or why not.
	Check(ctx context.Context) error
}

// Presigner is a Store whose blobs a client may fetch straight from it.
type Presigner interface {
	// PresignGet returns a URL that answers a GET, until expiry has passed,
	// with key's blob (Range requests included) as contentType. It does
	// not check that the blob exists.
	PresignGet(ctx context.Context, key string, expiry time.Duration, contentType string) (string, error)
}

// Info describes a stored blob.
type Info struct {
	Size    int64
	SHA256  string // lowercase hex; "" when not known cheaply (see Reader)
	ModTime time.Time
}

// Reader is an open blob. Info().Size and Info().ModTime are always set;
// Info().SHA256 may be "" when it is not known without reading the content.
type Reader interface {
	io.ReadSeekCloser
	Info() Info
}

var (
	// ErrNotFound means no blob is stored under the key.
	ErrNotFound = errors.New("blob: not found")
	// ErrTooLarge means the content exceeded the maximum given to Put.
	ErrTooLarge = errors.New("blob: too large")
	// ErrInvalidKey means the key breaks the rules given on Store.
	ErrInvalidKey = errors.New("blob: invalid key")
)

// MaxKeyLen is the longest key a Store accepts.
const MaxKeyLen = 200

// ValidKey reports whether key is a valid blob key.
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > MaxKeyLen || key == "." || key == ".." {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// CheckKey returns an error wrapping ErrInvalidKey when key is not valid.
func CheckKey(key string) error {
	if ValidKey(key) {
		return nil
	}
	if len(key) > 40 {
		key = key[:40] + "..."
	}
	return fmt.Errorf("%w %q", ErrInvalidKey, key)
}
