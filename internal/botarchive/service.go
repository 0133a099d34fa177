package botarchive

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the service needs of the database.
type Store interface {
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	GetFileByKey(ctx context.Context, botID, scope, key string) (platform.File, error)
	EachBotRow(ctx context.Context, botID, kind string, fn func(row any) error) error
	ImportBot(ctx context.Context, in store.BotImport) (map[string]int, error)
}

// Contents reads and writes files' contents (the blob store).
type Contents interface {
	Open(ctx context.Context, key string) (blob.Reader, error)
	Put(ctx context.Context, key string, r io.Reader, max int64) (blob.Info, error)
	Delete(ctx context.Context, key string) error
}

// Limits returns a workspace's File Storage and Vector DB Storage limits,
// and the room left under the first (files.StorageLimits).
type Limits func(ctx context.Context, workspaceID string) (maxStorage, maxVector, room int64, err error)

// Service exports and imports bots.
type Service struct {
	store    Store
	contents Contents
	limits   Limits
	clock    platform.Clock
	log      *slog.Logger
	version  string // the server's, written in manifests
	tmpDir   string // where archives are spooled ("": the system's)
	bounds   Bounds // on what an import decompresses and holds
}

// New returns a Service.
func New(st Store, contents Contents, limits Limits, clock platform.Clock, log *slog.Logger, version, tmpDir string) *Service {
	return &Service{store: st, contents: contents, limits: limits, clock: clock, log: log, version: version, tmpDir: tmpDir, bounds: DefaultBounds}
}

// Roles: exporting a bot is a developer's work (it is what they deploy);
// its secrets, which sign for the bot and for its users, are an
// administrator's.
const (
	ExportRole  = platform.RoleDeveloper
	SecretsRole = platform.RoleAdministrator
	ImportRole  = platform.RoleDeveloper
)

func notFound(err error, kind, id string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound(kind, id)
	}
	return err
}
