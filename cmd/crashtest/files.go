package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/botplatform/botplatform/internal/harness"
)

// fileState is one state a file may be in after a restart.
type fileState struct {
	absent  bool // never created
	pending bool // upserted, no content: upload_pending
	index   bool
	size    int64
	sha     string
}

func (s fileState) String() string {
	switch {
	case s.absent:
		return "absent"
	case s.pending:
		return fmt.Sprintf("upload_pending (index %v)", s.index)
	}
	return fmt.Sprintf("content of %d bytes sha256 %.12s… (index %v)", s.size, s.sha, s.index)
}

// fileModel is what the load knows of one key: the states the file may be
// in. An acknowledged request leaves one; a request without an answer
// adds its outcome to the previous ones.
type fileModel struct {
	key   string
	cands []fileState
	// broken: a check found the file in no allowed state (reported once);
	// it is checked again after the next acknowledged upsert.
	broken bool
}

// fileWorker writes its own keys, one request after the other.
type fileWorker struct {
	id    int
	keys  map[string]*fileModel
	order []string
}

// fileLoad upserts and uploads files until the server is killed or a
// request gets no answer; it returns the acknowledged requests.
func (h *crash) fileLoad(ctx context.Context, w *fileWorker, rng *rand.Rand, killed *atomic.Bool) int {
	acked := 0
	for !killed.Load() && ctx.Err() == nil {
		m := w.keys[w.order[rng.IntN(len(w.order))]]
		index := rng.IntN(3) == 0
		content := binaryContent(rng)
		if index {
			content = harness.Markdown(rng, 1000+rng.IntN(20000))
		}
		sum := sha256.Sum256(content)
		next := fileState{index: index, size: int64(len(content)), sha: hex.EncodeToString(sum[:])}
		body := map[string]any{"key": m.key, "size": len(content), "index": index, "tags": map[string]any{"worker": fmt.Sprint(w.id)}}
		if index {
			body["contentType"] = "text/markdown"
		}
		f, err := h.c.UpsertFile(ctx, h.bot.ID, body)
		pending := fileState{pending: true, index: index}
		if !h.outcome(m, "upsertFile", err, pending) {
			return acked
		}
		acked++
		// A client that timed out retries the same upload: send it twice at
		// once, now and then.
		tries := 1
		if rng.Float64() < h.opt.doublePut {
			tries = 2
		}
		errs := make([]error, tries)
		var wg sync.WaitGroup
		for i := range tries {
			wg.Go(func() { errs[i] = h.c.Upload(ctx, f.UploadURL, content) })
		}
		wg.Wait()
		var ok, unknown bool
		var refused []string
		for _, err := range errs {
			switch s := harness.Status(err); {
			case err == nil:
				ok = true
			case s == 0 || s >= 500:
				unknown = true
			default:
				refused = append(refused, err.Error())
			}
		}
		h.logf("w%d %s: %d bytes index=%v, %d PUT(s): ok=%v unknown=%v refused=%d", w.id, m.key, len(content), index, tries, ok, unknown, len(refused))
		switch {
		case ok:
			m.cands = []fileState{next}
			acked++
		case unknown:
			m.cands = []fileState{pending, next}
			return acked
		default:
			h.failf("upload", "%s: every PUT to its uploadUrl was refused: %s", m.key, strings.Join(refused, "; "))
			m.cands = []fileState{pending, next}
			return acked
		}
	}
	return acked
}

// outcome records the answer to a request that would leave the file in
// state next, and tells whether the load goes on.
func (h *crash) outcome(m *fileModel, what string, err error, next fileState) bool {
	switch s := harness.Status(err); {
	case err == nil:
		m.cands, m.broken = []fileState{next}, false
		return true
	case s == 0 || s >= 500:
		m.cands = append(m.cands, next)
	default:
		h.failf(what, "%s: %v", m.key, err)
	}
	return false
}

// checkFiles compares every file with the states its model allows, its
// content through its url, and (final) requires that none still waits for
// indexing. A file found in an allowed state becomes the model's only
// state.
func (h *crash) checkFiles(ctx context.Context, final bool) {
	files, err := h.c.ListFiles(ctx, h.bot.ID)
	if err != nil {
		h.failf("files", "listFiles: %v", err)
		return
	}
	byKey := map[string]harness.File{}
	for _, f := range files {
		byKey[f.Key] = f
	}
	for _, w := range h.files {
		for _, key := range w.order {
			m := w.keys[key]
			f, found := byKey[key]
			if m.broken {
				continue
			}
			got, problem := h.observe(ctx, f, found)
			if problem != "" {
				h.failf("file-intact", "%s: %s (allowed: %s)", key, problem, statesString(m.cands))
				m.broken = true
				continue
			}
			if !slices.Contains(m.cands, got) {
				h.failf("file-intact", "%s: found %s; allowed: %s", key, got, statesString(m.cands))
				m.broken = true
				continue
			}
			m.cands = []fileState{got}
			if !final || got.absent || got.pending {
				continue
			}
			switch {
			case f.Status == "indexing_pending":
				h.failf("no-pending", "%s: still indexing_pending %s after the restart", key, h.opt.settle)
			case f.Index && f.Status != "indexing_completed":
				h.failf("indexing", "%s: status %s, want indexing_completed (%s)", key, f.Status, f.FailedStatusReason)
			case !f.Index && f.Status != "upload_completed":
				h.failf("file-intact", "%s: status %s, want upload_completed", key, f.Status)
			}
		}
	}
}

// observe reads the state a listed file is in, with its content.
func (h *crash) observe(ctx context.Context, f harness.File, found bool) (fileState, string) {
	switch {
	case !found:
		return fileState{absent: true}, ""
	case f.Status == "upload_pending":
		if f.Size != nil {
			return fileState{}, fmt.Sprintf("upload_pending with size %d", *f.Size)
		}
		return fileState{pending: true, index: f.Index}, ""
	case !counted(f.Status):
		return fileState{}, fmt.Sprintf("status %s (%s)", f.Status, f.FailedStatusReason)
	case f.Size == nil:
		return fileState{}, fmt.Sprintf("status %s without a size", f.Status)
	}
	n, sum, err := h.c.Download(ctx, f.URL)
	if err != nil {
		return fileState{}, fmt.Sprintf("status %s, size %d, but its url: %v", f.Status, *f.Size, err)
	}
	if n != *f.Size {
		return fileState{}, fmt.Sprintf("size %d, but its url served %d bytes", *f.Size, n)
	}
	return fileState{index: f.Index, size: n, sha: sum}, ""
}

func statesString(s []fileState) string {
	parts := make([]string, len(s))
	for i, st := range s {
		parts[i] = st.String()
	}
	return strings.Join(parts, " or ")
}

// binaryContent is 1 byte to 300 KB, now and then 1 MiB, of random bytes.
func binaryContent(rng *rand.Rand) []byte {
	n := 1 + rng.IntN(300<<10)
	if rng.IntN(10) == 0 {
		n = 1 << 20
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
