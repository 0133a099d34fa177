package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
)

// chatModel is one chat user: its conversations and the messages the
// server acknowledged (id -> text).
type chatModel struct {
	user  harness.ChatUser
	seq   int
	convs []string
	acked map[string]string
	sent  int
}

// chatLoad sends messages as the user, each after the previous one's
// reply, to either of its conversations (so that its user state is written
// by one event at a time), until the server is killed or a request gets no
// answer. It returns the acknowledged messages.
func (h *crash) chatLoad(ctx context.Context, m *chatModel, rng *rand.Rand, killed *atomic.Bool) int {
	if m.acked == nil {
		m.acked = map[string]string{}
	}
	acked := 0
	for !killed.Load() && ctx.Err() == nil {
		conv := m.convs[rng.IntN(len(m.convs))]
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
// one reply carrying the right conversation count, user count and previous
// message: a lost or doubled reply, or a lost state write, breaks them.
func (h *crash) checkMessages(ctx context.Context, final bool) {
	for _, m := range h.users {
		// The user's messages in every conversation, each with the count
		// and previous message its conversation's state must have had.
		type userMessage struct {
			harness.Message
			c    int
			prev string
		}
		var mine []userMessage
		replies := map[string][]reply{}
		byID := map[string]harness.Message{}
		for _, conv := range m.convs {
			ms, err := h.c.ListMessages(ctx, h.bot.ChatURL, m.user, conv, 0)
			if err != nil {
				h.failf("messages", "listMessages of %s: %v", conv, err)
				return
			}
			count, prev := 0, "-"
			for _, msg := range ms {
				byID[msg.ID] = msg
				switch msg.UserID {
				case m.user.ID:
					count++
					mine = append(mine, userMessage{msg, count, prev})
					prev = msg.ID
				case h.bot.ID:
					r, ok := parseReply(msg.Payload.Text)
					if !ok {
						h.failf("reply", "%s: unexpected bot message %q", conv, msg.Payload.Text)
						continue
					}
					replies[r.to] = append(replies[r.to], r)
				default:
					h.failf("messages", "%s: message %s from an unknown user %s", conv, msg.ID, msg.UserID)
				}
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
		// The user's count runs over both conversations, in the order the
		// messages were written (one at a time).
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].CreatedAt < mine[j].CreatedAt })
		for i, msg := range mine {
			c, prev := msg.c, msg.prev
			rs := replies[msg.ID]
			switch {
			case len(rs) == 0:
				h.failf("reply-once", "message %s (%q) in %s has no reply %s after the restart", msg.ID, msg.Payload.Text, msg.ConversationID, h.opt.settle)
			case len(rs) > 1:
				h.failf("reply-once", "message %s (%q) has %d replies: %+v", msg.ID, msg.Payload.Text, len(rs), rs)
			case rs[0].c != c || rs[0].prev != prev || rs[0].u != i+1:
				h.failf("state", "message %s (%q): reply says c=%d u=%d prev=%s, want c=%d u=%d prev=%s (a state write was lost or repeated)",
					msg.ID, msg.Payload.Text, rs[0].c, rs[0].u, rs[0].prev, c, i+1, prev)
			}
		}
	}
}
