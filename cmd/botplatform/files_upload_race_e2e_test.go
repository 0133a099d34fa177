package main

// Files API end-to-end: several PUTs to one uploadUrl at once (a client's
// retry after a timeout, or senders racing). Whatever the order, the file
// ends with one content whose bytes match its recorded size and SHA-256.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// putResult is the outcome of one raw PUT.
type putResult struct {
	status int
	etag   string
	body   string
	err    error
}

// put sends body to an uploadUrl from any goroutine (no t.Fatal).
func (s *testServer) put(uploadURL string, body []byte) putResult {
	req, err := http.NewRequest(http.MethodPut, uploadURL, bytes.NewReader(body))
	if err != nil {
		return putResult{err: err}
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := s.http.Do(req)
	if err != nil {
		return putResult{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return putResult{status: res.StatusCode, etag: strings.Trim(res.Header.Get("ETag"), `"`), body: string(b), err: err}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func testConcurrentUploads(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "upload-race")
	const size, senders, trials = 1 << 20, 4, 10
	bodies := make([][]byte, senders)
	for i := range bodies {
		bodies[i] = bytes.Repeat([]byte{byte('a' + i)}, size)
		bodies[i][size-1] = '\n'
	}
	total := int64(0)
	for _, mode := range []string{"same body", "different bodies"} {
		for trial := range trials {
			what := fmt.Sprintf("%s, trial %d", mode, trial)
			up := e.f.mustUpsert(map[string]any{"key": fmt.Sprintf("race-%s-%d.bin", mode[:4], trial), "size": size})
			results := make([]putResult, senders)
			sent := make([][]byte, senders)
			gate := make(chan struct{})
			var wg sync.WaitGroup
			for i := range senders {
				sent[i] = bodies[0]
				if mode == "different bodies" {
					sent[i] = bodies[i]
				}
				wg.Go(func() {
					<-gate
					results[i] = s.put(up.UploadURL, sent[i])
				})
			}
			close(gate)
			wg.Wait()

			// Every sender of the content that was recorded gets 200 with its
			// SHA-256; the others a 403 saying the URL is stale.
			winners := map[string]bool{}
			for i, r := range results {
				switch {
				case r.err != nil:
					t.Fatalf("%s: PUT %d: %v", what, i, r.err)
				case r.status == 200:
					if r.etag != sha256Hex(sent[i]) {
						t.Errorf("%s: PUT %d answered 200 with ETag %s, not the SHA-256 of what it sent", what, i, r.etag)
					}
					winners[r.etag] = true
				case r.status == 403 && strings.Contains(r.body, "stale") && mode == "different bodies":
				default:
					t.Errorf("%s: PUT %d: %d %s", what, i, r.status, r.body)
				}
			}
			if len(winners) != 1 {
				t.Fatalf("%s: %d different contents answered 200, want exactly 1", what, len(winners))
			}
			got := e.f.getFile(up.ID)
			if got.Status != "upload_completed" || got.Size == nil || *got.Size != size {
				t.Fatalf("%s: file after the PUTs: status %s size %v", what, got.Status, got.Size)
			}
			r := s.fetch(t, got.URL)
			if r.Status != 200 {
				t.Fatalf("%s: GET url: %d %s", what, r.Status, r.Body)
			}
			recorded := strings.Trim(r.Header.Get("ETag"), `"`)
			if !winners[recorded] || sha256Hex(r.Body) != recorded || len(r.Body) != size {
				t.Fatalf("%s: GET url served %d bytes with SHA-256 %s, recorded %s, answered 200 for %v",
					what, len(r.Body), sha256Hex(r.Body), recorded, winners)
			}
			total += size
			// A retry of the recorded content after the fact is answered 200
			// too; other content is refused and changes nothing.
			for i, b := range sent {
				r := s.put(up.UploadURL, b)
				same := sha256Hex(b) == recorded
				if same && (r.status != 200 || r.etag != recorded) || !same && r.status != 403 {
					t.Errorf("%s: PUT %d again after completion: %d %s (same content: %v)", what, i, r.status, r.body, same)
				}
			}
			if r := s.fetch(t, got.URL); sha256Hex(r.Body) != recorded {
				t.Errorf("%s: content changed after a second round of PUTs", what)
			}
		}
	}
	// Each file's content is counted once.
	if u := storageUsage(t, e.ws, "file_storage_bytes"); u != total {
		t.Errorf("file storage usage %d, want %d", u, total)
	}
}
