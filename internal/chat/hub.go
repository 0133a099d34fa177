package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Signal is a live update of a conversation (compat-notes §1.8).
type Signal struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// Hub fans signals out to the listeners of conversations. This one lives in
// the process; the interface lets several processes share one later.
type Hub interface {
	// Publish sends s to every listener of the conversation.
	Publish(conversationID string, s Signal)
	// Subscribe registers a listener of a conversation for a user, or
	// refuses with 429 RateLimited past the process's StreamLimits.
	Subscribe(conversationID, userID string) (*Subscription, error)
	// CloseUser ends every stream of that user.
	CloseUser(userID string)
	// CloseAll ends every stream and refuses new ones (server shutdown).
	CloseAll()
}

// Subscription delivers encoded signals on C until Done is closed.
type Subscription struct {
	C    chan []byte
	Done chan struct{}
	once sync.Once
	hub  *LocalHub
	conv string
	user string
}

// Close unsubscribes.
func (s *Subscription) Close() { s.hub.remove(s) }

func (s *Subscription) end() { s.once.Do(func() { close(s.Done) }) }

// subscriberBuffer is how many signals a slow listener may lag behind before
// its stream is ended (the client then reconnects and reloads).
const subscriberBuffer = 256

// Replay: a new listener first receives the conversation's message_created
// and event_created signals of the last ReplayWindow (at most replayMax of
// them), so that a message sent just before a client starts listening, and
// the bot's answer to it, are not missed. Other signals are not replayed.
const (
	ReplayWindow = time.Second
	replayMax    = 32
)

// StreamLimits caps the listeners one process holds open, so that one
// user cannot exhaust its connections and file descriptors. Zero is no cap.
type StreamLimits struct {
	PerUser         int
	PerConversation int
}

// streamRetryAfter is what a refused listener is told to wait: slots free
// up only when other streams of the user or conversation end.
const streamRetryAfter = 10 * time.Second

type recentFrame struct {
	at    time.Time
	frame []byte
}

// LocalHub is an in-process Hub.
type LocalHub struct {
	mu        sync.Mutex
	byConv    map[string]map[*Subscription]struct{}
	byUser    map[string]map[*Subscription]struct{}
	recent    map[string][]recentFrame
	lastSweep time.Time
	limits    StreamLimits
	// closed is set by CloseAll: the server is shutting down, and a
	// stream opened now would hold its shutdown until the deadline.
	closed bool
}

var _ Hub = (*LocalHub)(nil)

// NewLocalHub returns an empty hub holding at most limits listeners.
func NewLocalHub(limits StreamLimits) *LocalHub {
	return &LocalHub{byConv: map[string]map[*Subscription]struct{}{}, byUser: map[string]map[*Subscription]struct{}{},
		recent: map[string][]recentFrame{}, limits: limits}
}

func (h *LocalHub) Subscribe(conversationID, userID string) (*Subscription, error) {
	s := &Subscription{C: make(chan []byte, subscriberBuffer), Done: make(chan struct{}), hub: h, conv: conversationID, user: userID}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, platform.Errorf(platform.TypeUnavailable, "the server is shutting down; listen again in a moment")
	}
	if err := h.full(conversationID, userID); err != nil {
		h.mu.Unlock()
		return nil, err
	}
	add(h.byConv, conversationID, s)
	add(h.byUser, userID, s)
	since := time.Now().Add(-ReplayWindow)
	for _, r := range h.recent[conversationID] {
		if r.at.After(since) {
			s.C <- r.frame // fits: replayMax < subscriberBuffer
		}
	}
	h.mu.Unlock()
	return s, nil
}

// full refuses a listener past the limits. Called with h.mu held.
func (h *LocalHub) full(conversationID, userID string) error {
	var e *platform.Error
	if n := h.limits.PerUser; n > 0 && len(h.byUser[userID]) >= n {
		e = platform.Errorf(platform.TypeRateLimited, "this user already has %d open streams, the limit; close one or retry later", n)
	} else if n := h.limits.PerConversation; n > 0 && len(h.byConv[conversationID]) >= n {
		e = platform.Errorf(platform.TypeRateLimited, "this conversation already has %d open streams, the limit; close one or retry later", n)
	}
	if e != nil {
		e.RetryAfter = streamRetryAfter
		return e
	}
	return nil
}

func add(m map[string]map[*Subscription]struct{}, k string, s *Subscription) {
	if m[k] == nil {
		m[k] = map[*Subscription]struct{}{}
	}
	m[k][s] = struct{}{}
}

func del(m map[string]map[*Subscription]struct{}, k string, s *Subscription) {
	delete(m[k], s)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

func (h *LocalHub) remove(s *Subscription) {
	h.mu.Lock()
	del(h.byConv, s.conv, s)
	del(h.byUser, s.user, s)
	h.mu.Unlock()
	s.end()
}

func encodeSignal(s Signal) ([]byte, error) { return json.Marshal(s) }

// Publish encodes the signal once and queues it for each listener; a
// listener whose buffer is full is dropped rather than slowing the others.
func (h *LocalHub) Publish(conversationID string, sig Signal) {
	frame, err := encodeSignal(sig)
	if err != nil {
		return
	}
	h.publishFrame(conversationID, frame)
}

func (h *LocalHub) publishFrame(conversationID string, frame []byte) {
	now := time.Now()
	h.mu.Lock()
	if replayable(frame) {
		h.remember(conversationID, frame, now)
	}
	var slow []*Subscription
	for s := range h.byConv[conversationID] {
		select {
		case s.C <- frame:
		default:
			slow = append(slow, s)
		}
	}
	h.mu.Unlock()
	for _, s := range slow {
		s.Close()
	}
}

// replayable tells the signals a new listener receives again: messages and
// events (encodeSignal writes the type first).
func replayable(frame []byte) bool {
	return bytes.HasPrefix(frame, []byte(replayMessage)) || bytes.HasPrefix(frame, []byte(replayEvent))
}

const (
	replayMessage = `{"type":"message_created"`
	replayEvent   = `{"type":"event_created"`
)

// remember keeps frame for replay, and now and then forgets the
// conversations that have been quiet for longer than the window.
func (h *LocalHub) remember(conversationID string, frame []byte, now time.Time) {
	rs := append(h.recent[conversationID], recentFrame{now, frame})
	since := now.Add(-ReplayWindow)
	i := 0
	for i < len(rs) && (len(rs)-i > replayMax || !rs[i].at.After(since)) {
		i++
	}
	h.recent[conversationID] = rs[i:]
	if now.Sub(h.lastSweep) < ReplayWindow {
		return
	}
	h.lastSweep = now
	for k, rs := range h.recent {
		if len(rs) == 0 || !rs[len(rs)-1].at.After(since) {
			delete(h.recent, k)
		}
	}
}

func (h *LocalHub) CloseUser(userID string) {
	h.mu.Lock()
	subs := make([]*Subscription, 0, len(h.byUser[userID]))
	for s := range h.byUser[userID] {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

func (h *LocalHub) CloseAll() {
	h.mu.Lock()
	h.closed = true
	var subs []*Subscription
	for _, m := range h.byConv {
		for s := range m {
			subs = append(subs, s)
		}
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// wants tells whether publishing frame (or a frame starting so) to the
// conversation would do anything: a listener receives it, or a new one
// would be replayed it.
func (h *LocalHub) wants(conversationID, frame string) bool {
	if strings.HasPrefix(frame, replayMessage) || strings.HasPrefix(frame, replayEvent) {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byConv[conversationID]) > 0
}
