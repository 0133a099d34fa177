package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/botplatform/botplatform/internal/store/storetest"
)

// pgHubs starts n hubs on the test database, as n processes would.
func pgHubs(t *testing.T, n int) (string, []*PGHub) {
	t.Helper()
	url := storetest.PostgresURL(t)
	var hubs []*PGHub
	for range n {
		h, err := NewPGHub(context.Background(), url, StreamLimits{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		hubs = append(hubs, h)
	}
	return url, hubs
}

// uniqueConv is a conversation id no other test publishes to.
func uniqueConv(t *testing.T, name string) string {
	return fmt.Sprintf("conv_%s_%s_%d", strings.ReplaceAll(t.Name(), "/", "_"), name, time.Now().UnixNano())
}

// collect reads n frames from s, failing past a generous deadline.
func collect(t *testing.T, s *Subscription, n int, what string) []string {
	t.Helper()
	var got []string
	deadline := time.After(60 * time.Second)
	for len(got) < n {
		select {
		case f := <-s.C:
			got = append(got, string(f))
		case <-s.Done:
			t.Fatalf("%s: stream ended after %d of %d signals", what, len(got), n)
		case <-deadline:
			t.Fatalf("%s: %d of %d signals after 60 s", what, len(got), n)
		}
	}
	return got
}

// TestPGHubOrderUnderConcurrentPublishers: signals published concurrently
// in one process reach another process in the very order that process's
// own listeners received them.
func TestPGHubOrderUnderConcurrentPublishers(t *testing.T) {
	_, hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	conv := uniqueConv(t, "c")
	onA := subscribe(t, a, conv, "ua")
	onB := subscribe(t, b, conv, "ub")
	const publishers, each = 8, 30 // fewer than a listener's buffer holds
	total := publishers * each
	var gotA, gotB []string
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); gotA = collect(t, onA, total, "publishing process") }()
	go func() { defer readers.Done(); gotB = collect(t, onB, total, "other process") }()
	var wg sync.WaitGroup
	for g := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				typ := "message_created"
				if i%3 == 1 {
					typ = "typing_started" // not replayable: delivered for the listener
				}
				a.Publish(conv, Signal{typ, map[string]int{"g": g, "i": i}})
			}
		}()
	}
	wg.Wait()
	readers.Wait()
	if t.Failed() {
		return
	}
	for k := range gotA {
		if gotA[k] != gotB[k] {
			t.Fatalf("signal %d: the publishing process delivered %s, the other %s: not the same order", k, gotA[k], gotB[k])
		}
	}
	next := map[int]int{}
	for _, f := range gotB {
		var s struct{ Data struct{ G, I int } }
		if err := json.Unmarshal([]byte(f), &s); err != nil {
			t.Fatal(err)
		}
		if s.Data.I != next[s.Data.G] {
			t.Fatalf("publisher %d: signal %d arrived when %d was due", s.Data.G, s.Data.I, next[s.Data.G])
		}
		next[s.Data.G]++
	}
}

// TestPGHubLargeSignalsInterleaved: signals larger than a notification
// travel in pieces, between small ones, and arrive whole and in order.
func TestPGHubLargeSignalsInterleaved(t *testing.T) {
	_, hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	conv, other := uniqueConv(t, "c"), uniqueConv(t, "other")
	onA := subscribe(t, a, conv, "ua")
	onB := subscribe(t, b, conv, "ub")
	var wg sync.WaitGroup
	const n = 40
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				text := fmt.Sprintf("small %d/%d", g, i)
				if i%2 == 0 {
					// Multi-byte runes straddle the piece boundaries.
					text = fmt.Sprintf("big %d/%d ", g, i) + strings.Repeat("é漢x", 1000+i*700)
				}
				a.Publish(conv, Signal{"message_created", map[string]string{"text": text}})
				if i%5 == 0 {
					// Pieced, for a conversation nobody listens to on b.
					a.Publish(other, Signal{"message_updated", map[string]string{"text": strings.Repeat("z", 20000)}})
				}
			}
		}()
	}
	wg.Wait()
	gotA := collect(t, onA, 2*n, "publishing process")
	gotB := collect(t, onB, 2*n, "other process")
	for k := range gotA {
		if gotA[k] != gotB[k] {
			t.Fatalf("signal %d: %d bytes in the publishing process, %d in the other: %.80q vs %.80q", k, len(gotA[k]), len(gotB[k]), gotA[k], gotB[k])
		}
	}
	if biggest := len(slices.MaxFunc(gotB, func(x, y string) int { return len(x) - len(y) })); biggest < 4*pieceBytes {
		t.Fatalf("the biggest signal has %d bytes: none needed several pieces", biggest)
	}
	select {
	case f := <-onB.C:
		t.Fatalf("an extra signal: %.80q", f)
	default:
	}
}

// TestPGHubSchemasApart: installations in two schemas of one database do
// not hear each other's signals, even for the same conversation id.
func TestPGHubSchemasApart(t *testing.T) {
	_, first := pgHubs(t, 2)
	_, second := pgHubs(t, 2)
	conv := uniqueConv(t, "c")
	onFirst := subscribe(t, first[1], conv, "u1")
	onSecond := subscribe(t, second[1], conv, "u2")
	first[0].Publish(conv, Signal{"typing_started", map[string]string{"from": "first"}})
	if got := collect(t, onFirst, 1, "the first schema's listener"); !strings.Contains(got[0], `"first"`) {
		t.Fatalf("the first schema's listener received %q", got)
	}
	// Notifications reach a listening connection in commit order: had the
	// second installation heard the first, its listener would have that
	// signal before this one.
	second[0].Publish(conv, Signal{"typing_started", map[string]string{"from": "second"}})
	if got := collect(t, onSecond, 1, "the second schema's listener"); !strings.Contains(got[0], `"second"`) {
		t.Fatalf("the second schema's listener received %q, a signal of the other installation", got)
	}
}

func TestChannelOf(t *testing.T) {
	public, a, b := "public", "tenant_a", strings.Repeat("b", 63)
	if got := channelOf(&public); got != pgChannel {
		t.Fatalf("public schema: %q, want %q (what earlier versions listen to)", got, pgChannel)
	}
	if got := channelOf(nil); got != pgChannel {
		t.Fatalf("no schema: %q", got)
	}
	if channelOf(&a) == channelOf(&b) || channelOf(&a) == pgChannel {
		t.Fatalf("schemas share a channel: %q, %q", channelOf(&a), channelOf(&b))
	}
	if n := len(channelOf(&b)); n > 63 {
		t.Fatalf("channel name of %d bytes: PostgreSQL refuses more than 63", n)
	}
}

// TestPGHubNotifiesOncePerGap: a signal published right after a
// notification waits for the gap and goes with those published meanwhile,
// in one statement and in order; Close sends it without waiting.
func TestPGHubNotifiesOncePerGap(t *testing.T) {
	url, hubs := pgHubs(t, 1)
	b := hubs[0]
	a, err := newPGHub(context.Background(), url, StreamLimits{}, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	conv := uniqueConv(t, "c")
	s := subscribe(t, b, conv, "u")
	signal := func(n int) Signal { return Signal{"typing_started", map[string]int{"n": n}} }

	// Nothing was notified before: the first signal goes at once.
	a.Publish(conv, signal(0))
	if got := collect(t, s, 1, "the first signal"); !strings.Contains(got[0], `"n":0`) {
		t.Fatalf("first signal: %q", got)
	}
	for i := 1; i <= 10; i++ {
		a.Publish(conv, signal(i))
	}
	time.Sleep(300 * time.Millisecond)
	if got := drain(s); len(got) != 0 {
		t.Fatalf("received %q within the gap after the first notification", got)
	}
	if n := a.flushes.Load(); n != 1 {
		t.Fatalf("%d notifying statements before the gap ended, want 1", n)
	}
	a.Close()
	got := collect(t, s, 10, "the signals published within the gap")
	for i, f := range got {
		if !strings.Contains(f, fmt.Sprintf(`"n":%d}`, i+1)) {
			t.Fatalf("signal %d: %q, want n=%d (in order)", i, f, i+1)
		}
	}
	if n := a.flushes.Load(); n != 2 {
		t.Fatalf("%d notifying statements in all, want 2 (the ten signals in one)", n)
	}
}

// TestPGHubCloseUserAcrossProcesses: closing a user's streams in one
// process ends them in the others, after the signals published before.
func TestPGHubCloseUserAcrossProcesses(t *testing.T) {
	_, hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	conv := uniqueConv(t, "c")
	user := conv + "_user"
	gone := subscribe(t, b, conv, user)
	stays := subscribe(t, b, conv, user+"_other")
	a.Publish(conv, Signal{"typing_started", map[string]string{"n": "before"}})
	a.CloseUser(user)
	a.Publish(conv, Signal{"typing_started", map[string]string{"n": "after"}})
	if got := collect(t, stays, 2, "the other user's stream"); !strings.Contains(got[0], "before") || !strings.Contains(got[1], "after") {
		t.Fatalf("the other user's stream: %q", got)
	}
	select {
	case <-gone.Done:
	case <-time.After(60 * time.Second):
		t.Fatal("the closed user's stream is still open after 60 s")
	}
	if got := drain(gone); len(got) != 1 || !strings.Contains(got[0], "before") {
		t.Fatalf("the closed user's stream received %q, want only the signal published before", got)
	}
}

// TestPGHubReconnects: when the database ends either connection, the hub
// connects again and signals flow again, in order.
func TestPGHubReconnects(t *testing.T) {
	url, hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	conv := uniqueConv(t, "c")
	onB := subscribe(t, b, conv, "ub")
	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for _, pid := range []uint32{a.notifyPID.Load(), b.listenPID.Load()} {
		if _, err := admin.Exec(context.Background(), "SELECT pg_terminate_backend($1)", int(pid)); err != nil {
			t.Fatal(err)
		}
	}
	// Signals sent while a connection is down are lost: probe until one
	// gets through.
	deadline := time.Now().Add(60 * time.Second)
	for probing := true; probing; {
		if time.Now().After(deadline) {
			t.Fatal("no signal reached the other process within 60 s of its connections ending")
		}
		a.Publish(conv, Signal{"typing_started", map[string]string{"probe": "x"}})
		select {
		case <-onB.C:
			probing = false
		case <-time.After(200 * time.Millisecond):
		}
	}
	if a.notifyPID.Load() == 0 || b.listenPID.Load() == 0 {
		t.Fatal("no new connection")
	}
	for i := range 50 {
		a.Publish(conv, Signal{"message_created", map[string]int{"i": i}})
	}
	next := 0
	deadline = time.Now().Add(60 * time.Second)
	for next < 50 {
		select {
		case f := <-onB.C:
			if strings.Contains(string(f), "probe") {
				continue // probes still on their way
			}
			if want := fmt.Sprintf(`{"type":"message_created","data":{"i":%d}}`, next); string(f) != want {
				t.Fatalf("after reconnecting: %s, want %s", f, want)
			}
			next++
		case <-time.After(time.Until(deadline)):
			t.Fatalf("after reconnecting: %d of 50 signals within 60 s", next)
		}
	}
}

// BenchmarkPGHubPublish: signals per second from one process's publishers
// (32 goroutines over 100 conversations, message-sized) to listeners in
// another process, through PostgreSQL:
//
//	BOTPLATFORM_TEST_DATABASE_URL=postgres://… go test -run '^$' -bench PGHubPublish ./internal/chat/
func BenchmarkPGHubPublish(b *testing.B) {
	url := storetest.PostgresURL(b)
	var hubs []*PGHub
	for range 2 {
		h, err := NewPGHub(context.Background(), url, StreamLimits{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(h.Close)
		hubs = append(hubs, h)
	}
	a, other := hubs[0], hubs[1]
	convs := make([]string, 100)
	var received atomic.Int64
	for i := range convs {
		convs[i] = fmt.Sprintf("bench_%d_%d", time.Now().UnixNano(), i)
		s, err := other.Subscribe(convs[i], "u")
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				select {
				case <-s.C:
					received.Add(1)
				case <-s.Done:
					return
				}
			}
		}()
	}
	text := strings.Repeat("x", 200)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			a.Publish(convs[i%int64(len(convs))], Signal{"message_created", map[string]any{"id": i, "text": text}})
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for received.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d signals received", received.Load(), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signals/s")
}
