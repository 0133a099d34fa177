package ratelimit

import (
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Kind names what a limit counts requests of.
type Kind string

const (
	Token    Kind = "token"     // an authenticated caller's credential
	Bot      Kind = "bot"       // a bot, whoever acts for it
	ChatUser Kind = "chat_user" // a Chat API user (x-user-key)
	Address  Kind = "address"   // the client address of unauthenticated Chat API calls
)

// Kinds lists every kind, in the order of the settings.
var Kinds = []Kind{Token, Bot, ChatUser, Address}

// Noun is k as a message names it.
func (k Kind) Noun() string {
	if k == ChatUser {
		return "chat user"
	}
	return string(k)
}

// Rates are the limits of each kind; a kind absent or off is not limited.
type Rates map[Kind]Rate

// Key is one caller of a kind.
type Key struct {
	Kind Kind
	ID   string
}

// Limits applies the limits of every kind, on the clock's time.
type Limits struct {
	clock platform.Clock
	by    map[Kind]*Limiter
}

// New returns the limits of rates, each tracking at most maxKeys callers
// (0: DefaultMaxKeys); nil when no rate is set.
func New(rates Rates, clock platform.Clock, maxKeys int) *Limits {
	l := &Limits{clock: clock, by: map[Kind]*Limiter{}}
	for k, r := range rates {
		if !r.Off() {
			l.by[k] = NewLimiter(r, maxKeys)
		}
	}
	if len(l.by) == 0 {
		return nil
	}
	return l
}

// Kinds are the kinds limited, in the order of Kinds.
func (l *Limits) Kinds() []Kind {
	var out []Kind
	for _, k := range Kinds {
		if l != nil && l.by[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// Decision is what the limits say of one request: whether it may go on, and
// the figures of the limit closest to refusing (the one that refused).
type Decision struct {
	Allowed   bool
	Kind      Kind
	Rate      Rate
	Remaining int           // requests allowed at once from now
	Reset     time.Duration // until the bucket is full again
	// RetryAfter is how long a refused caller should wait.
	RetryAfter time.Duration
}

// Allow counts a request against the limit of each key's kind. It is
// refused when any limit is exhausted, and then spends nothing of the
// others. ok is false when no key's kind is limited (no figures to give).
func (l *Limits) Allow(keys ...Key) (d Decision, ok bool) {
	if l == nil {
		return Decision{}, false
	}
	now := l.clock.Now()
	var all []taken
	var kinds []Kind
	for _, k := range keys {
		if lim := l.by[k.Kind]; lim != nil && k.ID != "" {
			all = append(all, lim.take(k.ID, now))
			kinds = append(kinds, k.Kind)
		}
	}
	if len(all) == 0 {
		return Decision{}, false
	}
	// The refusal with the longest wait, else the fewest requests left.
	best := -1
	for i, t := range all {
		if best < 0 || t.wait > all[best].wait || (t.wait == all[best].wait && t.remaining < all[best].remaining) {
			best = i
		}
	}
	b := all[best]
	d = Decision{Allowed: b.wait <= 0, Kind: kinds[best], Rate: b.rate, Remaining: b.remaining, Reset: b.reset, RetryAfter: b.wait}
	if !d.Allowed {
		for _, t := range all {
			if t.wait <= 0 {
				t.res.CancelAt(now)
			}
		}
	}
	return d, true
}
