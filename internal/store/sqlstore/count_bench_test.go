package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

// BenchmarkMessageCount reads the number of messages of a conversation of n
// messages, as every delivery of a message to a bot does: "kept" is
// CountMessages (the count the triggers of migration 0029 keep), "counted"
// the COUNT(*) of the conversation's messages it replaced, in the same run.
func BenchmarkMessageCount(b *testing.B) {
	for _, backend := range storetest.Backends {
		for _, n := range []int{100, 10000} {
			b.Run(fmt.Sprintf("%s/messages=%d", backend, n), func(b *testing.B) {
				ctx := context.Background()
				s := storetest.Open(b, backend)
				conversation, message := chatFixture(b, s)
				c := conversation()
				for range n {
					message(c)
				}
				db := s.Pools()["main"]
				if db == nil {
					db = s.Pools()["read"]
				}
				count := `SELECT COUNT(*) FROM messages WHERE conversation_id = ?`
				if backend == "postgres" {
					count = `SELECT COUNT(*) FROM messages WHERE conversation_id = $1`
				}
				b.Run("kept", func(b *testing.B) {
					for b.Loop() {
						if got, err := s.CountMessages(ctx, c); err != nil || got != int64(n) {
							b.Fatalf("CountMessages: %d, %v; want %d", got, err, n)
						}
					}
				})
				b.Run("counted", func(b *testing.B) {
					for b.Loop() {
						var got int64
						if err := db.QueryRowContext(ctx, count, c).Scan(&got); err != nil || got != int64(n) {
							b.Fatalf("COUNT(*): %d, %v; want %d", got, err, n)
						}
					}
				})
			})
		}
	}
}
