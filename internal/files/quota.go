package files

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/plans"
	"github.com/botplatform/botplatform/internal/platform"
)

// Quota types, as the Admin API names them.
const (
	QuotaFileStorage   = "file_storage_bytes"
	QuotaVectorStorage = "knowledgebase_vector_storage"
	QuotaMaxFileSize   = "file_max_size_bytes"
)

// limits is a workspace's effective limits and current usage.
type limits struct {
	MaxFile, MaxStorage, MaxVector int64
	UsedStorage, UsedVector        int64
}

func (s *Service) limits(ctx context.Context, workspaceID string) (limits, error) {
	return limitsOf(ctx, s.store, workspaceID)
}

func limitsOf(ctx context.Context, s Store, workspaceID string) (limits, error) {
	ws, err := s.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return limits{}, err
	}
	st, err := s.GetStorage(ctx, workspaceID)
	if err != nil {
		return limits{}, err
	}
	plan := plans.Of(ws.Plan)
	l := limits{MaxFile: plan.MaxFile, MaxStorage: plan.MaxStorage, MaxVector: plan.MaxVector, UsedStorage: st.FileBytes, UsedVector: st.VectorBytes}
	for _, o := range []struct {
		v   *int64
		dst *int64
	}{{st.MaxFileBytes, &l.MaxFile}, {st.MaxStorage, &l.MaxStorage}, {st.MaxVectorBytes, &l.MaxVector}} {
		if o.v != nil {
			*o.dst = *o.v
		}
	}
	return l, nil
}

// StorageRoom is how many bytes the workspace may still store under its
// File Storage quota (0 when at or over it).
func StorageRoom(ctx context.Context, st Store, workspaceID string) (int64, error) {
	_, _, room, err := StorageLimits(ctx, st, workspaceID)
	return room, err
}

// StorageLimits are the workspace's File Storage and Vector DB Storage
// limits, and the room left under the first.
func StorageLimits(ctx context.Context, st Store, workspaceID string) (maxStorage, maxVector, room int64, err error) {
	l, err := limitsOf(ctx, st, workspaceID)
	if err != nil {
		return 0, 0, 0, err
	}
	return l.MaxStorage, l.MaxVector, max(l.MaxStorage-l.UsedStorage, 0), nil
}

// Quota is one limit of a workspace with its usage.
type Quota struct {
	Type  string
	Limit int64
	Usage int64
}

// Quotas lists the workspace's storage limits and usage; any member may read them.
func (s *Service) Quotas(ctx context.Context, act *platform.Actor, workspaceID string) ([]Quota, error) {
	if _, err := s.auth.GetWorkspace(ctx, act, workspaceID); err != nil {
		return nil, err
	}
	l, err := s.limits(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return []Quota{
		{QuotaFileStorage, l.MaxStorage, l.UsedStorage},
		{QuotaVectorStorage, l.MaxVector, l.UsedVector},
		{QuotaMaxFileSize, l.MaxFile, 0},
	}, nil
}

// QuotaUpdate sets limits; a nil field is unchanged, Reset lists limits
// to return to the plan's default.
type QuotaUpdate struct {
	Set   map[string]int64
	Reset []string
}

// SetQuotas changes the workspace's limits; it needs the administrator role.
func (s *Service) SetQuotas(ctx context.Context, act *platform.Actor, workspaceID string, u QuotaUpdate) ([]Quota, error) {
	if _, err := s.auth.GetWorkspace(ctx, act, workspaceID); err != nil {
		return nil, err
	}
	if err := act.Require(platform.RoleAdministrator, "changing quotas"); err != nil {
		return nil, err
	}
	st, err := s.store.GetStorage(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	fields := map[string]**int64{QuotaFileStorage: &st.MaxStorage, QuotaVectorStorage: &st.MaxVectorBytes, QuotaMaxFileSize: &st.MaxFileBytes}
	for typ, v := range u.Set {
		dst, ok := fields[typ]
		if !ok {
			return nil, platform.Invalid(typ, "unknown quota; known: %s, %s, %s", QuotaFileStorage, QuotaVectorStorage, QuotaMaxFileSize)
		}
		if v < 0 {
			return nil, platform.Invalid(typ, "must not be negative")
		}
		*dst = &v
	}
	for _, typ := range u.Reset {
		dst, ok := fields[typ]
		if !ok {
			return nil, platform.Invalid(typ, "unknown quota")
		}
		*dst = nil
	}
	rec := audit.Record{WorkspaceID: workspaceID, Actor: audit.Account(act.Account), Action: audit.UpdateWorkspace, ResourceID: workspaceID,
		Value: quotaChanges(u)}
	if err := s.store.SetStorageLimits(audit.With(ctx, s.clock, rec), workspaceID, st); err != nil {
		return nil, err
	}
	return s.Quotas(ctx, act, workspaceID)
}

// quotaChanges describes u for the audit log.
func quotaChanges(u QuotaUpdate) string {
	var parts []string
	for _, typ := range slices.Sorted(maps.Keys(u.Set)) {
		parts = append(parts, fmt.Sprintf("%s %d", typ, u.Set[typ]))
	}
	for _, typ := range u.Reset {
		parts = append(parts, typ+" to the plan's default")
	}
	return "storage quotas: " + strings.Join(parts, ", ")
}
