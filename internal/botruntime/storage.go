package botruntime

import (
	"context"
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the bot runtime needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	BotStates(ctx context.Context, botID, userID, conversationID string) (map[string]json.RawMessage, error)
	BotVersion(ctx context.Context, botID string) (workspaceID string, updatedAt time.Time, err error)
	ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error)
	CountOwnedJobs(ctx context.Context, kind, owner string) (int, error)
	EndRuntimeEvent(ctx context.Context, jobID, status, reason string) error
	EnqueueJob(ctx context.Context, j platform.Job) error
	ExtendLease(ctx context.Context, id string, until time.Time) error
	FinishJob(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) error
	FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (next *platform.Job, waiting bool, err error)
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	GetConversationByID(ctx context.Context, id string) (platform.Conversation, error)
	GetKnowledgeBase(ctx context.Context, botID, id string) (platform.KnowledgeBase, error)
	GetMessage(ctx context.Context, id string) (platform.Message, error)
	ListKnowledgeBases(ctx context.Context, botID string, tags map[string][]string, p store.Page) ([]platform.KnowledgeBase, string, error)
	ListMessages(ctx context.Context, conversationID string, p store.Page) ([]platform.Message, string, error)
	ListParticipants(ctx context.Context, conversationID string, p store.Page) ([]platform.ChatUser, string, error)
	NextJobAt(ctx context.Context, kind string, after time.Time) (time.Time, bool, error)
	PurgeJobs(ctx context.Context, kind string, before time.Time) (int, error)
	PurgeRuntimeEvents(ctx context.Context, before time.Time) (int, error)
	Queued(kind string) <-chan struct{}
	RecurringBots(ctx context.Context) ([]platform.Bot, error)
	ReleaseJobs(ctx context.Context, kind, node string) (int, error)
	RetryJob(ctx context.Context, id string, runAfter time.Time) error
}

var _ Store = store.Store(nil)
