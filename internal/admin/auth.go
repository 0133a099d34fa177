package admin

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Auth authenticates callers (personal access tokens and bot API keys),
// resolves a caller's membership of a workspace and makes the keys the Node
// bot host calls back with: what the Files API and the SDK bot host need of
// admin, built before them (and before the Service, which shares it).
type Auth struct {
	store   Store
	clock   platform.Clock
	auth    authCache
	secrets secrets
}

// NewAuth returns an Auth reusing a successful authentication for cacheTTL
// without asking the database (0: never).
func NewAuth(st Store, clock platform.Clock, cacheTTL time.Duration) *Auth {
	return &Auth{store: st, clock: clock, auth: authCache{ttl: cacheTTL}}
}

// Authenticate resolves a personal access token to its account and, when
// workspaceID is not empty, to the account's membership of that workspace.
// The lookup is by the token's SHA-256 hash; the stored hash is then
// compared in constant time. A bad token, or a workspace that does not exist
// or that the account is not a member of, is 401 (spec section 7): the
// latter is platform.ErrNotMember.
func (s *Auth) Authenticate(ctx context.Context, token, workspaceID string) (*platform.Actor, error) {
	if !strings.HasPrefix(token, patPrefix) {
		return nil, errBadToken
	}
	h := hashToken(token)
	key := authKey{workspaceID: workspaceID}
	copy(key.hash[:], h)
	now := s.clock.Now()
	if a, ok := s.auth.get(key, now); ok {
		return &a, nil
	}
	t, acc, m, err := s.store.GetCredential(ctx, h, workspaceID)
	if errors.Is(err, platform.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare(t.Hash, h) != 1) {
		return nil, errBadToken
	}
	if err != nil {
		return nil, err
	}
	a := &platform.Actor{Account: acc}
	if workspaceID != "" {
		if m == nil {
			return nil, platform.ErrNotMember
		}
		a.Member = *m
	}
	s.auth.put(key, *a, now)
	return a, nil
}

// AuthenticateBotKey resolves a bot API key to the key (its id, and its
// bot as OwnerID; no hash) and its bot's workspace. ok is false when token
// is not a bot API key at all; a bot API key that does not exist is 401.
func (s *Auth) AuthenticateBotKey(ctx context.Context, token string) (key platform.Token, workspaceID string, ok bool, err error) {
	if !strings.HasPrefix(token, bakPrefix) {
		return key, "", false, nil
	}
	h := hashToken(token)
	var hk [32]byte
	copy(hk[:], h)
	now := s.clock.Now()
	if t, ws, ok := s.auth.getBotKey(hk, now); ok {
		return t, ws, true, nil
	}
	t, ws, err := s.store.GetBotKeyByHash(ctx, h)
	if errors.Is(err, platform.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare(t.Hash, h) != 1) {
		return key, "", true, errBadToken
	}
	if err != nil {
		return key, "", true, err
	}
	if strings.HasPrefix(t.ID, legacyHostKeyID) {
		return key, "", true, errBadToken // a row an older server process may still write
	}
	t.Hash = nil
	s.auth.putBotKey(hk, t, ws, now)
	return t, ws, true, nil
}
