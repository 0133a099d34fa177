package privacy

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Export is everything stored about one chat user of a bot, as the export
// operation answers it. Ids are those clients see. Other people's messages,
// events and log lines in the conversations the user owns are left out:
// they are those people's data (an erase deletes them with the conversation).
type Export struct {
	ExportedAt    string         `json:"exportedAt"`
	BotID         string         `json:"botId"`
	User          map[string]any `json:"user"`
	Conversations []conversation `json:"conversations"`
	Messages      []message      `json:"messages"`
	ChatEvents    []chatEvent    `json:"chatEvents"`
	States        []state        `json:"states"`
	Workflows     []workflow     `json:"workflows"`
	Events        []event        `json:"events"`
	Files         []file         `json:"files"`
	Logs          []logLine      `json:"logs"`
	CodeStates    []codeState    `json:"codeStates"`
}

type conversation struct {
	ID        string            `json:"id"`
	Owned     bool              `json:"owned"`
	Tags      map[string]string `json:"tags"`
	CreatedAt string            `json:"createdAt"`
	UpdatedAt string            `json:"updatedAt"`
}

type message struct {
	ID             string            `json:"id"`
	ConversationID string            `json:"conversationId"`
	UserID         string            `json:"userId"`
	IsBot          bool              `json:"isBot"`
	Payload        json.RawMessage   `json:"payload"`
	Metadata       json.RawMessage   `json:"metadata,omitempty"`
	Tags           map[string]string `json:"tags"`
	CreatedAt      string            `json:"createdAt"`
}

type chatEvent struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversationId"`
	UserID         string          `json:"userId"`
	IsBot          bool            `json:"isBot"`
	Payload        json.RawMessage `json:"payload"`
	CreatedAt      string          `json:"createdAt"`
}

type state struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt string          `json:"createdAt"`
	UpdatedAt string          `json:"updatedAt"`
	ExpiresAt string          `json:"expiresAt,omitempty"`
}

// codeState is what bot code keeps in event.state.user or .conversation.
type codeState struct {
	Scope string          `json:"scope"`
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

type workflow struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	Input          json.RawMessage   `json:"input"`
	Output         json.RawMessage   `json:"output"`
	ConversationID string            `json:"conversationId,omitempty"`
	UserID         string            `json:"userId,omitempty"`
	Tags           map[string]string `json:"tags"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
}

type event struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Payload        json.RawMessage `json:"payload"`
	ConversationID string          `json:"conversationId,omitempty"`
	UserID         string          `json:"userId,omitempty"`
	MessageID      string          `json:"messageId,omitempty"`
	Status         string          `json:"status"`
	CreatedAt      string          `json:"createdAt"`
}

// file is a file's metadata; its content is fetched with getFile's url.
type file struct {
	ID          string             `json:"id"`
	Key         string             `json:"key"`
	Size        *int64             `json:"size"`
	ContentType string             `json:"contentType"`
	Tags        map[string]string  `json:"tags"`
	Metadata    map[string]any     `json:"metadata"`
	Owner       platform.FileOwner `json:"owner"`
	Status      string             `json:"status"`
	CreatedAt   string             `json:"createdAt"`
	UpdatedAt   string             `json:"updatedAt"`
}

type logLine struct {
	Timestamp      string `json:"timestamp"`
	Level          string `json:"level"`
	Message        string `json:"message"`
	ConversationID string `json:"conversationId,omitempty"`
	UserID         string `json:"userId,omitempty"`
	WorkflowID     string `json:"workflowId,omitempty"`
}

func at(t time.Time) string { return platform.FormatTime(t) }

// exportOf renders d, keeping of the owned conversations' rows those of
// the user, of the bot, or of no one.
func exportOf(p store.Person, d store.PersonData, now time.Time) Export {
	id := visible(d)
	mine := func(userID string) bool { return userID == "" || userID == p.UserID }
	logMine := func(userID string) bool { return userID == "" || slices.Contains(p.Aliases, userID) }
	x := Export{ExportedAt: at(now), BotID: p.BotID, User: userJSON(d.User)}
	x.Conversations = []conversation{}
	for _, c := range d.Owned {
		x.Conversations = append(x.Conversations, conversation{c.FID, true, c.Tags, at(c.CreatedAt), at(c.UpdatedAt)})
	}
	for _, c := range d.Joined {
		x.Conversations = append(x.Conversations, conversation{c.FID, false, c.Tags, at(c.CreatedAt), at(c.UpdatedAt)})
	}
	// author is who wrote a row of a conversation, as clients know them,
	// and whether it is the user or the bot.
	author := func(userID string, isBot bool) (string, bool) {
		if isBot {
			return p.BotID, true
		}
		return id(userID), userID == p.UserID
	}
	x.Messages = []message{}
	for _, m := range d.Messages {
		if user, ok := author(m.UserID, m.IsBot); ok {
			x.Messages = append(x.Messages, message{m.ID, id(m.ConversationID), user, m.IsBot, m.Payload, m.Metadata, m.Tags, at(m.CreatedAt)})
		}
	}
	x.ChatEvents = []chatEvent{}
	for _, e := range d.ChatEvents {
		if user, ok := author(e.UserID, e.IsBot); ok {
			x.ChatEvents = append(x.ChatEvents, chatEvent{e.ID, id(e.ConversationID), user, e.IsBot, e.Payload, at(e.CreatedAt)})
		}
	}
	x.States = []state{}
	for _, st := range d.States {
		v := state{Type: st.Type, ID: id(st.ScopeID), Name: st.Name, Payload: st.Payload, CreatedAt: at(st.CreatedAt), UpdatedAt: at(st.UpdatedAt)}
		if st.ExpiresAt != nil {
			v.ExpiresAt = at(*st.ExpiresAt)
		}
		x.States = append(x.States, v)
	}
	x.CodeStates = []codeState{}
	for _, st := range d.CodeStates {
		x.CodeStates = append(x.CodeStates, codeState{st.Scope, id(st.ScopeID), st.Value})
	}
	x.Workflows = []workflow{}
	for _, w := range d.Workflows {
		if !mine(w.UserID) {
			continue
		}
		x.Workflows = append(x.Workflows, workflow{w.ID, w.Name, w.Status, w.Input, w.Output, id(w.ConversationID), id(w.UserID), w.Tags, at(w.CreatedAt), at(w.UpdatedAt)})
	}
	x.Events = []event{}
	for _, e := range d.Events {
		if !mine(e.UserID) {
			continue
		}
		x.Events = append(x.Events, event{e.ID, e.Type, e.Payload, id(e.ConversationID), id(e.UserID), e.MessageID, e.Status, at(e.CreatedAt)})
	}
	x.Files = []file{}
	for _, f := range d.Files {
		x.Files = append(x.Files, file{f.ID, f.Key, f.Size, f.ContentType, f.Tags, f.Metadata, f.Owner, f.Status, at(f.CreatedAt), at(f.UpdatedAt)})
	}
	x.Logs = []logLine{}
	for _, l := range d.Logs {
		if !logMine(l.UserID) {
			continue
		}
		x.Logs = append(x.Logs, logLine{at(l.Timestamp), l.Level, l.Message, l.ConversationID, l.UserID, l.WorkflowID})
	}
	return x
}

func userJSON(u platform.ChatUser) map[string]any {
	out := map[string]any{"id": u.FID, "tags": u.Tags, "createdAt": at(u.CreatedAt), "updatedAt": at(u.UpdatedAt)}
	for k, v := range map[string]string{"name": u.Name, "pictureUrl": u.PictureURL, "profile": u.Profile} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}
