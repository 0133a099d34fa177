package admin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/plans"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// DefaultSpendingLimit is a new workspace's AI spending limit in US dollars.
const DefaultSpendingLimit = 100

func newWorkspace(ownerID, name, billingVersion string, now time.Time) platform.Workspace {
	return platform.Workspace{
		ID: platform.NewID(platform.PrefixWorkspace), Name: name, OwnerID: ownerID,
		Plan: plans.Default, BillingVersion: billingVersion, SpendingLimit: DefaultSpendingLimit,
		CreatedAt: now, UpdatedAt: now,
	}
}

func checkName(field, name string) error {
	if strings.TrimSpace(name) == "" {
		return platform.Invalid(field, "must not be empty")
	}
	if len(name) > 200 {
		return platform.Invalid(field, "at most 200 characters")
	}
	return nil
}

// CreateWorkspace creates a workspace owned by the caller.
func (s *Service) CreateWorkspace(ctx context.Context, a *platform.Actor, name, billingVersion string) (platform.Workspace, error) {
	if err := checkName("name", name); err != nil {
		return platform.Workspace{}, err
	}
	if billingVersion == "" {
		billingVersion = "v4"
	}
	now := s.clock.Now()
	w := newWorkspace(a.Account.ID, name, billingVersion, now)
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: a.Account.ID, Role: platform.RoleOwner, CreatedAt: now}
	rec := audit.Record{WorkspaceID: w.ID, Action: audit.CreateWorkspace, ResourceID: w.ID, ResourceName: w.Name}
	if err := s.store.CreateWorkspace(s.audited(ctx, a, rec), w, m); err != nil {
		return w, err
	}
	return w, nil
}

// workspaceAs loads workspace id and enters it as the actor's workspace. A
// workspace the account is not a member of is reported as not found, so its
// existence is not revealed.
func (s *Auth) workspaceAs(ctx context.Context, a *platform.Actor, id string) (platform.Workspace, error) {
	m, err := s.store.GetMember(ctx, id, a.Account.ID)
	if err != nil {
		return platform.Workspace{}, notFound(err, "workspace", id)
	}
	a.Member = m
	w, err := s.store.GetWorkspace(ctx, id)
	return w, notFound(err, "workspace", id)
}

func (s *Auth) GetWorkspace(ctx context.Context, a *platform.Actor, id string) (platform.Workspace, error) {
	return s.workspaceAs(ctx, a, id)
}

func (s *Service) ListWorkspaces(ctx context.Context, a *platform.Actor, f store.WorkspaceFilter) ([]platform.Workspace, string, error) {
	return s.store.ListWorkspaces(ctx, a.Account.ID, f)
}

// PublicWorkspace is workspace id as every account sees it once its
// profile is public (isPublic); a private one is 404, as one that does not
// exist, whoever asks.
func (s *Service) PublicWorkspace(ctx context.Context, id string) (platform.Workspace, error) {
	w, err := s.store.GetWorkspace(ctx, id)
	if err == nil && !w.IsPublic {
		err = platform.ErrNotFound
	}
	return w, notFound(err, "public workspace", id)
}

// MaxPublicWorkspaceIDs bounds the ids listPublicWorkspaces takes.
const MaxPublicWorkspaceIDs = 100

// ListPublicWorkspaces lists the public workspaces, by id.
func (s *Service) ListPublicWorkspaces(ctx context.Context, f store.PublicWorkspaceFilter) ([]platform.Workspace, string, error) {
	if len(f.IDs) > MaxPublicWorkspaceIDs {
		return nil, "", platform.Errorf(platform.TypeInvalidQuery, "workspaceIds: at most %d", MaxPublicWorkspaceIDs)
	}
	if len(f.Search) > 200 {
		return nil, "", platform.Errorf(platform.TypeInvalidQuery, "search: at most 200 characters")
	}
	return s.store.ListPublicWorkspaces(ctx, f)
}

// WorkspaceUpdate holds the fields updateWorkspace may change; nil is unchanged.
type WorkspaceUpdate struct {
	Name           *string
	Plan           *string // a name of plans.All
	SpendingLimit  *int64
	About          *string
	ProfilePicture *string
	ContactEmail   *string
	Website        *string
	SocialAccounts *[]string
	IsPublic       *bool
	Handle         *string
}

var handleRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$`)

// UpdateWorkspace needs the administrator role.
func (s *Service) UpdateWorkspace(ctx context.Context, a *platform.Actor, id string, u WorkspaceUpdate) (platform.Workspace, error) {
	w, err := s.workspaceAs(ctx, a, id)
	if err != nil {
		return w, err
	}
	if err := require(a, platform.RoleAdministrator, "updating the workspace"); err != nil {
		return w, err
	}
	recs := workspaceChanges(w, u)
	if u.Name != nil {
		if err := checkName("name", *u.Name); err != nil {
			return w, err
		}
		w.Name = *u.Name
	}
	if u.Plan != nil {
		if err := checkPlan(*u.Plan); err != nil {
			return w, err
		}
		w.Plan = *u.Plan
	}
	if u.SpendingLimit != nil {
		if *u.SpendingLimit < 0 {
			return w, platform.Invalid("spendingLimit", "must not be negative")
		}
		w.SpendingLimit = *u.SpendingLimit
	}
	if u.Handle != nil {
		if *u.Handle != "" && !handleRe.MatchString(*u.Handle) {
			return w, platform.Invalid("handle", "3 to 50 lower-case letters, digits or dashes, not starting or ending with a dash")
		}
		w.Handle = *u.Handle
	}
	if u.SocialAccounts != nil {
		if len(*u.SocialAccounts) > 5 {
			return w, platform.Invalid("socialAccounts", "at most 5 items")
		}
		w.SocialAccounts = *u.SocialAccounts
	}
	for _, f := range []struct {
		v   *string
		dst *string
	}{{u.About, &w.About}, {u.ProfilePicture, &w.ProfilePicture}, {u.ContactEmail, &w.ContactEmail}, {u.Website, &w.Website}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if u.IsPublic != nil {
		w.IsPublic = *u.IsPublic
	}
	w.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateWorkspace(s.audited(ctx, a, recs...), w); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return w, platform.Errorf(platform.TypeAlreadyExists, "handle: %q is taken by another workspace", w.Handle)
		}
		return w, notFound(err, "workspace", id)
	}
	return w, nil
}

// DeleteWorkspace needs the owner role and removes the workspace's bots too.
func (s *Service) DeleteWorkspace(ctx context.Context, a *platform.Actor, id string) error {
	w, err := s.workspaceAs(ctx, a, id)
	if err != nil {
		return err
	}
	if err := require(a, platform.RoleOwner, "deleting the workspace"); err != nil {
		return err
	}
	defer s.auth.clear()
	rec := audit.Record{Action: audit.CloseWorkspace, ResourceID: w.ID, ResourceName: w.Name}
	blobs, err := s.store.DeleteWorkspace(s.audited(ctx, a, rec), id)
	if err != nil {
		return notFound(err, "workspace", id)
	}
	s.removeContent(ctx, blobs)
	return nil
}

// workspaceChanges are the audit records of update u of w (before it): a
// new spending limit is SET_AI_SPENDING_LIMIT, the rest UPDATE_WORKSPACE
// naming the fields set.
func workspaceChanges(w platform.Workspace, u WorkspaceUpdate) []audit.Record {
	var recs []audit.Record
	if u.SpendingLimit != nil {
		recs = append(recs, audit.Record{Action: audit.SetAISpendingLimit, ResourceID: w.ID, ResourceName: w.Name,
			Value: fmt.Sprintf("%d → %d USD a month", w.SpendingLimit, *u.SpendingLimit)})
	}
	var fields []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"name", u.Name != nil}, {"about", u.About != nil}, {"profilePicture", u.ProfilePicture != nil}, {"contactEmail", u.ContactEmail != nil},
		{"website", u.Website != nil}, {"socialAccounts", u.SocialAccounts != nil}, {"isPublic", u.IsPublic != nil}, {"handle", u.Handle != nil}} {
		if f.set {
			fields = append(fields, f.name)
		}
	}
	if u.Plan != nil {
		fields = append(fields, "plan ("+*u.Plan+")")
	}
	if len(fields) > 0 || len(recs) == 0 {
		v := ""
		if len(fields) > 0 {
			v = "changed: " + strings.Join(fields, ", ")
		}
		recs = append(recs, audit.Record{Action: audit.UpdateWorkspace, ResourceID: w.ID, ResourceName: w.Name, Value: v})
	}
	return recs
}
