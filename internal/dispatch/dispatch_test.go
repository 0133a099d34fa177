package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// claims counts a store's claims of jobs. A hook set in afterClaim runs
// once, in the first NextJobAt that follows a claim of its subject's job;
// one in aroundFinish, around the next FinishJobClaimNext.
type claims struct {
	store.Store
	n            atomic.Int64
	last         atomic.Pointer[[]platform.Job] // the last claim's
	afterClaim   atomic.Pointer[claimHook]
	aroundFinish atomic.Pointer[finishHook]
}

// claimHook runs once the dispatcher claimed a job of subject.
type claimHook struct {
	subject string
	run     func()
}

// finishHook runs before a FinishJobClaimNext, then after it with the job
// it claimed (nil for none).
type finishHook struct {
	before func()
	after  func(next *platform.Job)
}

func (c *claims) FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (*platform.Job, bool, error) {
	hook := c.aroundFinish.Swap(nil)
	if hook != nil {
		hook.before()
	}
	next, waiting, err := c.Store.FinishJobClaimNext(ctx, id, keep, states, logs, node, now, lease)
	if hook != nil {
		hook.after(next)
	}
	return next, waiting, err
}

func (c *claims) ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error) {
	c.n.Add(1)
	jobs, err := c.Store.ClaimJobs(ctx, kind, node, now, leaseUntil, limit)
	c.last.Store(&jobs)
	return jobs, err
}

func (c *claims) NextJobAt(ctx context.Context, kind string, now time.Time) (time.Time, bool, error) {
	if hook := c.afterClaim.Load(); hook != nil {
		if last := c.last.Load(); last != nil && slices.ContainsFunc(*last, func(j platform.Job) bool { return j.Subject == hook.subject }) &&
			c.afterClaim.CompareAndSwap(hook, nil) {
			hook.run()
		}
	}
	return c.Store.NextJobAt(ctx, kind, now)
}

const echoCode = `bot.on.message('*', async ({ message, client }) => {
	await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

// dispatching is a dispatcher running with an hour's poll, so that a lost
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
	vm := botruntime.New(st, cs, platform.SystemClock{}, botruntime.Config{})
	r := dispatch.New(st, platform.SystemClock{}, dispatch.Config{Poll: time.Hour, Workers: workers}, vm)
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
// claim on.
func TestDispatcherWakeAnsweredByClaim(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 0)
			// A test that fails leaves the dispatcher waiting: released
			// before the dispatcher stops (cleanups run last first).
			ended := make(chan struct{})
			t.Cleanup(func() { close(ended) })
			const rounds = 10
			var before int64
			for i := range rounds {
				u1, c1, sub1 := d.conversation()
				u2, c2, sub2 := d.conversation()
				between, queued := make(chan struct{}), make(chan struct{})
				d.st.afterClaim.Store(&claimHook{subject: c1.ID, run: func() {
					close(between)
					select {
					case <-queued:
					case <-ended:
					}
				}})
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
// and run by the same worker, not left for a claim of the dispatcher as
// "not due yet" by a time read before the message existed.
func TestDispatcherFinishClaimsWhatCameMeanwhile(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			d := startDispatching(t, backend, 0)
			u, c, sub := d.conversation()
			const rounds = 5
			claimed := make(chan *platform.Job, 1)
			// A test that fails leaves a finish waiting: released before
			// the dispatcher stops (cleanups run last first).
			ended := make(chan struct{})
			t.Cleanup(func() { close(ended) })
			arm := func() (finishing, queued chan struct{}) {
				finishing, queued = make(chan struct{}), make(chan struct{})
				d.st.aroundFinish.Store(&finishHook{
					before: func() {
						close(finishing)
						select {
						case <-queued:
						case <-ended:
						}
					},
					after: func(next *platform.Job) { claimed <- next },
				})
				return finishing, queued
			}
			finishing, queued := arm()
			d.send(u, c, "m0")
			for i := 1; i <= rounds; i++ {
				<-finishing // the event of the message before ended
				release := queued
				if i < rounds { // before this message's own finish can begin
					finishing, queued = arm()
				}
				d.send(u, c, fmt.Sprint("m", i))
				close(release)
				if next := <-claimed; next == nil {
					t.Fatalf("m%d, queued while m%d was finishing: the finish did not claim it", i, i-1)
				}
			}
			d.reply(sub, fmt.Sprint("m", rounds), "the last message")
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
