package admin

import (
	"context"
	"errors"
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
)

// CreatePAT creates a personal access token; its value is returned only here.
func (s *Service) CreatePAT(ctx context.Context, a *platform.Actor, note string) (platform.Token, string, error) {
	return s.createPAT(ctx, a.Account, audit.Account(a.Account), note)
}

// createPAT creates a token of acc, recorded as made by by in each of the
// account's workspaces.
func (s *Service) createPAT(ctx context.Context, acc platform.Account, by audit.Actor, note string) (platform.Token, string, error) {
	if strings.TrimSpace(note) == "" {
		return platform.Token{}, "", platform.Invalid("note", "must not be empty")
	}
	if len(note) > 500 {
		return platform.Token{}, "", platform.Invalid("note", "at most 500 characters")
	}
	value, hash := newSecret(patPrefix)
	t := platform.Token{ID: platform.NewID(platform.PrefixPAT), OwnerID: acc.ID, Note: note, Hash: hash, CreatedAt: s.clock.Now()}
	recs, err := s.inEachWorkspace(ctx, acc.ID, audit.Record{Actor: by, Action: audit.CreateToken, ResourceID: t.ID, ResourceName: note,
		Value: "token of " + acc.Email})
	if err != nil {
		return platform.Token{}, "", err
	}
	if err := s.store.CreatePAT(audit.With(ctx, s.clock, recs...), t); err != nil {
		return platform.Token{}, "", err
	}
	return t, value, nil
}

func (s *Service) ListPATs(ctx context.Context, a *platform.Actor) ([]platform.Token, error) {
	return s.store.ListPATs(ctx, a.Account.ID)
}

func (s *Service) DeletePAT(ctx context.Context, a *platform.Actor, id string) error {
	defer s.auth.clear()
	recs, err := s.inEachWorkspace(ctx, a.Account.ID, audit.Record{Action: audit.DeleteToken, ResourceID: id})
	if err != nil {
		return err
	}
	return notFound(s.store.DeletePAT(s.audited(ctx, a, recs...), a.Account.ID, id), "personal access token", id)
}

// accountByEmail finds the account with that email, creating it when create
// is set and none exists.
func (s *Service) accountByEmail(ctx context.Context, email string, create bool) (platform.Account, error) {
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email {
		return platform.Account{}, platform.Invalid("email", "not a valid email address")
	}
	email = strings.ToLower(email)
	acc, err := s.store.GetAccountByEmail(ctx, email)
	if !errors.Is(err, platform.ErrNotFound) || !create {
		return acc, notFound(err, "account", email)
	}
	acc = platform.Account{ID: platform.NewID(platform.PrefixAccount), Email: email, CreatedAt: s.clock.Now()}
	if err := s.store.CreateAccount(ctx, acc); err != nil {
		if errors.Is(err, platform.ErrConflict) { // created concurrently
			return s.store.GetAccountByEmail(ctx, email)
		}
		return acc, err
	}
	return acc, nil
}

// AccountUpdate is updateAccount's body: a field left out stays.
type AccountUpdate struct {
	DisplayName    *string
	ProfilePicture *string
	// Refresh asks the hosted platform to read the profile again from the
	// identity provider; accounts here have none, so it changes nothing.
	Refresh *bool
}

// MaxDisplayName is the longest display name, in characters.
const MaxDisplayName = 100

// GetAccount is the caller's account as stored (not as its credential was
// cached).
func (s *Service) GetAccount(ctx context.Context, a *platform.Actor) (platform.Account, error) {
	return s.store.GetAccount(ctx, a.Account.ID)
}

// UpdateAccount changes the caller's display name and picture.
func (s *Service) UpdateAccount(ctx context.Context, a *platform.Actor, u AccountUpdate) (platform.Account, error) {
	acc, err := s.store.GetAccount(ctx, a.Account.ID)
	if err != nil {
		return acc, err
	}
	if u.DisplayName != nil {
		name := strings.TrimSpace(*u.DisplayName)
		if utf8.RuneCountInString(name) > MaxDisplayName {
			return acc, platform.Invalid("displayName", "at most %d characters", MaxDisplayName)
		}
		acc.DisplayName = name
	}
	if u.ProfilePicture != nil {
		if p := *u.ProfilePicture; p != "" && !validPictureURL(p) {
			return acc, platform.Invalid("profilePicture", "must be an http or https URL, or empty to remove the picture")
		}
		acc.ProfilePicture = *u.ProfilePicture
	}
	if u.DisplayName == nil && u.ProfilePicture == nil {
		return acc, nil
	}
	defer s.auth.clear() // the cached credentials carry the account
	return acc, s.store.UpdateAccount(ctx, acc)
}

// DeleteAccount deletes the caller's account, its personal access tokens
// (the caller's credential among them), its memberships and preferences,
// recorded in the audit log of each workspace it was a member of. An
// account that owns workspaces keeps everything: they are deleted first
// (deleteWorkspace), so that no workspace is left without its owner.
func (s *Service) DeleteAccount(ctx context.Context, a *platform.Actor) error {
	recs, err := s.inEachWorkspace(ctx, a.Account.ID, audit.Record{Action: audit.DeleteAccount, ResourceID: a.Account.ID, ResourceName: a.Account.Email})
	if err != nil {
		return err
	}
	defer s.auth.clear() // its cached credentials
	owned, err := s.store.DeleteAccount(s.audited(ctx, a, recs...), a.Account.ID)
	if errors.Is(err, platform.ErrConflict) {
		return platform.Errorf(platform.TypeReferenceConstraint, "the account owns workspace %s: delete the workspaces it owns first (deleteWorkspace)", strings.Join(owned, ", "))
	}
	return notFound(err, "account", a.Account.ID)
}

// validPictureURL: an absolute http(s) URL of at most 2,048 bytes.
func validPictureURL(s string) bool {
	if len(s) > 2048 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
