package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Service) ListMembers(ctx context.Context, a *platform.Actor, p store.Page) ([]platform.Member, string, error) {
	return s.store.ListMembers(ctx, a.Member.WorkspaceID, p)
}

// checkGrant enforces who may give which role: managing members needs the
// manager role; nobody grants a role above their own; the owner role is
// never granted (a workspace has exactly one owner).
func checkGrant(a *platform.Actor, role platform.Role) error {
	if err := require(a, platform.RoleManager, "managing members"); err != nil {
		return err
	}
	if !role.Valid() {
		return platform.Invalid("role", "must be one of viewer, developer, manager, administrator")
	}
	if role == platform.RoleOwner {
		return platform.Invalid("role", "the owner role cannot be granted; a workspace has exactly one owner")
	}
	if !a.Member.Role.AtLeast(role) {
		return platform.Errorf(platform.TypeForbidden, "role: you cannot grant %s, which is above your own role (%s)", role, a.Member.Role)
	}
	return nil
}

// AddMember adds the account with that email (creating the account if the
// server has none yet) to the actor's workspace.
func (s *Service) AddMember(ctx context.Context, a *platform.Actor, email string, role platform.Role) (platform.Member, error) {
	if err := checkGrant(a, role); err != nil {
		return platform.Member{}, err
	}
	acc, err := s.accountByEmail(ctx, email, true)
	if err != nil {
		return platform.Member{}, err
	}
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: a.Member.WorkspaceID, AccountID: acc.ID,
		Email: acc.Email, DisplayName: acc.DisplayName, Role: role, CreatedAt: s.clock.Now()}
	rec := audit.Record{Action: audit.AddMember, ResourceID: m.ID, ResourceName: m.Email, Value: "role: " + string(role)}
	if err := s.store.CreateMember(s.audited(ctx, a, rec), m); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return m, platform.Errorf(platform.TypeAlreadyExists, "email: %s is already a member of this workspace", email)
		}
		return m, err
	}
	return m, nil
}

// target loads a member the actor may manage: not the owner, and not anyone
// whose role is above the actor's.
func (s *Service) target(ctx context.Context, a *platform.Actor, id, action string) (platform.Member, error) {
	if err := require(a, platform.RoleManager, "managing members"); err != nil {
		return platform.Member{}, err
	}
	m, err := s.store.GetMemberByID(ctx, a.Member.WorkspaceID, id)
	if err != nil {
		return m, notFound(err, "workspace member", id)
	}
	if m.Role == platform.RoleOwner {
		return m, platform.Invalid("id", "the workspace owner cannot be %s", action)
	}
	if !a.Member.Role.AtLeast(m.Role) {
		return m, platform.Errorf(platform.TypeForbidden, "this member's role (%s) is above yours (%s)", m.Role, a.Member.Role)
	}
	return m, nil
}

func (s *Service) UpdateMember(ctx context.Context, a *platform.Actor, id string, role *platform.Role) (platform.Member, error) {
	m, err := s.target(ctx, a, id, "changed")
	if err != nil || role == nil {
		return m, err
	}
	if err := checkGrant(a, *role); err != nil {
		return m, err
	}
	defer s.auth.clear()
	rec := audit.Record{Action: audit.UpdateMember, ResourceID: m.ID, ResourceName: m.Email, Value: fmt.Sprintf("role: %s → %s", m.Role, *role)}
	if err := s.store.UpdateMemberRole(s.audited(ctx, a, rec), a.Member.WorkspaceID, id, *role); err != nil {
		return m, notFound(err, "workspace member", id)
	}
	m.Role = *role
	return m, nil
}

func (s *Service) RemoveMember(ctx context.Context, a *platform.Actor, id string) error {
	m, err := s.target(ctx, a, id, "removed")
	if err != nil {
		return err
	}
	defer s.auth.clear()
	rec := audit.Record{Action: audit.RemoveMember, ResourceID: m.ID, ResourceName: m.Email, Value: "role: " + string(m.Role)}
	return notFound(s.store.DeleteMember(s.audited(ctx, a, rec), a.Member.WorkspaceID, id), "workspace member", id)
}
