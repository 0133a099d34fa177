// Package botarchive exports a bot with its data into one archive, and imports such an archive into a workspace.
package botarchive

import (
	"encoding/json"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// The archive is a gzip-compressed tar. Its entries come in this order:
// bot.json, one JSON Lines entry per kind of row (rows in id order), the
// contents of the files under files/<file id>, and manifest.json last,
// which lists every other entry with its size and SHA-256. Ids are the
// exporting server's.
const (
	// FormatName and FormatVersion name the archive's format in its
	// manifest; an archive of another version is refused.
	FormatName    = "botplatform-bot"
	FormatVersion = 1

	ManifestEntry = "manifest.json"
	BotEntry      = "bot.json"
	// ContentDir holds the files' contents, each named by its file's id.
	ContentDir = "files/"
)

// Entries of the rows of each kind, in archive order.
var rowEntries = []string{"versions.jsonl", "users.jsonl", "conversations.jsonl", "messages.jsonl", "states.jsonl",
	"code-states.jsonl", "workflows.jsonl", "files.jsonl", "passages.jsonl"}

// Manifest describes an archive.
type Manifest struct {
	Format        string         `json:"format"`
	Version       int            `json:"version"`
	ServerVersion string         `json:"serverVersion"`
	ExportedAt    time.Time      `json:"exportedAt"`
	BotID         string         `json:"botId"`
	BotName       string         `json:"botName"`
	Secrets       bool           `json:"secrets"` // bot.json holds the bot's secrets
	Counts        map[string]int `json:"counts"`  // rows of each kind, and "contents"
	Entries       []Entry        `json:"entries"`
}

// Entry is one entry of the archive other than the manifest.
type Entry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// botRecord is bot.json. Secrets are there only when asked for.
type botRecord struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Dev        bool              `json:"dev"`
	Type       string            `json:"type"`
	Status     string            `json:"status"`
	Code       string            `json:"code"`
	Tags       map[string]string `json:"tags"`
	Spec       platform.BotSpec  `json:"spec"` // spec.secrets only with Secrets
	DeployedAt *time.Time        `json:"deployedAt,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
	Secrets    *botSecrets       `json:"secrets,omitempty"`
	// Integrations are the built-in integrations the bot installed, by
	// name, beside chat, which every bot has.
	Integrations []string `json:"integrations,omitempty"`
}

// botSecrets are what signs for the bot: its signing secret, and the chat
// encryption key its users' keys are signed with.
type botSecrets struct {
	SigningSecret     string `json:"signingSecret"`
	ChatEncryptionKey string `json:"chatEncryptionKey"`
}

type versionRecord struct {
	ID          string            `json:"id"`
	Seq         int64             `json:"seq"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	BotName     string            `json:"botName"`
	Code        string            `json:"code"`
	Tags        map[string]string `json:"tags"`
	Spec        platform.BotSpec  `json:"spec"`
	Digest      string            `json:"digest"`
	CreatedBy   string            `json:"createdBy"`
	CreatedAt   time.Time         `json:"createdAt"`
}

type userRecord struct {
	ID         string            `json:"id"`
	FID        string            `json:"fid"` // the id clients know the user by
	Name       string            `json:"name,omitempty"`
	PictureURL string            `json:"pictureUrl,omitempty"`
	Profile    string            `json:"profile,omitempty"`
	Tags       map[string]string `json:"tags"`
	Properties map[string]string `json:"properties,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
}

type conversationRecord struct {
	ID           string              `json:"id"`
	FID          string              `json:"fid"`
	OwnerID      string              `json:"ownerId"`
	Tags         map[string]string   `json:"tags"`
	Channel      string              `json:"channel"`
	Integration  string              `json:"integration"`
	Properties   map[string]string   `json:"properties,omitempty"`
	Participants []participantRecord `json:"participants"`
	CreatedAt    time.Time           `json:"createdAt"`
	UpdatedAt    time.Time           `json:"updatedAt"`
}

type participantRecord struct {
	UserID    string    `json:"userId"`
	CreatedAt time.Time `json:"createdAt"`
}

type messageRecord struct {
	ID             string            `json:"id"`
	ConversationID string            `json:"conversationId"`
	UserID         string            `json:"userId"`
	IsBot          bool              `json:"isBot"`
	Payload        json.RawMessage   `json:"payload"`
	Metadata       json.RawMessage   `json:"metadata,omitempty"`
	Tags           map[string]string `json:"tags"`
	CreatedAt      time.Time         `json:"createdAt"`
	UpdatedAt      *time.Time        `json:"updatedAt,omitempty"`
}

type stateRecord struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"` // bot, user, conversation or workflow
	ScopeID   string          `json:"scopeId"`
	Name      string          `json:"name"`
	Payload   json.RawMessage `json:"payload"`
	Expiry    *int64          `json:"expiry,omitempty"` // milliseconds
	ExpiresAt *time.Time      `json:"expiresAt,omitempty"`
	Version   int64           `json:"version"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// codeStateRecord is what bot code keeps in event.state.
type codeStateRecord struct {
	Scope   string          `json:"scope"` // bot, user or conversation
	ScopeID string          `json:"scopeId"`
	Value   json.RawMessage `json:"value"`
}

type workflowRecord struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	Input          json.RawMessage   `json:"input"`
	Output         json.RawMessage   `json:"output"`
	ParentID       string            `json:"parentId,omitempty"`
	ConversationID string            `json:"conversationId,omitempty"`
	UserID         string            `json:"userId,omitempty"`
	Tags           map[string]string `json:"tags"`
	FailureReason  string            `json:"failureReason,omitempty"`
	TimeoutAt      time.Time         `json:"timeoutAt"`
	CompletedAt    *time.Time        `json:"completedAt,omitempty"`
	Version        int64             `json:"version"`
	CreatedAt      time.Time         `json:"createdAt"`
	UpdatedAt      time.Time         `json:"updatedAt"`
}

type fileRecord struct {
	ID             string             `json:"id"`
	Scope          string             `json:"scope,omitempty"`
	Key            string             `json:"key"`
	Status         string             `json:"status"`
	Size           int64              `json:"size"`
	SHA256         string             `json:"sha256"`
	ContentType    string             `json:"contentType"`
	Tags           map[string]string  `json:"tags"`
	Metadata       map[string]any     `json:"metadata"`
	AccessPolicies []string           `json:"accessPolicies"`
	Index          bool               `json:"index"`
	PublicNow      bool               `json:"publicContentImmediatelyAccessible,omitempty"`
	FailedReason   string             `json:"failedStatusReason,omitempty"`
	IndexingStack  string             `json:"indexingStack,omitempty"`
	ExpiresAt      *time.Time         `json:"expiresAt,omitempty"`
	Owner          platform.FileOwner `json:"owner"`
	ExtraBytes     int64              `json:"extraBytes,omitempty"` // page images of its passages
	CreatedAt      time.Time          `json:"createdAt"`
	UpdatedAt      time.Time          `json:"updatedAt"`
}

type passageRecord struct {
	ID         string    `json:"id"`
	FileID     string    `json:"fileId"`
	Position   int       `json:"position"`
	Content    string    `json:"content"`
	Type       string    `json:"type"`
	Subtype    string    `json:"subtype,omitempty"`
	PageNumber int       `json:"pageNumber,omitempty"`
	Breadcrumb []string  `json:"breadcrumb"`
	Questions  []string  `json:"questions,omitempty"` // --ai-index-questions
	Vector     []float32 `json:"vector"`
	ImageType  string    `json:"imageType,omitempty"`
	Image      []byte    `json:"image,omitempty"` // base64
}
