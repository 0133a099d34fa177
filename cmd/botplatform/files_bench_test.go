package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchServer is the real binary serving on SQLite (with extra serve
// flags), with a bot to use.
type benchServer struct {
	cmd               *exec.Cmd
	url, token, botID string
	workspace         string
	webhook           string // the bot's Chat API base URL
	data              string
	bin               string // the server's binary
}

func startBenchServer(b *testing.B, extra ...string) *benchServer {
	s := &benchServer{data: b.TempDir(), bin: buildBench(b)}
	s.cmd, s.url = startBenchProcess(b, s.bin, s.data, extra...)
	var boot struct{ Token, WorkspaceID string }
	raw, err := os.ReadFile(filepath.Join(s.data, "bootstrap.json"))
	if err != nil || json.Unmarshal(raw, &boot) != nil || s.url == "" {
		b.Fatalf("server did not start: %v", err)
	}
	s.token, s.workspace = boot.Token, boot.WorkspaceID
	var bot struct {
		Bot struct {
			ID           string
			Integrations map[string]struct{ WebhookURL string }
		}
	}
	s.do(b, "POST", "/v1/admin/bots", map[string]string{"x-workspace-id": boot.WorkspaceID}, `{"name":"bench"}`, &bot)
	s.botID, s.webhook = bot.Bot.ID, bot.Bot.Integrations["chat"].WebhookURL
	// Room for the large transfers.
	s.do(b, "PUT", "/v1/admin/workspaces/"+boot.WorkspaceID+"/quotas", nil,
		`{"file_storage_bytes": 1099511627776, "file_max_size_bytes": 4294967296}`, nil)
	return s
}

// buildBench builds the server's binary for a benchmark.
func buildBench(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "botplatform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startBenchProcess runs bin serve on the data directory (SQLite unless
// extra names a database) until the benchmark ends, and returns its URL.
func startBenchProcess(b *testing.B, bin, data string, extra ...string) (*exec.Cmd, string) {
	// One benchmark user may listen to many conversations.
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--log-level", "warn", "--streams-per-user", "0"}, extra...)...)
	cmd.Env = append(os.Environ(), "BOTPLATFORM_DATABASE_URL=")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	var url string
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), " listening on "); ok {
			url = after
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if url == "" {
		b.Fatalf("%s serve did not start", bin)
	}
	return cmd, url
}

func (s *benchServer) do(b *testing.B, method, path string, h map[string]string, body string, out any) {
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
}

type benchFile struct {
	File struct {
		ID, URL, UploadURL, Status string
		Size                       *int64
	}
}

func (s *benchServer) upsert(b *testing.B, key string, size int64) benchFile {
	var f benchFile
	s.do(b, "PUT", "/v1/files", map[string]string{"x-bot-id": s.botID}, fmt.Sprintf(`{"key":%q,"size":%d}`, key, size), &f)
	return f
}

func rss(pid int) int64 {
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// pattern is a reader of n bytes of a fixed pattern that allocates nothing.
type pattern struct{ n int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	for i := range b {
		b[i] = byte(i)
	}
	p.n -= int64(len(b))
	return len(b), nil
}

// bulkClient reads large bodies with a large socket receive buffer, so
// that the measuring client is not what limits a download.
var bulkClient = &http.Client{Transport: &http.Transport{
	DialContext: (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<20)
		})
	}}).DialContext,
}}

// transfer upserts a file of size bytes, uploads them to its uploadUrl,
// then downloads its url in 1 MiB blocks (as dd reads), checking the size:
// the file as getFile shows it and how long each transfer took.
func (s *benchServer) transfer(b *testing.B, key string, size int64) (benchFile, time.Duration, time.Duration) {
	f := s.upsert(b, key, size)
	req, _ := http.NewRequest("PUT", f.File.UploadURL, &pattern{n: size})
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	up := time.Since(t0)
	if resp.StatusCode != 200 {
		b.Fatalf("upload: %d", resp.StatusCode)
	}
	var got benchFile
	s.do(b, "GET", "/v1/files/"+f.File.ID, map[string]string{"x-bot-id": s.botID}, "", &got)
	t0 = time.Now()
	resp, err = bulkClient.Get(got.File.URL)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.CopyBuffer(struct{ io.Writer }{io.Discard}, resp.Body, make([]byte, 1<<20))
	resp.Body.Close()
	down := time.Since(t0)
	if n != size {
		b.Fatalf("downloaded %d bytes, want %d", n, size)
	}
	return got, up, down
}

// BenchmarkLargeTransfer uploads then downloads one 1 GiB file through the
// server, and in the same run has dd write and read 1 GiB on the same disk,
// reporting MB/s of each, the ratio, and the server's RSS growth.
//
//	go test -run '^$' -bench LargeTransfer -benchtime 1x ./cmd/botplatform/
func BenchmarkLargeTransfer(b *testing.B) {
	const size = 1 << 30
	s := startBenchServer(b)
	for b.Loop() {
		// dd baseline on the same disk (the data directory's).
		ddFile := filepath.Join(s.data, "dd.bin")
		t0 := time.Now()
		if out, err := exec.Command("dd", "if=/dev/zero", "of="+ddFile, "bs=1M", "count=1024", "conv=fsync").CombinedOutput(); err != nil {
			b.Fatalf("dd write: %v %s", err, out)
		}
		ddWrite := time.Since(t0)
		t0 = time.Now()
		if out, err := exec.Command("dd", "if="+ddFile, "of=/dev/null", "bs=1M").CombinedOutput(); err != nil {
			b.Fatalf("dd read: %v %s", err, out)
		}
		ddRead := time.Since(t0)
		os.Remove(ddFile)

		before := rss(s.cmd.Process.Pid)
		peak := before
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
					if r := rss(s.cmd.Process.Pid); r > peak {
						peak = r
					}
				}
			}
		}()
		got, up, down := s.transfer(b, "big.bin", size)
		close(done)
		// Check the content outside the timed download: hashing 1 GiB in
		// the client would measure the client.
		resp, err := http.Get(got.File.URL)
		if err != nil {
			b.Fatal(err)
		}
		h, want := sha256.New(), sha256.New()
		io.Copy(h, resp.Body)
		resp.Body.Close()
		io.Copy(want, &pattern{n: size})
		if !bytes.Equal(h.Sum(nil), want.Sum(nil)) || resp.Header.Get("ETag") != `"`+hex.EncodeToString(want.Sum(nil))+`"` {
			b.Fatalf("downloaded content or its ETag does not match what was uploaded")
		}
		mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
		b.ReportMetric(mbps(up), "upload-MB/s")
		b.ReportMetric(mbps(ddWrite), "dd-write-MB/s")
		b.ReportMetric(100*ddWrite.Seconds()/up.Seconds(), "upload-%-of-dd")
		b.ReportMetric(mbps(down), "download-MB/s")
		b.ReportMetric(mbps(ddRead), "dd-read-MB/s")
		b.ReportMetric(100*ddRead.Seconds()/down.Seconds(), "download-%-of-dd")
		b.ReportMetric(float64(peak-before)/(1<<20), "RSS-growth-MB")
	}
}

// BenchmarkConcurrentUploads sends 100 uploads of 10 MiB at once and checks
// every size and hash.
//
//	go test -run '^$' -bench ConcurrentUploads -benchtime 1x ./cmd/botplatform/
func BenchmarkConcurrentUploads(b *testing.B) {
	const n, size = 100, 10 << 20
	s := startBenchServer(b)
	for b.Loop() {
		files := make([]benchFile, n)
		for i := range files {
			files[i] = s.upsert(b, fmt.Sprintf("concurrent/%d.bin", i), size)
		}
		want := sha256.New()
		io.Copy(want, &pattern{n: size})
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, f := range files {
			wg.Go(func() {
				req, _ := http.NewRequest("PUT", f.File.UploadURL, &pattern{n: size})
				req.ContentLength = size
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("upload %s: %d", f.File.ID, resp.StatusCode)
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(t0)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		for _, f := range files {
			var got benchFile
			s.do(b, "GET", "/v1/files/"+f.File.ID, map[string]string{"x-bot-id": s.botID}, "", &got)
			if got.File.Status != "upload_completed" || got.File.Size == nil || *got.File.Size != size {
				b.Fatalf("file %s: status %s size %v", f.File.ID, got.File.Status, got.File.Size)
			}
			resp, err := http.Get(got.File.URL)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			io.Copy(h, resp.Body)
			resp.Body.Close()
			if hex.EncodeToString(h.Sum(nil)) != hex.EncodeToString(want.Sum(nil)) {
				b.Fatalf("file %s: content hash mismatch", f.File.ID)
			}
		}
		b.ReportMetric(float64(n*size)/(1<<20)/elapsed.Seconds(), "MB/s")
		b.ReportMetric(elapsed.Seconds(), "seconds")
	}
}
