package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// storageHook runs before at the first read of a workspace's storage (an
// upload's quota check); before may read it too.
type storageHook struct {
	store.Store
	done   atomic.Bool
	before func()
}

func (h *storageHook) GetStorage(ctx context.Context, workspaceID string) (platform.Storage, error) {
	if !h.done.Swap(true) {
		h.before()
	}
	return h.Store.GetStorage(ctx, workspaceID)
}

// TestRetriedUploadNearFullQuota: a client retries a PUT to its uploadUrl
// while the first is still running, with room left for the file once. The
// first PUT records the content between the retry's check of the URL and
// its check of the quota: the retry, with the same bytes, gets 200 and the
// file (uploads are idempotent), not "quota exceeded"; a retry with other
// bytes is stale (403), not a quota error either. The file stays intact.
func TestRetriedUploadNearFullQuota(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name  string
				retry string
				want  string // error; "" for success
			}{
				{"same bytes", "0123456789", ""},
				{"other bytes", "abcdefghij", "this URL is stale: other content was already uploaded to it"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					e := newEnv(t, backend)
					if _, err := e.svc.SetQuotas(e.ctx, e.actor, e.workspace, files.QuotaUpdate{Set: map[string]int64{files.QuotaFileStorage: 15}}); err != nil {
						t.Fatal(err)
					}
					f := e.upsert(files.UpsertInput{Key: "retry.txt", Size: 10})
					url := signedOf(t, e.svc.UploadURL(f))
					hook := &storageHook{Store: e.store}
					svc, err := files.New(e.ctx, hook, e.blobs, e.admin, e.clock, slog.New(slog.DiscardHandler), files.Config{PublicURL: "http://files.test/"})
					if err != nil {
						t.Fatal(err)
					}
					var first platform.File
					var firstErr error
					hook.before = func() { // the first PUT completes now
						first, firstErr = svc.Upload(e.ctx, url, "", strings.NewReader("0123456789"))
					}
					got, err := svc.Upload(e.ctx, url, "", bytes.NewReader([]byte(tc.retry)))
					if firstErr != nil || first.Status != platform.FileUploadCompleted {
						t.Fatalf("first PUT: %s, %v", first.Status, firstErr)
					}
					if tc.want == "" {
						if err != nil || got.Status != platform.FileUploadCompleted || got.SHA256 != first.SHA256 {
							t.Fatalf("retry with the same bytes: %s, %v; want 200 and the file", got.Status, err)
						}
					} else if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("retry with other bytes: %v; want %q", err, tc.want)
					} else if pe, ok := platform.AsError(err); !ok || pe.Type != platform.TypeForbidden {
						t.Fatalf("retry with other bytes: %v; want a Forbidden error", err)
					}
					e.wantContent(f.ID, "0123456789")
					if n := e.fileBytes(); n != 10 {
						t.Fatalf("file storage %d bytes, want 10", n)
					}
				})
			}
		})
	}
}

// wantContent requires file id's recorded content to be content, matching
// its recorded size and SHA-256.
func (e *env) wantContent(id, content string) {
	e.t.Helper()
	f, err := e.store.GetFile(e.ctx, "", id)
	if err != nil {
		e.t.Fatal(err)
	}
	rd, err := e.blobs.Open(e.ctx, f.BlobKey)
	if err != nil {
		e.t.Fatalf("the content of %s: %v", id, err)
	}
	defer rd.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(rd); err != nil {
		e.t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	if b.String() != content || f.Size == nil || *f.Size != int64(len(content)) || f.SHA256 != hex.EncodeToString(sum[:]) {
		e.t.Fatalf("file %s holds %q (size %v, sha256 %s), want %q", id, b.String(), f.Size, f.SHA256, content)
	}
}
