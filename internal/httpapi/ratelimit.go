package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/ratelimit"
)

// who is what a request counts as for the rate limits (docs/limits.md):
// each field set counts against its kind's limit.
type who struct {
	token    string // the bearer token, as sent: only its hash is kept
	bot      string
	chatUser string
	address  string // clientAddress
}

// admit counts the request against the rate limits of c, once its caller
// is authenticated. The limit closest to refusing is described in the
// RateLimit-* headers, on successful answers too so that clients can pace
// themselves; an exhausted one refuses with 429 RateLimited and Retry-After.
func (a *api) admit(w http.ResponseWriter, c who) error {
	if a.Limits == nil {
		return nil
	}
	if c.token != "" {
		sum := sha256.Sum256([]byte(c.token))
		c.token = hex.EncodeToString(sum[:16])
	}
	d, ok := a.Limits.Allow(ratelimit.Key{Kind: ratelimit.Token, ID: c.token}, ratelimit.Key{Kind: ratelimit.Bot, ID: c.bot},
		ratelimit.Key{Kind: ratelimit.ChatUser, ID: c.chatUser}, ratelimit.Key{Kind: ratelimit.Address, ID: c.address})
	if !ok {
		return nil
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Rate.Burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(wholeSeconds(d.Reset)))
	if d.Allowed {
		return nil
	}
	a.Metrics.RateLimited(string(d.Kind))
	wait := max(wholeSeconds(d.RetryAfter), 1)
	e := platform.Errorf(platform.TypeRateLimited, "too many requests for this %s: its limit is %s; retry in %d s",
		d.Kind.Noun(), d.Rate.Describe(), wait)
	e.RetryAfter = time.Duration(wait) * time.Second
	e.Metadata = map[string]any{"limit": string(d.Kind), "retryAfter": wait}
	return e
}

// wholeSeconds rounds d up to whole seconds, as the headers give it.
func wholeSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// clientAddress is the address the request came from, as the address
// limit counts it: an IPv6 client by its /64, which one host usually has
// whole.
func clientAddress(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return ip.String()
}
