package admin

import (
	"context"
	"errors"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
)

// Bootstrap is what the first start created.
type Bootstrap struct {
	Created     bool
	Token       string // empty unless Created
	WorkspaceID string
	AccountID   string
}

// OwnerEmail is the email of the account the first start creates.
const OwnerEmail = "owner@localhost"

// Bootstrap creates the owner account, a workspace and a personal access
// token when the database holds no account yet. fixedToken, when not empty,
// becomes the token's value (it must look like a PAT). Later calls create
// nothing. Several processes starting at once on one database are safe: the
// losers of the race see the account already there.
func (s *Service) Bootstrap(ctx context.Context, fixedToken string) (Bootstrap, error) {
	empty, err := s.store.Empty(ctx)
	if err != nil || !empty {
		return Bootstrap{}, err
	}
	value, hash := newSecret(patPrefix)
	if fixedToken != "" {
		if len(fixedToken) < len(patPrefix)+20 || fixedToken[:len(patPrefix)] != patPrefix {
			return Bootstrap{}, errors.New("BOTPLATFORM_ADMIN_TOKEN must start with " + patPrefix + " followed by at least 20 characters")
		}
		// A space, control or non-ASCII character cannot survive an
		// Authorization header: such a token would never authenticate.
		for _, c := range []byte(fixedToken) {
			if c <= ' ' || c > '~' {
				return Bootstrap{}, errors.New("BOTPLATFORM_ADMIN_TOKEN must be printable ASCII without spaces")
			}
		}
		value, hash = fixedToken, hashToken(fixedToken)
	}
	now := s.clock.Now()
	acc := platform.Account{ID: platform.NewID(platform.PrefixAccount), Email: OwnerEmail, DisplayName: "Owner", CreatedAt: now}
	ws := newWorkspace(acc.ID, "Default workspace", "v4", now)
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: ws.ID, AccountID: acc.ID, Role: platform.RoleOwner, CreatedAt: now}
	pat := platform.Token{ID: platform.NewID(platform.PrefixPAT), OwnerID: acc.ID, Note: "bootstrap", Hash: hash, CreatedAt: now}
	rec := audit.Record{WorkspaceID: ws.ID, Action: audit.CreateWorkspace, ResourceID: ws.ID, ResourceName: ws.Name, Value: "first start"}
	err = s.store.CreateOwner(s.audited(ctx, &platform.Actor{Account: acc}, rec), acc, ws, m, pat)
	if errors.Is(err, platform.ErrConflict) {
		return Bootstrap{}, nil
	}
	if err != nil {
		return Bootstrap{}, err
	}
	return Bootstrap{Created: true, Token: value, WorkspaceID: ws.ID, AccountID: acc.ID}, nil
}

// IssueToken creates a personal access token for the account with the given
// email, creating the account if needed. It is the operator's way to give a
// workspace member their first token (botplatform token create).
func (s *Service) IssueToken(ctx context.Context, email, note string) (string, error) {
	acc, err := s.accountByEmail(ctx, email, true)
	if err != nil {
		return "", err
	}
	_, value, err := s.createPAT(ctx, acc, audit.System, note)
	return value, err
}
