package dispatch

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the dispatcher needs of the database (store.Store has it
// all, and documents each method).
type Store interface {
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	BotVersion(ctx context.Context, botID string) (workspaceID string, updatedAt time.Time, err error)
	ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error)
	EndRuntimeEvent(ctx context.Context, jobID, status, reason string) error
	EnqueueJob(ctx context.Context, j platform.Job) error
	ExtendLease(ctx context.Context, id string, until time.Time) error
	FinishJob(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) error
	FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (next *platform.Job, waiting bool, err error)
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetConversationByID(ctx context.Context, id string) (platform.Conversation, error)
	ListIntegrations(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error)
	NextJobAt(ctx context.Context, kind string, after time.Time) (time.Time, bool, error)
	PurgeJobs(ctx context.Context, kind string, before time.Time) (int, error)
	PurgeRuntimeEvents(ctx context.Context, before time.Time) (int, error)
	Queued(kind string) <-chan struct{}
	RecurringBots(ctx context.Context) ([]platform.Bot, error)
	ReleaseJobs(ctx context.Context, kind, node string) (int, error)
	RetryJob(ctx context.Context, id string, runAfter time.Time) error
}

var _ Store = store.Store(nil)
