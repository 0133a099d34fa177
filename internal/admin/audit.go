package admin

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Audit is the recorder of the audit log, for what is recorded outside a
// change of the Admin API (an erasure, a backup, a rollback): see
// audit.Recorder.Record.
func (s *Service) Audit() *audit.Recorder { return s.audit }

// audited returns ctx carrying records of what a's account does (to a's
// workspace unless a record names another), to pass to the store call that
// makes the change: the records commit with it (audit.With).
func (s *Service) audited(ctx context.Context, a *platform.Actor, recs ...audit.Record) context.Context {
	for i := range recs {
		recs[i].Actor = audit.Account(a.Account)
		if recs[i].WorkspaceID == "" {
			recs[i].WorkspaceID = a.Member.WorkspaceID
		}
	}
	return audit.With(ctx, s.clock, recs...)
}

// inEachWorkspace returns rec once for each workspace of the account: a
// personal access token reaches all of them.
func (s *Service) inEachWorkspace(ctx context.Context, accountID string, rec audit.Record) ([]audit.Record, error) {
	var out []audit.Record
	p := store.Page{Limit: 100}
	for {
		wss, next, err := s.store.ListWorkspaces(ctx, accountID, store.WorkspaceFilter{Page: p})
		if err != nil {
			return nil, err
		}
		for _, w := range wss {
			r := rec
			r.WorkspaceID = w.ID
			out = append(out, r)
		}
		if next == "" {
			return out, nil
		}
		p.Token = next
	}
}

// AuditRecords lists a workspace's audit log, newest first. Reading it
// needs the administrator role.
func (s *Service) AuditRecords(ctx context.Context, a *platform.Actor, workspaceID string, p store.Page) ([]audit.Record, string, error) {
	if _, err := s.workspaceAs(ctx, a, workspaceID); err != nil {
		return nil, "", err
	}
	if err := require(a, platform.RoleAdministrator, "reading the audit log"); err != nil {
		return nil, "", err
	}
	return s.store.ListAuditRecords(ctx, workspaceID, p)
}

// botAction is the action of an update of a bot with in: new code is a
// deployment; secrets, configuration, integrations and the like change its
// configuration; the rest updates the bot.
func botAction(in BotInput) audit.Action {
	switch {
	case in.Code != nil:
		return audit.DeployBot
	case in.Secrets != nil || in.Configuration != nil || in.Integrations != nil || in.URL != nil ||
		in.Authentication != nil || in.MaxExecutionTime != nil || in.RecurringEvents != nil:
		return audit.UpdateBotConfig
	}
	return audit.UpdateBot
}

// botChanges describes in for the audit log: the fields it sets, and the
// names (never the values) of the secrets it sets or removes.
func botChanges(in BotInput) string {
	var fields []string
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsNil() || (f.Kind() == reflect.Slice && f.Len() == 0) {
			continue
		}
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "secrets" {
			name = fmt.Sprintf("secrets (%s)", strings.Join(sortedKeys(in.Secrets), ", "))
		}
		fields = append(fields, name)
	}
	sort.Strings(fields)
	if len(fields) == 0 {
		return ""
	}
	return "changed: " + strings.Join(fields, ", ")
}
