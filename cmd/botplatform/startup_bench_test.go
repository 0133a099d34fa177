package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkColdStart measures, with the real binary on SQLite, the time from
// exec to the first 200 from /healthz, on an empty data directory (first
// start: migrations and bootstrap) and on an existing one (restart), and the
// resident memory of the idle server. Run with
// go test -run '^$' -bench ColdStart -benchtime 20x ./cmd/botplatform/
func BenchmarkColdStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "botplatform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for _, restart := range []bool{false, true} {
		name := "first-start"
		if restart {
			name = "restart"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			var total time.Duration
			var rssKB int
			for i := 0; b.Loop(); i++ {
				data := filepath.Join(dir, strconv.Itoa(i))
				if restart {
					data = filepath.Join(dir, "shared")
				}
				d, rss := startOnce(b, bin, data, i == 0)
				total += d
				if rss > 0 {
					rssKB = rss
				}
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-to-healthy")
			if rssKB > 0 {
				b.ReportMetric(float64(rssKB)/1024, "idle-RSS-MB")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// startOnce starts the server, waits until /healthz answers 200, optionally
// reads its idle memory, and stops it.
func startOnce(b *testing.B, bin, data string, measureRSS bool) (time.Duration, int) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "BOTPLATFORM_DATABASE_URL=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	url := ""
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), " listening on "); ok {
			url = after
			break
		}
	}
	if url == "" {
		b.Fatal("server did not print its address")
	}
	go func() { // keep draining stdout
		for sc.Scan() {
		}
	}()
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Since(start) > 10*time.Second {
			b.Fatal("not healthy after 10s")
		}
		time.Sleep(time.Millisecond)
	}
	d := time.Since(start)
	rss := 0
	if measureRSS {
		time.Sleep(2 * time.Second) // let start-up garbage be collected
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			}
		}
	}
	return d, rss
}
