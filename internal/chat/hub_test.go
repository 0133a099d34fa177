package chat

import (
	"fmt"
	"strings"
	"testing"
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
	h := NewLocalHub()
	h.Publish("c1", Signal{"participant_added", map[string]string{"participantId": "p"}})
	h.Publish("c1", Signal{"message_created", map[string]string{"id": "m1"}})
	h.Publish("c1", Signal{"event_created", map[string]string{"id": "e1"}})
	h.Publish("c1", Signal{"message_deleted", map[string]string{"id": "m1"}})
	h.Publish("c2", Signal{"message_created", map[string]string{"id": "other"}})
	got := drain(h.Subscribe("c1", "u"))
	if len(got) != 2 || !strings.Contains(got[0], `"m1"`) || !strings.Contains(got[1], `"e1"`) {
		t.Fatalf("replayed %q, want the message then the event of c1 only", got)
	}

	// At most replayMax, the newest.
	for i := range replayMax + 10 {
		h.Publish("c3", Signal{"message_created", map[string]string{"id": fmt.Sprint("m", i)}})
	}
	got = drain(h.Subscribe("c3", "u"))
	if len(got) != replayMax || !strings.Contains(got[0], fmt.Sprintf(`"m%d"`, 10)) {
		t.Fatalf("replayed %d signals starting with %s, want %d starting with m10", len(got), got[0], replayMax)
	}
}

func TestReplayForgetsOldSignals(t *testing.T) {
	h := NewLocalHub()
	h.Publish("c1", Signal{"message_created", map[string]string{"id": "old"}})
	// Age the remembered signal past the window.
	h.mu.Lock()
	for i := range h.recent["c1"] {
		h.recent["c1"][i].at = h.recent["c1"][i].at.Add(-2 * ReplayWindow)
	}
	h.mu.Unlock()
	if got := drain(h.Subscribe("c1", "u")); len(got) != 0 {
		t.Fatalf("replayed %q from before the window", got)
	}
}
