package ratelimit

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxKeys is how many callers one Limiter tracks at most (a few
// hundred bytes each).
const DefaultMaxKeys = 50_000

// Limiter holds one token bucket per key, all of the same Rate. Memory stays
// bounded whatever keys callers make up: a bucket unused long enough to be
// full again is dropped (a new one would be the same), and past maxKeys the
// least recently used bucket is dropped (that key starts afresh).
type Limiter struct {
	rate    Rate
	limit   rate.Limit
	idle    time.Duration // an unused bucket is full after this long
	maxKeys int

	mu   sync.Mutex
	keys map[string]*list.Element // of *bucket
	lru  list.List                // front: most recently used
}

type bucket struct {
	key  string
	lim  *rate.Limiter
	used time.Time
}

// NewLimiter returns a Limiter of r (which must not be off) tracking at
// most maxKeys keys (0: DefaultMaxKeys).
func NewLimiter(r Rate, maxKeys int) *Limiter {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Limiter{rate: r, limit: rate.Limit(float64(r.Events) / r.Per.Seconds()), idle: r.fill(),
		maxKeys: maxKeys, keys: map[string]*list.Element{}}
}

// Len is the number of keys tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// bucket returns key's bucket at now, creating it, after dropping the
// buckets that are full again and, at the cap, the least recently used.
func (l *Limiter) bucket(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	for e := l.lru.Back(); e != nil && now.Sub(e.Value.(*bucket).used) >= l.idle; e = l.lru.Back() {
		l.drop(e)
	}
	if e, ok := l.keys[key]; ok {
		b := e.Value.(*bucket)
		b.used = now
		l.lru.MoveToFront(e)
		return b.lim
	}
	if len(l.keys) >= l.maxKeys {
		l.drop(l.lru.Back())
	}
	b := &bucket{key: key, lim: rate.NewLimiter(l.limit, l.rate.Burst), used: now}
	l.keys[key] = l.lru.PushFront(b)
	return b.lim
}

func (l *Limiter) drop(e *list.Element) {
	delete(l.keys, e.Value.(*bucket).key)
	l.lru.Remove(e)
}

// take spends one request of key's bucket at now. A refused request spends
// nothing until undone or kept: the caller cancels it when another limit
// refuses.
func (l *Limiter) take(key string, now time.Time) taken {
	lim := l.bucket(key, now)
	res := lim.ReserveN(now, 1)
	t := taken{rate: l.rate, res: res, wait: res.DelayFrom(now)}
	if t.wait > 0 {
		res.CancelAt(now)
	}
	tokens := max(lim.TokensAt(now), 0)
	t.remaining = int(tokens)
	t.reset = time.Duration((float64(l.rate.Burst) - tokens) * float64(l.rate.Per) / float64(l.rate.Events))
	return t
}

// taken is the outcome of take.
type taken struct {
	rate      Rate
	res       *rate.Reservation
	wait      time.Duration // > 0: refused, allowed after this long
	remaining int
	reset     time.Duration
}
