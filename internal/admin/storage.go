package admin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the admin service needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	AISpend(ctx context.Context, workspaceID string, since time.Time) (total int64, byBot map[string]int64, err error)
	AISpendByDay(ctx context.Context, workspaceID string, from, until time.Time) ([]store.AISpendDay, error)
	AppendAuditRecords(ctx context.Context, recs []audit.Record) error
	BotAnalytics(ctx context.Context, botID string, from, to int64) (map[int64]*store.DayAnalytics, error)
	CountInstallations(ctx context.Context, integrationID string) (int, error)
	CountPluginInstallations(ctx context.Context, pluginID string) (int, error)
	CreateAccount(ctx context.Context, a platform.Account) error
	CreateBot(ctx context.Context, b platform.Bot) error
	CreateBotKey(ctx context.Context, workspaceID string, t platform.Token) error
	CreateIntegration(ctx context.Context, i platform.Integration) error
	CreateInterface(ctx context.Context, i platform.Integration) error
	CreateMember(ctx context.Context, m platform.Member) error
	CreateOwner(ctx context.Context, a platform.Account, w platform.Workspace, m platform.Member, t platform.Token) error
	CreatePAT(ctx context.Context, t platform.Token) error
	CreatePlugin(ctx context.Context, i platform.Integration) error
	CreateWorkspace(ctx context.Context, w platform.Workspace, owner platform.Member) error
	DeleteAccount(ctx context.Context, id string) (owned []string, err error)
	DeleteBot(ctx context.Context, workspaceID, id string) ([]string, error)
	DeleteBotKey(ctx context.Context, workspaceID, id string) error
	DeleteIntegration(ctx context.Context, workspaceID, id string) error
	DeleteInterface(ctx context.Context, workspaceID, id string) error
	DeleteMember(ctx context.Context, workspaceID, id string) error
	DeletePAT(ctx context.Context, accountID, id string) error
	DeletePlugin(ctx context.Context, workspaceID, id string) error
	DeleteWorkspace(ctx context.Context, id string) ([]string, error)
	Empty(ctx context.Context) (bool, error)
	GetAccount(ctx context.Context, id string) (platform.Account, error)
	GetAccountByEmail(ctx context.Context, email string) (platform.Account, error)
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetBotKeyByHash(ctx context.Context, hash []byte) (platform.Token, string, error)
	GetBotVersion(ctx context.Context, workspaceID, botID, id string) (platform.BotVersion, error)
	GetBotWorkspace(ctx context.Context, botID string) (string, error)
	GetCredential(ctx context.Context, hash []byte, workspaceID string) (platform.Token, platform.Account, *platform.Member, error)
	GetIntegration(ctx context.Context, id string) (platform.Integration, error)
	GetIntegrationByName(ctx context.Context, name, version string) (platform.Integration, error)
	GetInterface(ctx context.Context, id string) (platform.Integration, error)
	GetInterfaceByName(ctx context.Context, name, version string) (platform.Integration, error)
	GetMember(ctx context.Context, workspaceID, accountID string) (platform.Member, error)
	GetMemberByID(ctx context.Context, workspaceID, id string) (platform.Member, error)
	GetPlugin(ctx context.Context, id string) (platform.Integration, error)
	GetPluginByName(ctx context.Context, name, version string) (platform.Integration, error)
	GetPreference(ctx context.Context, o store.PreferenceOwner, key string) (json.RawMessage, error)
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	GetWorkspaceByHandle(ctx context.Context, handle string) (platform.Workspace, error)
	InTx(ctx context.Context, f func(ctx context.Context) error) error
	ListAuditRecords(ctx context.Context, workspaceID string, p store.Page) ([]audit.Record, string, error)
	ListBotKeys(ctx context.Context, workspaceID, botID string) ([]platform.Token, error)
	ListBotVersions(ctx context.Context, workspaceID, botID string) ([]platform.BotVersion, error)
	ListBots(ctx context.Context, workspaceID string, f store.BotFilter) ([]platform.BotSummary, string, error)
	ListIntegrations(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error)
	ListInterfaces(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error)
	ListLogs(ctx context.Context, f store.LogFilter) ([]platform.LogEntry, string, error)
	ListMembers(ctx context.Context, workspaceID string, p store.Page) ([]platform.Member, string, error)
	ListPATs(ctx context.Context, accountID string) ([]platform.Token, error)
	ListPlugins(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error)
	ListWorkspaces(ctx context.Context, accountID string, f store.WorkspaceFilter) ([]platform.Workspace, string, error)
	ListPublicWorkspaces(ctx context.Context, f store.PublicWorkspaceFilter) ([]platform.Workspace, string, error)
	PruneAuditRecords(ctx context.Context, before time.Time) (int, error)
	SaveBotVersion(ctx context.Context, workspaceID string, v platform.BotVersion, keep int, update *platform.Bot) (platform.BotVersion, error)
	Secret(ctx context.Context, name string, value []byte) ([]byte, error)
	SetPreference(ctx context.Context, o store.PreferenceOwner, key string, value json.RawMessage, now time.Time) error
	UpdateAccount(ctx context.Context, a platform.Account) error
	UpdateBot(ctx context.Context, b platform.Bot) error
	UpdateIntegration(ctx context.Context, i platform.Integration) error
	UpdateIntegrationStatus(ctx context.Context, botID string, ins []platform.BotIntegration) error
	UpdateInterface(ctx context.Context, i platform.Integration) error
	UpdateMemberRole(ctx context.Context, workspaceID, id string, role platform.Role) error
	UpdatePlugin(ctx context.Context, i platform.Integration) error
	UpdateWorkspace(ctx context.Context, w platform.Workspace) error
	WorkspaceIDs(ctx context.Context) ([]string, error)
}

var _ Store = store.Store(nil)
