// Package ratelimit caps how fast each caller (a token, a bot, a chat user,
// an address) may send requests, with one token bucket per caller.
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is a limit: Events per Per on average, and at most Burst at once
// (the bucket's size). The zero Rate is no limit.
type Rate struct {
	Events int
	Per    time.Duration
	Burst  int
}

// Off reports whether r limits nothing.
func (r Rate) Off() bool { return r.Events == 0 }

// Bounds of a rate, so that a typo cannot make a limit that never refills
// or a bucket as large as memory.
const (
	maxEvents = 1_000_000_000
	minPer    = time.Millisecond
	maxPer    = 24 * time.Hour
)

var units = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// Syntax is the form ParseRate reads, for error messages and help.
const Syntax = "N/PERIOD[,burst=B] such as 100/s, 6000/m or 20/10s,burst=5 (PERIOD: s, m, h or a duration; burst defaults to N), or off"

// ParseRate reads N/PERIOD[,burst=B]: N requests per PERIOD (s, m, h, or a
// duration such as 10s), at most B at once (default N). "", "off" and "0"
// are no limit.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" || s == "0" {
		return Rate{}, nil
	}
	bad := func(why string) (Rate, error) {
		return Rate{}, fmt.Errorf("%q: %s; want %s", s, why, Syntax)
	}
	spec, burst, hasBurst := strings.Cut(s, ",")
	n, period, ok := strings.Cut(spec, "/")
	if !ok {
		return bad("no /PERIOD")
	}
	var r Rate
	var err error
	if r.Events, err = strconv.Atoi(strings.TrimSpace(n)); err != nil || r.Events < 1 || r.Events > maxEvents {
		return bad(fmt.Sprintf("N must be a whole number from 1 to %d", maxEvents))
	}
	period = strings.TrimSpace(period)
	if r.Per = units[period]; r.Per == 0 {
		if r.Per, err = time.ParseDuration(period); err != nil {
			return bad("PERIOD must be s, m, h or a duration such as 10s")
		}
	}
	if r.Per < minPer || r.Per > maxPer {
		return bad(fmt.Sprintf("PERIOD must be from %s to %s", minPer, maxPer))
	}
	r.Burst = r.Events
	if hasBurst {
		v, ok := strings.CutPrefix(strings.TrimSpace(burst), "burst=")
		if r.Burst, err = strconv.Atoi(v); !ok || err != nil || r.Burst < 1 || r.Burst > maxEvents {
			return bad(fmt.Sprintf("burst must be burst=B with B a whole number from 1 to %d", maxEvents))
		}
	}
	return r, nil
}

// String is r in the form ParseRate reads ("off" for no limit).
func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	s := strconv.Itoa(r.Events) + "/" + period(r.Per)
	if r.Burst != r.Events {
		s += ",burst=" + strconv.Itoa(r.Burst)
	}
	return s
}

// Describe is r for people: "100 requests per minute, 20 at once".
func (r Rate) Describe() string {
	per := map[time.Duration]string{time.Second: "second", time.Minute: "minute", time.Hour: "hour"}[r.Per]
	if per == "" {
		per = r.Per.String()
	}
	noun := "requests"
	if r.Events == 1 {
		noun = "request"
	}
	s := fmt.Sprintf("%d %s per %s", r.Events, noun, per)
	if r.Burst != r.Events {
		s += fmt.Sprintf(", %d at once", r.Burst)
	}
	return s
}

func period(d time.Duration) string {
	for u, v := range units {
		if d == v {
			return u
		}
	}
	return d.String()
}

// fill is how long an empty bucket takes to fill up.
func (r Rate) fill() time.Duration {
	return time.Duration(float64(r.Burst) / float64(r.Events) * float64(r.Per))
}
