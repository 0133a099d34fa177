package migratedata

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/botplatform/botplatform/internal/blob"
)

// sum is a content's size and SHA-256.
type sum struct {
	size int64
	sha  string
}

// copyBlobs copies the contents the database's files name from the data
// directory into the bucket, skipping those an earlier run copied (same
// size and SHA-256, read back), and returns each content's sum as read
// from the data directory. A content the data directory lacks is reported,
// not copied: the file answered 404 before the move too.
func copyBlobs(ctx context.Context, from blob.Store, to blob.Store, keys []string, rep *Report, log io.Writer) (map[string]sum, error) {
	sums := map[string]sum{}
	for _, k := range keys {
		s, copied, err := copyBlob(ctx, from, to, k)
		if errors.Is(err, blob.ErrNotFound) {
			rep.Missing = append(rep.Missing, k)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("file content %s: %w", k, err)
		}
		sums[k] = s
		if copied {
			rep.BlobsCopied++
		}
	}
	fmt.Fprintf(log, "file contents: %d copied, %d there from an earlier run, %d missing from the data directory\n",
		rep.BlobsCopied, len(sums)-rep.BlobsCopied, len(rep.Missing))
	return sums, nil
}

func copyBlob(ctx context.Context, from, to blob.Store, key string) (sum, bool, error) {
	r, err := from.Open(ctx, key)
	if err != nil {
		return sum{}, false, err
	}
	defer r.Close()
	if there, err := readSum(ctx, to, key); err == nil && there.size == r.Info().Size {
		mine, err := hashAll(r)
		if err != nil {
			return sum{}, false, err
		}
		if mine == there {
			return mine, false, nil
		}
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return sum{}, false, err
		}
	} else if err != nil && !errors.Is(err, blob.ErrNotFound) {
		return sum{}, false, err
	}
	info, err := to.Put(ctx, key, r, -1)
	if err != nil {
		return sum{}, false, err
	}
	return sum{size: info.Size, sha: info.SHA256}, true, nil
}

// readSum reads a stored content whole and returns its size and SHA-256.
func readSum(ctx context.Context, s blob.Store, key string) (sum, error) {
	r, err := s.Open(ctx, key)
	if err != nil {
		return sum{}, err
	}
	defer r.Close()
	return hashAll(blob.ContextReader(ctx, r))
}

func hashAll(r io.Reader) (sum, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return sum{size: n, sha: hex.EncodeToString(h.Sum(nil))}, err
}

// verify compares the row counts of every table, and each content as read
// back from the bucket with the data directory's.
func (c *copier) verify(ctx context.Context, bucket blob.Store, sums map[string]sum, rep *Report) error {
	var bad []string
	for _, t := range c.tables {
		a, err := count(ctx, c.src, t.name)
		if err != nil {
			return err
		}
		b, err := count(ctx, c.dst, t.name)
		if err != nil {
			return err
		}
		rep.Tables = append(rep.Tables, TableCount{Name: t.name, Source: a, Target: b})
		if a != b {
			bad = append(bad, fmt.Sprintf("table %s: %d rows in the data directory, %d in the target", t.name, a, b))
		}
	}
	for k, want := range sums {
		got, err := readSum(ctx, bucket, k)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			bad = append(bad, fmt.Sprintf("file content %s: not in the bucket", k))
		case err != nil:
			return fmt.Errorf("reading back %s: %w", k, err)
		case got != want:
			bad = append(bad, fmt.Sprintf("file content %s: %d bytes, SHA-256 %s in the bucket; %d bytes, %s in the data directory", k, got.size, got.sha, want.size, want.sha))
		default:
			rep.Blobs++
			rep.BlobBytes += got.size
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the copy differs from the data directory:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}
