package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FS is a Store on a local filesystem. Under its directory:
//
//	objects/<xx>/<key>  the blobs; xx is the first byte of SHA-256(key) in hex,
//	                    so no directory holds more than 1/256 of the blobs
//	tmp/                files being written, renamed into objects/ once synced
//	store-id            the store's id (see Attach)
//
// objects/ and tmp/ must be on one filesystem so that rename is atomic.
// Replacing a blob renames over it, so a reader that opened the old content
// keeps reading it whole. Copy hard-links when it can, so a copy shares the
// source's inode (and its ModTime) until either is replaced or deleted; blobs
// are never modified in place, so that is invisible to readers.
type FS struct {
	dir     string
	objects string
	tmp     string
	link    func(oldname, newname string) error // os.Link; tests make it fail
}

var _ Store = (*FS)(nil)

// copyBufSize is the buffer Put copies through; buffers are pooled so a Put
// allocates nothing in proportion to the size of the blob.
const copyBufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// NewFS opens (creating when missing, mode 0700) a filesystem Store in dir,
// with dir/objects, its 256 fan-out directories, and dir/tmp. It does not
// sweep: call Sweep at start-up.
func NewFS(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("blob: NewFS: empty directory")
	}
	dir = filepath.Clean(dir)
	s := &FS{dir: dir, objects: filepath.Join(dir, "objects"), tmp: filepath.Join(dir, "tmp"), link: os.Link}
	for _, d := range []string{s.objects, s.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("blob: NewFS: %w", err)
		}
	}
	// Creating every fan-out directory up front means Put never creates one,
	// so no Put can return before the directory holding its blob is durable.
	for i := range 256 {
		err := os.Mkdir(filepath.Join(s.objects, hex.EncodeToString([]byte{byte(i)})), 0o700)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("blob: NewFS: %w", err)
		}
	}
	for _, d := range []string{s.objects, dir} {
		if err := SyncDir(d); err != nil {
			return nil, fmt.Errorf("blob: NewFS: %w", err)
		}
	}
	return s, nil
}

// Check implements Store: the objects' directory is there.
func (s *FS) Check(ctx context.Context) error {
	st, err := os.Stat(s.objects)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", s.objects)
	}
	return err
}

// path returns the fan-out directory of key and the blob's path in it.
func (s *FS) path(key string) (dir, file string) {
	file = ObjectPath(s.dir, key)
	return filepath.Dir(file), file
}

// ObjectPath is where an FS in dir keeps the blob of key (for tools that
// read a data directory, such as backups).
func ObjectPath(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "objects", hex.EncodeToString(sum[:1]), key)
}

// IDFile is the file under an FS's directory that holds its id.
const IDFile = idFile

// Put implements Store.
func (s *FS) Put(ctx context.Context, key string, r io.Reader, max int64) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("blob: put %q: %w", key, err)
	}
	f, err := s.createTemp("put-")
	if err != nil {
		return Info{}, fmt.Errorf("blob: put %q: %w", key, err)
	}
	tmp := f.Name()
	info, st, err := writeSynced(ctx, f, r, max)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = s.commit(tmp, key, st)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, ErrTooLarge) {
			return Info{}, fmt.Errorf("%w: more than %d bytes for %q", ErrTooLarge, max, key)
		}
		return Info{}, fmt.Errorf("blob: put %q: %w", key, err)
	}
	return info, nil
}

// writeSynced copies r into f, syncs and closes f (also on failure).
func writeSynced(ctx context.Context, f *os.File, r io.Reader, max int64) (Info, os.FileInfo, error) {
	w := &hashWriter{w: f, h: sha256.New()}
	src := ContextReader(ctx, r)
	if max >= 0 && max < math.MaxInt64 {
		src = &io.LimitedReader{R: src, N: max + 1} // one byte more tells "too large" from "exactly max"
	}
	// Neither src nor w implements WriterTo/ReaderFrom, so CopyBuffer really
	// goes through buf, one chunk at a time.
	bp := bufPool.Get().(*[]byte)
	_, err := io.CopyBuffer(w, src, *bp)
	bufPool.Put(bp)
	if err == nil && max >= 0 && w.n > max {
		err = ErrTooLarge
	}
	if err == nil {
		err = f.Sync()
	}
	var st os.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, nil, err
	}
	return Info{Size: w.n, SHA256: hex.EncodeToString(w.h.Sum(nil)), ModTime: st.ModTime()}, st, nil
}

// commit renames the synced temporary file tmp (whose Stat is st) into place
// as key and makes the rename durable. Should that last step fail, it takes
// the blob back out (unless another Put has replaced it meanwhile), so that a
// failed Put leaves nothing visible.
func (s *FS) commit(tmp, key string, st os.FileInfo) error {
	dir, dst := s.path(key)
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	if err := SyncDir(dir); err != nil {
		if cur, serr := os.Lstat(dst); serr == nil && os.SameFile(cur, st) {
			os.Remove(dst)
		}
		return err
	}
	return nil
}

// Open implements Store. The Reader is an *os.File underneath, so serving it
// with http.ServeContent can use sendfile.
func (s *FS) Open(ctx context.Context, key string) (Reader, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	_, p := s.path(key)
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
		}
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file: %s", st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	return &file{File: f, info: Info{Size: st.Size(), ModTime: st.ModTime()}}, nil
}

// file is an open blob.
type file struct {
	*os.File
	info Info
}

func (f *file) Info() Info { return f.info }

// OSFile returns the open file, so that servers can send it with sendfile.
func (f *file) OSFile() *os.File { return f.File }

// Walk implements Store.
func (s *FS) Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error {
	dirs, err := os.ReadDir(s.objects)
	if err != nil {
		return fmt.Errorf("blob: walk: %w", err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.objects, d.Name()))
		if err != nil {
			return fmt.Errorf("blob: walk: %w", err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue // removed meanwhile, or not a blob
			}
			if err := fn(e.Name(), info.ModTime()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Copy implements Store. It hard-links src to a temporary name and renames
// that over dst; when linking fails (another filesystem, link limit, no
// support) it streams src into dst with Put's guarantees.
func (s *FS) Copy(ctx context.Context, src, dst string) error {
	if err := CheckKey(src); err != nil {
		return err
	}
	if err := CheckKey(dst); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: copy %q to %q: %w", src, dst, err)
	}
	_, srcPath := s.path(src)
	if src == dst {
		if _, err := os.Stat(srcPath); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: %q", ErrNotFound, src)
			}
			return fmt.Errorf("blob: copy %q to %q: %w", src, dst, err)
		}
		return nil
	}
	if s.linkInto(srcPath, dst) == nil {
		return nil
	}
	// Whatever made linking fail (including src missing, which Open reports as
	// ErrNotFound, or a Sweep removing the temporary link, which carries src's
	// possibly old ModTime), a streamed copy either works or says why not.
	r, err := s.Open(ctx, src)
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := s.Put(ctx, dst, r, -1); err != nil {
		return fmt.Errorf("blob: copy %q to %q: %w", src, dst, err)
	}
	return nil
}

// linkInto makes dst a hard link of srcPath, atomically.
func (s *FS) linkInto(srcPath, dst string) error {
	tmp := filepath.Join(s.tmp, "link-"+rand.Text())
	if err := s.link(srcPath, tmp); err != nil {
		return err
	}
	// After a rename the name is gone and this does nothing; but renaming onto
	// a name that is already a link to the same inode (dst an earlier copy of
	// src) succeeds without removing tmp, and this removes it.
	defer os.Remove(tmp)
	dir, dstPath := s.path(dst)
	if err := os.Rename(tmp, dstPath); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Delete implements Store.
func (s *FS) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	dir, p := s.path(key)
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	return nil
}

// Sweep implements Store. A file's age is taken from its modification time,
// which a running Put refreshes with every chunk it writes. It goes on past
// files it cannot remove and returns their errors joined.
func (s *FS) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	d, err := os.Open(s.tmp)
	if err != nil {
		return 0, fmt.Errorf("blob: sweep: %w", err)
	}
	defer d.Close()
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return removed, fmt.Errorf("blob: sweep: %w", err)
		}
		ents, rerr := d.ReadDir(256)
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) { // gone: its Put finished
					errs = append(errs, err)
				}
				continue
			}
			if !fi.ModTime().Before(cutoff) {
				continue
			}
			if err := os.Remove(filepath.Join(s.tmp, e.Name())); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			removed++
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			errs = append(errs, rerr)
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("blob: sweep: %w", err)
	}
	return removed, nil
}

// idFile is the name of the file holding the store's id.
const idFile = "store-id"

// ID implements Store. A new id is written to a temporary file, synced, and
// hard-linked into place, which fails when another call got there first.
func (s *FS) ID(ctx context.Context, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p := filepath.Join(s.dir, idFile)
	if cur, err := readID(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return cur, err
	}
	tmp, err := s.writeTemp("id-", id)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, p)
	if errors.Is(err, fs.ErrExist) {
		return readID(p)
	}
	if err == nil {
		err = SyncDir(s.dir)
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

// SetID implements Store.
func (s *FS) SetID(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tmp, err := s.writeTemp("id-", id)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, idFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(s.dir)
}

// readID reads the id file at p.
func readID(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("%s is empty", p)
	}
	return id, nil
}

// writeTemp writes content to a new synced file in tmp/ and returns its path.
func (s *FS) writeTemp(prefix, content string) (string, error) {
	f, err := s.createTemp(prefix)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(content + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// createTemp creates a new file in tmp/ with a random (128-bit) name, so that
// a name removed by Sweep under a stalled Put is never handed out again.
func (s *FS) createTemp(prefix string) (*os.File, error) {
	for {
		f, err := os.OpenFile(filepath.Join(s.tmp, prefix+rand.Text()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// SyncDir fsyncs a directory, making the entries created, renamed or removed
// in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// hashWriter writes to w, counting and hashing what w accepted. It has no
// ReadFrom method on purpose (see writeSynced).
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// ContextReader returns a reader of r that fails with ctx's error once ctx
// is done, checked before every chunk read.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx: ctx, r: r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
