package platform

import "time"

// KnowledgeBaseTag is the file tag that puts an indexed file in a knowledge
// base: its value is the knowledge base's id.
const KnowledgeBaseTag = "kbId"

// KnowledgeBase is a named set of a bot's indexed files: those tagged
// KnowledgeBaseTag = its id.
type KnowledgeBase struct {
	ID        string
	BotID     string
	Name      string
	Tags      map[string]string
	CreatedAt time.Time
	UpdatedAt time.Time
}
