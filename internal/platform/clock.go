package platform

import (
	"sync"
	"time"
)

// Clock gives the current time; tests inject a ManualClock.
type Clock interface{ Now() time.Time }

// SystemClock reads the wall clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now().UTC() }

// ManualClock is a Clock that only moves when told to.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t.UTC()} }

func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// FormatTime renders a time the way every response does: UTC, RFC 3339 with
// milliseconds, ending in Z (the chat client rejects offsets). It is written
// out by hand because listings format three times per row and time.Format
// interprets its layout on every call.
func FormatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	if year < 0 || year > 9999 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	var b [24]byte
	put := func(i, v, n int) {
		for j := i + n - 1; j >= i; j-- {
			b[j] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, hour, 2)
	b[13] = ':'
	put(14, min, 2)
	b[16] = ':'
	put(17, sec, 2)
	b[19] = '.'
	put(20, ms, 3)
	b[23] = 'Z'
	return string(b[:])
}
