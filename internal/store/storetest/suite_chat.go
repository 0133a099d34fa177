package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ---- chat fixtures ----

// chatBot creates an account, a workspace and a bot for chat data.
func (e *env) chatBot(t *testing.T) platform.Bot {
	t.Helper()
	a := e.account(t, "chat")
	w, _ := e.workspace(t, a)
	return e.bot(t, w.ID, fmt.Sprintf("chat%d", e.next()))
}

// newChatUser returns an unsaved user of the bot; an empty fid makes the
// foreign id the internal id, as users created without one have.
func (e *env) newChatUser(botID, fid string) platform.ChatUser {
	now := e.now()
	u := platform.ChatUser{ID: platform.NewID("user_"), BotID: botID, FID: fid,
		Name: fmt.Sprintf("User %d", e.next()), PictureURL: "https://example.com/p.png", Profile: "profile ünïcødé",
		Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	if fid == "" {
		u.FID = u.ID
	}
	return u
}

func (e *env) chatUser(t *testing.T, botID, fid string) platform.ChatUser {
	t.Helper()
	u := e.newChatUser(botID, fid)
	must(t, e.s.CreateChatUser(e.ctx, u), "CreateChatUser %s", u.FID)
	return u
}

func (e *env) newConversation(botID, ownerID, fid string) platform.Conversation {
	now := e.now()
	c := platform.Conversation{ID: platform.NewID("conv_"), BotID: botID, FID: fid, OwnerID: ownerID, Tags: map[string]string{},
		Channel: "channel", Integration: "chat", CreatedAt: now, UpdatedAt: now}
	if fid == "" {
		c.FID = c.ID
	}
	return c
}

func (e *env) conversation(t *testing.T, botID, ownerID, fid string) platform.Conversation {
	t.Helper()
	c := e.newConversation(botID, ownerID, fid)
	must(t, e.s.CreateConversation(e.ctx, c), "CreateConversation %s", c.FID)
	return c
}

func (e *env) newMessage(convID, userID string, isBot bool) platform.Message {
	n := e.next()
	return platform.Message{ID: platform.NewID("msg_"), ConversationID: convID, UserID: userID,
		Payload: json.RawMessage(fmt.Sprintf(`{"type":"text","text":"message %d ünïcødé"}`, n)), IsBot: isBot, Tags: map[string]string{}, CreatedAt: e.now()}
}

func (e *env) message(t *testing.T, convID, userID string, isBot bool) platform.Message {
	t.Helper()
	m := e.newMessage(convID, userID, isBot)
	must(t, errOf(e.s.CreateMessage(e.ctx, m)), "CreateMessage")
	return m
}

func (e *env) newChatEvent(convID, userID string, isBot bool) platform.ChatEvent {
	n := e.next()
	return platform.ChatEvent{ID: platform.NewID("evt_"), ConversationID: convID, UserID: userID,
		Payload: json.RawMessage(fmt.Sprintf(`{"kind":"custom","n":%d,"nested":{"list":[1,2.5,null,true]}}`, n)), IsBot: isBot, CreatedAt: e.now()}
}

// normChatUser is u as read back: times at the store's precision, and its
// maps never nil.
func normChatUser(u platform.ChatUser) platform.ChatUser {
	u.CreatedAt, u.UpdatedAt = mt(u.CreatedAt), mt(u.UpdatedAt)
	u.Properties, u.Attributes = nonNil(u.Properties), nonNil(u.Attributes)
	return u
}

func normConversation(c platform.Conversation) platform.Conversation {
	c.CreatedAt, c.UpdatedAt = mt(c.CreatedAt), mt(c.UpdatedAt)
	c.Properties = nonNil(c.Properties)
	return c
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func normMessage(m platform.Message) platform.Message { m.CreatedAt = mt(m.CreatedAt); return m }

func normChatEvent(ev platform.ChatEvent) platform.ChatEvent {
	ev.CreatedAt = mt(ev.CreatedAt)
	return ev
}

func chatUserIDs(us []platform.ChatUser) []string {
	return mapSlice(us, func(u platform.ChatUser) string { return u.ID })
}
func conversationIDs(cs []platform.Conversation) []string {
	return mapSlice(cs, func(c platform.Conversation) string { return c.ID })
}
func messageIDs(ms []platform.Message) []string {
	return mapSlice(ms, func(m platform.Message) string { return m.ID })
}

func (e *env) getChatUser(t *testing.T, botID, id string) platform.ChatUser {
	t.Helper()
	u, err := e.s.GetChatUser(e.ctx, botID, id)
	must(t, err, "GetChatUser %s", id)
	return u
}

func (e *env) isParticipant(t *testing.T, convID, userID string) bool {
	t.Helper()
	ok, err := e.s.IsParticipant(e.ctx, convID, userID)
	must(t, err, "IsParticipant(%s, %s)", convID, userID)
	// GetConversationAs tells the same, by either of the conversation's ids.
	if c, err := e.s.GetConversationByID(e.ctx, convID); err == nil {
		for _, id := range []string{c.ID, c.FID} {
			got, as, err := e.s.GetConversationAs(e.ctx, c.BotID, id, userID)
			must(t, err, "GetConversationAs(%s, %s)", id, userID)
			if as != ok || got.ID != c.ID {
				t.Fatalf("GetConversationAs(%s, %s) = %s participant %v; IsParticipant says %v", id, userID, got.ID, as, ok)
			}
		}
	}
	return ok
}

// participants lists every participant in one call.
func (e *env) participants(t *testing.T, convID string) []platform.ChatUser {
	t.Helper()
	ps, next, err := e.s.ListParticipants(e.ctx, convID, store.Page{Limit: 1000})
	must(t, err, "ListParticipants %s", convID)
	if next != "" {
		t.Fatalf("ListParticipants %s: unexpected nextToken", convID)
	}
	return ps
}

func (e *env) messages(t *testing.T, convID string) []platform.Message {
	t.Helper()
	ms, next, err := e.s.ListMessages(e.ctx, convID, store.Page{Limit: 1000})
	must(t, err, "ListMessages %s", convID)
	if next != "" {
		t.Fatalf("ListMessages %s: unexpected nextToken", convID)
	}
	return ms
}

// wantBotEventJobs checks that the jobs about the conversation are exactly
// one pending bot_event job per item of want, in order: {type, id,
// conversationId} payloads, created at the item's time.
func (e *env) wantBotEventJobs(t *testing.T, convID string, want []botEvent, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	js := e.jobs(t, convID)
	if len(js) != len(want) {
		t.Fatalf("%s: %d jobs about %s, want %d: %s", what, len(js), convID, len(want), show(js))
	}
	for i, j := range js {
		w := want[i]
		if j.Kind != platform.JobBotEvent || j.Subject != convID || j.Status != "pending" || j.Attempts != 0 {
			t.Fatalf("%s: job %d = kind %q subject %q status %q attempts %d, want a pending %s job about %s",
				what, i, j.Kind, j.Subject, j.Status, j.Attempts, platform.JobBotEvent, convID)
		}
		if !j.CreatedAt.Equal(mt(w.at)) || !j.RunAfter.Equal(mt(w.at)) {
			t.Fatalf("%s: job %d created %v run after %v, want both %v", what, i, j.CreatedAt, j.RunAfter, mt(w.at))
		}
		if j.ID == "" {
			t.Fatalf("%s: job %d has no id", what, i)
		}
		var p map[string]any
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			t.Fatalf("%s: job %d payload %s is not a JSON object: %v", what, i, j.Payload, err)
		}
		same(t, p, map[string]any{"type": w.typ, "id": w.id, "conversationId": convID}, "%s: job %d payload", what, i)
	}
}

type botEvent struct {
	typ, id string
	at      time.Time
}

// ---- tests ----

func testChatUsers(t *testing.T, e *env) {
	b := e.chatBot(t)
	other := e.chatBot(t)
	alice := e.chatUser(t, b.ID, "alice-fid_01/x\\y")
	anon := e.chatUser(t, b.ID, "") // no foreign id: the fid is the id
	bare := e.newChatUser(b.ID, "bare")
	bare.Name, bare.PictureURL, bare.Profile = "", "", ""
	must(t, e.s.CreateChatUser(e.ctx, bare), "CreateChatUser without descriptive fields")

	for _, u := range []platform.ChatUser{alice, anon, bare} {
		same(t, e.getChatUser(t, b.ID, u.FID), normChatUser(u), "GetChatUser by fid %s", u.FID)
		same(t, e.getChatUser(t, b.ID, u.ID), normChatUser(u), "GetChatUser by internal id %s", u.ID)
		_, err := e.s.GetChatUser(e.ctx, other.ID, u.FID)
		wantErr(t, err, platform.ErrNotFound, "GetChatUser of another bot's user by fid")
		_, err = e.s.GetChatUser(e.ctx, other.ID, u.ID)
		wantErr(t, err, platform.ErrNotFound, "GetChatUser of another bot's user by internal id")
	}
	_, err := e.s.GetChatUser(e.ctx, b.ID, "nobody")
	wantErr(t, err, platform.ErrNotFound, "GetChatUser unknown id")
	_, err = e.s.GetChatUser(e.ctx, b.ID, "ALICE-FID_01/x\\y")
	wantErr(t, err, platform.ErrNotFound, "GetChatUser is case-sensitive")

	t.Run("duplicates", func(t *testing.T) {
		dup := e.newChatUser(b.ID, alice.FID)
		wantErr(t, e.s.CreateChatUser(e.ctx, dup), platform.ErrConflict, "CreateChatUser with a taken fid")
		_, err := e.s.GetChatUser(e.ctx, b.ID, dup.ID)
		wantErr(t, err, platform.ErrNotFound, "the rejected duplicate")
		same(t, e.getChatUser(t, b.ID, alice.FID), normChatUser(alice), "the fid's user after a rejected duplicate")

		dupID := e.newChatUser(b.ID, "fresh-fid")
		dupID.ID = alice.ID
		wantErr(t, e.s.CreateChatUser(e.ctx, dupID), platform.ErrConflict, "CreateChatUser with a taken internal id")
		_, err = e.s.GetChatUser(e.ctx, b.ID, "fresh-fid")
		wantErr(t, err, platform.ErrNotFound, "the rejected duplicate id")

		// The same fid in another bot is another user.
		twin := e.chatUser(t, other.ID, alice.FID)
		same(t, e.getChatUser(t, other.ID, alice.FID), normChatUser(twin), "same fid in another bot")
		same(t, e.getChatUser(t, b.ID, alice.FID), normChatUser(alice), "the first bot's user keeps its fid")
	})

	t.Run("foreign id first", func(t *testing.T) {
		// A foreign id that happens to be another user's internal id finds
		// the user with that foreign id.
		shadow := e.chatUser(t, b.ID, anon.ID+"x")
		spoof := e.newChatUser(b.ID, bare.ID)
		must(t, e.s.CreateChatUser(e.ctx, spoof), "CreateChatUser with another's internal id as fid")
		same(t, e.getChatUser(t, b.ID, bare.ID), normChatUser(spoof), "lookup of a string that is a fid and an internal id")
		same(t, e.getChatUser(t, b.ID, shadow.FID), normChatUser(shadow), "lookup by a fid")
		same(t, e.getChatUser(t, b.ID, bare.FID), normChatUser(bare), "lookup of the shadowed user by its own fid")
	})

	t.Run("update", func(t *testing.T) {
		up := alice
		up.Name, up.PictureURL, up.Profile = "Alice Ü", "https://example.com/new.png", strings.Repeat("p", 1000)
		up.UpdatedAt = e.now()
		up.FID, up.CreatedAt = "ignored-fid", e.now() // neither changes
		must(t, e.s.UpdateChatUser(e.ctx, up), "UpdateChatUser")
		want := up
		want.FID, want.CreatedAt = alice.FID, alice.CreatedAt
		same(t, e.getChatUser(t, b.ID, alice.FID), normChatUser(want), "user after UpdateChatUser")
		_, err := e.s.GetChatUser(e.ctx, b.ID, "ignored-fid")
		wantErr(t, err, platform.ErrNotFound, "UpdateChatUser must not change the fid")

		clear := want
		clear.Name, clear.PictureURL, clear.Profile = "", "", ""
		clear.UpdatedAt = e.now()
		must(t, e.s.UpdateChatUser(e.ctx, clear), "UpdateChatUser clearing fields")
		same(t, e.getChatUser(t, b.ID, alice.ID), normChatUser(clear), "user after clearing its fields")
		same(t, e.getChatUser(t, b.ID, anon.ID), normChatUser(anon), "another user after UpdateChatUser")

		missing := e.newChatUser(b.ID, "missing")
		wantErr(t, e.s.UpdateChatUser(e.ctx, missing), platform.ErrNotFound, "UpdateChatUser of an unknown user")
	})

	t.Run("delete", func(t *testing.T) {
		c := e.conversation(t, b.ID, anon.ID, "")
		must(t, e.s.AddParticipant(e.ctx, c.ID, bare.ID, e.now().UnixMicro()), "AddParticipant")
		must(t, e.s.DeleteChatUser(e.ctx, bare.ID), "DeleteChatUser")
		_, err := e.s.GetChatUser(e.ctx, b.ID, bare.FID)
		wantErr(t, err, platform.ErrNotFound, "GetChatUser by fid after delete")
		_, err = e.s.GetChatUser(e.ctx, b.ID, bare.ID)
		if err == nil {
			// bare.ID is still spoof's fid; that user must be the one found.
			if u := e.getChatUser(t, b.ID, bare.ID); u.ID == bare.ID {
				t.Fatalf("GetChatUser by internal id after delete found the deleted user")
			}
		}
		if e.isParticipant(t, c.ID, bare.ID) {
			t.Fatalf("a deleted user is still a participant")
		}
		same(t, chatUserIDs(e.participants(t, c.ID)), []string{anon.ID}, "participants after the participant's deletion")
		wantErr(t, e.s.DeleteChatUser(e.ctx, bare.ID), platform.ErrNotFound, "DeleteChatUser twice")
		wantErr(t, e.s.DeleteChatUser(e.ctx, "user_unknown"), platform.ErrNotFound, "DeleteChatUser unknown id")
		same(t, e.getChatUser(t, b.ID, anon.ID), normChatUser(anon), "other user after DeleteChatUser")
		// The fid is free again.
		again := e.chatUser(t, b.ID, bare.FID)
		same(t, e.getChatUser(t, b.ID, "bare"), normChatUser(again), "a new user with a deleted user's fid")
	})
}

func testChatConversations(t *testing.T, e *env) {
	b := e.chatBot(t)
	other := e.chatBot(t)
	owner := e.chatUser(t, b.ID, "owner")
	guest := e.chatUser(t, b.ID, "guest")
	c := e.conversation(t, b.ID, owner.ID, "room-1/a\\b")
	plain := e.conversation(t, b.ID, guest.ID, "")

	for _, want := range []platform.Conversation{c, plain} {
		for _, id := range []string{want.FID, want.ID} {
			got, err := e.s.GetConversation(e.ctx, b.ID, id)
			must(t, err, "GetConversation %s", id)
			same(t, got, normConversation(want), "GetConversation %s", id)
			_, err = e.s.GetConversation(e.ctx, other.ID, id)
			wantErr(t, err, platform.ErrNotFound, "GetConversation %s through another bot", id)
		}
	}
	_, err := e.s.GetConversation(e.ctx, b.ID, "conv_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetConversation unknown id")

	// The owner is the first and only participant.
	if !e.isParticipant(t, c.ID, owner.ID) {
		t.Fatalf("the owner is not a participant of its new conversation")
	}
	if e.isParticipant(t, c.ID, guest.ID) {
		t.Fatalf("a user who was never added is a participant")
	}
	same(t, mapSlice(e.participants(t, c.ID), normChatUser), []platform.ChatUser{normChatUser(owner)}, "participants of a new conversation")

	t.Run("duplicate fid", func(t *testing.T) {
		dup := e.newConversation(b.ID, guest.ID, c.FID)
		wantErr(t, e.s.CreateConversation(e.ctx, dup), platform.ErrConflict, "CreateConversation with a taken fid")
		_, err := e.s.GetConversation(e.ctx, b.ID, dup.ID)
		wantErr(t, err, platform.ErrNotFound, "the rejected duplicate")
		if e.isParticipant(t, dup.ID, guest.ID) {
			t.Fatalf("the rejected duplicate left its owner as a participant")
		}
		dupID := e.newConversation(b.ID, guest.ID, "fresh")
		dupID.ID = c.ID
		wantErr(t, e.s.CreateConversation(e.ctx, dupID), platform.ErrConflict, "CreateConversation with a taken id")
		got, err := e.s.GetConversation(e.ctx, b.ID, c.FID)
		must(t, err, "GetConversation after rejected duplicates")
		same(t, got, normConversation(c), "conversation after rejected duplicates")
		same(t, chatUserIDs(e.participants(t, c.ID)), []string{owner.ID}, "participants after rejected duplicates")
		// Another bot may use the same fid.
		ou := e.chatUser(t, other.ID, "")
		twin := e.conversation(t, other.ID, ou.ID, c.FID)
		got, err = e.s.GetConversation(e.ctx, other.ID, c.FID)
		must(t, err, "GetConversation of the other bot's twin")
		same(t, got, normConversation(twin), "same fid in another bot")
	})

	t.Run("atomic", func(t *testing.T) {
		// The owner's participant row fails (no such user): the
		// conversation must not be stored either.
		orphan := e.newConversation(b.ID, "user_unknown", "orphan")
		if err := e.s.CreateConversation(e.ctx, orphan); err == nil {
			t.Fatalf("CreateConversation with an unknown owner: got nil error, want one (its owner cannot be a participant)")
		}
		_, err := e.s.GetConversation(e.ctx, b.ID, "orphan")
		wantErr(t, err, platform.ErrNotFound, "a conversation whose owner could not be added")
		ok, err := e.s.IsParticipant(e.ctx, orphan.ID, "user_unknown")
		must(t, err, "IsParticipant")
		if ok {
			t.Fatalf("the failed CreateConversation left a participant")
		}
	})

	t.Run("delete cascades", func(t *testing.T) {
		d := e.conversation(t, b.ID, owner.ID, "doomed")
		must(t, e.s.AddParticipant(e.ctx, d.ID, guest.ID, e.now().UnixMicro()), "AddParticipant")
		m := e.message(t, d.ID, guest.ID, false)
		ev := e.newChatEvent(d.ID, owner.ID, false)
		must(t, errOf(e.s.CreateChatEvent(e.ctx, ev)), "CreateChatEvent")
		keepMsg := e.message(t, c.ID, owner.ID, false)

		wantErr(t, e.s.DeleteConversation(e.ctx, "conv_unknown"), platform.ErrNotFound, "DeleteConversation unknown id")
		must(t, e.s.DeleteConversation(e.ctx, d.ID), "DeleteConversation")
		_, err := e.s.GetConversation(e.ctx, b.ID, d.ID)
		wantErr(t, err, platform.ErrNotFound, "GetConversation after delete")
		_, err = e.s.GetConversation(e.ctx, b.ID, "doomed")
		wantErr(t, err, platform.ErrNotFound, "GetConversation by fid after delete")
		for _, u := range []platform.ChatUser{owner, guest} {
			if e.isParticipant(t, d.ID, u.ID) {
				t.Fatalf("participant %s of a deleted conversation remains", u.FID)
			}
		}
		if ps := e.participants(t, d.ID); len(ps) != 0 {
			t.Fatalf("ListParticipants of a deleted conversation = %s", show(chatUserIDs(ps)))
		}
		_, err = e.s.GetMessage(e.ctx, m.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMessage of a deleted conversation")
		if ms := e.messages(t, d.ID); len(ms) != 0 {
			t.Fatalf("ListMessages of a deleted conversation = %s", show(messageIDs(ms)))
		}
		_, err = e.s.GetChatEvent(e.ctx, ev.ID)
		wantErr(t, err, platform.ErrNotFound, "GetChatEvent of a deleted conversation")
		wantErr(t, e.s.DeleteConversation(e.ctx, d.ID), platform.ErrNotFound, "DeleteConversation twice")
		e.wantNoJobs(t, d.ID, "bot deliveries of a deleted conversation")
		if len(e.jobs(t, c.ID)) == 0 {
			t.Fatalf("the other conversation's bot deliveries went too")
		}

		// Nothing else went.
		got, err := e.s.GetMessage(e.ctx, keepMsg.ID)
		must(t, err, "GetMessage of another conversation")
		same(t, got, normMessage(keepMsg), "message of another conversation")
		same(t, e.getChatUser(t, b.ID, guest.ID), normChatUser(guest), "a participant user of the deleted conversation")
		if !e.isParticipant(t, c.ID, owner.ID) {
			t.Fatalf("the owner left another conversation")
		}
		// The fid is free again.
		again := e.conversation(t, b.ID, guest.ID, "doomed")
		got2, err := e.s.GetConversation(e.ctx, b.ID, "doomed")
		must(t, err, "GetConversation of a recreated fid")
		same(t, got2, normConversation(again), "a new conversation with a deleted one's fid")
	})
}

func testListConversations(t *testing.T, e *env) {
	b := e.chatBot(t)
	a := e.chatUser(t, b.ID, "a")
	z := e.chatUser(t, b.ID, "z")
	var mine []platform.Conversation
	for i := range 7 {
		fid := ""
		if i%2 == 0 {
			fid = fmt.Sprintf("a-conv-%d", i)
		}
		mine = append(mine, e.conversation(t, b.ID, a.ID, fid))
	}
	var theirs []platform.Conversation
	for range 3 {
		c := e.conversation(t, b.ID, z.ID, "")
		// a takes part in z's conversations, but does not own them.
		must(t, e.s.AddParticipant(e.ctx, c.ID, a.ID, e.now().UnixMicro()), "AddParticipant")
		theirs = append(theirs, c)
	}
	sortByID(mine, func(c platform.Conversation) string { return c.ID })
	sortByID(theirs, func(c platform.Conversation) string { return c.ID })
	list := func(ownerID string, limit int) func(string) ([]platform.Conversation, string, error) {
		return func(tok string) ([]platform.Conversation, string, error) {
			return e.s.ListConversations(e.ctx, ownerID, platform.ChatIntegrationID, store.Page{Token: tok, Limit: limit})
		}
	}
	for _, limit := range []int{1, 2, 3, 7, 100} {
		got := collect(t, fmt.Sprintf("ListConversations(a) limit %d", limit), limit, list(a.ID, limit))
		same(t, mapSlice(got, normConversation), mapSlice(mine, normConversation), "ListConversations(a) limit %d", limit)
		got = collect(t, fmt.Sprintf("ListConversations(z) limit %d", limit), limit, list(z.ID, limit))
		same(t, conversationIDs(got), conversationIDs(theirs), "ListConversations(z) limit %d", limit)
	}
	none, next, err := e.s.ListConversations(e.ctx, "user_nobody", platform.ChatIntegrationID, store.Page{Limit: 10})
	must(t, err, "ListConversations of a user without conversations")
	if len(none) != 0 || next != "" {
		t.Fatalf("ListConversations of a user without conversations = %s, %q", show(conversationIDs(none)), next)
	}

	t.Run("keyset under writes", func(t *testing.T) {
		page1, tok, err := e.s.ListConversations(e.ctx, a.ID, platform.ChatIntegrationID, store.Page{Limit: 3})
		must(t, err, "page 1")
		same(t, conversationIDs(page1), conversationIDs(mine[:3]), "page 1")
		// Deleting a row already seen does not shift the next page.
		must(t, e.s.DeleteConversation(e.ctx, mine[1].ID), "DeleteConversation")
		page2, _, err := e.s.ListConversations(e.ctx, a.ID, platform.ChatIntegrationID, store.Page{Token: tok, Limit: 3})
		must(t, err, "page 2")
		same(t, conversationIDs(page2), conversationIDs(mine[3:6]), "page 2 after deleting a row of page 1")
	})

	_, _, err = e.s.ListConversations(e.ctx, a.ID, platform.ChatIntegrationID, store.Page{Token: "not a token", Limit: 3})
	wantInvalidQuery(t, err, "ListConversations with a bad token")

	t.Run("each channel its own", func(t *testing.T) {
		w := e.newConversation(b.ID, a.ID, "")
		w.Integration = platform.WebchatIntegrationID
		must(t, e.s.CreateConversation(e.ctx, w), "CreateConversation of the webchat channel")
		got, _, err := e.s.ListConversations(e.ctx, a.ID, platform.WebchatIntegrationID, store.Page{Limit: 100})
		must(t, err, "ListConversations of the webchat channel")
		same(t, conversationIDs(got), []string{w.ID}, "ListConversations(a, webchat)")
		got, _, err = e.s.ListConversations(e.ctx, a.ID, platform.ChatIntegrationID, store.Page{Limit: 100})
		must(t, err, "ListConversations of the chat channel")
		if slices.Contains(conversationIDs(got), w.ID) {
			t.Fatalf("ListConversations(a, chat) lists the webchat channel's conversation %s", w.ID)
		}
	})
}

func testChatParticipants(t *testing.T, e *env) {
	b := e.chatBot(t)
	owner := e.chatUser(t, b.ID, "owner")
	c := e.conversation(t, b.ID, owner.ID, "")
	d := e.conversation(t, b.ID, owner.ID, "")
	users := []platform.ChatUser{owner}
	for i := range 8 {
		fid := ""
		if i%2 == 1 {
			fid = fmt.Sprintf("p-%d", i)
		}
		u := e.chatUser(t, b.ID, fid)
		users = append(users, u)
		must(t, e.s.AddParticipant(e.ctx, c.ID, u.ID, e.now().UnixMicro()), "AddParticipant %d", i)
	}
	outsider := e.chatUser(t, b.ID, "outsider")

	// Adding twice is not an error and lists the user once.
	must(t, e.s.AddParticipant(e.ctx, c.ID, users[3].ID, e.now().UnixMicro()), "AddParticipant twice")
	must(t, e.s.AddParticipant(e.ctx, c.ID, owner.ID, e.now().UnixMicro()), "AddParticipant of the owner")
	if err := e.s.AddParticipant(e.ctx, c.ID, "user_unknown", e.now().UnixMicro()); err == nil {
		t.Fatalf("AddParticipant of an unknown user: got nil error, want one")
	}
	if err := e.s.AddParticipant(e.ctx, "conv_unknown", owner.ID, e.now().UnixMicro()); err == nil {
		t.Fatalf("AddParticipant to an unknown conversation: got nil error, want one")
	}

	sortByID(users, func(u platform.ChatUser) string { return u.ID })
	for _, limit := range []int{1, 2, 3, 9, 100} {
		got := collect(t, fmt.Sprintf("ListParticipants limit %d", limit), limit, func(tok string) ([]platform.ChatUser, string, error) {
			return e.s.ListParticipants(e.ctx, c.ID, store.Page{Token: tok, Limit: limit})
		})
		same(t, mapSlice(got, normChatUser), mapSlice(users, normChatUser), "ListParticipants limit %d", limit)
	}
	same(t, chatUserIDs(e.participants(t, d.ID)), []string{owner.ID}, "participants of another conversation")

	for _, u := range users {
		if !e.isParticipant(t, c.ID, u.ID) {
			t.Fatalf("IsParticipant(%s) = false after AddParticipant", u.FID)
		}
	}
	if e.isParticipant(t, c.ID, outsider.ID) {
		t.Fatalf("IsParticipant of a user never added = true")
	}
	if e.isParticipant(t, d.ID, users[3].ID) && users[3].ID != owner.ID {
		t.Fatalf("IsParticipant is true for a conversation the user was not added to")
	}
	if e.isParticipant(t, "conv_unknown", owner.ID) {
		t.Fatalf("IsParticipant of an unknown conversation = true")
	}

	t.Run("remove", func(t *testing.T) {
		gone := users[4]
		if gone.ID == owner.ID {
			gone = users[5]
		}
		must(t, e.s.RemoveParticipant(e.ctx, c.ID, gone.ID), "RemoveParticipant")
		if e.isParticipant(t, c.ID, gone.ID) {
			t.Fatalf("IsParticipant after RemoveParticipant = true")
		}
		wantErr(t, e.s.RemoveParticipant(e.ctx, c.ID, gone.ID), platform.ErrNotFound, "RemoveParticipant twice")
		wantErr(t, e.s.RemoveParticipant(e.ctx, c.ID, outsider.ID), platform.ErrNotFound, "RemoveParticipant of a non-participant")
		wantErr(t, e.s.RemoveParticipant(e.ctx, "conv_unknown", owner.ID), platform.ErrNotFound, "RemoveParticipant from an unknown conversation")
		var want []string
		for _, u := range users {
			if u.ID != gone.ID {
				want = append(want, u.ID)
			}
		}
		same(t, chatUserIDs(e.participants(t, c.ID)), want, "participants after RemoveParticipant")
		same(t, e.getChatUser(t, b.ID, gone.ID), normChatUser(gone), "a removed participant's user")
		// It can be added back.
		must(t, e.s.AddParticipant(e.ctx, c.ID, gone.ID, e.now().UnixMicro()), "AddParticipant after removal")
		if !e.isParticipant(t, c.ID, gone.ID) {
			t.Fatalf("IsParticipant after re-adding = false")
		}
	})

	t.Run("keyset under writes", func(t *testing.T) {
		all := e.participants(t, c.ID)
		page1, tok, err := e.s.ListParticipants(e.ctx, c.ID, store.Page{Limit: 4})
		must(t, err, "page 1")
		same(t, chatUserIDs(page1), chatUserIDs(all[:4]), "page 1")
		must(t, e.s.RemoveParticipant(e.ctx, c.ID, all[1].ID), "RemoveParticipant of a row of page 1")
		page2, _, err := e.s.ListParticipants(e.ctx, c.ID, store.Page{Token: tok, Limit: 4})
		must(t, err, "page 2")
		same(t, chatUserIDs(page2), chatUserIDs(all[4:8]), "page 2 after removing a row of page 1")
	})

	_, _, err := e.s.ListParticipants(e.ctx, c.ID, store.Page{Token: "%%%", Limit: 3})
	wantInvalidQuery(t, err, "ListParticipants with a bad token")
}

func testChatMessages(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "sender")
	c := e.conversation(t, b.ID, u.ID, "")
	d := e.conversation(t, b.ID, u.ID, "")

	// A user's message is stored and queued for the bot: one job.
	m1 := e.newMessage(c.ID, u.ID, false)
	m1.Metadata = json.RawMessage(`{"k":"v","n":null,"deep":{"a":[1,"b"]}}`)
	must(t, errOf(e.s.CreateMessage(e.ctx, m1)), "CreateMessage")
	got, err := e.s.GetMessage(e.ctx, m1.ID)
	must(t, err, "GetMessage")
	same(t, got, normMessage(m1), "GetMessage")
	if string(got.Payload) != string(m1.Payload) || string(got.Metadata) != string(m1.Metadata) {
		t.Fatalf("GetMessage payload %s metadata %s, want them byte for byte: %s %s", got.Payload, got.Metadata, m1.Payload, m1.Metadata)
	}
	e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m1.ID, m1.CreatedAt}}, "after a user's message")

	// A bot's message is stored but not queued; no metadata stays nil.
	m2 := e.message(t, c.ID, u.ID, true)
	got, err = e.s.GetMessage(e.ctx, m2.ID)
	must(t, err, "GetMessage of a bot message")
	same(t, got, normMessage(m2), "GetMessage of a bot message")
	if got.Metadata != nil {
		t.Fatalf("a message stored without metadata has metadata %s", got.Metadata)
	}
	e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m1.ID, m1.CreatedAt}}, "after a bot's message")

	m3 := e.message(t, c.ID, u.ID, false)
	e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m1.ID, m1.CreatedAt}, {"message", m3.ID, m3.CreatedAt}}, "after a second user's message")
	e.wantNoJobs(t, d.ID, "another conversation")

	t.Run("failures enqueue nothing", func(t *testing.T) {
		dup := e.newMessage(c.ID, u.ID, false)
		dup.ID = m1.ID
		wantErr(t, errOf(e.s.CreateMessage(e.ctx, dup)), platform.ErrConflict, "CreateMessage with a taken id")
		// A conversation deleted meanwhile (or never there) is not found,
		// for the user's messages and for the bot's.
		orphan := e.newMessage("conv_unknown", u.ID, false)
		wantErr(t, errOf(e.s.CreateMessage(e.ctx, orphan)), platform.ErrNotFound, "CreateMessage into an unknown conversation")
		wantErr(t, errOf(e.s.CreateMessage(e.ctx, e.newMessage("conv_unknown", u.ID, true))), platform.ErrNotFound, "a bot's CreateMessage into an unknown conversation")
		_, err := e.s.GetMessage(e.ctx, orphan.ID)
		wantErr(t, err, platform.ErrNotFound, "the rejected message")
		e.wantNoJobs(t, "conv_unknown", "a message that was not stored")
		e.wantBotEventJobs(t, c.ID, []botEvent{{"message", m1.ID, m1.CreatedAt}, {"message", m3.ID, m3.CreatedAt}}, "after rejected messages")
		got, err := e.s.GetMessage(e.ctx, m1.ID)
		must(t, err, "GetMessage after a rejected duplicate")
		same(t, got, normMessage(m1), "message after a rejected duplicate")
	})

	t.Run("delete", func(t *testing.T) {
		must(t, e.s.DeleteMessage(e.ctx, m3.ID), "DeleteMessage")
		_, err := e.s.GetMessage(e.ctx, m3.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMessage after delete")
		wantErr(t, e.s.DeleteMessage(e.ctx, m3.ID), platform.ErrNotFound, "DeleteMessage twice")
		wantErr(t, e.s.DeleteMessage(e.ctx, "msg_unknown"), platform.ErrNotFound, "DeleteMessage unknown id")
		_, err = e.s.GetMessage(e.ctx, "msg_unknown")
		wantErr(t, err, platform.ErrNotFound, "GetMessage unknown id")
		same(t, messageIDs(e.messages(t, c.ID)), []string{m2.ID, m1.ID}, "messages after delete")
	})
}

func testListMessages(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	v := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")
	d := e.conversation(t, b.ID, u.ID, "")
	var ms []platform.Message // oldest first
	for i := range 10 {
		who := u.ID
		if i%3 == 0 {
			who = v.ID
		}
		ms = append(ms, e.message(t, c.ID, who, i%4 == 0))
		e.message(t, d.ID, u.ID, false) // interleaved, in another conversation
	}
	// Two messages at the same time: the later id comes first.
	at := e.now()
	tieA := platform.Message{ID: "msg_tie_a", ConversationID: c.ID, UserID: u.ID, Payload: json.RawMessage(`{"type":"text","text":"a"}`), Tags: map[string]string{}, CreatedAt: at}
	tieB := platform.Message{ID: "msg_tie_b", ConversationID: c.ID, UserID: u.ID, Payload: json.RawMessage(`{"type":"text","text":"b"}`), Tags: map[string]string{}, CreatedAt: at}
	must(t, errOf(e.s.CreateMessage(e.ctx, tieB)), "CreateMessage")
	must(t, errOf(e.s.CreateMessage(e.ctx, tieA)), "CreateMessage")
	ms = append(ms, tieA, tieB)
	newest := make([]platform.Message, len(ms))
	for i, m := range ms {
		newest[len(ms)-1-i] = normMessage(m)
	}

	for _, limit := range []int{1, 2, 3, 5, 12, 100} {
		got := collect(t, fmt.Sprintf("ListMessages limit %d", limit), limit, func(tok string) ([]platform.Message, string, error) {
			return e.s.ListMessages(e.ctx, c.ID, store.Page{Token: tok, Limit: limit})
		})
		same(t, got, newest, "ListMessages limit %d (newest first)", limit)
	}
	if got := e.messages(t, d.ID); len(got) != 10 {
		t.Fatalf("ListMessages of the other conversation: %d messages, want 10", len(got))
	}
	if got := e.messages(t, "conv_unknown"); len(got) != 0 {
		t.Fatalf("ListMessages of an unknown conversation = %s", show(messageIDs(got)))
	}

	t.Run("stable under inserts", func(t *testing.T) {
		page1, tok, err := e.s.ListMessages(e.ctx, c.ID, store.Page{Limit: 4})
		must(t, err, "page 1")
		same(t, page1, newest[:4], "page 1")
		// New messages arrive and a seen one is deleted while the client pages.
		var fresh []platform.Message
		for range 3 {
			fresh = append(fresh, e.message(t, c.ID, u.ID, false))
		}
		must(t, e.s.DeleteMessage(e.ctx, newest[2].ID), "DeleteMessage")
		var rest []platform.Message
		for tok != "" {
			var page []platform.Message
			page, tok, err = e.s.ListMessages(e.ctx, c.ID, store.Page{Token: tok, Limit: 4})
			must(t, err, "next page")
			rest = append(rest, page...)
		}
		same(t, rest, newest[4:], "pages after new messages arrived")
		page1, _, err = e.s.ListMessages(e.ctx, c.ID, store.Page{Limit: 3})
		must(t, err, "first page again")
		same(t, messageIDs(page1), []string{fresh[2].ID, fresh[1].ID, fresh[0].ID}, "a new first page shows the new messages")
	})

	_, _, err := e.s.ListMessages(e.ctx, c.ID, store.Page{Token: "bm90IGEgY3Vyc29y", Limit: 3})
	wantInvalidQuery(t, err, "ListMessages with a bad token")
}

func testChatEvents(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")

	ev := e.newChatEvent(c.ID, u.ID, false)
	must(t, errOf(e.s.CreateChatEvent(e.ctx, ev)), "CreateChatEvent")
	got, err := e.s.GetChatEvent(e.ctx, ev.ID)
	must(t, err, "GetChatEvent")
	same(t, got, normChatEvent(ev), "GetChatEvent")
	if string(got.Payload) != string(ev.Payload) {
		t.Fatalf("GetChatEvent payload %s, want %s byte for byte", got.Payload, ev.Payload)
	}
	e.wantBotEventJobs(t, c.ID, []botEvent{{"event", ev.ID, ev.CreatedAt}}, "after a user's event")

	botEv := e.newChatEvent(c.ID, u.ID, true)
	must(t, errOf(e.s.CreateChatEvent(e.ctx, botEv)), "CreateChatEvent from the bot")
	got, err = e.s.GetChatEvent(e.ctx, botEv.ID)
	must(t, err, "GetChatEvent of a bot event")
	same(t, got, normChatEvent(botEv), "GetChatEvent of a bot event")
	e.wantBotEventJobs(t, c.ID, []botEvent{{"event", ev.ID, ev.CreatedAt}}, "after a bot's event")

	m := e.message(t, c.ID, u.ID, false)
	ev2 := e.newChatEvent(c.ID, u.ID, false)
	must(t, errOf(e.s.CreateChatEvent(e.ctx, ev2)), "CreateChatEvent")
	e.wantBotEventJobs(t, c.ID, []botEvent{{"event", ev.ID, ev.CreatedAt}, {"message", m.ID, m.CreatedAt}, {"event", ev2.ID, ev2.CreatedAt}},
		"after an event, a message and an event")

	dup := e.newChatEvent(c.ID, u.ID, false)
	dup.ID = ev.ID
	wantErr(t, errOf(e.s.CreateChatEvent(e.ctx, dup)), platform.ErrConflict, "CreateChatEvent with a taken id")
	orphan := e.newChatEvent("conv_unknown", u.ID, false)
	wantErr(t, errOf(e.s.CreateChatEvent(e.ctx, orphan)), platform.ErrNotFound, "CreateChatEvent into an unknown conversation")
	e.wantNoJobs(t, "conv_unknown", "an event that was not stored")
	_, err = e.s.GetChatEvent(e.ctx, orphan.ID)
	wantErr(t, err, platform.ErrNotFound, "the rejected event")
	e.wantBotEventJobs(t, c.ID, []botEvent{{"event", ev.ID, ev.CreatedAt}, {"message", m.ID, m.CreatedAt}, {"event", ev2.ID, ev2.CreatedAt}},
		"after rejected events")
	got, err = e.s.GetChatEvent(e.ctx, ev.ID)
	must(t, err, "GetChatEvent after a rejected duplicate")
	same(t, got, normChatEvent(ev), "event after a rejected duplicate")
	_, err = e.s.GetChatEvent(e.ctx, "evt_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetChatEvent unknown id")
}

// testDeleteBotWithChat: deleting a bot (or its workspace) removes its chat
// data, and only its own.
func testDeleteBotWithChat(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	type chatData struct {
		bot   platform.Bot
		users []platform.ChatUser
		convs []platform.Conversation
		msgs  []platform.Message
		evs   []platform.ChatEvent
	}
	fill := func(b platform.Bot) chatData {
		d := chatData{bot: b}
		owner := e.chatUser(t, b.ID, "owner")
		guest := e.chatUser(t, b.ID, "")
		d.users = []platform.ChatUser{owner, guest}
		for i := range 2 {
			c := e.conversation(t, b.ID, owner.ID, fmt.Sprintf("conv-%d", i))
			must(t, e.s.AddParticipant(e.ctx, c.ID, guest.ID, e.now().UnixMicro()), "AddParticipant")
			d.convs = append(d.convs, c)
			d.msgs = append(d.msgs, e.message(t, c.ID, guest.ID, false), e.message(t, c.ID, owner.ID, true))
			ev := e.newChatEvent(c.ID, guest.ID, false)
			must(t, errOf(e.s.CreateChatEvent(e.ctx, ev)), "CreateChatEvent")
			d.evs = append(d.evs, ev)
		}
		return d
	}
	gone := fill(e.bot(t, w.ID, "gone"))
	keep := fill(e.bot(t, w.ID, "keep"))
	goneWS := fill(e.bot(t, w2.ID, "in-deleted-workspace"))

	wantGone := func(t *testing.T, d chatData, what string) {
		t.Helper()
		for _, u := range d.users {
			_, err := e.s.GetChatUser(e.ctx, d.bot.ID, u.FID)
			wantErr(t, err, platform.ErrNotFound, "%s: GetChatUser", what)
			_, err = e.s.GetChatUser(e.ctx, d.bot.ID, u.ID)
			wantErr(t, err, platform.ErrNotFound, "%s: GetChatUser by id", what)
			wantErr(t, e.s.DeleteChatUser(e.ctx, u.ID), platform.ErrNotFound, "%s: DeleteChatUser", what)
		}
		for _, c := range d.convs {
			_, err := e.s.GetConversation(e.ctx, d.bot.ID, c.ID)
			wantErr(t, err, platform.ErrNotFound, "%s: GetConversation", what)
			if ps := e.participants(t, c.ID); len(ps) != 0 {
				t.Fatalf("%s: participants remain: %s", what, show(chatUserIDs(ps)))
			}
			if ms := e.messages(t, c.ID); len(ms) != 0 {
				t.Fatalf("%s: messages remain: %s", what, show(messageIDs(ms)))
			}
			cs, _, err := e.s.ListConversations(e.ctx, c.OwnerID, platform.ChatIntegrationID, store.Page{Limit: 10})
			must(t, err, "ListConversations")
			if len(cs) != 0 {
				t.Fatalf("%s: ListConversations of the owner = %s", what, show(conversationIDs(cs)))
			}
		}
		for _, m := range d.msgs {
			_, err := e.s.GetMessage(e.ctx, m.ID)
			wantErr(t, err, platform.ErrNotFound, "%s: GetMessage", what)
		}
		for _, ev := range d.evs {
			_, err := e.s.GetChatEvent(e.ctx, ev.ID)
			wantErr(t, err, platform.ErrNotFound, "%s: GetChatEvent", what)
		}
		for _, c := range d.convs {
			e.wantNoJobs(t, c.ID, "%s: bot deliveries of conversation %s", what, c.FID)
		}
	}
	wantKept := func(t *testing.T, d chatData) {
		t.Helper()
		for _, u := range d.users {
			same(t, e.getChatUser(t, d.bot.ID, u.FID), normChatUser(u), "kept user")
		}
		for _, c := range d.convs {
			got, err := e.s.GetConversation(e.ctx, d.bot.ID, c.FID)
			must(t, err, "GetConversation of the kept bot")
			same(t, got, normConversation(c), "kept conversation")
			same(t, len(e.participants(t, c.ID)), 2, "participants of a kept conversation")
		}
		for _, m := range d.msgs {
			got, err := e.s.GetMessage(e.ctx, m.ID)
			must(t, err, "GetMessage of the kept bot")
			same(t, got, normMessage(m), "kept message")
		}
		for _, ev := range d.evs {
			got, err := e.s.GetChatEvent(e.ctx, ev.ID)
			must(t, err, "GetChatEvent of the kept bot")
			same(t, got, normChatEvent(ev), "kept event")
		}
		for _, c := range d.convs {
			if len(e.jobs(t, c.ID)) == 0 {
				t.Fatalf("bot deliveries of kept conversation %s are gone", c.FID)
			}
		}
	}

	must(t, e.deleteBot(e.ctx, w.ID, gone.bot.ID), "DeleteBot")
	wantGone(t, gone, "after DeleteBot")
	wantKept(t, keep)
	wantKept(t, goneWS)
	must(t, e.deleteWorkspace(e.ctx, w2.ID), "DeleteWorkspace")
	wantGone(t, goneWS, "after DeleteWorkspace")
	wantKept(t, keep)
	// The deleted bot's fids are free in a new bot, and the kept bot still
	// owns its own.
	nb := e.bot(t, w.ID, "new")
	e.chatUser(t, nb.ID, "owner")
	wantErr(t, e.s.CreateChatUser(e.ctx, e.newChatUser(keep.bot.ID, "owner")), platform.ErrConflict, "a taken fid of the kept bot")
}

func testLastMessages(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "u")
	empty := e.conversation(t, b.ID, u.ID, "")
	one := e.conversation(t, b.ID, u.ID, "")
	many := e.conversation(t, b.ID, u.ID, "")
	only := e.message(t, one.ID, u.ID, false)
	var newest platform.Message
	for i := range 3 {
		newest = e.message(t, many.ID, u.ID, i == 2)
	}
	// Two messages of the same instant: the greater id is the newer.
	tie := e.newMessage(many.ID, u.ID, true)
	tie.ID, tie.CreatedAt = newest.ID+"z", newest.CreatedAt
	must(t, errOf(e.s.CreateMessage(e.ctx, tie)), "CreateMessage of the same instant")
	got, err := e.s.LastMessages(e.ctx, []string{empty.ID, one.ID, many.ID, "conv_nothing"})
	must(t, err, "LastMessages")
	if len(got) != 2 {
		t.Fatalf("LastMessages = %d conversations, want 2 (those with messages)", len(got))
	}
	same(t, got[one.ID], normMessage(only), "the last message of a conversation of one")
	same(t, got[many.ID], normMessage(tie), "the last message of a conversation of four")
	none, err := e.s.LastMessages(e.ctx, nil)
	must(t, err, "LastMessages of none")
	if len(none) != 0 {
		t.Fatalf("LastMessages of none = %v", none)
	}
}
