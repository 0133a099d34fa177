package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai/aitest"
)

// BenchmarkCognitive measures what the platform adds to a bot's model call:
// the same request sent straight to a stand-in model server (in this
// process, answering at once) and through the server's /v2/cognitive, one
// call at a time: generate-text's whole answer, and a stream's first piece
// of text (time to first token). Then b.N streams through the server, 50
// at a time: each one's time to first token and to its end.
//
//	go test -run '^$' -bench Cognitive -benchtime 2000x ./cmd/botplatform/
func BenchmarkCognitive(b *testing.B) {
	model := aitest.New(b)
	s := startBenchServer(b, "--ai-url", model.URL(), "--ai-model", "m-1", "--ai-prices", `{"m-1":{"input":1,"output":1}}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const text = "what do walruses eat in the arctic summer"
	directBody := `{"model":"m-1","messages":[{"role":"user","content":"` + text + `"}]}`
	directStream := `{"model":"m-1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + text + `"}]}`
	platformBody := `{"model":"auto","messages":[{"role":"user","content":"` + text + `"}]}`
	// call sends body to url and returns the time to the first piece of
	// text (first) and to the end of the answer (all).
	call := func(url, body string, platform bool) (first, all time.Duration) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if platform {
			req.Header.Set("Authorization", "Bearer "+s.token)
			req.Header.Set("x-bot-id", s.botID)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			raw, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s: %d %s", url, resp.StatusCode, raw)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Bytes()
			if first == 0 && (bytes.Contains(line, []byte(`"content":"echo`)) || bytes.Contains(line, []byte(`"output":"echo`))) {
				first = time.Since(start)
			}
		}
		return first, time.Since(start)
	}
	report := func(b *testing.B, direct, through []time.Duration) {
		for _, p := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			d, t := percentile(direct, p.q), percentile(through, p.q)
			b.ReportMetric(float64(d.Microseconds()), "direct-"+p.name+"-µs")
			b.ReportMetric(float64(t.Microseconds()), "platform-"+p.name+"-µs")
			b.ReportMetric(float64((t - d).Microseconds()), "added-"+p.name+"-µs")
		}
	}
	// Each pair alternates the direct and the platform's calls, so that
	// both meet the same machine.
	pair := func(b *testing.B, directURL, directBody, url string, stream bool) {
		direct, through := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		for b.Loop() {
			d1, d2 := call(directURL, directBody, false)
			t1, t2 := call(url, platformBody, true)
			if stream {
				d2, t2 = d1, t1
			}
			direct, through = append(direct, d2), append(through, t2)
		}
		report(b, direct, through)
	}
	b.Run("generate-text", func(b *testing.B) {
		pair(b, model.URL()+"/chat/completions", directBody, s.url+"/v2/cognitive/generate-text", false)
	})
	b.Run("stream-first-token", func(b *testing.B) {
		pair(b, model.URL()+"/chat/completions", directStream, s.url+"/v2/cognitive/generate-text-stream", true)
	})
	b.Run("streams-50", func(b *testing.B) {
		const n = 50
		var mu sync.Mutex
		var firsts, alls []time.Duration
		// b.N streams in all, 50 at a time.
		for range max(b.N/n, 1) {
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					first, all := call(s.url+"/v2/cognitive/generate-text-stream", platformBody, true)
					mu.Lock()
					firsts, alls = append(firsts, first), append(alls, all)
					mu.Unlock()
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(percentile(firsts, 0.5).Microseconds()), "ttft-p50-µs")
		b.ReportMetric(float64(percentile(firsts, 0.99).Microseconds()), "ttft-p99-µs")
		b.ReportMetric(float64(percentile(alls, 0.99).Microseconds()), "end-p99-µs")
	})
}
