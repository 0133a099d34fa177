package platform

import (
	"encoding/json"
	"time"
)

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

// MaxScheduleAhead is how far ahead an event may be scheduled.
const MaxScheduleAhead = 90 * 24 * time.Hour

// ScheduleAt works out when a scheduled event is due: after delay
// milliseconds, or at dateTime (ISO 8601; a past date is now), at most
// MaxScheduleAhead from now; neither is now. Errors name the fields with
// prefix ("schedule." or "").
func ScheduleAt(prefix string, delay *float64, dateTime *string, now time.Time) (time.Time, error) {
	at := now
	switch {
	case delay != nil && dateTime != nil:
		return at, Invalid(prefix+"delay", "give delay or dateTime, not both")
	case delay != nil:
		if *delay < 0 {
			return at, Invalid(prefix+"delay", "must be at least 0 (milliseconds)")
		}
		at = now.Add(time.Duration(*delay * float64(time.Millisecond)))
	case dateTime != nil:
		t, err := time.Parse(time.RFC3339Nano, *dateTime)
		if err != nil {
			return at, Invalid(prefix+"dateTime", "must be an ISO 8601 date and time, e.g. 2026-01-02T15:04:05Z")
		}
		if t.After(now) {
			at = t
		}
	}
	if at.Sub(now) > MaxScheduleAhead {
		return at, Invalid(prefix+"delay", "an event may be scheduled at most 90 days ahead")
	}
	return at, nil
}
