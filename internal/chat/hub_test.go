package chat

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

func drain(s *Subscription) []string {
	var out []string
	for {
		select {
		case f := <-s.C:
			out = append(out, string(f))
		default:
			return out
		}
	}
}

func TestReplayOnlyRecentMessagesAndEvents(t *testing.T) {
	h := NewLocalHub(StreamLimits{})
	h.Publish("c1", Signal{"participant_added", map[string]string{"participantId": "p"}})
	h.Publish("c1", Signal{"message_created", map[string]string{"id": "m1"}})
	h.Publish("c1", Signal{"event_created", map[string]string{"id": "e1"}})
	h.Publish("c1", Signal{"message_deleted", map[string]string{"id": "m1"}})
	h.Publish("c2", Signal{"message_created", map[string]string{"id": "other"}})
	got := drain(subscribe(t, h, "c1", "u"))
	if len(got) != 2 || !strings.Contains(got[0], `"m1"`) || !strings.Contains(got[1], `"e1"`) {
		t.Fatalf("replayed %q, want the message then the event of c1 only", got)
	}

	// At most replayMax, the newest.
	for i := range replayMax + 10 {
		h.Publish("c3", Signal{"message_created", map[string]string{"id": fmt.Sprint("m", i)}})
	}
	got = drain(subscribe(t, h, "c3", "u"))
	if len(got) != replayMax || !strings.Contains(got[0], fmt.Sprintf(`"m%d"`, 10)) {
		t.Fatalf("replayed %d signals starting with %s, want %d starting with m10", len(got), got[0], replayMax)
	}
}

func TestReplayForgetsOldSignals(t *testing.T) {
	h := NewLocalHub(StreamLimits{})
	h.Publish("c1", Signal{"message_created", map[string]string{"id": "old"}})
	// Age the remembered signal past the window.
	h.mu.Lock()
	for i := range h.recent["c1"] {
		h.recent["c1"][i].at = h.recent["c1"][i].at.Add(-2 * ReplayWindow)
	}
	h.mu.Unlock()
	if got := drain(subscribe(t, h, "c1", "u")); len(got) != 0 {
		t.Fatalf("replayed %q from before the window", got)
	}
}

func subscribe(t *testing.T, h Hub, conv, user string) *Subscription {
	t.Helper()
	s, err := h.Subscribe(conv, user)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStreamLimits(t *testing.T) {
	h := NewLocalHub(StreamLimits{PerUser: 2, PerConversation: 3})
	refused := func(conv, user, why string) {
		t.Helper()
		s, err := h.Subscribe(conv, user)
		e, ok := platform.AsError(err)
		if s != nil || !ok || e.Type != platform.TypeRateLimited || e.RetryAfter <= 0 || !strings.Contains(e.Message, why) {
			t.Fatalf("Subscribe(%s, %s) = %v, %v; want RateLimited (%s) with a Retry-After", conv, user, s, err, why)
		}
	}
	a1 := subscribe(t, h, "c1", "a")
	subscribe(t, h, "c2", "a")
	refused("c3", "a", "user already has 2")
	subscribe(t, h, "c1", "b")
	subscribe(t, h, "c1", "b")
	refused("c1", "c", "conversation already has 3")
	a1.Close()
	subscribe(t, h, "c1", "c") // a1's slot, in the user's and the conversation's counts
	refused("c1", "a", "conversation already has 3")
	subscribe(t, h, "c4", "a")
	// Zero is no limit.
	h = NewLocalHub(StreamLimits{})
	for range 100 {
		subscribe(t, h, "c", "u")
	}
}

// TestNoStreamAfterCloseAll: a stream opened while the server shuts down
// (a client reconnecting at that moment) would never be ended and would
// hold the shutdown until its deadline; it is refused instead.
func TestNoStreamAfterCloseAll(t *testing.T) {
	h := NewLocalHub(StreamLimits{})
	before, err := h.Subscribe("c1", "u1")
	if err != nil {
		t.Fatal(err)
	}
	h.CloseAll()
	select {
	case <-before.Done:
	default:
		t.Fatal("CloseAll left a stream open")
	}
	_, err = h.Subscribe("c1", "u1")
	var pe *platform.Error
	if !errors.As(err, &pe) || pe.Type != platform.TypeUnavailable {
		t.Fatalf("Subscribe after CloseAll: %v; want ServiceUnavailable", err)
	}
}
