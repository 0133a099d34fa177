package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
)

// chatModel is one chat user: its conversation, the messages the server
// acknowledged (id -> text) and the messages whose reply was checked.
type chatModel struct {
	user    harness.ChatUser
	seq     int
	conv    string
	acked   map[string]string
	checked map[string]bool
	sent    int
}

// chatLoad sends messages as the user to its conversation, each after the
// previous one's reply, until the server is killed or a request gets no
// answer. It returns the acknowledged messages.
//
// One conversation per user: the events of a conversation run one after
// the other, each seeing the state the previous one saved, but events of
// two conversations of one user may overlap (a reply is visible before its
// event's state is saved), and then the user state keeps the last write.
func (h *crash) chatLoad(ctx context.Context, m *chatModel, rng *rand.Rand, killed *atomic.Bool) int {
	acked := 0
	conv := m.conv
	for !killed.Load() && ctx.Err() == nil {
		m.sent++
		text := fmt.Sprintf("m c%d u%d #%d", h.cycle, m.seq, m.sent)
		msg, err := h.c.SendText(ctx, h.bot.ChatURL, m.user, conv, text)
		if err != nil {
			if s := harness.Status(err); s != 0 && s < 500 {
				h.failf("chat", "createMessage: %v", err)
			}
			return acked
		}
		acked++
		m.acked[msg.ID] = text
		// Wait for the reply; a kill ends the wait.
		for !killed.Load() && ctx.Err() == nil {
			ms, err := h.c.ListMessages(ctx, h.bot.ChatURL, m.user, conv, 1)
			if err != nil {
				return acked
			}
			if replied(ms, msg.ID) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return acked
}

func replied(ms []harness.Message, id string) bool {
	for i := len(ms) - 1; i >= 0; i-- {
		if strings.HasPrefix(ms[i].Payload.Text, "re "+id+" ") {
			return true
		}
	}
	return false
}

// reply is a parsed answer of harness.CounterBotJS.
type reply struct {
	to, prev string
	c, u     int
}

func parseReply(text string) (reply, bool) {
	var r reply
	_, err := fmt.Sscanf(text, "re %s c=%d u=%d prev=%s", &r.to, &r.c, &r.u, &r.prev)
	return r, err == nil
}

// checkMessages requires every acknowledged message to be stored as sent
// and, when final, every user message (acknowledged or not) to have exactly
// one reply carrying the right conversation count, previous message and
// user count (equal to the conversation's: both scopes are saved in one
// transaction): a lost or doubled reply, or a lost or repeated state
// write, breaks them. Each message's reply is checked once.
func (h *crash) checkMessages(ctx context.Context, final bool) {
	for _, m := range h.users {
		ms, err := h.c.ListMessages(ctx, h.bot.ChatURL, m.user, m.conv, 0)
		if err != nil {
			h.failf("messages", "listMessages of %s: %v", m.conv, err)
			return
		}
		type userMessage struct {
			harness.Message
			n    int    // the conversation's count the state must have had
			prev string // and its previous message
		}
		var mine []userMessage
		replies := map[string][]reply{}
		byID := map[string]harness.Message{}
		prev := "-"
		for _, msg := range ms {
			byID[msg.ID] = msg
			switch msg.UserID {
			case m.user.ID:
				mine = append(mine, userMessage{msg, len(mine) + 1, prev})
				prev = msg.ID
			case h.bot.ID:
				r, ok := parseReply(msg.Payload.Text)
				if !ok {
					h.failf("reply", "%s: unexpected bot message %q", m.conv, msg.Payload.Text)
					continue
				}
				replies[r.to] = append(replies[r.to], r)
			default:
				h.failf("messages", "%s: message %s from an unknown user %s", m.conv, msg.ID, msg.UserID)
			}
		}
		for id, text := range m.acked {
			got, ok := byID[id]
			switch {
			case !ok:
				h.failf("message-kept", "user %s: acknowledged message %s (%q) is gone", m.user.ID, id, text)
			case got.Payload.Text != text:
				h.failf("message-kept", "user %s: message %s reads %q, sent %q", m.user.ID, id, got.Payload.Text, text)
			}
		}
		if !final {
			continue
		}
		for _, msg := range mine {
			if m.checked[msg.ID] {
				continue
			}
			m.checked[msg.ID] = true
			rs := replies[msg.ID]
			switch {
			case len(rs) == 0:
				h.failf("reply-once", "message %s (%q) in %s has no reply %s after the restart", msg.ID, msg.Payload.Text, m.conv, h.opt.settle)
			case len(rs) > 1:
				h.failf("reply-once", "message %s (%q) has %d replies: %+v", msg.ID, msg.Payload.Text, len(rs), rs)
			case rs[0].c != msg.n || rs[0].u != msg.n || rs[0].prev != msg.prev:
				h.failf("state", "message %s (%q): reply says c=%d u=%d prev=%s, want c=%d u=%d prev=%s (a state write was lost or repeated)",
					msg.ID, msg.Payload.Text, rs[0].c, rs[0].u, rs[0].prev, msg.n, msg.n, msg.prev)
			}
		}
	}
}
