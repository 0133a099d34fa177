package runtimeapi

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the Runtime API needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	AddParticipant(ctx context.Context, conversationID, userID string, atMicros int64) error
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	CancelRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error)
	CountMessages(ctx context.Context, conversationID string) (int64, error)
	CountOwnedJobs(ctx context.Context, kind, owner string) (int, error)
	CreateChatUser(ctx context.Context, u platform.ChatUser) error
	CreateConversation(ctx context.Context, c platform.Conversation) error
	CreateMessage(ctx context.Context, m platform.Message) (queued bool, err error)
	CreateRuntimeEvent(ctx context.Context, ev platform.RuntimeEvent, j platform.Job) error
	CreateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error
	DeleteConversation(ctx context.Context, id string) error
	DeleteRuntimeState(ctx context.Context, botID, typ, scopeID, name string) error
	DeleteWorkflow(ctx context.Context, botID, id string) error
	ExpireRuntimeState(ctx context.Context, st platform.RuntimeState, now time.Time, j platform.Job) (bool, error)
	FindMessages(ctx context.Context, f store.MessageFilter) ([]platform.Message, string, error)
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	GetConversationByID(ctx context.Context, id string) (platform.Conversation, error)
	GetMessage(ctx context.Context, id string) (platform.Message, error)
	GetRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error)
	GetRuntimeState(ctx context.Context, botID, typ, scopeID, name string, now time.Time) (platform.RuntimeState, error)
	GetWorkflow(ctx context.Context, botID, id string) (platform.Workflow, error)
	IsParticipant(ctx context.Context, conversationID, userID string) (bool, error)
	LapsedRuntimeStates(ctx context.Context, now time.Time, limit int) ([]platform.RuntimeState, error)
	ListBotConversations(ctx context.Context, f store.ConversationFilter) ([]store.CountedConversation, string, error)
	ListChatTagValues(ctx context.Context, botID, kind, key string, p store.Page) ([]string, string, error)
	ListChatUsers(ctx context.Context, f store.ChatUserFilter) ([]platform.ChatUser, string, error)
	ListParticipants(ctx context.Context, conversationID string, p store.Page) ([]platform.ChatUser, string, error)
	ListRuntimeEvents(ctx context.Context, f store.EventFilter) ([]platform.RuntimeEvent, string, error)
	ListWorkflows(ctx context.Context, f store.WorkflowFilter) ([]platform.Workflow, string, error)
	PutRuntimeState(ctx context.Context, st platform.RuntimeState, onlyIfAbsent bool) (platform.RuntimeState, error)
	RemoveParticipant(ctx context.Context, conversationID, userID string) error
	TrackAnalytics(ctx context.Context, botID, name string, count int64, at time.Time) error
	UpdateChatUser(ctx context.Context, u platform.ChatUser) error
	UpdateConversation(ctx context.Context, c platform.Conversation) error
	UpdateMessage(ctx context.Context, m platform.Message, botID string) error
	UpdateRuntimeState(ctx context.Context, st platform.RuntimeState) error
	UpdateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error
}

var _ Store = store.Store(nil)
