package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Executor runs the code of the bots of one kind: the embedded VM's
// scripts, Node bundles, bots at a url. The dispatcher hands it the events
// and the action calls of the bots it serves; it never finishes a job
// itself, it says how the event ended.
type Executor interface {
	// Serves tells whether b's code is this executor's to run. It is asked
	// once per version of a bot.
	Serves(b *Bot) bool
	// Event handles one event of b. An error other than ErrGone hands the
	// event back to be tried again later (up to MaxAttempts): a failure of
	// the platform, not of the bot's code, which is an Outcome.
	Event(ctx context.Context, b *Bot, e Event) (Outcome, error)
	// Action runs b's action name with input and returns its output.
	Action(ctx context.Context, b *Bot, name string, input json.RawMessage) (json.RawMessage, error)
	// Sweep lets go of what was kept for bots without events since idle.
	Sweep(idle time.Time)
	// Stop ends the events still running (the dispatcher is stopping and
	// stopped waiting for them): they end with an error and are handed
	// back.
	Stop()
}

// Event is a queued event as an executor receives it.
type Event struct {
	Job     platform.Job
	Payload platform.BotEventJob
	// Conversation is the event's conversation, for messages and the
	// Chat API's custom events (read to know their bot); nil otherwise.
	Conversation *platform.Conversation
}

// Outcome is how an event's handling ended.
type Outcome struct {
	// Status is platform.EventProcessed, EventFailed or EventIgnored; a
	// scheduled event's getEvent shows it.
	Status string
	// Reason says why the event failed or was ignored.
	Reason string
	// States are the bot's states the handling changed, Logs the lines it
	// wrote: saved with the job's end.
	States []platform.BotState
	Logs   []platform.LogEntry
	// RetryAt, when set, hands the event back to be handled again from
	// then on (its Logs are written now; Status is not recorded).
	RetryAt time.Time
}

// Processed, Failed and Ignored are the outcomes of those statuses.
func Processed(logs []platform.LogEntry) Outcome {
	return Outcome{Status: platform.EventProcessed, Logs: logs}
}

func Failed(reason string, logs []platform.LogEntry) Outcome {
	return Outcome{Status: platform.EventFailed, Reason: reason, Logs: logs}
}

func Ignored(reason string) Outcome { return Outcome{Status: platform.EventIgnored, Reason: reason} }

// ErrGone marks an event whose message, conversation or bot no longer
// exists: there is nothing to handle, and it ends ignored. So does an
// error that is platform.ErrNotFound.
var ErrGone = errors.New("gone")

// MaxAttempts bounds the redeliveries of an event whose handling keeps
// failing for a reason other than the bot's code (the database, say).
const MaxAttempts = 10

// Backoff is the wait before an event handled attempts times is tried
// again.
func Backoff(attempts int) time.Duration {
	return time.Duration(1<<min(attempts, 8)) * 100 * time.Millisecond
}
