package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

// BenchmarkMultiNode compares three serve processes with one, on the same
// PostgreSQL database and machine: createMessage throughput by chat users
// (32 clients over 100 conversations, each listened to, as
// BenchmarkCreateMessage), then the echo bot's round trip at 200 messages
// per second (as BenchmarkEchoRoundTrip). Each message goes to the next
// server in turn, and the conversations' listeners are spread over the
// servers too, so most signals cross from one server to another. The
// servers share one data directory (these calls use none of it).
//
//	BOTPLATFORM_TEST_DATABASE_URL=postgres://… go test -run '^$' -bench MultiNode -benchtime 6000x ./cmd/botplatform/
func BenchmarkMultiNode(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			dbURL := storetest.PostgresURL(b)
			s := startBenchServer(b, "--database-url", dbURL)
			webhooks := []string{s.webhook}
			path := strings.TrimPrefix(s.webhook, s.url)
			for range nodes - 1 {
				_, url := startBenchProcess(b, s.bin, s.data, "--database-url", dbURL)
				webhooks = append(webhooks, url+path)
			}
			at := func(i int64, shift int64) string { return webhooks[(i+shift)%int64(len(webhooks))] }
			b.Run("createMessage", func(b *testing.B) {
				key, convs := chatSetup(b, s, 100)
				var received atomic.Int64
				lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
				for j, c := range convs {
					l := listen(b, lc, at(int64(j), 1), key, c, func(streamSignal) { received.Add(1) })
					defer l.close()
				}
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
				sendParallel(b, &received, func(i int64) error {
					body := map[string]any{"conversationId": convs[i%int64(len(convs))], "payload": map[string]any{"type": "text", "text": fmt.Sprintf("message %d", i)}}
					return chatCall(client, "POST", at(i, 0)+"/messages", key, body, nil)
				})
			})
			s.deploy(b, echoCode) // after: its replies would double createMessage's signals
			b.Run("echo", func(b *testing.B) { echoRoundTrip(b, s, webhooks) })
		})
	}
}
