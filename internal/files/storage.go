package files

import (
	"context"
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the Files API needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	CompleteUpload(ctx context.Context, u store.Upload) (platform.File, error)
	CreateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error
	DeleteExpiredFile(ctx context.Context, id string, now time.Time) (platform.File, error)
	DeleteFile(ctx context.Context, botID, id string) (platform.File, error)
	DeleteKnowledgeBase(ctx context.Context, botID, id string) error
	ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]platform.File, error)
	FailUpload(ctx context.Context, id string, gen int64, reason string, now time.Time) (platform.File, error)
	GetBotWorkspace(ctx context.Context, botID string) (string, error)
	GetFile(ctx context.Context, botID, id string) (platform.File, error)
	GetFileByKey(ctx context.Context, botID, scope, key string) (platform.File, error)
	GetKnowledgeBase(ctx context.Context, botID, id string) (platform.KnowledgeBase, error)
	GetStorage(ctx context.Context, workspaceID string) (platform.Storage, error)
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	ListFileTagValues(ctx context.Context, v store.FileVisibility, key string, p store.Page) ([]string, string, error)
	ListFileTags(ctx context.Context, v store.FileVisibility, p store.Page) ([]string, string, error)
	ListFiles(ctx context.Context, f store.FileFilter) ([]platform.File, string, error)
	ListKnowledgeBases(ctx context.Context, botID string, tags map[string][]string, p store.Page) ([]platform.KnowledgeBase, string, error)
	ListPassages(ctx context.Context, fileID string, p store.Page) ([]platform.Passage, string, error)
	PassageImage(ctx context.Context, fileID, passageID string) (mimeType string, image []byte, err error)
	PutFile(ctx context.Context, f platform.File) (stored platform.File, replaced *platform.File, err error)
	QueueIndexing(ctx context.Context, fileID string, payload json.RawMessage, now time.Time) error
	Secret(ctx context.Context, name string, value []byte) ([]byte, error)
	SetStorageLimits(ctx context.Context, workspaceID string, s platform.Storage) error
	UpdateFile(ctx context.Context, f platform.File) error
	UpdateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error
}

var _ Store = store.Store(nil)
