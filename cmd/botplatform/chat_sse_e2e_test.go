package main

// Chat API end-to-end: event streams (listenConversation): signals and
// their order, replay, pings, refused streams, a removed participant's
// streams, shutdown, and signals across two servers.

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// testChatReplay: a new stream first receives the messages and events of the
// last second (chat.ReplayWindow), and nothing else from before it opened.
func testChatReplay(t *testing.T, e *chatEnv) {
	o := e.user("replay-owner")
	p := e.user("replay-participant")
	c := e.conversation(o, "")
	e.addParticipant(o, c, p) // participant_added: not replayed
	m1 := str(t, e.send(o, c, "before listening"), "id")
	ev := field(t, e.call(http.MethodPost, "/events", o.Key, map[string]any{"conversationId": c, "payload": map[string]any{"k": 1}}).status(201), "event").(map[string]any)
	st := e.listenTo(p, c)
	if got := st.expect(t, "message_created"); got["id"] != m1 {
		t.Fatalf("first replayed signal %v, want message %s", got, m1)
	}
	if got := st.expect(t, "event_created"); got["id"] != ev["id"] {
		t.Fatalf("second replayed signal %v, want event %v", got, ev["id"])
	}
	m2 := str(t, e.send(o, c, "live"), "id")
	if got := st.expect(t, "message_created"); got["id"] != m2 {
		t.Fatalf("live signal %v, want message %s", got, m2)
	}
	st.close()

	time.Sleep(chat.ReplayWindow + 100*time.Millisecond) // the rule under test is the window
	late := e.listenTo(p, c)
	m3 := str(t, e.send(o, c, "after the window"), "id")
	if got := late.expect(t, "message_created"); got["id"] != m3 {
		t.Fatalf("a stream opened after the window received %v first, want the live message %s", got, m3)
	}
	late.close()
}

func testChatSignals(t *testing.T, e *chatEnv) {
	o := e.user("sig-owner")
	p := e.user("sig-participant")
	q := e.user("sig-third")
	c := e.conversation(o, "sig-conv")
	d := e.conversation(o, "sig-other")
	e.addParticipant(o, c, p)
	lo := e.listenTo(o, c)
	lp := e.listenTo(p, c)
	ld := e.listenTo(o, d)
	both := []*sseStream{lo, lp}

	// message_created: the message as listMessages shows it, plus isBot.
	meta := map[string]any{"k": "v"}
	payload := map[string]any{"type": "text", "text": "signal me"}
	m := field(t, e.call(http.MethodPost, "/messages", o.Key, map[string]any{"conversationId": c, "payload": payload, "metadata": meta}).status(201), "message").(map[string]any)
	listed := e.call(http.MethodGet, "/conversations/"+c+"/messages", p.Key, nil).ok()["messages"].([]any)[0].(map[string]any)
	for _, st := range both {
		s := st.signal(t)
		if s.Type != "message_created" {
			t.Fatalf("%s: %s, want message_created", st.what, s.Type)
		}
		if s.Raw.Lines[0] != "event: message" || s.Raw.Event != "message" {
			t.Fatalf("%s: event type %q, want message", st.what, s.Raw.Event)
		}
		wantKeys(t, s.Data, "message_created data", "id", "createdAt", "payload", "userId", "conversationId", "metadata", "isBot")
		if s.Data["isBot"] != false {
			t.Fatalf("message_created isBot = %v, want false", s.Data["isBot"])
		}
		wantDate(t, s.Data["createdAt"], "message_created createdAt")
		data := map[string]any{}
		for k, v := range s.Data {
			if k != "isBot" {
				data[k] = v
			}
		}
		wantEqual(t, data, listed, "message_created without isBot vs the listMessages item")
		wantEqual(t, data, m, "message_created without isBot vs the createMessage response")
		if data["conversationId"] != "sig-conv" || data["userId"] != "sig-owner" {
			t.Fatalf("message_created ids %v", data)
		}
	}

	// event_created: the event, plus isBot; sent by the participant.
	ev := field(t, e.call(http.MethodPost, "/events", p.Key, map[string]any{"conversationId": c, "payload": map[string]any{"typing": true}}).status(201), "event").(map[string]any)
	for _, st := range both {
		s := st.expect(t, "event_created")
		wantKeys(t, s, "event_created data", "id", "createdAt", "payload", "conversationId", "userId", "isBot")
		if s["isBot"] != false {
			t.Fatalf("event_created isBot = %v, want false", s["isBot"])
		}
		wantDate(t, s["createdAt"], "event_created createdAt")
		want := map[string]any{"isBot": false}
		for k, v := range ev {
			want[k] = v
		}
		wantEqual(t, s, want, "event_created vs the createEvent response")
	}

	// participant_added and participant_removed, with foreign ids.
	e.addParticipant(o, c, q)
	for _, st := range both {
		wantEqual(t, st.expect(t, "participant_added"), map[string]any{"conversationId": "sig-conv", "participantId": "sig-third"}, "participant_added")
	}
	e.call(http.MethodDelete, "/conversations/"+c+"/participants/sig-third", o.Key, nil).ok()
	for _, st := range both {
		wantEqual(t, st.expect(t, "participant_removed"), map[string]any{"conversationId": "sig-conv", "participantId": "sig-third"}, "participant_removed")
	}

	// message_deleted carries internal ids (an upstream quirk).
	e.call(http.MethodDelete, "/messages/"+m["id"].(string), o.Key, nil).ok()
	wantDeleted := map[string]any{"id": m["id"], "conversationId": e.internalConv("sig-conv"), "userId": e.internalUser("sig-owner")}
	for _, st := range both {
		wantEqual(t, st.expect(t, "message_deleted"), wantDeleted, "message_deleted")
	}

	// The other conversation's listener got none of it: its first signal is
	// its own conversation's message.
	dm := e.send(o, d, "other conversation")
	if got := ld.expect(t, "message_created"); got["id"] != dm["id"] || got["conversationId"] != "sig-other" {
		t.Fatalf("listener of another conversation got %v first, want its own message %v", got, dm["id"])
	}

	// A conversation id with slashes is taken from the listen path as is.
	slash := e.conversation(o, `room/with\slashes`)
	ls := e.listenPath(o.Key, "/conversations/"+slash+"/listen")
	if got := str(t, e.call(http.MethodGet, "/conversations/room%2Fwith%5Cslashes", o.Key, nil).ok(), "conversation", "id"); got != slash {
		t.Fatalf("getConversation with an escaped slash: %q", got)
	}
	sm := e.send(o, slash, "slashed")
	if got := ls.expect(t, "message_created"); got["id"] != sm["id"] || got["conversationId"] != slash {
		t.Fatalf("listener of %q got %v", slash, got)
	}
}

func testChatSignalOrder(t *testing.T, e *chatEnv) {
	o := e.user("order-owner")
	p := e.user("order-participant")
	c := e.conversation(o, "")
	e.addParticipant(o, c, p)
	streams := []*sseStream{e.listenTo(o, c), e.listenTo(p, c)}
	var sent []string
	for i := range 50 {
		from := o
		if i%3 == 2 {
			from = p
		}
		sent = append(sent, str(t, e.send(from, c, fmt.Sprintf("n%d", i)), "id"))
	}
	for _, st := range streams {
		var got []string
		for range sent {
			got = append(got, st.expect(t, "message_created")["id"].(string))
		}
		if !reflect.DeepEqual(got, sent) {
			t.Fatalf("%s: signals in order %v, want the order of the writes %v", st.what, got, sent)
		}
	}
}

func testChatPing(t *testing.T, e *chatEnv) {
	u := e.user("quiet")
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	start := time.Now()
	for i := range 3 {
		ev, ok := st.next(t)
		if !ok {
			t.Fatalf("the stream ended before ping %d", i+1)
		}
		if ev.Data != "ping" || !reflect.DeepEqual(ev.Lines, []string{"event: message", "data: ping"}) {
			t.Fatalf("on a quiet stream got %q, want exactly event: message / data: ping", ev.Lines)
		}
	}
	// Three pings take at least about two intervals after the first.
	if el := time.Since(start); el < 2*pingInterval-50*time.Millisecond {
		t.Errorf("3 pings within %s, faster than the %s interval", el, pingInterval)
	}
	// A signal still arrives between pings.
	m := e.send(u, c, "after pings")
	if got := st.expect(t, "message_created"); got["id"] != m["id"] {
		t.Fatalf("got %v, want the message", got)
	}
}

func testChatListenErrors(t *testing.T, e *chatEnv) {
	o := e.user("listen-owner")
	x := e.user("listen-outsider")
	c := e.conversation(o, "listen-conv")
	path := "/conversations/" + c + "/listen"
	e.listenFail("", path, 401, "Unauthorized")
	e.listenFail("bad-key", path, 401, "Unauthorized")
	e.listenFail(x.Key, path, 403, "Forbidden")
	e.listenFail(o.Key, "/conversations/nope/listen", 404, "ResourceNotFound")
	e.listenFail(o.Key, "/conversations/"+c+"/listen/more", 404, "ResourceNotFound")
	e.listenFail(o.Key, "/conversations//listen", 404, "ResourceNotFound")
	e.call(http.MethodGet, "/conversations/a/b/c", o.Key, nil).fail(404, "ResourceNotFound")
	e.call(http.MethodPost, path, o.Key, map[string]any{}).fail(405, "MethodNotFound")
	e.listenTo(o, c).close()
}

func testChatRemoveParticipantStream(t *testing.T, e *chatEnv) {
	o := e.user("rm-owner")
	r := e.user("rm-removed")
	k := e.user("rm-kept")
	c := e.conversation(o, "rm-conv")
	d := e.conversation(o, "rm-other")
	for _, u := range []chatUser{r, k} {
		e.addParticipant(o, c, u)
	}
	e.addParticipant(o, d, r)
	lo := e.listenTo(o, c)
	lk := e.listenTo(k, c)
	rc := e.listenTo(r, c)
	rd := e.listenTo(r, d)
	rc2 := e.listenTo(r, c) // a second stream of the same user

	e.call(http.MethodDelete, "/conversations/"+c+"/participants/"+r.ID, o.Key, nil).ok()
	for _, st := range []*sseStream{lo, lk} {
		wantEqual(t, st.expect(t, "participant_removed"), map[string]any{"conversationId": c, "participantId": r.ID}, "participant_removed")
	}
	// Every stream of the removed user ends (its per-user channel, as
	// upstream), the one on the other conversation included.
	for _, st := range []*sseStream{rc, rc2, rd} {
		for _, ev := range st.waitEnd(t) {
			if strings.Contains(ev.Data, "message_created") {
				t.Errorf("%s: a removed user's stream got %s", st.what, ev.Data)
			}
		}
	}
	// The others keep listening.
	m := e.send(o, c, "after removal")
	for _, st := range []*sseStream{lo, lk} {
		if got := st.expect(t, "message_created"); got["id"] != m["id"] {
			t.Fatalf("%s: got %v, want the message after removal", st.what, got)
		}
	}
	e.listenFail(r.Key, "/conversations/"+c+"/listen", 403, "Forbidden")
	// Still a participant of the other conversation: it may listen again.
	rd2 := e.listenTo(r, d)
	dm := e.send(o, d, "still here")
	if got := rd2.expect(t, "message_created"); got["id"] != dm["id"] {
		t.Fatalf("re-opened stream got %v", got)
	}
}

// TestChatShutdown: stopping the server ends open event streams, and run
// returns nil promptly instead of waiting for them.
func TestChatShutdown(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startBackendWith(t, backend, "--shutdown-timeout", "20s")
			e := newChatEnv(t, s)
			a, b := e.user("a"), e.user("b")
			c := e.conversation(a, "")
			e.addParticipant(a, c, b)
			streams := []*sseStream{e.listenTo(a, c), e.listenTo(b, c), e.listenTo(a, e.conversation(a, ""))}
			m := e.send(a, c, "before shutdown")
			for _, st := range streams[:2] {
				if got := st.skipTo(t, "message_created"); got["id"] != m["id"] {
					t.Fatalf("got %v", got)
				}
			}
			start := time.Now()
			stopped := make(chan error, 1)
			go func() { stopped <- s.stop() }()
			for _, st := range streams {
				st.waitEnd(t)
			}
			select {
			case err := <-stopped:
				if err != nil {
					t.Fatalf("run returned %v, want nil", err)
				}
			case <-time.After(signalTimeout):
				t.Fatalf("run did not return within %s of cancelling, with streams open", signalTimeout)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("shutdown with open streams took %s, want well under the 20s shutdown timeout", el)
			}
		})
	}
}

// Two server processes on one PostgreSQL database share live signals: a
// listener on one receives what is written through the other, large signals
// included, and a participant removed through one loses its streams on the
// other.
func TestChatSignalsAcrossServers(t *testing.T) {
	t.Parallel()
	dir, dbURL := storage(t, "postgres")
	a := startServer(t, dir, dbURL)
	b := launchServer(t, dir, dbURL) // shared file storage, as scale-out requires
	b.waitListening(t)
	e := newChatEnv(t, a)
	onB := *e
	onB.s = b

	alice := e.createUser(nil)
	conv := e.conversation(alice, "shared")
	st := onB.listenTo(alice, conv)
	defer st.close()

	sent := e.send(alice, conv, "hello from a")
	if got := st.expect(t, "message_created"); got["id"] != sent["id"] {
		t.Fatalf("listener on b got message %v, want %v", got["id"], sent["id"])
	}
	big := strings.Repeat("é", 9000) + strings.Repeat("x", 7001) // several notification pieces
	sent = e.send(alice, conv, big)
	got := st.expect(t, "message_created")
	if payload, _ := got["payload"].(map[string]any); got["id"] != sent["id"] || payload["text"] != big {
		t.Fatalf("listener on b got a different large message (%d bytes)", len(fmt.Sprint(got["payload"])))
	}

	bob := e.createUser(nil)
	e.addParticipant(alice, conv, bob)
	if got := st.expect(t, "participant_added"); got["participantId"] != bob.ID {
		t.Fatalf("participant_added for %v, want %s", got["participantId"], bob.ID)
	}
	bobs := onB.listenTo(bob, conv)
	e.call(http.MethodDelete, "/conversations/"+conv+"/participants/"+bob.ID, alice.Key, nil).ok()
	bobs.waitEnd(t)
	if got := st.expect(t, "participant_removed"); got["participantId"] != bob.ID {
		t.Fatalf("participant_removed for %v, want %s", got["participantId"], bob.ID)
	}
}
