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
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Conversation is a Chat API conversation; its creator owns it.
type Conversation struct {
	ID        string
	BotID     string
	FID       string
	OwnerID   string // internal user id
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Message is a message of a conversation.
type Message struct {
	ID             string
	ConversationID string // internal
	UserID         string // internal
	Payload        json.RawMessage
	Metadata       json.RawMessage // nil when none
	IsBot          bool
	CreatedAt      time.Time
	// DueAt is when the bot's event for a user's message is due (zero:
	// CreatedAt); it is not stored with the message.
	DueAt time.Time
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
