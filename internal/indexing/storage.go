package indexing

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what indexing needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	AISpend(ctx context.Context, workspaceID string, since time.Time) (total int64, byBot map[string]int64, err error)
	ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error)
	CompleteIndexing(ctx context.Context, fileID string, gen int64, stack string, ps []platform.Passage, now time.Time) error
	ExtendLease(ctx context.Context, id string, until time.Time) error
	FailIndexing(ctx context.Context, fileID string, gen int64, reason string, now time.Time) error
	FinishJob(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) error
	GetBotWorkspace(ctx context.Context, botID string) (string, error)
	GetFile(ctx context.Context, botID, id string) (platform.File, error)
	GetFiles(ctx context.Context, ids []string) ([]platform.File, error)
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	PassageStats(ctx context.Context, botID string) (maxSeq int64, count int, changes int64, err error)
	PassageVectors(ctx context.Context, botID string, afterSeq, upToSeq int64) ([]platform.Passage, error)
	PassagesAround(ctx context.Context, fileID string, from, to int) ([]platform.Passage, error)
	PassagesBySeq(ctx context.Context, seqs []int64) ([]platform.Passage, error)
	Queued(kind string) <-chan struct{}
	RecordAIUsage(ctx context.Context, u platform.AIUsage) error
	ReleaseJobs(ctx context.Context, kind, node string) (int, error)
	RetryJob(ctx context.Context, id string, runAfter time.Time) error
	SearchableFiles(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, among []string) ([]string, error)
	TermStats(ctx context.Context, words []string, limit int) (total int64, df []int64, err error)
	TextCandidates(ctx context.Context, v store.FileVisibility, tags, notTags map[string][]string, words []string, df []int64, budget int) ([]platform.Passage, error)
}

var _ Store = store.Store(nil)
