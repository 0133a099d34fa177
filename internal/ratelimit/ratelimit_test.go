package ratelimit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		str  string
	}{
		{"", Rate{}, "off"},
		{"off", Rate{}, "off"},
		{"0", Rate{}, "off"},
		{"100/s", Rate{100, time.Second, 100}, "100/s"},
		{"6000/m", Rate{6000, time.Minute, 6000}, "6000/m"},
		{" 3/h ", Rate{3, time.Hour, 3}, "3/h"},
		{"20/10s,burst=5", Rate{20, 10 * time.Second, 5}, "20/10s,burst=5"},
		{"1/1m30s", Rate{1, 90 * time.Second, 1}, "1/1m30s"},
		{"5/m, burst=50", Rate{5, time.Minute, 50}, "5/m,burst=50"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseRate(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if got.String() != tc.str {
				t.Errorf("String() = %q, want %q", got.String(), tc.str)
			}
		})
	}
	for _, in := range []string{"100", "x/s", "-1/s", "1/d", "1/0s", "1/48h", "1/s,5", "1/s,burst=0", "1/s,burst=x", "1/s,bust=3", "1/500us"} {
		t.Run("bad "+in, func(t *testing.T) {
			if r, err := ParseRate(in); err == nil || !strings.Contains(err.Error(), "N/PERIOD") {
				t.Fatalf("ParseRate(%q) = %+v, %v; want an error showing the syntax", in, r, err)
			}
		})
	}
}

var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// allow asks the limits, which must have an opinion.
func allow(t *testing.T, l *Limits, keys ...Key) Decision {
	t.Helper()
	d, ok := l.Allow(keys...)
	if !ok {
		t.Fatalf("Allow(%v): no limit applied", keys)
	}
	return d
}

func TestBurstThenRefused(t *testing.T) {
	clock := platform.NewManualClock(start)
	l := New(Rates{Token: {Events: 3, Per: time.Hour, Burst: 3}}, clock, 0)
	a := Key{Token, "a"}
	for i := 2; i >= 0; i-- {
		d := allow(t, l, a)
		if !d.Allowed || d.Remaining != i || d.Kind != Token || d.RetryAfter != 0 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", 3-i, d, i)
		}
	}
	d := allow(t, l, a)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter != 20*time.Minute || d.Reset != time.Hour {
		t.Fatalf("4th request: %+v; want refused, retry after 20m, full again in 1h", d)
	}
	// Refusals spend nothing: the wait does not grow.
	if d := allow(t, l, a); d.Allowed || d.RetryAfter != 20*time.Minute {
		t.Fatalf("5th request: %+v; want refused, retry after 20m still", d)
	}
	if d := allow(t, l, Key{Token, "b"}); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("another key: %+v; want allowed with 2 remaining", d)
	}
}

func TestRefill(t *testing.T) {
	clock := platform.NewManualClock(start)
	l := New(Rates{ChatUser: {Events: 1, Per: time.Second, Burst: 2}}, clock, 0)
	u := Key{ChatUser, "u"}
	allow(t, l, u)
	allow(t, l, u)
	steps := []struct {
		advance time.Duration
		allowed bool
		retry   time.Duration
	}{
		{0, false, time.Second},
		{400 * time.Millisecond, false, 600 * time.Millisecond},
		{600 * time.Millisecond, true, 0},
		{0, false, time.Second},
		{5 * time.Second, true, 0}, // the bucket holds 2 at most
		{0, true, 0},
		{0, false, time.Second},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		d := allow(t, l, u)
		if d.Allowed != s.allowed || d.RetryAfter != s.retry {
			t.Fatalf("step %d (+%s): %+v; want allowed=%v retry after %s", i, s.advance, d, s.allowed, s.retry)
		}
	}
}

// A request counted against two limits is refused by the tighter one, which
// then reports its figures, and spends nothing of the other.
func TestSeveralLimits(t *testing.T) {
	clock := platform.NewManualClock(start)
	l := New(Rates{Token: {10, time.Hour, 10}, Bot: {2, time.Hour, 2}}, clock, 0)
	tok, bot := Key{Token, "t"}, Key{Bot, "b"}
	if d := allow(t, l, tok, bot); !d.Allowed || d.Kind != Bot || d.Remaining != 1 {
		t.Fatalf("first: %+v; want allowed, the bot's limit (1 left) reported", d)
	}
	allow(t, l, tok, bot)
	d := allow(t, l, tok, bot)
	if d.Allowed || d.Kind != Bot || d.Rate.Events != 2 {
		t.Fatalf("third: %+v; want refused by the bot's limit", d)
	}
	if d := allow(t, l, tok); !d.Allowed || d.Remaining != 7 {
		t.Fatalf("the token alone: %+v; want 7 left (two spent, the refused one not)", d)
	}
	if d, ok := l.Allow(Key{ChatUser, "u"}, Key{Address, "1.2.3.4"}); ok {
		t.Fatalf("kinds not limited: %+v, want no opinion", d)
	}
	if d, ok := (*Limits)(nil).Allow(tok); ok {
		t.Fatalf("nil Limits: %+v, want no opinion", d)
	}
	if New(Rates{Token: {}}, clock, 0) != nil {
		t.Fatal("New with every rate off is not nil")
	}
}

// A client cycling keys cannot grow the tracked set past the cap, and
// buckets full again are dropped.
func TestKeysBounded(t *testing.T) {
	clock := platform.NewManualClock(start)
	l := New(Rates{Address: {Events: 1, Per: time.Second, Burst: 1}}, clock, 100)
	lim := l.by[Address]
	for i := range 10_000 {
		allow(t, l, Key{Address, fmt.Sprint("10.0.", i/256, ".", i%256)})
		if n := lim.Len(); n > 100 {
			t.Fatalf("after %d keys: %d tracked, want at most 100", i+1, n)
		}
	}
	// The most recent keys are still counted.
	if d := allow(t, l, Key{Address, "10.0.39.15"}); d.Allowed {
		t.Fatalf("a recent key was forgotten: %+v", d)
	}
	clock.Advance(time.Second)
	allow(t, l, Key{Address, "fresh"})
	if n := lim.Len(); n != 1 {
		t.Fatalf("after every bucket refilled: %d tracked, want 1", n)
	}
}
