package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chatCall sends one Chat API request as the user with key.
func chatCall(client *http.Client, method, url, key string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-user-key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// chatSetups numbers chatSetup's calls, whose conversation ids differ.
var chatSetups atomic.Int64

// chatSetup creates a user and n conversations on the bench server's bot.
func chatSetup(b *testing.B, s *benchServer, n int) (key string, convs []string) {
	var u struct{ Key string }
	if err := chatCall(http.DefaultClient, "POST", s.webhook+"/users", "", map[string]any{}, &u); err != nil {
		b.Fatal(err)
	}
	setup := chatSetups.Add(1)
	for i := range n {
		id := fmt.Sprintf("bench-%d-%d", setup, i)
		if err := chatCall(http.DefaultClient, "POST", s.webhook+"/conversations", u.Key, map[string]any{"id": id}, nil); err != nil {
			b.Fatal(err)
		}
		convs = append(convs, id)
	}
	return u.Key, convs
}

// listener reads a conversation's signal stream, calling on for each
// message_created signal, until closed.
type listener struct {
	resp *http.Response
}

// streamSignal is what the benchmarks read of a message_created signal.
type streamSignal struct {
	ID, ConversationID string
	IsBot              bool
	Payload            struct{ Text string }
}

// listen opens the stream of conv at webhook (the bot's Chat API base URL
// on one server).
func listen(b *testing.B, client *http.Client, webhook, key, conv string, on func(sig streamSignal)) *listener {
	req, _ := http.NewRequest("GET", webhook+"/conversations/"+conv+"/listen", nil)
	req.Header.Set("x-user-key", key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b.Fatalf("listen: %d", resp.StatusCode)
	}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: {")
			if !ok || on == nil {
				continue
			}
			var sig struct {
				Type string
				Data streamSignal
			}
			if json.Unmarshal([]byte("{"+line), &sig) == nil && sig.Type == "message_created" {
				on(sig.Data)
			}
		}
	}()
	return &listener{resp}
}

func (l *listener) close() { l.resp.Body.Close() }

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

// BenchmarkCreateMessage measures createMessage over HTTP on SQLite from 32
// concurrent clients spread over 100 conversations, each with a connected
// listener receiving every signal: by a chat user (the Chat API, with a user
// key), and by the bot (the Runtime API, with a bot API key), on the same
// server, one after the other.
//
//	go test -run '^$' -bench CreateMessage -benchtime 20000x ./cmd/botplatform/
func BenchmarkCreateMessage(b *testing.B) {
	s := startBenchServer(b)
	key, convs := chatSetup(b, s, 100)
	var bak struct{ Value string }
	s.do(b, "POST", "/v1/admin/bots/baks", map[string]string{"x-workspace-id": s.workspace}, `{"botId":"`+s.botID+`"}`, &bak)
	var received atomic.Int64
	lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	for _, c := range convs {
		l := listen(b, lc, s.webhook, key, c, func(streamSignal) { received.Add(1) })
		defer l.close()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	send := map[string]func(i int64) error{
		"user": func(i int64) error {
			body := map[string]any{"conversationId": convs[i%int64(len(convs))], "payload": map[string]any{"type": "text", "text": fmt.Sprintf("message %d", i)}}
			return chatCall(client, "POST", s.webhook+"/messages", key, body, nil)
		},
		"bot": func(i int64) error {
			body := map[string]any{"conversationId": convs[i%int64(len(convs))], "userId": s.botID, "type": "text",
				"payload": map[string]any{"text": fmt.Sprintf("message %d", i)}, "tags": map[string]any{}}
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest("POST", s.url+"/v1/chat/messages", bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+bak.Value)
			req.Header.Set("x-bot-id", s.botID)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			if resp.StatusCode >= 300 {
				return fmt.Errorf("createMessage by the bot: %d %s", resp.StatusCode, out)
			}
			return nil
		},
	}
	for _, by := range []string{"user", "bot"} {
		b.Run("by="+by, func(b *testing.B) { sendParallel(b, &received, send[by]) })
	}
}

// sendParallel calls send b.N times from 16 goroutines per CPU, waits for
// the listeners to have received as many signals (received counts them
// from 0) and reports the messages sent per second. The timed calls come
// after warmUp untimed ones, received too: the servers' connections to
// their database and its prepared statements are open by then, and the
// figure is the steady state, whatever the number of servers.
func sendParallel(b *testing.B, received *atomic.Int64, send func(i int64) error) {
	var n atomic.Int64
	sendBurst(b, received, &n, warmUp, send)
	b.ResetTimer()
	elapsed := sendBurst(b, received, &n, int64(b.N), send)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
}

// warmUp is how many untimed messages come before the timed ones.
const warmUp = 1000

// sendBurst calls send count times from 16 goroutines per CPU, numbering
// the calls from n, and returns how long the calls took; then, untimed,
// it waits for the listeners to have received a signal for each (received
// counts them; it is zeroed first).
func sendBurst(b *testing.B, received, n *atomic.Int64, count int64, send func(i int64) error) time.Duration {
	received.Store(0)
	last := n.Load() + count
	var wg sync.WaitGroup
	start := time.Now()
	for range 16 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := n.Add(1); i <= last; i = n.Add(1) {
				if err := send(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	defer b.StartTimer()
	for deadline := time.Now().Add(30 * time.Second); received.Load() < count && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := received.Load(); got != count {
		b.Fatalf("listeners received %d signals of %d messages", got, count)
	}
	return elapsed
}

// BenchmarkSignalLatency sends 1,000 messages per second spread over 100
// conversations, each with a listener, and measures the time from the
// createMessage response to the signal's arrival at the listener.
//
//	go test -run '^$' -bench SignalLatency -benchtime 5000x ./cmd/botplatform/
func BenchmarkSignalLatency(b *testing.B) {
	s := startBenchServer(b)
	key, convs := chatSetup(b, s, 100)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	for _, c := range convs {
		l := listen(b, lc, s.webhook, key, c, func(sig streamSignal) {
			now := time.Now()
			mu.Lock()
			arrived[sig.ID] = now
			mu.Unlock()
		})
		defer l.close()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	sent := make(map[string]time.Time, b.N)
	var sentMu sync.Mutex
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Millisecond) // 1,000 messages per second
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Go(func() {
			var out struct{ Message struct{ ID string } }
			body := map[string]any{"conversationId": convs[i%len(convs)], "payload": map[string]any{"type": "text", "text": "ping"}}
			if err := chatCall(client, "POST", s.webhook+"/messages", key, body, &out); err != nil {
				b.Error(err)
				return
			}
			now := time.Now()
			sentMu.Lock()
			sent[out.Message.ID] = now
			sentMu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for id, at := range sent {
		got, ok := arrived[id]
		if !ok {
			b.Fatalf("no signal for message %s", id)
		}
		// A signal can arrive before the client has read the response; that
		// counts as no delay.
		lat = append(lat, max(0, got.Sub(at)))
	}
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(lat, 1).Microseconds()), "max-µs")
}

// BenchmarkSSEConnections holds 10,000 signal streams open at once and
// reports the server's resident memory.
//
//	go test -run '^$' -bench SSEConnections -benchtime 1x ./cmd/botplatform/
func BenchmarkSSEConnections(b *testing.B) {
	const n = 10_000
	s := startBenchServer(b)
	key, convs := chatSetup(b, s, 100)
	before := rss(s.cmd.Process.Pid)
	for b.Loop() {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
		ls := make([]*listener, 0, n)
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64)
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				l := listen(b, client, s.webhook, key, convs[i%len(convs)], nil)
				mu.Lock()
				ls = append(ls, l)
				mu.Unlock()
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		// One message per conversation reaches all 10,000 streams.
		for _, c := range convs {
			if err := chatCall(http.DefaultClient, "POST", s.webhook+"/messages", key, map[string]any{"conversationId": c, "payload": map[string]any{"type": "text", "text": "all"}}, nil); err != nil {
				b.Fatal(err)
			}
		}
		held := rss(s.cmd.Process.Pid)
		b.ReportMetric(float64(len(ls)), "streams")
		b.ReportMetric(float64(held)/(1<<20), "server-RSS-MB")
		b.ReportMetric(float64(held-before)/(1<<20)/float64(n)*1024, "KB-per-stream")
		for _, l := range ls {
			l.close()
		}
	}
}
