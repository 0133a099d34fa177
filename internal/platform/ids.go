package platform

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Id prefixes name what an id points to, so a mixed-up id fails loudly.
const (
	PrefixAccount   = "acc_"
	PrefixWorkspace = "wkspace_"
	PrefixMember    = "wkmember_"
	PrefixPAT       = "pat_"
	PrefixBot       = "bot_"
	PrefixBotKey    = "bak_"
	PrefixLog       = "log_"
	PrefixVersion   = "botver_"
	// PrefixIntegration names an integration version (the hosted
	// platform's ids have this prefix too).
	PrefixIntegration = "intver_"
)

var (
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns prefix + a ULID: unique, and sortable by creation time.
func NewID(prefix string) string {
	entropyMu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), entropy)
	entropyMu.Unlock()
	return prefix + strings.ToLower(id.String())
}

// RandomToken returns n random bytes, URL-safe base64 encoded, for secrets.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
