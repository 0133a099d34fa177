package admin

import (
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// authCache remembers successful authentications (token hash and workspace
// to account and membership; bot API key hash to key and workspace) for a
// short time, so that a request does not
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
	workspaceID string // botKeySpace for a bot API key
}

// botKeySpace is the workspaceID of a bot API key's entry (no workspace id
// starts with a NUL).
const botKeySpace = "\x00bot key"

type authEntry struct {
	actor   platform.Actor
	key     platform.Token // a bot API key's, without its hash
	keyWS   string         // its bot's workspace
	expires time.Time
}

// maxAuthEntries bounds the cache; past it the cache starts over.
const maxAuthEntries = 10_000

func (c *authCache) get(k authKey, now time.Time) (platform.Actor, bool) {
	e, ok := c.entry(k, now)
	return e.actor, ok
}

func (c *authCache) put(k authKey, a platform.Actor, now time.Time) {
	c.store(k, authEntry{actor: a}, now)
}

func (c *authCache) getBotKey(hash [32]byte, now time.Time) (platform.Token, string, bool) {
	e, ok := c.entry(authKey{hash, botKeySpace}, now)
	return e.key, e.keyWS, ok
}

func (c *authCache) putBotKey(hash [32]byte, key platform.Token, workspaceID string, now time.Time) {
	c.store(authKey{hash, botKeySpace}, authEntry{key: key, keyWS: workspaceID}, now)
}

func (c *authCache) entry(k authKey, now time.Time) (authEntry, bool) {
	if c.ttl <= 0 {
		return authEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.After(e.expires) {
		return authEntry{}, false
	}
	return e, true
}

func (c *authCache) store(k authKey, e authEntry, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxAuthEntries {
		c.m = map[authKey]authEntry{}
	}
	e.expires = now.Add(c.ttl)
	c.m[k] = e
}

// clear forgets every entry; called after any change to tokens, bot API
// keys, bots or members.
func (c *authCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
