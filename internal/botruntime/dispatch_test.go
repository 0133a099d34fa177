package botruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// claims counts a store's claims of jobs.
type claims struct {
	store.Store
	n atomic.Int64
}

func (c *claims) ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error) {
	c.n.Add(1)
	return c.Store.ClaimJobs(ctx, kind, node, now, leaseUntil, limit)
}

// TestDispatcherClaimsOnce: one conversation's messages, each sent once the
// reply to the one before has arrived, are claimed once each: the end of an
// event that leaves nothing of its conversation waiting does not wake the
// dispatcher for a claim that finds nothing. The poll is an hour, so a lost
// wake-up shows as a missing reply.
func TestDispatcherClaimsOnce(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := &claims{Store: storetest.Open(t, backend)}
			now := time.Now().UTC().Truncate(time.Millisecond)
			u, c := storetest.Conversation(t, st, storetest.Workspace(t, st, now), `bot.on.message('*', async ({ message, client }) => {
				await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
			})`, now)
			must := func(err error, what string) {
				t.Helper()
				if err != nil {
					t.Fatal(what, err)
				}
			}

			hub := chat.NewLocalHub(chat.StreamLimits{})
			cs := chat.New(st, hub, platform.SystemClock{})
			r := New(st, cs, platform.SystemClock{}, Config{Poll: time.Hour})
			cs.OnQueued(r.Notify)
			runCtx, stop := context.WithCancel(ctx)
			ran := make(chan struct{})
			go func() { r.Run(runCtx); close(ran) }()
			defer func() { stop(); <-ran }()
			sub, err := hub.Subscribe(c.ID, "listener")
			must(err, "subscribe")

			const rounds = 20
			for i := range rounds {
				text := fmt.Sprint("m", i)
				payload, _ := json.Marshal(map[string]string{"type": "text", "text": text})
				_, err := cs.SendMessage(ctx, c, u, platform.Message{ID: platform.NewID("msg_"), Payload: payload}, time.Time{})
				must(err, "send")
				deadline := time.After(60 * time.Second) // a lost wake-up waits an hour
				for replied := false; !replied; {
					select {
					case f := <-sub.C:
						replied = strings.Contains(string(f), `"isBot":true`) && strings.Contains(string(f), `"text":"`+text+`"`)
					case <-deadline:
						t.Fatalf("round %d: no reply after 60 s", i)
					}
				}
			}
			// The first claim may come before the first message (the loop's
			// start); each message's own wake-up claims it.
			if got := st.n.Load(); got > rounds+1 {
				t.Fatalf("%d claims for %d events, one at a time: want at most %d", got, rounds, rounds+1)
			}
		})
	}
}
