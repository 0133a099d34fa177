package platform

import "encoding/json"

// State scopes: what a piece of bot state belongs to.
const (
	StateBot          = "bot"
	StateUser         = "user"
	StateConversation = "conversation"
)

// BotState is the state bot code keeps for one scope: the bot itself (ScopeID
// empty), a chat user or a conversation (internal ids).
type BotState struct {
	BotID   string
	Scope   string
	ScopeID string
	Value   json.RawMessage
}

// Job statuses.
const (
	JobPending = "pending"
	JobRunning = "running"
)

// JobSubjectBot is the subject of a bot's jobs that belong to no
// conversation (recurring and scheduled events), so that they too run one at
// a time in order.
func JobSubjectBot(botID string) string { return "bot:" + botID }
