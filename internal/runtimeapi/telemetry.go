package runtimeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// MaxAnalyticsCount bounds one trackAnalytics call's count.
const MaxAnalyticsCount = 1_000_000_000

// TrackAnalytics adds count to the bot's named counter of today (UTC),
// shown as customEvents by the Admin API's getBotAnalytics.
func (s *Service) TrackAnalytics(ctx context.Context, botID, name string, count float64) error {
	if name == "" || len(name) > 200 {
		return platform.Invalid("name", "is required (at most 200 characters)")
	}
	if count != float64(int64(count)) || count < 1 || count > MaxAnalyticsCount {
		return platform.Invalid("count", "must be a whole number from 1 to %d", MaxAnalyticsCount)
	}
	return s.store.TrackAnalytics(ctx, botID, name, int64(count), s.clock.Now())
}

// Observation is the body of captureObservation.
type Observation struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Data           json.RawMessage `json:"data"`
	MessageID      string          `json:"messageId"`
	EventID        string          `json:"eventId"`
	ConversationID string          `json:"conversationId"`
	UserID         string          `json:"userId"`
	ErrorID        string          `json:"errorId"`
	TraceID        string          `json:"traceId"`
}

// maxObservation bounds the log line an observation becomes.
const maxObservation = 16 << 10

// CaptureObservation stores an observation with the bot's logs (level
// info), filed under its conversation and user, so that getBotLogs shows
// it with what the bot logged.
func (s *Service) CaptureObservation(ctx context.Context, botID string, o Observation) error {
	if o.Name == "" || len(o.Name) > 200 {
		return platform.Invalid("name", "is required (at most 200 characters)")
	}
	conv, user := o.ConversationID, o.UserID
	if _, _, err := s.internalIDs(ctx, botID, conv, user); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "observation %s: %s", o.Name, rawObject(o.Data))
	for _, f := range []struct{ k, v string }{{"id", o.ID}, {"messageId", o.MessageID}, {"eventId", o.EventID}, {"errorId", o.ErrorID}, {"traceId", o.TraceID}} {
		if f.v != "" {
			fmt.Fprintf(&b, " %s=%s", f.k, f.v)
		}
	}
	if b.Len() > maxObservation {
		return platform.Invalid("data", "the observation is %d bytes; at most %d", b.Len(), maxObservation)
	}
	return s.store.AppendLogs(ctx, []platform.LogEntry{{ID: platform.NewID(platform.PrefixLog), BotID: botID, Timestamp: s.clock.Now(),
		Level: "info", Message: b.String(), UserID: user, ConversationID: conv}})
}
