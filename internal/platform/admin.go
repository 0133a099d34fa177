package platform

import (
	"encoding/json"
	"strings"
	"time"
)

// Role is a workspace member's role. Roles are ordered: each can do what the
// ones before it can (see Role.AtLeast and docs/admin-api.md).
type Role string

const (
	RoleViewer        Role = "viewer"
	RoleDeveloper     Role = "developer"
	RoleManager       Role = "manager"
	RoleAdministrator Role = "administrator"
	RoleOwner         Role = "owner"
)

var roleRank = map[Role]int{RoleViewer: 1, RoleDeveloper: 2, RoleManager: 3, RoleAdministrator: 4, RoleOwner: 5}

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// AtLeast reports whether r grants everything min grants.
func (r Role) AtLeast(min Role) bool { return roleRank[r] >= roleRank[min] }

// Account is a person who signs in with personal access tokens.
type Account struct {
	ID          string
	Email       string
	DisplayName string
	// ProfilePicture is the URL of the account's picture, as given.
	ProfilePicture string
	CreatedAt      time.Time
}

// Workspace groups bots, members and quotas.
type Workspace struct {
	ID             string
	Name           string
	OwnerID        string
	Plan           string
	BillingVersion string
	Blocked        bool
	SpendingLimit  int64
	About          string
	ProfilePicture string
	ContactEmail   string
	Website        string
	SocialAccounts []string
	IsPublic       bool
	Handle         string
	BotCount       int
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Member is an account's membership of a workspace.
type Member struct {
	ID          string
	WorkspaceID string
	AccountID   string
	Email       string // from the account, filled on reads
	DisplayName string // from the account, filled on reads
	Role        Role
	CreatedAt   time.Time
}

// Actor is an authenticated caller: an account and, once a workspace is
// known, its membership of that workspace.
type Actor struct {
	Account Account
	Member  Member
}

// Require fails with 403 unless the actor's role in the current workspace
// is at least min; action names what is refused.
func (a *Actor) Require(min Role, action string) error {
	if !a.Member.Role.AtLeast(min) {
		return Errorf(TypeForbidden, "%s requires the %s role or higher; your role in this workspace is %s", action, min, a.Member.Role)
	}
	return nil
}

// ErrNotMember is the error of authentication when the workspace does not
// exist or the account is not a member of it.
var ErrNotMember = Errorf(TypeUnauthorized, "x-workspace-id: unknown workspace, or this account is not a member of it")

// Token is a personal access token (PAT) or a bot API key. Only the SHA-256
// hash of its value is stored.
type Token struct {
	ID        string
	OwnerID   string // account id for a PAT, bot id for a bot key
	Note      string
	Hash      []byte
	CreatedAt time.Time
}

// Bot is a bot of a workspace. Descriptive fields that no query filters on
// live in Spec, stored as one JSON document.
type Bot struct {
	ID            string
	WorkspaceID   string
	Name          string
	Dev           bool
	Type          string
	Status        string
	SigningSecret string
	Code          string
	CreatedBy     string
	Tags          map[string]string
	Spec          BotSpec
	DeployedAt    *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Integrations  []BotIntegration
	Plugins       []BotPlugin
}

// BotPlugin is a plugin a bot installed under Alias: a version of it, its
// configuration, and the bot's integrations that back the plugin's
// interfaces and integrations (as updateBot's answer shows them).
type BotPlugin struct {
	Alias         string
	PluginID      string
	Name          string
	Version       string
	Enabled       bool
	Configuration map[string]any
	Interfaces    json.RawMessage // alias → {integrationId, integrationAlias, integrationInterfaceAlias?, interfaceId}
	Integrations  json.RawMessage // alias → {integrationId, integrationAlias}
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// BotSummary is a bot as listBots shows it. Its tags stay in their stored
// JSON form: a listing passes them through without decoding them.
type BotSummary struct {
	ID         string
	Name       string
	Type       string
	Tags       json.RawMessage
	DeployedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// BotSpec holds the bot's definition as given to createBot/updateBot.
type BotSpec struct {
	Description      string            `json:"description,omitempty"`
	URL              string            `json:"url,omitempty"`
	Secrets          map[string]string `json:"secrets,omitempty"`
	MaxExecutionTime *int              `json:"maxExecutionTime,omitempty"`
	Medias           []Media           `json:"medias,omitempty"`
	States           json.RawMessage   `json:"states,omitempty"`
	Events           json.RawMessage   `json:"events,omitempty"`
	RecurringEvents  json.RawMessage   `json:"recurringEvents,omitempty"`
	Subscriptions    json.RawMessage   `json:"subscriptions,omitempty"`
	Actions          json.RawMessage   `json:"actions,omitempty"`
	Configuration    json.RawMessage   `json:"configuration,omitempty"`
	UserTags         json.RawMessage   `json:"userTags,omitempty"`
	ConversationTags json.RawMessage   `json:"conversationTags,omitempty"`
	MessageTags      json.RawMessage   `json:"messageTags,omitempty"`
	Authentication   string            `json:"authentication,omitempty"`
	Blocked          bool              `json:"blocked,omitempty"`
	AlwaysAlive      bool              `json:"alwaysAlive,omitempty"`
	Layers           []string          `json:"layers,omitempty"`
	// FetchHosts are the hosts bot code's fetch may reach (none: fetch is
	// off); "*.example.com" matches its subdomains.
	FetchHosts []string `json:"fetchHosts,omitempty"`
}

// CodeDefinition is what deployed code declares that the platform keeps for
// the bot: the tables of a Node bundle (see tables.DeployTables).
type CodeDefinition struct {
	Tables map[string]json.RawMessage
}

// Media is a file attached to a bot's description.
type Media struct {
	URL  string `json:"url"`
	Name string `json:"name"`
}

// BotIntegration is an integration instance installed in a bot. Every bot has
// the built-in chat integration; its WebhookID addresses the Chat API.
type BotIntegration struct {
	BotID            string
	IntegrationID    string
	Name             string
	Version          string
	WebhookID        string
	Enabled          bool
	Configuration    map[string]any
	DisabledChannels []string
	// ConfigurationType names the integration's configuration in use ("":
	// its default one).
	ConfigurationType string
	// Status is IntegrationRegistered, or IntegrationRegistrationFailed with
	// StatusReason, the reason the integration's register handler gave.
	Status       string
	StatusReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Deployed tells whether the installation is of an integration a workspace
// deployed, whose code runs (not one of the built-in chat and LLM
// integrations).
func (in BotIntegration) Deployed() bool {
	return !ServesChatAPI(in.IntegrationID) && in.IntegrationID != LLMIntegrationID
}

// An installed integration's registration statuses.
const (
	IntegrationRegistered         = "registered"
	IntegrationRegistrationFailed = "registration_failed"
)

// ChatIntegrationID names the built-in chat integration that every bot has.
const ChatIntegrationID = "chat"

// NewChatIntegration returns a bot's chat integration with a new webhook id;
// its user keys are signed with encryptionKey (a new one when empty).
func NewChatIntegration(botID, encryptionKey string, now time.Time) BotIntegration {
	if encryptionKey == "" {
		encryptionKey = RandomToken(32)
	}
	return BotIntegration{
		BotID: botID, IntegrationID: ChatIntegrationID, Name: "chat", Version: "1.0.0",
		WebhookID: strings.ToLower(NewID("")), Enabled: true, Status: IntegrationRegistered,
		Configuration: map[string]any{"encryptionKey": encryptionKey}, DisabledChannels: []string{},
		CreatedAt: now, UpdatedAt: now,
	}
}

// WebchatIntegrationID names the built-in webchat integration: the web
// chat's own channel, which bots built with the platform's agent kit
// install (webchat@0.3.0). Its users talk through the Chat API at its own
// webhook; its conversations are the bot's "webchat" channel, and the web
// chat's events and actions are its own (docs/webchat.md#the-webchat-integration).
const (
	WebchatIntegrationID      = "webchat"
	WebchatIntegrationVersion = "0.3.0"
)

// ServesChatAPI tells whether the Chat API serves the built-in integration
// id's webhook: the chat and webchat integrations.
func ServesChatAPI(id string) bool { return id == ChatIntegrationID || id == WebchatIntegrationID }

// NewWebchatIntegration returns a bot's installation of the built-in
// webchat integration, with a webhook id and user key of its own.
func NewWebchatIntegration(botID string, now time.Time) BotIntegration {
	in := NewChatIntegration(botID, "", now)
	in.IntegrationID, in.Name, in.Version = WebchatIntegrationID, WebchatIntegrationID, WebchatIntegrationVersion
	return in
}

// LLMIntegrationID and LLMIntegration name the built-in integration that
// implements the llm interface with the operator's model server
// (docs/llm.md). It answers as "openai", the name the official clients
// call first (@botpress/cognitive 0.5 looks for "openai:listLanguageModels"
// when it cannot read the bot's integrations), so that a bot written for
// the hosted platform's openai integration runs as it is.
const (
	LLMIntegrationID      = "intver_01builtinopenai00000000"
	LLMIntegration        = "openai"
	LLMIntegrationVersion = "1.0.0"
)

// NewLLMIntegration returns a bot's installation of the built-in LLM
// integration.
func NewLLMIntegration(botID string, now time.Time) BotIntegration {
	return BotIntegration{
		BotID: botID, IntegrationID: LLMIntegrationID, Name: LLMIntegration, Version: LLMIntegrationVersion,
		WebhookID: strings.ToLower(NewID("")), Enabled: true, Status: IntegrationRegistered, Configuration: map[string]any{}, DisabledChannels: []string{},
		CreatedAt: now, UpdatedAt: now,
	}
}

// LogEntry is one line of a bot's logs.
type LogEntry struct {
	ID             string
	BotID          string
	Timestamp      time.Time
	Level          string
	Message        string
	UserID         string
	ConversationID string
	WorkflowID     string
}

// AIUsage is one metered model call, charged to a workspace as AI Spend.
type AIUsage struct {
	ID           string
	WorkspaceID  string
	BotID        string
	FileID       string // the file indexed, when the call was for one
	Purpose      string // what the call was for: agent_parsing, smart_cleanup, summarization, vision_transcription, vision_indexing, search_rewriting, question_generation
	Model        string
	InputTokens  int64
	OutputTokens int64
	Cost         int64 // nanodollars (US dollars × 10^9)
	Latency      time.Duration
	Failed       bool // the call failed: it costs nothing
	CreatedAt    time.Time
}
