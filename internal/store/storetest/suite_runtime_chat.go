package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// The Runtime API's queries: tags on users, conversations and messages,
// lists of a bot's rows with filters, updates, tag values.

func testRuntimeChatTags(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.newChatUser(b.ID, "")
	u.Tags = map[string]string{"crm": "42", "plan": "pro ünï"}
	u.Properties, u.Attributes = map[string]string{"shared": "ünï"}, map[string]string{"tier": "gold"}
	must(t, e.s.CreateChatUser(e.ctx, u), "CreateChatUser with tags")
	same(t, normChatUser(e.getChatUser(t, b.ID, u.ID)), normChatUser(u), "user read back with its tags, properties and attributes")
	u.Tags = map[string]string{"plan": "free"}
	u.Properties, u.Attributes = map[string]string{}, map[string]string{"tier": "silver", "seats": "3"}
	u.UpdatedAt = e.now()
	must(t, e.s.UpdateChatUser(e.ctx, u), "UpdateChatUser tags")
	same(t, normChatUser(e.getChatUser(t, b.ID, u.ID)), normChatUser(u), "user after its tags, properties and attributes changed")

	c := e.newConversation(b.ID, u.ID, "")
	c.Tags, c.Channel, c.Integration = map[string]string{"topic": "billing"}, "issue", "linear"
	c.Properties = map[string]string{"shared": "yes"}
	must(t, e.s.CreateConversation(e.ctx, c), "CreateConversation with tags")
	got, err := e.s.GetConversation(e.ctx, b.ID, c.ID)
	must(t, err, "GetConversation")
	same(t, normConversation(got), normConversation(c), "conversation read back")
	c.Tags, c.Properties = map[string]string{}, map[string]string{"shared": "no"}
	c.UpdatedAt = e.now()
	must(t, e.s.UpdateConversation(e.ctx, c), "UpdateConversation")
	got, _ = e.s.GetConversation(e.ctx, b.ID, c.ID)
	same(t, normConversation(got), normConversation(c), "conversation after its tags were removed")
	listed, _, err := e.s.ListBotConversations(e.ctx, store.ConversationFilter{BotID: b.ID, Integration: "linear", Page: store.Page{Limit: 10}})
	must(t, err, "ListBotConversations of an integration")
	if len(listed) != 1 {
		t.Fatalf("conversations of integration linear: %d, want 1", len(listed))
	}
	same(t, normConversation(listed[0].Conversation), normConversation(c), "conversation listed")

	m := e.newMessage(c.ID, u.ID, true)
	m.Tags = map[string]string{"kind": "greeting"}
	must(t, errOf(e.s.CreateMessage(e.ctx, m)), "CreateMessage with tags")
	gm, err := e.s.GetMessage(e.ctx, m.ID)
	must(t, err, "GetMessage")
	same(t, normMessage(gm), normMessage(m), "message read back")
	m.Payload = []byte(`{"type":"text","text":"edited"}`)
	m.Metadata = []byte(`{"edited":true}`)
	m.Tags = map[string]string{"kind": "greeting", "edited": "1"}
	m.UpdatedAt = e.now()
	must(t, e.s.UpdateMessage(e.ctx, m, b.ID), "UpdateMessage")
	gm, _ = e.s.GetMessage(e.ctx, m.ID)
	if string(gm.Payload) != string(m.Payload) || string(gm.Metadata) != string(m.Metadata) || len(gm.Tags) != 2 || !mt(gm.UpdatedAt).Equal(mt(m.UpdatedAt)) {
		t.Errorf("message after UpdateMessage: %+v", gm)
	}
	if err := e.s.UpdateMessage(e.ctx, platform.Message{ID: "msg_missing", Payload: []byte(`{}`), UpdatedAt: e.now()}, b.ID); err != platform.ErrNotFound {
		t.Errorf("UpdateMessage of a missing message: %v, want ErrNotFound", err)
	}
}

func testListChatUsersFilters(t *testing.T, e *env) {
	b := e.chatBot(t)
	other := e.chatBot(t)
	e.chatUser(t, other.ID, "") // another bot's user is never listed
	var ids []string
	for i, tags := range []map[string]string{{"tier": "gold"}, {"tier": "silver"}, {"tier": "gold", "vip": "y"}} {
		u := e.newChatUser(b.ID, "")
		u.Tags = tags
		u.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		u.UpdatedAt = t0.Add(time.Duration(10-i) * time.Minute)
		must(t, e.s.CreateChatUser(e.ctx, u), "CreateChatUser")
		ids = append(ids, u.ID)
	}
	// The user a bot speaks as (its id is the bot's) is not one of its users.
	bu := e.newChatUser(b.ID, b.ID)
	bu.ID = b.ID
	must(t, e.s.CreateChatUser(e.ctx, bu), "CreateChatUser for the bot")
	c := e.conversation(t, b.ID, ids[1], "")

	list := func(f store.ChatUserFilter) []string {
		t.Helper()
		f.BotID = b.ID
		if f.Limit == 0 {
			f.Limit = 100
		}
		us, _, err := e.s.ListChatUsers(e.ctx, f)
		must(t, err, "ListChatUsers %+v", f)
		return chatUserIDs(us)
	}
	same(t, list(store.ChatUserFilter{}), ids, "every user, by creation")
	same(t, list(store.ChatUserFilter{Descending: true}), []string{ids[2], ids[1], ids[0]}, "newest first")
	same(t, list(store.ChatUserFilter{ByUpdate: true}), []string{ids[2], ids[1], ids[0]}, "by update date")
	same(t, list(store.ChatUserFilter{Tags: map[string][]string{"tier": {"gold"}}}), []string{ids[0], ids[2]}, "tier=gold")
	same(t, list(store.ChatUserFilter{Tags: map[string][]string{"tier": {"gold"}, "vip": {"y"}}}), []string{ids[2]}, "tier=gold and vip=y")
	same(t, list(store.ChatUserFilter{Tags: map[string][]string{"tier": {"gold", "silver"}}}), ids, "tier gold or silver")
	same(t, list(store.ChatUserFilter{ConversationID: c.ID}), []string{ids[1]}, "participants")
	after := t0.Add(30 * time.Second)
	same(t, list(store.ChatUserFilter{DateRange: store.DateRange{After: &after}}), ids[1:], "created after")

	page, next, err := e.s.ListChatUsers(e.ctx, store.ChatUserFilter{BotID: b.ID, Page: store.Page{Limit: 2}})
	must(t, err, "first page")
	same(t, chatUserIDs(page), ids[:2], "first page")
	same(t, list(store.ChatUserFilter{Page: store.Page{Token: next, Limit: 2}}), ids[2:], "second page")
}

func testListBotConversations(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	v := e.chatUser(t, b.ID, "")
	mk := func(channel string, tags map[string]string, owner string, messages int) platform.Conversation {
		c := e.newConversation(b.ID, owner, "")
		c.Channel, c.Tags = channel, tags
		must(t, e.s.CreateConversation(e.ctx, c), "CreateConversation")
		for range messages {
			e.message(t, c.ID, owner, false)
		}
		return c
	}
	c1 := mk("web", map[string]string{"lang": "fr"}, u.ID, 2)
	c2 := mk("sms", map[string]string{"lang": "en"}, v.ID, 0)
	c3 := mk("web", map[string]string{}, v.ID, 1)
	must(t, e.s.AddParticipant(e.ctx, c3.ID, u.ID, e.now().UnixMicro()), "AddParticipant")

	list := func(f store.ConversationFilter) ([]string, []int64) {
		t.Helper()
		f.BotID, f.Limit = b.ID, 100
		cs, _, err := e.s.ListBotConversations(e.ctx, f)
		must(t, err, "ListBotConversations %+v", f)
		var ids []string
		var counts []int64
		for _, c := range cs {
			ids = append(ids, c.ID)
			counts = append(counts, c.Messages)
		}
		return ids, counts
	}
	ids, counts := list(store.ConversationFilter{})
	same(t, ids, []string{c1.ID, c2.ID, c3.ID}, "every conversation")
	same(t, counts, []int64{2, 0, 1}, "their message counts")
	ids, _ = list(store.ConversationFilter{Channel: "web"})
	same(t, ids, []string{c1.ID, c3.ID}, "channel web")
	ids, _ = list(store.ConversationFilter{ParticipantIDs: []string{u.ID}})
	same(t, ids, []string{c1.ID, c3.ID}, "u takes part")
	ids, _ = list(store.ConversationFilter{ParticipantIDs: []string{u.ID, v.ID}})
	same(t, ids, []string{c3.ID}, "both take part")
	ids, _ = list(store.ConversationFilter{Tags: map[string][]string{"lang": {"en"}}})
	same(t, ids, []string{c2.ID}, "lang=en")
	one := int64(1)
	ids, _ = list(store.ConversationFilter{MinMessages: &one})
	same(t, ids, []string{c1.ID, c3.ID}, "at least one message")
	ids, _ = list(store.ConversationFilter{MaxMessages: &one})
	same(t, ids, []string{c2.ID, c3.ID}, "at most one message")
	n, err := e.s.CountMessages(e.ctx, c1.ID)
	must(t, err, "CountMessages")
	if n != 2 {
		t.Errorf("CountMessages: %d, want 2", n)
	}
}

// testMessageCounts follows a conversation's number of messages through
// every way messages come and go.
func testMessageCounts(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	v := e.chatUser(t, b.ID, "")
	c1 := e.conversation(t, b.ID, u.ID, "")
	c2 := e.conversation(t, b.ID, v.ID, "")
	count := func(c string, want int64, when string) {
		t.Helper()
		n, err := e.s.CountMessages(e.ctx, c)
		must(t, err, "CountMessages %s", when)
		if n != want {
			t.Errorf("%s: %d messages, want %d", when, n, want)
		}
		cs, _, err := e.s.ListBotConversations(e.ctx, store.ConversationFilter{BotID: b.ID, Page: store.Page{Limit: 10}})
		must(t, err, "ListBotConversations %s", when)
		for _, cc := range cs {
			if cc.ID == c && cc.Messages != want {
				t.Errorf("%s: listed with %d messages, want %d", when, cc.Messages, want)
			}
		}
	}
	count(c1.ID, 0, "new")
	first := e.message(t, c1.ID, u.ID, false)
	e.message(t, c1.ID, u.ID, false)
	e.message(t, c1.ID, v.ID, false)
	e.message(t, c2.ID, v.ID, false)
	count(c1.ID, 3, "three added")
	if _, err := e.s.CreateMessage(e.ctx, first); err == nil {
		t.Fatal("CreateMessage of an existing id: no error")
	}
	count(c1.ID, 3, "a failed add")
	must(t, e.s.DeleteMessage(e.ctx, first.ID), "DeleteMessage")
	count(c1.ID, 2, "one deleted")
	_, _, err := e.s.ErasePerson(e.ctx, store.Person{BotID: b.ID, UserID: v.ID, Aliases: []string{v.ID, v.FID}})
	must(t, err, "ErasePerson")
	count(c1.ID, 1, "a participant's data erased")
	if _, err := e.s.CountMessages(e.ctx, c2.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Errorf("CountMessages of an erased conversation: %v, want not found", err)
	}
	must(t, e.s.DeleteConversation(e.ctx, c1.ID), "DeleteConversation with messages")
	if _, err := e.s.CountMessages(e.ctx, c1.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Errorf("CountMessages of a deleted conversation: %v, want not found", err)
	}
}

func testFindMessagesAndTagValues(t *testing.T, e *env) {
	b := e.chatBot(t)
	other := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c1 := e.conversation(t, b.ID, u.ID, "")
	c2 := e.conversation(t, b.ID, u.ID, "")
	mk := func(c string, tags map[string]string) platform.Message {
		m := e.newMessage(c, u.ID, true)
		m.Tags = tags
		must(t, errOf(e.s.CreateMessage(e.ctx, m)), "CreateMessage")
		return m
	}
	m1 := mk(c1.ID, map[string]string{"kind": "a"})
	m2 := mk(c2.ID, map[string]string{"kind": "b"})
	m3 := mk(c1.ID, map[string]string{"kind": "b"})
	ou := e.chatUser(t, other.ID, "")
	oc := e.conversation(t, other.ID, ou.ID, "")
	om := e.newMessage(oc.ID, ou.ID, true)
	om.Tags = map[string]string{"kind": "z"}
	must(t, errOf(e.s.CreateMessage(e.ctx, om)), "another bot's message")

	find := func(f store.MessageFilter) []string {
		t.Helper()
		f.BotID, f.Limit = b.ID, 100
		ms, _, err := e.s.FindMessages(e.ctx, f)
		must(t, err, "FindMessages %+v", f)
		return messageIDs(ms)
	}
	same(t, find(store.MessageFilter{}), []string{m3.ID, m2.ID, m1.ID}, "the bot's messages, newest first")
	same(t, find(store.MessageFilter{ConversationID: c1.ID}), []string{m3.ID, m1.ID}, "of c1")
	same(t, find(store.MessageFilter{Tags: map[string][]string{"kind": {"b"}}}), []string{m3.ID, m2.ID}, "kind=b")

	values := func(kind, key string) []string {
		t.Helper()
		vs, _, err := e.s.ListChatTagValues(e.ctx, b.ID, kind, key, store.Page{Limit: 100})
		must(t, err, "ListChatTagValues %s %s", kind, key)
		return vs
	}
	same(t, values(store.TagKindMessage, "kind"), []string{"a", "b"}, "message tag values (not another bot's)")
	same(t, values(store.TagKindUser, "kind"), []string{}, "user tag values")
	// Deleting a conversation takes its messages' tags with it.
	must(t, e.s.DeleteConversation(e.ctx, c2.ID), "DeleteConversation")
	same(t, find(store.MessageFilter{Tags: map[string][]string{"kind": {"b"}}}), []string{m3.ID}, "kind=b after c2 went")
	must(t, e.s.DeleteConversation(e.ctx, c1.ID), "DeleteConversation")
	same(t, values(store.TagKindMessage, "kind"), []string{}, "message tag values after both went")
}

func testRuntimeStates(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")
	now := e.now()
	hour := int64(3_600_000)
	st := platform.RuntimeState{ID: platform.NewID("state_"), BotID: b.ID, Type: "conversation", ScopeID: c.ID, Name: "s",
		Payload: []byte(`{"n":1}`), CreatedAt: now, UpdatedAt: now}
	got, err := e.s.PutRuntimeState(e.ctx, st, false)
	must(t, err, "PutRuntimeState")
	if got.ID != st.ID || got.Version != 1 || string(got.Payload) != `{"n":1}` || got.Expiry != nil || got.ExpiresAt != nil {
		t.Fatalf("stored state %+v", got)
	}
	// onlyIfAbsent keeps a state that has not lapsed.
	other := st
	other.ID, other.Payload = platform.NewID("state_"), []byte(`{"n":2}`)
	got, err = e.s.PutRuntimeState(e.ctx, other, true)
	must(t, err, "PutRuntimeState onlyIfAbsent")
	if got.ID != st.ID || string(got.Payload) != `{"n":1}` {
		t.Errorf("onlyIfAbsent over a live state: %+v", got)
	}
	// A replacing put keeps the id and counts a write.
	other.Expiry = &hour
	exp := now.Add(time.Hour)
	other.ExpiresAt = &exp
	got, err = e.s.PutRuntimeState(e.ctx, other, false)
	must(t, err, "PutRuntimeState replace")
	if got.ID != st.ID || got.Version != 2 || string(got.Payload) != `{"n":2}` || *got.Expiry != hour || !got.ExpiresAt.Equal(mt(exp)) {
		t.Errorf("replaced state %+v", got)
	}
	// Lapsed: not found, and replaced by a new state.
	if _, err := e.s.GetRuntimeState(e.ctx, b.ID, "conversation", c.ID, "s", exp.Add(time.Second)); err != platform.ErrNotFound {
		t.Errorf("GetRuntimeState after it lapsed: %v", err)
	}
	later := other
	later.ID, later.Payload, later.Expiry, later.ExpiresAt = platform.NewID("state_"), []byte(`{"n":3}`), nil, nil
	later.CreatedAt, later.UpdatedAt = exp.Add(time.Minute), exp.Add(time.Minute)
	got, err = e.s.PutRuntimeState(e.ctx, later, true)
	must(t, err, "PutRuntimeState onlyIfAbsent over a lapsed state")
	if got.ID != later.ID || string(got.Payload) != `{"n":3}` || !got.CreatedAt.Equal(mt(later.CreatedAt)) || got.ExpiresAt != nil {
		t.Errorf("state put over a lapsed one: %+v", got)
	}
	// UpdateRuntimeState writes only over the version it read.
	cur, err := e.s.GetRuntimeState(e.ctx, b.ID, "conversation", c.ID, "s", later.UpdatedAt)
	must(t, err, "GetRuntimeState")
	stale := cur
	cur.Payload = []byte(`{"n":4}`)
	must(t, e.s.UpdateRuntimeState(e.ctx, cur), "UpdateRuntimeState")
	stale.Payload = []byte(`{"n":5}`)
	wantErr(t, e.s.UpdateRuntimeState(e.ctx, stale), platform.ErrConflict, "UpdateRuntimeState over a newer write")
	cur, _ = e.s.GetRuntimeState(e.ctx, b.ID, "conversation", c.ID, "s", later.UpdatedAt)
	if string(cur.Payload) != `{"n":4}` {
		t.Errorf("payload after a refused stale write: %s", cur.Payload)
	}
	// States go with what they belong to.
	us := st
	us.ID, us.Type, us.ScopeID = platform.NewID("state_"), "user", u.ID
	_, err = e.s.PutRuntimeState(e.ctx, us, false)
	must(t, err, "PutRuntimeState of a user")
	must(t, e.s.DeleteConversation(e.ctx, c.ID), "DeleteConversation")
	must(t, e.s.DeleteChatUser(e.ctx, u.ID), "DeleteChatUser")
	for _, k := range [][2]string{{"conversation", c.ID}, {"user", u.ID}} {
		if _, err := e.s.GetRuntimeState(e.ctx, b.ID, k[0], k[1], "s", now); err != platform.ErrNotFound {
			t.Errorf("%s state after its %s was deleted: %v", k[0], k[0], err)
		}
	}
	wantErr(t, e.s.DeleteRuntimeState(e.ctx, b.ID, "user", u.ID, "s"), platform.ErrNotFound, "DeleteRuntimeState of a gone state")
}

func testRuntimeEvents(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")
	now := e.now()
	mk := func(typ, conv string, at time.Time) platform.RuntimeEvent {
		t.Helper()
		ev := platform.RuntimeEvent{ID: platform.NewID("evt_"), BotID: b.ID, Type: typ, Payload: []byte(`{"a":1}`), ConversationID: conv,
			Status: platform.EventPending, RunAt: at, CreatedAt: e.now()}
		ev.JobID = "job_" + ev.ID[4:]
		subject := platform.JobSubjectBot(b.ID)
		if conv != "" {
			subject = conv
		}
		j := platform.Job{ID: ev.JobID, Kind: platform.JobBotEvent, Subject: subject, Payload: []byte(`{"type":"scheduled"}`), RunAfter: at, CreatedAt: ev.CreatedAt, Owner: b.ID}
		must(t, e.s.CreateRuntimeEvent(e.ctx, ev, j), "CreateRuntimeEvent")
		return ev
	}
	now1 := mk("a", c.ID, now)
	later := mk("b", c.ID, now.Add(time.Hour))
	botwide := mk("a", "", now)
	got, err := e.s.GetRuntimeEvent(e.ctx, b.ID, now1.ID)
	must(t, err, "GetRuntimeEvent")
	same(t, string(got.Payload), `{"a":1}`, "payload")
	if _, err := e.s.GetRuntimeEvent(e.ctx, e.chatBot(t).ID, now1.ID); err != platform.ErrNotFound {
		t.Errorf("another bot's GetRuntimeEvent: %v", err)
	}
	list := func(f store.EventFilter) []string {
		t.Helper()
		f.BotID, f.Limit, f.Now = b.ID, 100, now
		evs, _, err := e.s.ListRuntimeEvents(e.ctx, f)
		must(t, err, "ListRuntimeEvents %+v", f)
		return mapSlice(evs, func(ev platform.RuntimeEvent) string { return ev.ID })
	}
	same(t, list(store.EventFilter{}), []string{botwide.ID, later.ID, now1.ID}, "every event, newest first")
	same(t, list(store.EventFilter{Status: platform.EventScheduled}), []string{later.ID}, "scheduled")
	same(t, list(store.EventFilter{Status: platform.EventPending}), []string{botwide.ID, now1.ID}, "pending (due)")
	same(t, list(store.EventFilter{Type: "a", ConversationID: c.ID}), []string{now1.ID}, "type a of the conversation")

	must(t, e.s.EndRuntimeEvent(e.ctx, now1.JobID, platform.EventFailed, "it broke"), "EndRuntimeEvent")
	must(t, e.s.EndRuntimeEvent(e.ctx, now1.JobID, platform.EventProcessed, ""), "EndRuntimeEvent again")
	got, _ = e.s.GetRuntimeEvent(e.ctx, b.ID, now1.ID)
	if got.Status != platform.EventFailed || got.FailureReason != "it broke" {
		t.Errorf("an ended event: %+v, want the first outcome kept", got)
	}
	// Cancel: only a waiting event, once; its job goes.
	ev, err := e.s.CancelRuntimeEvent(e.ctx, b.ID, later.ID)
	must(t, err, "CancelRuntimeEvent")
	same(t, ev.Status, platform.EventCanceled, "status after cancel")
	wantErr(t, func() error { _, err := e.s.CancelRuntimeEvent(e.ctx, b.ID, later.ID); return err }(), platform.ErrConflict, "cancel twice")
	wantErr(t, func() error { _, err := e.s.CancelRuntimeEvent(e.ctx, b.ID, now1.ID); return err }(), platform.ErrConflict, "cancel an ended event")
	wantErr(t, func() error { _, err := e.s.CancelRuntimeEvent(e.ctx, b.ID, "evt_nothing"); return err }(), platform.ErrNotFound, "cancel a missing event")
	jobs, err := e.s.ClaimJobs(e.ctx, platform.JobBotEvent, "n", now.Add(2*time.Hour), now.Add(3*time.Hour), 10)
	must(t, err, "ClaimJobs")
	same(t, mapSlice(jobs, func(j platform.Job) string { return j.ID }), []string{now1.JobID, botwide.JobID}, "the jobs left to deliver")
	// Purge: ended events due before the bound go; pending ones stay.
	n, err := e.s.PurgeRuntimeEvents(e.ctx, now.Add(2*time.Hour))
	must(t, err, "PurgeRuntimeEvents")
	same(t, n, 2, "events purged (the failed and the canceled one)")
	same(t, list(store.EventFilter{}), []string{botwide.ID}, "events left")
	// A conversation's events go with it.
	mk("c", c.ID, now)
	must(t, e.s.DeleteConversation(e.ctx, c.ID), "DeleteConversation")
	same(t, list(store.EventFilter{}), []string{botwide.ID}, "events after the conversation went")
}

func testWorkflows(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	c := e.conversation(t, b.ID, u.ID, "")
	mk := func(name, status, conv string, tags map[string]string) platform.Workflow {
		t.Helper()
		now := e.now()
		w := platform.Workflow{ID: platform.NewID("wfl_"), BotID: b.ID, Name: name, Status: status, Input: []byte(`{"i":1}`), Output: []byte(`{}`),
			ConversationID: conv, Tags: tags, TimeoutAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		j := platform.Job{ID: "job_" + w.ID, Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(b.ID), Payload: []byte(`{}`), RunAfter: now, CreatedAt: now}
		must(t, e.s.CreateWorkflow(e.ctx, w, j, j), "CreateWorkflow (its job given twice)")
		w.Version = 1
		return w
	}
	w1 := mk("a", platform.WorkflowPending, c.ID, map[string]string{"k": "1"})
	w2 := mk("a", platform.WorkflowInProgress, "", map[string]string{"k": "2"})
	w3 := mk("b", platform.WorkflowListening, "", map[string]string{})
	got, err := e.s.GetWorkflow(e.ctx, b.ID, w1.ID)
	must(t, err, "GetWorkflow")
	if got.Name != "a" || string(got.Input) != `{"i":1}` || got.Tags["k"] != "1" || got.Version != 1 || !got.TimeoutAt.Equal(mt(w1.TimeoutAt)) {
		t.Errorf("GetWorkflow: %+v", got)
	}
	list := func(f store.WorkflowFilter) []string {
		t.Helper()
		f.BotID, f.Limit = b.ID, 100
		ws, _, err := e.s.ListWorkflows(e.ctx, f)
		must(t, err, "ListWorkflows %+v", f)
		return mapSlice(ws, func(w platform.Workflow) string { return w.ID })
	}
	same(t, list(store.WorkflowFilter{}), []string{w3.ID, w2.ID, w1.ID}, "newest first")
	same(t, list(store.WorkflowFilter{Name: "a", Tags: map[string][]string{"k": {"2"}}}), []string{w2.ID}, "name a, k=2")
	same(t, list(store.WorkflowFilter{Statuses: []string{platform.WorkflowPending, platform.WorkflowListening}}), []string{w3.ID, w1.ID}, "two statuses")
	same(t, list(store.WorkflowFilter{ConversationID: c.ID}), []string{w1.ID}, "of the conversation")

	// An update over a stale version is refused.
	now := e.now()
	w1.Status, w1.Output, w1.CompletedAt, w1.UpdatedAt, w1.Tags = platform.WorkflowCompleted, []byte(`{"o":2}`), &now, now, map[string]string{"z": "9"}
	must(t, e.s.UpdateWorkflow(e.ctx, w1), "UpdateWorkflow")
	wantErr(t, e.s.UpdateWorkflow(e.ctx, w1), platform.ErrConflict, "UpdateWorkflow over a stale version")
	got, _ = e.s.GetWorkflow(e.ctx, b.ID, w1.ID)
	if got.Status != platform.WorkflowCompleted || string(got.Output) != `{"o":2}` || got.CompletedAt == nil || got.Version != 2 {
		t.Errorf("after UpdateWorkflow: %+v", got)
	}
	same(t, list(store.WorkflowFilter{Tags: map[string][]string{"z": {"9"}}}), []string{w1.ID}, "by the new tag")
	same(t, list(store.WorkflowFilter{Tags: map[string][]string{"k": {"1"}}}), []string{}, "by the removed tag")

	if _, err := e.s.GetWorkflow(e.ctx, e.chatBot(t).ID, w2.ID); err != platform.ErrNotFound {
		t.Errorf("another bot's GetWorkflow: %v", err)
	}
	must(t, e.s.DeleteWorkflow(e.ctx, b.ID, w2.ID), "DeleteWorkflow")
	wantErr(t, e.s.DeleteWorkflow(e.ctx, b.ID, w2.ID), platform.ErrNotFound, "DeleteWorkflow twice")
	must(t, e.s.DeleteConversation(e.ctx, c.ID), "DeleteConversation")
	same(t, list(store.WorkflowFilter{}), []string{w3.ID}, "workflows left after the conversation went")
}

func testExpireRuntimeStates(t *testing.T, e *env) {
	b := e.chatBot(t)
	now := e.now()
	ms := int64(1000)
	put := func(name string, expires bool) platform.RuntimeState {
		t.Helper()
		st := platform.RuntimeState{ID: platform.NewID("state_"), BotID: b.ID, Type: "bot", ScopeID: b.ID, Name: name,
			Payload: []byte(`{}`), CreatedAt: now, UpdatedAt: now}
		if expires {
			at := now.Add(time.Second)
			st.Expiry, st.ExpiresAt = &ms, &at
		}
		got, err := e.s.PutRuntimeState(e.ctx, st, false)
		must(t, err, "PutRuntimeState")
		return got
	}
	a, _ := put("a", true), put("b", false)
	later := now.Add(2 * time.Second)
	lapsed, err := e.s.LapsedRuntimeStates(e.ctx, later, 10)
	must(t, err, "LapsedRuntimeStates")
	same(t, mapSlice(lapsed, func(s platform.RuntimeState) string { return s.Name }), []string{"a"}, "lapsed states")
	if got, _ := e.s.LapsedRuntimeStates(e.ctx, now, 10); len(got) != 0 {
		t.Errorf("lapsed before their time: %v", got)
	}
	j := platform.Job{ID: "job_exp_" + a.ID, Kind: platform.JobBotEvent, Subject: "s", Payload: []byte(`{}`), RunAfter: later, CreatedAt: later}
	stale := a
	stale.Version++
	ok, err := e.s.ExpireRuntimeState(e.ctx, stale, later, j)
	must(t, err, "ExpireRuntimeState of another version")
	if ok {
		t.Fatal("ExpireRuntimeState expired a state written since it was read")
	}
	ok, err = e.s.ExpireRuntimeState(e.ctx, a, later, j)
	must(t, err, "ExpireRuntimeState")
	ok2, err := e.s.ExpireRuntimeState(e.ctx, a, later, j)
	must(t, err, "ExpireRuntimeState again")
	if !ok || ok2 {
		t.Errorf("ExpireRuntimeState: %v then %v, want true then false", ok, ok2)
	}
	jobs, err := e.s.ClaimJobs(e.ctx, platform.JobBotEvent, "n", later, later.Add(time.Minute), 10)
	must(t, err, "ClaimJobs")
	same(t, mapSlice(jobs, func(j platform.Job) string { return j.ID }), []string{j.ID}, "the state_expired job, queued once")
}

func testBotAnalytics(t *testing.T, e *env) {
	b := e.chatBot(t)
	dayStart := time.Date(2025, 3, 14, 0, 0, 0, 0, time.UTC)
	d := dayStart.UnixMicro() / (24 * time.Hour).Microseconds()
	at := dayStart.Add(10 * time.Hour)
	old := e.newChatUser(b.ID, "")
	old.CreatedAt, old.UpdatedAt = dayStart.Add(-48*time.Hour), dayStart.Add(-48*time.Hour)
	must(t, e.s.CreateChatUser(e.ctx, old), "CreateChatUser (two days before)")
	fresh := e.newChatUser(b.ID, "")
	fresh.CreatedAt, fresh.UpdatedAt = at, at
	must(t, e.s.CreateChatUser(e.ctx, fresh), "CreateChatUser (that day)")
	c := e.newConversation(b.ID, old.ID, "")
	c.CreatedAt = at
	must(t, e.s.CreateConversation(e.ctx, c), "CreateConversation")
	for i, m := range []struct {
		user string
		bot  bool
	}{{old.ID, false}, {fresh.ID, false}, {b.ID, true}} {
		msg := e.newMessage(c.ID, m.user, m.bot)
		msg.CreatedAt = at.Add(time.Duration(i) * time.Minute)
		must(t, errOf(e.s.CreateMessage(e.ctx, msg)), "CreateMessage")
	}
	must(t, e.s.TrackAnalytics(e.ctx, b.ID, "signup", 2, at), "TrackAnalytics")
	must(t, e.s.TrackAnalytics(e.ctx, b.ID, "signup", 3, at.Add(time.Hour)), "TrackAnalytics again")
	must(t, e.s.TrackAnalytics(e.ctx, b.ID, "signup", 7, at.Add(24*time.Hour)), "TrackAnalytics the next day")
	w, _ := e.s.GetBotWorkspace(e.ctx, b.ID)
	for _, u := range []platform.AIUsage{
		{InputTokens: 10, OutputTokens: 100, Cost: 2000, Latency: time.Second},
		{InputTokens: 30, OutputTokens: 300, Cost: 4000, Latency: 3 * time.Second},
		{Latency: 500 * time.Millisecond, Failed: true},
	} {
		u.ID, u.WorkspaceID, u.BotID, u.Purpose, u.Model, u.CreatedAt = platform.NewID("aiu_"), w, b.ID, "summarization", "m", at
		must(t, e.s.RecordAIUsage(e.ctx, u), "RecordAIUsage")
	}
	got, err := e.s.BotAnalytics(e.ctx, b.ID, d, d+1)
	must(t, err, "BotAnalytics")
	a := got[d]
	if a == nil || len(got) != 1 {
		t.Fatalf("BotAnalytics: %v, want the one day", got)
	}
	same(t, []int64{a.Messages, a.UserMessages, a.BotMessages, a.NewUsers, a.ReturningUsers, a.Sessions}, []int64{3, 2, 1, 1, 1, 1},
		"messages, user and bot messages, new and returning users, sessions")
	same(t, a.CustomEvents, map[string]int64{"signup": 5}, "that day's tracked counts")
	l := a.LLM
	same(t, []int64{l.Calls, l.Errors, l.InputTokens, l.OutputTokens}, []int64{3, 1, 40, 400}, "model calls, errors, tokens")
	same(t, []float64{l.Latency.Sum, l.Latency.Min, l.Latency.Max}, []float64{4500, 500, 3000}, "latency sum, min, max (ms)")
	same(t, []float64{l.Cost.Sum, l.Cost.Max}, []float64{6000, 4000}, "cost sum and max")
	same(t, []float64{float64(l.TokensPerSecond.N), l.TokensPerSecond.Sum, l.TokensPerSecond.Min, l.TokensPerSecond.Max}, []float64{2, 200, 100, 100}, "tokens per second")
	spent, _, err := e.s.AISpend(e.ctx, w, dayStart)
	must(t, err, "AISpend")
	same(t, spent, int64(6000), "AI Spend, the failed call costing nothing")
}

// testInTx: the steps of InTx commit together or not at all, see each
// other's writes, and a failed step is undone alone.
func testInTx(t *testing.T, e *env) {
	b := e.chatBot(t)
	u := e.chatUser(t, b.ID, "")
	boom := errors.New("boom")
	var c1, c2 platform.Conversation
	err := e.s.InTx(e.ctx, func(ctx context.Context) error {
		c1 = e.newConversation(b.ID, u.ID, "")
		must(t, e.s.CreateConversation(ctx, c1), "CreateConversation in the transaction")
		m := e.newMessage(c1.ID, u.ID, false)
		_, err := e.s.CreateMessage(ctx, m)
		must(t, err, "CreateMessage in the transaction")
		if n, err := e.s.CountMessages(ctx, c1.ID); err != nil || n != 1 {
			t.Errorf("a read in the transaction: %d messages, %v; want its own write", n, err)
		}
		if _, err := e.s.CreateMessage(ctx, m); !errors.Is(err, platform.ErrConflict) {
			t.Errorf("a failing step: %v, want a conflict", err)
		}
		// The failed step is undone alone: the transaction goes on.
		return e.s.InTx(ctx, func(ctx context.Context) error {
			c2 = e.newConversation(b.ID, u.ID, "")
			return e.s.CreateConversation(ctx, c2)
		})
	})
	must(t, err, "InTx")
	for _, c := range []platform.Conversation{c1, c2} {
		if _, err := e.s.GetConversationByID(e.ctx, c.ID); err != nil {
			t.Errorf("conversation %s after the commit: %v", c.ID, err)
		}
	}
	if n, err := e.s.CountMessages(e.ctx, c1.ID); err != nil || n != 1 {
		t.Errorf("after the commit: %d messages, %v; want 1", n, err)
	}

	var c3 platform.Conversation
	err = e.s.InTx(e.ctx, func(ctx context.Context) error {
		c3 = e.newConversation(b.ID, u.ID, "")
		must(t, e.s.CreateConversation(ctx, c3), "CreateConversation in the transaction")
		_, err := e.s.CreateMessage(ctx, e.newMessage(c3.ID, u.ID, false))
		must(t, err, "CreateMessage in the transaction")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx whose function failed: %v, want its error", err)
	}
	if _, err := e.s.GetConversationByID(e.ctx, c3.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Errorf("a conversation of a rolled-back transaction: %v, want not found", err)
	}
	if n, err := e.s.CountMessages(e.ctx, c1.ID); err != nil || n != 1 {
		t.Errorf("after a rolled-back transaction: %d messages, %v; want 1", n, err)
	}
}
