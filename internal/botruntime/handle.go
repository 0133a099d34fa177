package botruntime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
)

// incoming is an event ready to be handed to bot code.
type incoming struct {
	bot          *dispatch.Bot
	event        map[string]any
	message      []byte // handler argument `message`, for messages
	conversation []byte // handler argument `conversation`
	userID       string // internal ids, for state
	convID       string
	conv         *platform.Conversation // message and custom events
	at           time.Time
	what         string // how the event is named in logs
}

// Event handles one event of a bot whose code runs in the VM.
func (r *Runtime) Event(ctx context.Context, b *dispatch.Bot, e dispatch.Event) (dispatch.Outcome, error) {
	j := e.Job
	in, err := r.load(ctx, b, e)
	if err != nil {
		return dispatch.Outcome{}, err
	}
	saved, err := r.store.BotStates(ctx, b.ID, in.userID, in.convID)
	if err != nil {
		return dispatch.Outcome{}, err
	}
	state := map[string]any{"bot": stateOr(saved["bot"], true), "user": stateOr(saved["user"], in.userID != ""),
		"conversation": stateOr(saved["conversation"], in.convID != "")}
	in.event["state"] = state
	eventJSON, err := json.Marshal(in.event)
	if err != nil {
		return dispatch.Outcome{}, err
	}
	id, _ := in.event["id"].(string)
	c := r.newCall(ctx, b, id, in.at)
	c.userFID, _ = in.event["userId"].(string)
	c.logUser = c.userFID
	c.logConv, _ = in.event["conversationId"].(string)
	c.conv = in.conv
	var runErr error
	if j.Attempts > dispatch.MaxAttempts {
		// Its earlier runs ended without finishing it: the server
		// stopped (or crashed) while it ran, each time.
		runErr = fmt.Errorf("gave up: it was started %d times without finishing (the server stopped while handling it)", j.Attempts-1)
	}
	var res string
	if runErr == nil {
		res, runErr = r.invoke(c, "handle", string(eventJSON), string(in.message), string(in.conversation), botContext(b))
	}
	if r.retryCrash(j.ID, runErr) || errors.Is(runErr, errProcessLost) {
		return dispatch.Outcome{}, runErr
	}
	var states []platform.BotState
	if runErr == nil {
		states, runErr = r.changedStates(in, saved, res)
	}
	if runErr != nil {
		// Whatever the code did to event.state is dropped; what it sent
		// stays sent. Both must be plain to the bot's developer, who may
		// otherwise see a counter repeat after a failure.
		runErr = fmt.Errorf("%w (its state changes were dropped; messages it sent stay sent)", runErr)
		return dispatch.Failed(runErr.Error(), c.finish(in.what, runErr)), nil
	}
	out := dispatch.Processed(c.finish(in.what, nil))
	out.States = states
	return out, nil
}

// retryCrash tells whether an event whose bot process died of something
// bot code did runs again: when other events ran in the process, it may not
// be the one at fault, so it runs once more; the next time it is.
func (r *Runtime) retryCrash(jobID string, err error) bool {
	var ce *CrashError
	r.suspectsMu.Lock()
	defer r.suspectsMu.Unlock()
	if !errors.As(err, &ce) || ce.Alone || r.suspects[jobID] {
		delete(r.suspects, jobID)
		return false
	}
	r.suspects[jobID] = true
	return true
}

func stateOr(saved json.RawMessage, scoped bool) any {
	if !scoped {
		return nil
	}
	if saved == nil {
		return map[string]any{}
	}
	return saved
}

// changedStates checks the state the code left and returns the scopes that
// changed. A scope over the limit fails the event; nothing is saved.
func (r *Runtime) changedStates(in *incoming, saved map[string]json.RawMessage, res string) ([]platform.BotState, error) {
	var out struct {
		State map[string]*string `json:"state"`
	}
	if err := json.Unmarshal([]byte(res), &out); err != nil {
		return nil, fmt.Errorf("the handler's result: %w", err)
	}
	var states []platform.BotState
	for _, scope := range []string{platform.StateBot, platform.StateUser, platform.StateConversation} {
		p := out.State[scope]
		if p == nil {
			continue
		}
		v := *p
		if len(v) > r.cfg.StateLimit {
			return nil, fmt.Errorf("event.state.%s is %d bytes of JSON; the limit is %d: the state was not saved", scope, len(v), r.cfg.StateLimit)
		}
		old := saved[scope]
		if old == nil {
			old = json.RawMessage(`{}`)
		}
		if v == string(old) {
			continue
		}
		id := map[string]string{platform.StateBot: "", platform.StateUser: in.userID, platform.StateConversation: in.convID}[scope]
		states = append(states, platform.BotState{BotID: in.bot.ID, Scope: scope, ScopeID: id, Value: json.RawMessage(v)})
	}
	return states, nil
}

// load reads what an event is about and builds its event object.
func (r *Runtime) load(ctx context.Context, b *dispatch.Bot, e dispatch.Event) (*incoming, error) {
	j, p := e.Job, e.Payload
	switch p.Type {
	case platform.BotEventMessage, platform.BotEventChat:
		conv := *e.Conversation
		convJSON, _ := json.Marshal(chat.ConversationJSON(conv))
		in := &incoming{bot: b, conversation: convJSON, convID: conv.ID, conv: &conv}
		var userID string
		var payload json.RawMessage
		if p.Type == platform.BotEventMessage {
			m, err := r.store.GetMessage(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			view := r.chat.Views(ctx, conv, []platform.Message{m})[0]
			in.message, _ = json.Marshal(chat.MessageJSON(view))
			userID, payload, in.at = m.UserID, m.Payload, m.CreatedAt
			in.event = map[string]any{"type": "message", "messageId": m.ID, "userId": view.UserFID}
			in.what = "message " + m.ID
		} else {
			e, err := r.store.GetChatEvent(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			userID, payload, in.at = e.UserID, e.Payload, e.CreatedAt
			userFID := r.chat.UserFID(ctx, conv.BotID, e.UserID)
			in.event = map[string]any{"type": "custom", "userId": userFID}
			if conv.Integration == platform.WebchatIntegrationID {
				typ, wp := chat.WebchatEvent(e.Payload, conv.FID, userFID)
				in.event["type"] = typ
				payload, _ = json.Marshal(wp)
			}
			in.what = "event " + e.ID
		}
		in.userID = userID
		ev := in.event
		ev["botId"], ev["conversationId"], ev["createdOn"] = b.ID, conv.FID, platform.FormatTime(in.at)
		ev["direction"], ev["id"], ev["integration"] = "incoming", p.ID, cmp.Or(conv.Integration, platform.ChatIntegrationID)
		ev["payload"], ev["preview"], ev["tags"] = payload, Preview(payload), emptyTags()
		return in, nil
	case platform.BotEventWorkflow:
		// A workflow_update: the Runtime API says what it carries (and
		// times the workflow out, for a time-out), then it is delivered as
		// a scheduled event is.
		if r.workflows == nil {
			return nil, fmt.Errorf("%w: workflows are not served", dispatch.ErrGone)
		}
		payload, err := r.workflows.WorkflowEvent(ctx, p.BotID, p.WorkflowID, p.Update)
		if errors.Is(err, platform.ErrNotFound) {
			return nil, fmt.Errorf("%w: workflow %s has nothing to deliver", dispatch.ErrGone, p.WorkflowID)
		}
		if err != nil {
			return nil, err
		}
		p.EventType, p.Payload, p.EventID = "workflow_update", payload, "evt_"+strings.TrimPrefix(j.ID, "job_")
		fallthrough
	case platform.BotEventStateExp:
		if p.Type == platform.BotEventStateExp { // its payload, {state}, was written when it lapsed
			p.EventType, p.EventID = "state_expired", "evt_"+strings.TrimPrefix(j.ID, "job_")
		}
		fallthrough
	case platform.BotEventRecurring, platform.BotEventScheduled:
		in := &incoming{bot: b, at: j.RunAfter, what: p.Type + " event " + p.EventID}
		payload := rawOr(p.Payload, `{}`)
		ev := map[string]any{"botId": b.ID, "createdOn": platform.FormatTime(j.RunAfter), "direction": "incoming",
			"id": p.EventID, "payload": payload, "preview": Preview(payload), "tags": emptyTags(), "type": p.EventType}
		trigger := map[string]any{"eventName": p.EventType}
		switch p.Type {
		case platform.BotEventRecurring:
			trigger["flowId"], trigger["nodeId"] = "recurring", p.Name
		case platform.BotEventWorkflow:
			trigger["flowId"], trigger["nodeId"] = "workflow", p.WorkflowID
			ev["workflowId"] = p.WorkflowID
		case platform.BotEventStateExp:
			trigger["flowId"], trigger["nodeId"] = "state", p.EventID
		default:
			trigger["flowId"], trigger["nodeId"] = "schedule", p.EventID
		}
		if p.ConversationID != "" {
			conv, err := r.store.GetConversationByID(ctx, p.ConversationID)
			if err != nil {
				return nil, err
			}
			in.convID = conv.ID
			in.conversation, _ = json.Marshal(chat.ConversationJSON(conv))
			ev["conversationId"], trigger["conversationId"], ev["integration"] = conv.FID, conv.FID, "chat"
			trigger["integration"] = "chat"
		}
		if p.UserID != "" {
			fid := r.chat.UserFID(ctx, b.ID, p.UserID)
			in.userID = p.UserID
			ev["userId"], trigger["userId"] = fid, fid
		}
		if p.MessageID != "" {
			ev["messageId"] = p.MessageID
		}
		ev["trigger"] = trigger
		in.event = ev
		return in, nil
	}
	return nil, fmt.Errorf("%w: unknown event type %q", dispatch.ErrGone, p.Type)
}
