package admin

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Preference limits (docs/limits.md): a key is 1 to MaxPreferenceKey
// characters, a value at most MaxPreferenceValue bytes of JSON.
const (
	MaxPreferenceKey   = 200
	MaxPreferenceValue = 64 << 10
)

func checkPreference(key string, value json.RawMessage) error {
	if key == "" {
		return platform.Invalid("key", "must not be empty")
	}
	if utf8.RuneCountInString(key) > MaxPreferenceKey {
		return platform.Invalid("key", "at most %d characters", MaxPreferenceKey)
	}
	if len(value) > MaxPreferenceValue {
		return platform.Invalid("value", "at most %d bytes of JSON; got %d", MaxPreferenceValue, len(value))
	}
	return nil
}

// preferenceValue is an absent value stored as JSON null.
func preferenceValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// getPreference reads key of o; an unset key is 404 naming it.
func (s *Service) getPreference(ctx context.Context, o store.PreferenceOwner, key string) (json.RawMessage, error) {
	if err := checkPreference(key, nil); err != nil {
		return nil, err
	}
	v, err := s.store.GetPreference(ctx, o, key)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("preference", key)
	}
	return v, err
}

// SetAccountPreference stores a preference of the caller's own account.
func (s *Service) SetAccountPreference(ctx context.Context, a *platform.Actor, key string, value json.RawMessage) error {
	value = preferenceValue(value)
	if err := checkPreference(key, value); err != nil {
		return err
	}
	return s.store.SetPreference(ctx, store.PreferenceOwner{AccountID: a.Account.ID}, key, value, s.clock.Now())
}

// GetAccountPreference reads a preference of the caller's own account.
func (s *Service) GetAccountPreference(ctx context.Context, a *platform.Actor, key string) (json.RawMessage, error) {
	return s.getPreference(ctx, store.PreferenceOwner{AccountID: a.Account.ID}, key)
}

// SetWorkspacePreference stores a preference of the actor's workspace; it
// needs the administrator role and is audited as a workspace update.
func (s *Service) SetWorkspacePreference(ctx context.Context, a *platform.Actor, key string, value json.RawMessage) error {
	if err := require(a, platform.RoleAdministrator, "setting a workspace preference"); err != nil {
		return err
	}
	value = preferenceValue(value)
	if err := checkPreference(key, value); err != nil {
		return err
	}
	rec := audit.Record{Action: audit.UpdateWorkspace, ResourceID: a.Member.WorkspaceID, Value: "preference set: " + key}
	err := s.store.SetPreference(s.audited(ctx, a, rec), store.PreferenceOwner{WorkspaceID: a.Member.WorkspaceID}, key, value, s.clock.Now())
	return notFound(err, "workspace", a.Member.WorkspaceID)
}

// GetWorkspacePreference reads a preference of the actor's workspace; any
// member may.
func (s *Service) GetWorkspacePreference(ctx context.Context, a *platform.Actor, key string) (json.RawMessage, error) {
	return s.getPreference(ctx, store.PreferenceOwner{WorkspaceID: a.Member.WorkspaceID}, key)
}
