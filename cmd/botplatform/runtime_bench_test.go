package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoCode is the bot of the runtime benchmarks: it sends every message
// back.
const echoCode = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

// deploy sets the bench bot's code.
func (s *benchServer) deploy(b *testing.B, code string) {
	body, _ := json.Marshal(map[string]string{"code": code})
	s.do(b, "PUT", "/v1/admin/bots/"+s.botID, map[string]string{"x-workspace-id": s.workspace}, string(body), nil)
}

// BenchmarkEchoRoundTrip sends 200 messages per second over 100
// conversations to an echo bot and measures, for each, the time from the
// start of the user's createMessage request to the bot's reply arriving on
// the user's signal stream, once each conversation has had a reply.
//
//	go test -run '^$' -bench EchoRoundTrip -benchtime 6000x ./cmd/botplatform/
func BenchmarkEchoRoundTrip(b *testing.B) {
	s := startBenchServer(b)
	s.deploy(b, echoCode)
	echoRoundTrip(b, s, []string{s.webhook})
}

// echoRoundTrip is BenchmarkEchoRoundTrip's measure, with the bot's Chat
// API at each of webhooks (one per server sharing a database): message i
// is sent through the i-th in turn, and conversation j is listened to
// through the one after the j-th.
func echoRoundTrip(b *testing.B, s *benchServer, webhooks []string) {
	at := func(i, shift int) string { return webhooks[(i+shift)%len(webhooks)] }
	key, convs := chatSetup(b, s, 100)
	replies := newReplyLog()
	lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	for j, c := range convs {
		l := listen(b, lc, at(j, 1), key, c, func(sig streamSignal) {
			if sig.IsBot {
				replies.add(sig.Payload.Text)
			}
		})
		defer l.close()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	measureRoundTrips(b, len(convs), replies, func(i int, text string) error {
		body := map[string]any{"conversationId": convs[i%len(convs)], "payload": map[string]any{"type": "text", "text": text}}
		return chatCall(client, "POST", at(i, 0)+"/messages", key, body, nil)
	})
}

// replyLog records when each reply arrived, by its text.
type replyLog struct {
	mu sync.Mutex
	at map[string]time.Time
}

func newReplyLog() *replyLog { return &replyLog{at: map[string]time.Time{}} }

func (l *replyLog) add(text string) {
	now := time.Now()
	l.mu.Lock()
	l.at[text] = now
	l.mu.Unlock()
}

// wait waits for the replies of texts (a hang guard of a minute) and
// returns how many came.
func (l *replyLog) wait(texts []string) int {
	deadline := time.Now().Add(time.Minute)
	for {
		l.mu.Lock()
		got := 0
		for _, t := range texts {
			if _, ok := l.at[t]; ok {
				got++
			}
		}
		l.mu.Unlock()
		if got == len(texts) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// measureRoundTrips sends, through send, one warm-up message per
// conversation, all answered (so that the bot's process has started and
// has its warm VMs: what a process start costs is BenchmarkColdStart's
// subject and the first events'), then b.N messages at 200 per second
// (message i to conversation i%convs), and reports the time from each
// sending to its reply's arrival in replies (p50, p99, max).
func measureRoundTrips(b *testing.B, convs int, replies *replyLog, send func(i int, text string) error) {
	// Texts of this run only: go test runs a benchmark more than once, and
	// a reply of an earlier run may still be on its way.
	run := strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	warm := make([]string, convs)
	for i := range convs {
		warm[i] = run + "warm-up-" + strconv.Itoa(i)
		if err := send(i, warm[i]); err != nil {
			b.Fatal(err)
		}
	}
	if got := replies.wait(warm); got < convs {
		b.Fatalf("warm-up: %d replies of %d", got, convs)
	}
	texts := make([]string, b.N)
	for i := range texts {
		texts[i] = run + strconv.Itoa(i)
	}
	sent := make([]time.Time, b.N)
	var wg sync.WaitGroup
	tick := time.NewTicker(5 * time.Millisecond) // 200 messages per second
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		sent[i] = time.Now()
		wg.Go(func() {
			if err := send(i, texts[i]); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	replies.wait(texts)
	b.StopTimer()
	replies.mu.Lock()
	defer replies.mu.Unlock()
	lat := make([]time.Duration, 0, b.N)
	for i, at := range sent {
		got, ok := replies.at[texts[i]]
		if !ok {
			b.Fatalf("no reply to message %d", i)
		}
		lat = append(lat, got.Sub(at))
	}
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(lat, 1).Microseconds()), "max-µs")
}

// BenchmarkActiveConversations keeps 1,000 conversations busy at once: each
// sends 5 messages without waiting, all conversations together, and every
// conversation must receive its 5 replies in the order it sent them.
//
//	go test -run '^$' -bench ActiveConversations -benchtime 1x ./cmd/botplatform/
func BenchmarkActiveConversations(b *testing.B) {
	const conversations, perConversation = 1000, 5
	s := startBenchServer(b)
	s.deploy(b, echoCode)
	key, convs := chatSetup(b, s, conversations)
	var mu sync.Mutex
	replies := map[string][]string{}
	var total atomic.Int64
	lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conversations}}
	for _, c := range convs {
		l := listen(b, lc, s.webhook, key, c, func(sig streamSignal) {
			if sig.IsBot {
				mu.Lock()
				replies[sig.ConversationID] = append(replies[sig.ConversationID], sig.Payload.Text)
				mu.Unlock()
				total.Add(1)
			}
		})
		defer l.close()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for range b.N {
		mu.Lock()
		clear(replies)
		mu.Unlock()
		total.Store(0)
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64)
		for i := range perConversation {
			for _, c := range convs {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					body := map[string]any{"conversationId": c, "payload": map[string]any{"type": "text", "text": fmt.Sprint(i)}}
					if err := chatCall(client, "POST", s.webhook+"/messages", key, body, nil); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait() // message i of every conversation is stored before message i+1
		}
		deadline := time.Now().Add(60 * time.Second)
		for total.Load() < conversations*perConversation && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		elapsed := time.Since(start)
		mu.Lock()
		for _, c := range convs {
			if got := strings.Join(replies[c], ","); got != "0,1,2,3,4" {
				b.Fatalf("conversation %s: replies %q, want 0,1,2,3,4", c, got)
			}
		}
		mu.Unlock()
		b.ReportMetric(elapsed.Seconds(), "s/round")
		b.ReportMetric(float64(conversations*perConversation)/elapsed.Seconds(), "replies/s")
	}
}

// BenchmarkSequentialRoundTrip is one user chatting with the echo bot in
// one conversation, one message at a time: each message is sent when the
// reply to the previous one has arrived on the conversation's signal
// stream. A wake-up of the dispatcher lost in this case shows as a round
// trip of the dispatcher's poll interval (a second).
//
//	go test -run '^$' -bench SequentialRoundTrip -benchtime 1000x ./cmd/botplatform/
func BenchmarkSequentialRoundTrip(b *testing.B) {
	s := startBenchServer(b)
	s.deploy(b, echoCode)
	key, convs := chatSetup(b, s, 1)
	replies := make(chan string, 16)
	l := listen(b, &http.Client{}, s.webhook, key, convs[0], func(sig streamSignal) {
		if sig.IsBot {
			replies <- sig.Payload.Text
		}
	})
	defer l.close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		text := strconv.Itoa(i)
		start := time.Now()
		body := map[string]any{"conversationId": convs[0], "payload": map[string]any{"type": "text", "text": text}}
		if err := chatCall(client, "POST", s.webhook+"/messages", key, body, nil); err != nil {
			b.Fatal(err)
		}
		select {
		case got := <-replies:
			if got != text {
				b.Fatalf("reply %q to message %q", got, text)
			}
		case <-time.After(30 * time.Second):
			b.Fatalf("no reply to message %d", i)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(lat, 1).Microseconds()), "max-µs")
}
