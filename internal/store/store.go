// Package store declares what the services need from persistence. The
// services own every rule; a store only persists and queries. Both backends
// (sqlite and postgres) are checked by the same conformance suite in storetest.
package store

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Store is implemented by *sqlstore.Store for SQLite and PostgreSQL.
type Store interface {
	Close() error
	Ping(ctx context.Context) error
	// Empty reports whether no account exists yet (first start).
	Empty(ctx context.Context) (bool, error)

	// CreateOwner creates, in one transaction, the first account with its
	// workspace, owner membership and token. ErrConflict when the account's
	// email is taken (another process bootstrapped first).
	CreateOwner(ctx context.Context, a platform.Account, w platform.Workspace, m platform.Member, t platform.Token) error

	CreateAccount(ctx context.Context, a platform.Account) error
	GetAccount(ctx context.Context, id string) (platform.Account, error)
	GetAccountByEmail(ctx context.Context, email string) (platform.Account, error)

	CreatePAT(ctx context.Context, t platform.Token) error
	ListPATs(ctx context.Context, accountID string) ([]platform.Token, error)
	DeletePAT(ctx context.Context, accountID, id string) error
	// GetCredential resolves a PAT hash to its token and account, and the
	// account's membership of workspaceID (nil when not a member, or when
	// workspaceID is empty), in one round trip: it runs on every request.
	GetCredential(ctx context.Context, hash []byte, workspaceID string) (platform.Token, platform.Account, *platform.Member, error)

	// CreateWorkspace inserts the workspace and its owner membership at once.
	CreateWorkspace(ctx context.Context, w platform.Workspace, owner platform.Member) error
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	ListWorkspaces(ctx context.Context, accountID string, f WorkspaceFilter) ([]platform.Workspace, string, error)
	UpdateWorkspace(ctx context.Context, w platform.Workspace) error
	// DeleteWorkspace removes the workspace with its members, bots and keys.
	DeleteWorkspace(ctx context.Context, id string) error

	GetMember(ctx context.Context, workspaceID, accountID string) (platform.Member, error)
	GetMemberByID(ctx context.Context, workspaceID, id string) (platform.Member, error)
	ListMembers(ctx context.Context, workspaceID string, p Page) ([]platform.Member, string, error)
	CreateMember(ctx context.Context, m platform.Member) error
	UpdateMemberRole(ctx context.Context, workspaceID, id string, role platform.Role) error
	DeleteMember(ctx context.Context, workspaceID, id string) error

	// CreateBot inserts the bot with its tags and integrations.
	CreateBot(ctx context.Context, b platform.Bot) error
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	// UpdateBot replaces the stored bot (tags and integrations included).
	UpdateBot(ctx context.Context, b platform.Bot) error
	DeleteBot(ctx context.Context, workspaceID, id string) error
	ListBots(ctx context.Context, workspaceID string, f BotFilter) ([]platform.BotSummary, string, error)
	GetIntegrationByWebhook(ctx context.Context, webhookID string) (platform.BotIntegration, error)

	CreateBotKey(ctx context.Context, workspaceID string, t platform.Token) error
	ListBotKeys(ctx context.Context, workspaceID, botID string) ([]platform.Token, error)
	DeleteBotKey(ctx context.Context, workspaceID, id string) error
	// GetBotKeyByHash returns the key and the workspace of its bot.
	GetBotKeyByHash(ctx context.Context, hash []byte) (platform.Token, string, error)

	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	ListLogs(ctx context.Context, f LogFilter) ([]platform.LogEntry, string, error)
}

// Page selects one page of a keyset-paginated listing. Token is the opaque
// nextToken of the previous page; Limit is at least 1.
type Page struct {
	Token string
	Limit int
}

// WorkspaceFilter narrows listWorkspaces.
type WorkspaceFilter struct {
	Page
	Handle string
}

// BotFilter narrows listBots. Dev selects dev bots (true) or production bots
// (false). Tags must all match; a tag listing several values matches any.
type BotFilter struct {
	Page
	Dev  bool
	Tags map[string][]string
	// IntegrationNames, when set, keeps bots having all these integrations.
	IntegrationNames []string
	SortField        string // "createdAt" or "updatedAt"
	Descending       bool
}

// LogFilter narrows getBotLogs.
type LogFilter struct {
	Page
	BotID           string
	Start, End      time.Time
	Level           string
	UserID          string
	ConversationID  string
	WorkflowID      string
	MessageContains string
}
