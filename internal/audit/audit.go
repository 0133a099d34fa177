// Package audit records who did what to a workspace (getAuditRecords): the record, its actions and the recorder.
package audit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Action names what a record says was done. The first group are the
// official client's values; the others are this server's own, which the
// Admin API answers as UNKNOWN with the name at the start of the value
// (Wire), so that the official enum holds.
type Action string

// The official client's actions this server records.
const (
	AddMember          Action = "ADD_WORKSPACE_MEMBER"
	RemoveMember       Action = "REMOVE_WORKSPACE_MEMBER"
	UpdateMember       Action = "UPDATE_WORKSPACE_MEMBER"
	CreateWorkspace    Action = "CREATE_WORKSPACE"
	UpdateWorkspace    Action = "UPDATE_WORKSPACE"
	CloseWorkspace     Action = "CLOSE_WORKSPACE"
	SetAISpendingLimit Action = "SET_AI_SPENDING_LIMIT"
	CreateBot          Action = "CREATE_BOT"
	UpdateBot          Action = "UPDATE_BOT"
	UpdateBotConfig    Action = "UPDATE_BOT_CONFIG"
	// DeployBot is new bot code; a version rolled back is one too, with a
	// value saying so (RollbackValue).
	DeployBot Action = "DEPLOY_BOT"
	DeleteBot Action = "DELETE_BOT"
	// DownloadBotArchive is a bot's export (internal/botarchive).
	DownloadBotArchive Action = "DOWNLOAD_BOT_ARCHIVE"
	Unknown            Action = "UNKNOWN"
)

// This server's own actions (answered as UNKNOWN, see Wire).
const (
	CreateToken      Action = "CREATE_PERSONAL_ACCESS_TOKEN"
	DeleteToken      Action = "DELETE_PERSONAL_ACCESS_TOKEN"
	CreateBotKey     Action = "CREATE_BOT_API_KEY"
	DeleteBotKey     Action = "DELETE_BOT_API_KEY"
	RotateBotSecret  Action = "ROTATE_BOT_SIGNING_SECRET"
	DeleteFile       Action = "DELETE_FILE"
	UserErased       Action = "USER_ERASED"
	CreateBotVersion Action = "CREATE_BOT_VERSION"
	ImportBot        Action = "IMPORT_BOT"
	BackupCreated    Action = "BACKUP_CREATED"
	SetStorageQuotas Action = "SET_STORAGE_QUOTAS"
	DeleteAccount    Action = "DELETE_ACCOUNT"
)

// official holds the actions of the official client's enum.
var official = map[Action]bool{
	AddMember: true, RemoveMember: true, UpdateMember: true, CreateWorkspace: true, UpdateWorkspace: true,
	CloseWorkspace: true, SetAISpendingLimit: true, CreateBot: true, UpdateBot: true, UpdateBotConfig: true,
	DeployBot: true, DeleteBot: true, Unknown: true,
	"TRANSFER_BOT": true, DownloadBotArchive: true, "UPDATE_BOT_CHANNEL": true, "UPDATE_PAYMENT_METHOD": true,
	"SET_SPENDING_LIMIT": true, "UPDATE_WORKSPACE_BILLING_READONLY": true, "UPDATE_WORKSPACE_PLAN_READONLY": true,
	"UPDATE_WORKSPACE_ADDONS_READONLY": true, "EXECUTE_AUTO_RECHARGE_SUCCESS": true, "EXECUTE_AUTO_RECHARGE_FAILED": true,
}

// RollbackValue is the value of the DEPLOY_BOT record of a bot rolled
// back to an earlier version.
func RollbackValue(version string) string { return "version rollback to " + version }

// Actor is who acted: an account (id and email), a bot API key (its id),
// or the server itself (neither: scheduled work, the operator's commands).
type Actor struct {
	UserID    string
	UserEmail string
}

// Account is an account acting with its personal access token.
func Account(a platform.Account) Actor { return Actor{UserID: a.ID, UserEmail: a.Email} }

// BotKey is a bot API key acting, recorded by its id (never its value).
func BotKey(keyID string) Actor { return Actor{UserID: keyID} }

// System is the server acting on its own or for its operator.
var System = Actor{}

// Record is one entry of a workspace's audit log. Value describes the
// change in words and ids; it never holds a secret, a token or a key.
type Record struct {
	ID          string
	WorkspaceID string
	RecordedAt  time.Time
	Actor
	Action       Action
	ResourceID   string
	ResourceName string
	Value        string
}

// Wire returns the action and value the Admin API answers: the record's
// own for an action of the official enum, else UNKNOWN with the action's
// name first in the value ("CREATE_BOT_API_KEY: bot bot_…").
func (r Record) Wire() (action Action, value string) {
	if official[r.Action] {
		return r.Action, r.Value
	}
	if r.Value == "" {
		return Unknown, string(r.Action)
	}
	return Unknown, fmt.Sprintf("%s: %s", r.Action, r.Value)
}

// IDPrefix starts every record's id.
const IDPrefix = "audit_"

// stamp gives records without an id or a time a new id and now.
func stamp(clock platform.Clock, recs []Record) []Record {
	out := make([]Record, len(recs))
	now := clock.Now()
	for i, r := range recs {
		if r.ID == "" {
			r.ID = platform.NewID(IDPrefix)
		}
		if r.RecordedAt.IsZero() {
			r.RecordedAt = now
		}
		out[i] = r
	}
	return out
}

// Pending are records riding with a change: the store writes them in the
// transaction that makes the change (see With).
type Pending struct {
	recs  []Record
	taken atomic.Bool
}

// Take returns the records once: nil when a transaction already holds them.
func (p *Pending) Take() []Record {
	if !p.taken.CompareAndSwap(false, true) {
		return nil
	}
	return p.recs
}

// Release gives the records back after the transaction that took them
// failed, for the next one.
func (p *Pending) Release() { p.taken.Store(false) }

type pendingKey struct{}

// With returns ctx carrying recs, stamped with ids and clock's time: the
// next write transaction the store runs with it appends them, so that they
// are kept exactly when that change is. Pass it only to the store call that
// makes the change.
func With(ctx context.Context, clock platform.Clock, recs ...Record) context.Context {
	if len(recs) == 0 {
		return ctx
	}
	return context.WithValue(ctx, pendingKey{}, &Pending{recs: stamp(clock, recs)})
}

// Attached returns the records riding with ctx (nil: none).
func Attached(ctx context.Context) *Pending {
	p, _ := ctx.Value(pendingKey{}).(*Pending)
	return p
}

// Store is what the recorder needs of the database.
type Store interface {
	AppendAuditRecords(ctx context.Context, recs []Record) error
	// PruneAuditRecords deletes the records made before before.
	PruneAuditRecords(ctx context.Context, before time.Time) (int, error)
	WorkspaceIDs(ctx context.Context) ([]string, error)
}

// Recorder appends records that ride with no change of the database
// (a backup, an erasure done elsewhere) and prunes old ones.
type Recorder struct {
	store Store
	clock platform.Clock
}

// NewRecorder returns a Recorder on s.
func NewRecorder(s Store, clock platform.Clock) *Recorder { return &Recorder{store: s, clock: clock} }

// Record appends recs now (USER_ERASED, BACKUP_CREATED, DEPLOY_BOT of a
// rollback, …), stamped like With's. Prefer With when the change is a
// store write: the record then commits with it.
func (r *Recorder) Record(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	return r.store.AppendAuditRecords(ctx, stamp(r.clock, recs))
}

// RecordEverywhere appends rec to every workspace's log, in one
// transaction: what it says concerns them all (a backup holds every
// workspace's data).
func (r *Recorder) RecordEverywhere(ctx context.Context, rec Record) error {
	ids, err := r.store.WorkspaceIDs(ctx)
	if err != nil {
		return err
	}
	recs := make([]Record, len(ids))
	for i, id := range ids {
		recs[i] = rec
		recs[i].WorkspaceID = id
	}
	return r.Record(ctx, recs...)
}

// Prune deletes the records older than retention; 0 keeps them all.
func (r *Recorder) Prune(ctx context.Context, retention time.Duration) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	return r.store.PruneAuditRecords(ctx, r.clock.Now().Add(-retention))
}

// RunPruner prunes every interval until ctx ends.
func (r *Recorder) RunPruner(ctx context.Context, interval, retention time.Duration, log *slog.Logger) {
	if retention <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := r.Prune(ctx, retention); err != nil {
			log.Warn("audit log pruning", "err", err)
		} else if n > 0 {
			log.Info("audit records pruned", "count", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
