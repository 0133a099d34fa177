package admin

import (
	"context"

	"github.com/botplatform/botplatform/internal/platform"
)

// Billing checks that the actor may read and act on the billing of
// workspace id, as the hosted service's billing allows: administrators and
// the owner. This server bills nothing (docs/admin-api.md#billing), so
// there is nothing more to it.
func (s *Service) Billing(ctx context.Context, a *platform.Actor, id string) error {
	if _, err := s.workspaceAs(ctx, a, id); err != nil {
		return err
	}
	return require(a, platform.RoleAdministrator, "reading or paying the workspace's invoices")
}
