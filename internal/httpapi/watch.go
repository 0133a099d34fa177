package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// watchConversation streams the signals of one of a bot's conversations to
// a member of its workspace (this server's operation, for the web console):
// the frames the Chat API's listen sends the conversation's users, over the
// Admin API's authentication, so that a member's token, which is no chat
// user's key, can follow a conversation live. Any member who may read the
// bot may watch, for as long as they still may: the stream ends once the
// token or the membership is revoked or the bot deleted.
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
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go a.whileAllowed(ctx, cancel, r, b.ID)
	return a.stream(w, r.WithContext(ctx), sub, nil, nil)
}

// whileAllowed checks again, every ping interval, that r's caller may still
// read the bot, and calls cancel when they may not (or the check fails: the
// console opens the stream again).
func (a *api) whileAllowed(ctx context.Context, cancel context.CancelFunc, r *http.Request, botID string) {
	tick := time.NewTicker(a.PingInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		act, err := a.authenticate(r, true)
		if err == nil {
			_, err = a.Admin.GetBot(ctx, act, botID)
		}
		if err != nil {
			if ctx.Err() == nil {
				a.Log.InfoContext(ctx, "watch: the stream ends, its caller may no longer read the bot", "bot", botID, "err", err)
			}
			cancel()
			return
		}
	}
}
