package platform

import (
	"encoding/json"
	"time"
)

// ChatUser is an end user of a bot's Chat API. FID is the id clients see:
// the foreign id given at creation, or else ID.
type ChatUser struct {
	ID         string
	BotID      string
	FID        string
	Name       string
	PictureURL string
	Profile    string
	Tags       map[string]string // never nil once read
	// Properties and Attributes are the Runtime API's free key-value
	// maps of a user, shown as given; never nil once read.
	Properties map[string]string
	Attributes map[string]string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Conversation is a Chat API conversation; its creator owns it.
type Conversation struct {
	ID      string
	BotID   string
	FID     string
	OwnerID string            // internal user id
	Tags    map[string]string // never nil once read
	// Channel and Integration are what the Runtime API shows: "channel"
	// and "chat" for conversations of the Chat API.
	Channel     string
	Integration string
	Properties  map[string]string // the Runtime API's free key-value map; never nil once read
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Message is a message of a conversation.
type Message struct {
	ID             string
	ConversationID string // internal
	UserID         string // internal
	Payload        json.RawMessage
	Metadata       json.RawMessage // nil when none
	IsBot          bool
	Tags           map[string]string // never nil once read
	CreatedAt      time.Time
	UpdatedAt      time.Time // zero: CreatedAt
	// DueAt is when the bot's event for a user's message is due (zero:
	// CreatedAt); it is not stored with the message.
	DueAt time.Time
	// History marks a message imported as history: a user's is not
	// queued for the bot.
	History bool
}

// ChatEvent is a custom event of a conversation (spec 2.2).
type ChatEvent struct {
	ID             string
	ConversationID string
	UserID         string
	Payload        json.RawMessage
	IsBot          bool
	CreatedAt      time.Time
	DueAt          time.Time // as Message.DueAt
}

// JobBotEvent is the kind of the job that delivers an incoming message or
// event to the bot's code.
const JobBotEvent = "bot_event"

// Types of bot events (BotEventJob.Type).
const (
	BotEventMessage   = "message"       // a user's chat message
	BotEventChat      = "event"         // a user's custom chat event
	BotEventRecurring = "recurring"     // a firing of one of the bot's recurringEvents
	BotEventScheduled = "scheduled"     // an event the bot's code scheduled
	BotEventWorkflow  = "workflow"      // a workflow_update for one of the bot's workflows
	BotEventStateExp  = "state_expired" // one of the bot's Runtime API states lapsed
)

// BotEventJob is the payload of a JobBotEvent job. Chat messages and events
// (queued by the Chat API with the message or event) name it by ID; recurring
// and scheduled events carry their type and payload. ConversationID and
// UserID are internal ids.
type BotEventJob struct {
	Type           string          `json:"type"`
	ID             string          `json:"id,omitempty"`
	ConversationID string          `json:"conversationId,omitempty"`
	UserID         string          `json:"userId,omitempty"`
	BotID          string          `json:"botId,omitempty"`
	EventID        string          `json:"eventId,omitempty"`
	EventType      string          `json:"eventType,omitempty"`
	MessageID      string          `json:"messageId,omitempty"`
	WorkflowID     string          `json:"workflowId,omitempty"`
	Update         string          `json:"update,omitempty"` // a workflow's: workflow_started, workflow_timedout
	Name           string          `json:"name,omitempty"`   // the recurring event's key
	Payload        json.RawMessage `json:"payload,omitempty"`
}

// Keep reports whether the job stays as a done row once handled: the jobs
// whose ids derive from what they do (recurring firings, scheduled events),
// so that another server's firing, or a redelivered event scheduling them
// again, is a conflict rather than a second run.
func (p BotEventJob) Keep() bool {
	return p.Type == BotEventRecurring || p.Type == BotEventScheduled || p.Type == BotEventWorkflow || p.Type == BotEventStateExp
}

// RuntimeState is a named state of the Runtime API: a JSON object kept for
// a bot, one of its users or conversations (ScopeID is the internal id), or
// a workflow. With an Expiry (milliseconds), it lapses when left unwritten
// that long: ExpiresAt is the last write plus Expiry.
type RuntimeState struct {
	ID        string
	BotID     string
	Type      string
	ScopeID   string
	Name      string
	Payload   json.RawMessage
	Expiry    *int64
	ExpiresAt *time.Time
	Version   int64 // counts writes
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RuntimeEvent is an event a bot created through the Runtime API, for its
// own handlers. ConversationID and UserID are internal ids.
type RuntimeEvent struct {
	ID             string
	BotID          string
	Type           string
	Payload        json.RawMessage
	ConversationID string
	UserID         string
	MessageID      string
	WorkflowID     string
	JobID          string // the job that delivers it
	Status         string // EventPending, EventProcessed, …
	FailureReason  string
	RunAt          time.Time
	CreatedAt      time.Time
}

// EventRetention is how long a RuntimeEvent stays readable once it has
// ended (processed, failed, ignored or canceled), from its RunAt.
const EventRetention = 7 * 24 * time.Hour

// Statuses of a RuntimeEvent. A pending event whose RunAt is ahead is shown
// as scheduled.
const (
	EventPending   = "pending"
	EventScheduled = "scheduled"
	EventProcessed = "processed"
	EventFailed    = "failed"
	EventIgnored   = "ignored"
	EventCanceled  = "canceled"
)

// Workflow is a Runtime API workflow: a durable record of a bot's
// long-running work. ConversationID and UserID are internal ids.
type Workflow struct {
	ID             string
	BotID          string
	Name           string
	Status         string
	Input          json.RawMessage
	Output         json.RawMessage
	ParentID       string
	ConversationID string
	UserID         string
	Tags           map[string]string
	FailureReason  string
	EventID        string
	TimeoutAt      time.Time
	CompletedAt    *time.Time
	Version        int64 // counts writes
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Statuses of a workflow: active ones, then finished ones.
const (
	WorkflowPending    = "pending"
	WorkflowInProgress = "in_progress"
	WorkflowListening  = "listening"
	WorkflowPaused     = "paused"
	WorkflowCompleted  = "completed"
	WorkflowFailed     = "failed"
	WorkflowTimedOut   = "timedout"
	WorkflowCancelled  = "cancelled"
)

// WorkflowActive reports whether a workflow in status st has not finished.
func WorkflowActive(st string) bool {
	return st == WorkflowPending || st == WorkflowInProgress || st == WorkflowListening || st == WorkflowPaused
}

// Limits of the tags of chat users, conversations, messages, workflows and
// tables.
const (
	MaxTags        = 50
	MaxTagKey      = 100
	MaxTagValueLen = 1000
)

// CheckTags checks a tags object against those limits, naming field (or
// field.<name> for a value too long).
func CheckTags(field string, tags map[string]string) error {
	if len(tags) > MaxTags {
		return Invalid(field, "at most %d tags (got %d)", MaxTags, len(tags))
	}
	for k, v := range tags {
		if k == "" || len(k) > MaxTagKey {
			return Invalid(field, "tag names must have 1 to %d characters", MaxTagKey)
		}
		if n := len([]rune(v)); n > MaxTagValueLen {
			return Invalid(field+"."+k, "at most %d characters (got %d)", MaxTagValueLen, n)
		}
	}
	return nil
}
