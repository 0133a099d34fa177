package main

// watchBotConversation: a member of the bot's workspace follows one of its
// conversations live over the Admin API (the console), with the signals its
// chat users get.

import (
	"net/http"
	"testing"
)

func testChatWatch(t *testing.T, e *chatEnv) {
	u := e.user("watched")
	conv := e.conversation(u, "watched-conv")
	id := e.internalConv(conv) // as the Runtime API's listConversations names it
	path := "/v1/admin/bots/" + e.botID + "/conversations/" + id + "/listen"
	as := func(c client) []string { return []string{"Authorization", "Bearer " + c.token, "x-workspace-id", c.ws} }
	open := func(c client) *sseStream {
		t.Helper()
		st, refused := e.openStream(path, as(c)...)
		if refused != nil {
			t.Fatalf("GET %s as %s: status %d, want 200; body: %s", path, c.ws, refused.Status, refused.Body)
		}
		return st
	}

	// The owner and a viewer both see the user's message, in order with
	// a custom event, as a chat user would.
	owner := open(e.admin)
	viewerClient, _ := e.admin.addMember("viewer")
	viewer := open(viewerClient)
	e.send(u, conv, "hello watchers")
	e.call(http.MethodPost, "/events", u.Key, map[string]any{"conversationId": conv, "payload": map[string]any{"kind": "typing"}}).status(201)
	for _, st := range []*sseStream{owner, viewer} {
		m := st.skipTo(t, "message_created")
		if got := field(t, m, "payload", "text"); got != "hello watchers" {
			t.Errorf("%s: message_created %v; want the user's message", st.what, m)
		}
		if ev := st.skipTo(t, "event_created"); field(t, ev, "payload", "kind") != "typing" {
			t.Errorf("%s: event_created %v; want the user's event", st.what, ev)
		}
	}
	owner.close()
	viewer.close()

	// Removed from the workspace, the viewer's stream ends (within the
	// authentication cache's life and a ping interval).
	viewerClient, memberID := e.admin.addMember("viewer")
	viewer = open(viewerClient)
	e.admin.del("/v1/admin/workspace-members/" + memberID).ok()
	viewer.waitEnd(t)

	// Refused: no token, a token of another workspace, a conversation that
	// is not the bot's, a bot of another workspace.
	fail := func(path string, status int, typ string, hdr ...string) {
		t.Helper()
		st, refused := e.openStream(path, hdr...)
		if refused == nil {
			st.close()
			t.Fatalf("GET %s: the stream opened; want %d %s", path, status, typ)
		}
		refused.fail(status, typ)
	}
	fail(path, 401, "Unauthorized")
	stranger := e.s.newWorkspace(t, "watch stranger")
	fail(path, 404, "ResourceNotFound", as(stranger)...)
	fail("/v1/admin/bots/"+e.botID+"/conversations/conv_nope/listen", 404, "ResourceNotFound", as(e.admin)...)
	otherBot := str(t, stranger.createBot(nil), "id")
	fail("/v1/admin/bots/"+otherBot+"/conversations/"+id+"/listen", 404, "ResourceNotFound", as(stranger)...)
}
