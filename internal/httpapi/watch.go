package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/platform"
)

// watchConversation streams the signals of one of a bot's conversations to
// a member of its workspace (this server's operation, for the web console):
// the frames the Chat API's listen sends the conversation's users, over the
// Admin API's authentication, so that a member's token, which is no chat
// user's key, can follow a conversation live. Any member who may read the
// bot may watch.
func (a *api) watchConversation(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	b, err := a.Admin.GetBot(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	// Streams of members are counted apart from those of chat users.
	sub, err := a.Chat.Watch(r.Context(), b.ID, r.PathValue("conversationId"), "member:"+act.Account.ID)
	if err != nil {
		return err
	}
	return a.stream(w, r, sub)
}
