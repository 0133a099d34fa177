package admin

import (
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// authCache remembers successful authentications (token hash and workspace
// to account and membership) for a short time, so that a request does not
// pay a database round trip for the credential it presented a moment ago.
// Any change to tokens or memberships made through this process clears it
// at once; a change made by another process sharing the database takes
// effect within the TTL. Failures are never cached.
type authCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[authKey]authEntry
}

type authKey struct {
	hash        [32]byte
	workspaceID string
}

type authEntry struct {
	actor   platform.Actor
	expires time.Time
}

// maxAuthEntries bounds the cache; past it the cache starts over.
const maxAuthEntries = 10_000

func (c *authCache) get(k authKey, now time.Time) (platform.Actor, bool) {
	if c.ttl <= 0 {
		return platform.Actor{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.After(e.expires) {
		return platform.Actor{}, false
	}
	return e.actor, true
}

func (c *authCache) put(k authKey, a platform.Actor, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxAuthEntries {
		c.m = map[authKey]authEntry{}
	}
	c.m[k] = authEntry{actor: a, expires: now.Add(c.ttl)}
}

// clear forgets every entry; called after any change to tokens or members.
func (c *authCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
