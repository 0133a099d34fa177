package chat

import (
	"context"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Store is what the chat service needs of the database (store.Store has it all,
// and documents each method).
type Store interface {
	AddParticipant(ctx context.Context, conversationID, userID string, atMicros int64) error
	CreateChatEvent(ctx context.Context, e platform.ChatEvent) (queued bool, err error)
	CreateChatUser(ctx context.Context, u platform.ChatUser) error
	CreateConversation(ctx context.Context, c platform.Conversation) error
	CreateMessage(ctx context.Context, m platform.Message) (queued bool, err error)
	DeleteChatUser(ctx context.Context, id string) error
	DeleteConversation(ctx context.Context, id string) error
	DeleteMessage(ctx context.Context, id string) error
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetBotWorkspace(ctx context.Context, botID string) (string, error)
	GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	GetConversationAs(ctx context.Context, botID, id, userID string) (c platform.Conversation, participant bool, err error)
	GetIntegrationByWebhook(ctx context.Context, webhookID string) (platform.BotIntegration, error)
	GetMessage(ctx context.Context, id string) (platform.Message, error)
	GetWebhookUser(ctx context.Context, webhookID, fid string) (in platform.BotIntegration, u platform.ChatUser, found bool, err error)
	IsParticipant(ctx context.Context, conversationID, userID string) (bool, error)
	ListConversations(ctx context.Context, ownerID, integration string, p store.Page) ([]platform.Conversation, string, error)
	LastMessages(ctx context.Context, conversationIDs []string) (map[string]platform.Message, error)
	ListMessages(ctx context.Context, conversationID string, p store.Page) ([]platform.Message, string, error)
	ListParticipants(ctx context.Context, conversationID string, p store.Page) ([]platform.ChatUser, string, error)
	RemoveParticipant(ctx context.Context, conversationID, userID string) error
	UpdateChatUser(ctx context.Context, u platform.ChatUser) error
	UpdateMessage(ctx context.Context, m platform.Message, botID string) error
}

var _ Store = store.Store(nil)
