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

// claims counts a store's claims of jobs. A hook set in beforeNext runs
// once, at the start of the next NextJobAt; one in beforeFinish, at the
// start of the next FinishJobClaimNext.
type claims struct {
	store.Store
	n            atomic.Int64
	beforeNext   atomic.Pointer[func()]
	beforeFinish atomic.Pointer[func()]
}

func (c *claims) FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (*platform.Job, bool, error) {
	if hook := c.beforeFinish.Swap(nil); hook != nil {
		(*hook)()
	}
	return c.Store.FinishJobClaimNext(ctx, id, keep, states, logs, node, now, lease)
}

func (c *claims) ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error) {
	c.n.Add(1)
	return c.Store.ClaimJobs(ctx, kind, node, now, leaseUntil, limit)
}

func (c *claims) NextJobAt(ctx context.Context, kind string, now time.Time) (time.Time, bool, error) {
	if hook := c.beforeNext.Swap(nil); hook != nil {
		(*hook)()
	}
	return c.Store.NextJobAt(ctx, kind, now)
}

const echoCode = `bot.on.message('*', async ({ message, client }) => {
	await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

// dispatching is a runtime running with an hour's poll, so that a lost
// wake-up shows as a missing reply, on a store that counts its claims.
type dispatching struct {
	t   *testing.T
	st  *claims
	cs  *chat.Service
	hub *chat.LocalHub
	w   platform.Workspace
}

func startDispatching(t *testing.T, backend string, workers int) *dispatching {
	st := &claims{Store: storetest.Open(t, backend)}
	hub := chat.NewLocalHub(chat.StreamLimits{})
	cs := chat.New(st, hub, platform.SystemClock{})
	r := New(st, cs, platform.SystemClock{}, Config{Poll: time.Hour, Workers: workers})
	cs.OnQueued(r.Notify)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { r.Run(ctx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran })
	return &dispatching{t: t, st: st, cs: cs, hub: hub, w: storetest.Workspace(t, st, time.Now().UTC().Truncate(time.Millisecond))}
}

// conversation stores an echo bot's conversation and listens to it.
func (d *dispatching) conversation() (platform.ChatUser, platform.Conversation, *chat.Subscription) {
	u, c := storetest.Conversation(d.t, d.st, d.w, echoCode, time.Now().UTC().Truncate(time.Millisecond))
	sub, err := d.hub.Subscribe(c.ID, "listener")
	if err != nil {
		d.t.Fatal(err)
	}
	return u, c, sub
}

func (d *dispatching) send(u platform.ChatUser, c platform.Conversation, text string) {
	payload, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	if _, err := d.cs.SendMessage(context.Background(), c, u, platform.Message{ID: platform.NewID("msg_"), Payload: payload}, time.Time{}); err != nil {
		d.t.Fatal(err)
	}
}

// reply waits for the bot's reply text on sub (a lost wake-up waits an
// hour; 60 s is a guard).
func (d *dispatching) reply(sub *chat.Subscription, text, what string) {
	deadline := time.After(60 * time.Second)
	for {
		select {
		case f := <-sub.C:
			if strings.Contains(string(f), `"isBot":true`) && strings.Contains(string(f), `"text":"`+text+`"`) {
				return
			}
		case <-deadline:
			d.t.Fatalf("%s: no reply after 60 s", what)
		}
	}
}

// TestDispatcherClaimsOnce: one conversation's messages, each sent once the
// reply to the one before has arrived, are claimed once each: the end of an
// event that leaves nothing of its conversation waiting does not wake the
// dispatcher for a claim that finds nothing.
func TestDispatcherClaimsOnce(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 0)
			u, c, sub := d.conversation()
			d.send(u, c, "warm-up") // after the loop's first claims
			d.reply(sub, "warm-up", "warm-up")
			before := d.st.n.Load()
			const rounds = 20
			for i := range rounds {
				text := fmt.Sprint("m", i)
				d.send(u, c, text)
				d.reply(sub, text, fmt.Sprint("round ", i))
			}
			// Each message's own wake-up claims it.
			if got := d.st.n.Load() - before; got > rounds {
				t.Fatalf("%d claims for %d events, one at a time: want at most %d", got, rounds, rounds)
			}
		})
	}
}

// TestDispatcherWakeAnsweredByClaim: a wake-up that the next claim answers
// is not claimed for again. The second message of each round is queued, and
// its wake-up sent, while the dispatcher is between the claim of the first
// and its look at the next due time, which finds the second due: the loop
// claims it at once. The wake-up still pending must not make a third claim,
// which would find nothing. Claims are counted from the first round's first
// claim on (the loop's claim at its start is not this test's).
func TestDispatcherWakeAnsweredByClaim(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 0)
			const rounds = 10
			var before int64
			for i := range rounds {
				u1, c1, sub1 := d.conversation()
				u2, c2, sub2 := d.conversation()
				between, queued := make(chan struct{}), make(chan struct{})
				hook := func() { close(between); <-queued }
				d.st.beforeNext.Store(&hook)
				d.send(u1, c1, "first")
				<-between // the dispatcher claimed the first message
				if i == 0 {
					before = d.st.n.Load() - 1
				}
				d.send(u2, c2, "second")
				close(queued)
				d.reply(sub1, "first", fmt.Sprint("round ", i, ", first"))
				d.reply(sub2, "second", fmt.Sprint("round ", i, ", second"))
			}
			if got := d.st.n.Load() - before; got > 2*rounds {
				t.Fatalf("%d claims for %d events: want at most %d", got, 2*rounds, 2*rounds)
			}
		})
	}
}

// TestDispatcherFinishClaimsWhatCameMeanwhile: a message queued after the
// previous event of its conversation ended but before that event's finish
// was written (the writer busy with others, say) is claimed by the finish,
// and run by the same worker: the dispatcher claims only for the message's
// own wake-up, not a second time for a worker that found its next event
// "not due yet" by a time read before the message existed.
func TestDispatcherFinishClaimsWhatCameMeanwhile(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 0)
			u, c, sub := d.conversation()
			const rounds = 5
			arm := func() (finishing, queued chan struct{}) {
				finishing, queued = make(chan struct{}), make(chan struct{})
				hook := func() { close(finishing); <-queued }
				d.st.beforeFinish.Store(&hook)
				return finishing, queued
			}
			finishing, queued := arm()
			d.send(u, c, "m0")
			var before int64
			for i := 1; i <= rounds; i++ {
				<-finishing // the event of the message before ended
				if i == 1 {
					before = d.st.n.Load()
				}
				release := queued
				if i < rounds { // before this message's own finish can begin
					finishing, queued = arm()
				}
				d.send(u, c, fmt.Sprint("m", i))
				close(release)
			}
			d.reply(sub, fmt.Sprint("m", rounds), "the last message")
			if got := d.st.n.Load() - before; got > rounds {
				t.Fatalf("%d claims for %d messages queued while the one before was finishing: want at most %d (one per wake-up)", got, rounds, rounds)
			}
		})
	}
}

// TestDispatcherOneWorker: with one worker, the events of other
// conversations wait for it, and its end wakes the dispatcher for them.
func TestDispatcherOneWorker(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 1)
			const n = 4
			var users []platform.ChatUser
			var convs []platform.Conversation
			var subs []*chat.Subscription
			for range n {
				u, c, sub := d.conversation()
				users, convs, subs = append(users, u), append(convs, c), append(subs, sub)
			}
			for round := range 3 {
				for k := range n {
					d.send(users[k], convs[k], fmt.Sprint("c", k, "r", round))
				}
				for k := range n {
					d.reply(subs[k], fmt.Sprint("c", k, "r", round), fmt.Sprint("conversation ", k, ", round ", round))
				}
			}
		})
	}
}
