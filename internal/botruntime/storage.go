package botruntime

import (
	"context"
	"encoding/json"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the embedded VM's executor needs of the database
// (store.Store has it all, and documents each method).
type Store interface {
	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	BotStates(ctx context.Context, botID, userID, conversationID string) (map[string]json.RawMessage, error)
	CountOwnedJobs(ctx context.Context, kind, owner string) (int, error)
	EnqueueJob(ctx context.Context, j platform.Job) error
	GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	GetConversationByID(ctx context.Context, id string) (platform.Conversation, error)
	GetKnowledgeBase(ctx context.Context, botID, id string) (platform.KnowledgeBase, error)
	GetMessage(ctx context.Context, id string) (platform.Message, error)
	ListKnowledgeBases(ctx context.Context, botID string, tags map[string][]string, p store.Page) ([]platform.KnowledgeBase, string, error)
	ListMessages(ctx context.Context, conversationID string, p store.Page) ([]platform.Message, string, error)
	ListParticipants(ctx context.Context, conversationID string, p store.Page) ([]platform.ChatUser, string, error)
}

var _ Store = store.Store(nil)
