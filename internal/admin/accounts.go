package admin

import (
	"context"
	"errors"
	"net/mail"
	"strings"

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
