package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// personFixture is one chat user's data and another's, side by side, in
// each other's conversations.
type personFixture struct {
	b, other           platform.Bot
	a, bb, twin        platform.ChatUser // twin: a user of other with a's fid
	ownA, ownB         platform.Conversation
	aFile, aOwned      platform.File // tagged with a's id; created as a
	bFile              platform.File
	aMsgInB, bMsgInA   platform.Message
	aWorkflow          platform.Workflow
	aEvent             platform.RuntimeEvent
	twinLog, bLog, aTx platform.LogEntry
}

func (e *env) personFixture(t *testing.T) personFixture {
	t.Helper()
	var f personFixture
	f.b = e.chatBot(t)
	f.other = e.bot(t, f.b.WorkspaceID, "other")
	f.a = e.chatUser(t, f.b.ID, "alice-person-0001")
	f.bb = e.chatUser(t, f.b.ID, "bob-person-0002")
	f.twin = e.chatUser(t, f.other.ID, f.a.FID)
	f.ownA = e.conversation(t, f.b.ID, f.a.ID, "")
	f.ownB = e.conversation(t, f.b.ID, f.bb.ID, "")
	must(t, e.s.AddParticipant(e.ctx, f.ownA.ID, f.bb.ID, 1), "AddParticipant")
	must(t, e.s.AddParticipant(e.ctx, f.ownB.ID, f.a.ID, 1), "AddParticipant")
	e.message(t, f.ownA.ID, f.a.ID, false)
	e.message(t, f.ownA.ID, f.a.ID, true)
	f.bMsgInA = e.message(t, f.ownA.ID, f.bb.ID, false)
	f.aMsgInB = e.message(t, f.ownB.ID, f.a.ID, false)
	e.message(t, f.ownB.ID, f.bb.ID, false)
	must(t, errOf(e.s.CreateChatEvent(e.ctx, e.newChatEvent(f.ownB.ID, f.a.ID, false))), "CreateChatEvent")
	must(t, errOf(e.s.CreateChatEvent(e.ctx, e.newChatEvent(f.ownB.ID, f.bb.ID, false))), "CreateChatEvent")

	now := e.now()
	for _, st := range []platform.RuntimeState{
		{Type: "user", ScopeID: f.a.ID}, {Type: "conversation", ScopeID: f.ownA.ID},
		{Type: "user", ScopeID: f.bb.ID}, {Type: "conversation", ScopeID: f.ownB.ID},
	} {
		st.ID, st.BotID, st.Name, st.Payload, st.CreatedAt, st.UpdatedAt = platform.NewID("state_"), f.b.ID, "prefs", json.RawMessage(`{"x":1}`), now, now
		_, err := e.s.PutRuntimeState(e.ctx, st, false)
		must(t, err, "PutRuntimeState %s", st.Type)
	}
	must(t, e.s.FinishJob(e.ctx, e.jobs(t, f.ownB.ID)[0].ID, false, []platform.BotState{
		{BotID: f.b.ID, Scope: "user", ScopeID: f.a.ID, Value: json.RawMessage(`{"seen":1}`)},
		{BotID: f.b.ID, Scope: "user", ScopeID: f.bb.ID, Value: json.RawMessage(`{"seen":2}`)},
	}, []platform.LogEntry{}, now), "FinishJob")

	f.aWorkflow = platform.Workflow{ID: platform.NewID("wfl_"), BotID: f.b.ID, Name: "w", Status: platform.WorkflowPending, Input: json.RawMessage(`{}`),
		Output: json.RawMessage(`{}`), UserID: f.a.ID, Tags: map[string]string{}, TimeoutAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
	must(t, e.s.CreateWorkflow(e.ctx, f.aWorkflow), "CreateWorkflow")
	f.aEvent = platform.RuntimeEvent{ID: platform.NewID("evt_"), BotID: f.b.ID, Type: "later", Payload: json.RawMessage(`{}`), UserID: f.a.ID,
		JobID: platform.NewID("job_"), Status: platform.EventPending, RunAt: now.Add(time.Hour), CreatedAt: now}
	payload, _ := json.Marshal(platform.BotEventJob{Type: platform.BotEventScheduled, BotID: f.b.ID, UserID: f.a.ID, EventID: f.aEvent.ID})
	must(t, e.s.CreateRuntimeEvent(e.ctx, f.aEvent, platform.Job{ID: f.aEvent.JobID, Kind: platform.JobBotEvent, Subject: platform.JobSubjectBot(f.b.ID),
		Payload: payload, RunAfter: f.aEvent.RunAt, CreatedAt: now}), "CreateRuntimeEvent")

	log := func(botID, userID, convID, msg string) platform.LogEntry {
		return platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: botID, Timestamp: e.now(), Level: "info", Message: msg, UserID: userID, ConversationID: convID}
	}
	f.bLog, f.twinLog, f.aTx = log(f.b.ID, f.bb.FID, f.ownB.FID, "bob's line"), log(f.other.ID, f.a.FID, "", "the twin's line"), log(f.b.ID, "", "", "told "+f.a.FID)
	must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{log(f.b.ID, f.a.FID, f.ownB.FID, "a's line"), log(f.b.ID, f.bb.FID, f.ownA.FID, "bob in a's conversation"),
		f.bLog, f.twinLog, f.aTx}), "AppendLogs")

	f.aFile = e.newFile(f.b, "", "a.txt")
	f.aFile.Tags = map[string]string{"userId": f.a.FID}
	f.aFile = e.putFile(t, f.aFile)
	f.aFile = e.complete(t, f.aFile, e.upload(f.aFile, 10))
	f.aOwned = e.newFile(f.b, "", "a-owned.txt")
	f.aOwned.Owner = platform.FileOwner{Type: "user", ID: f.a.FID}
	f.aOwned = e.putFile(t, f.aOwned)
	f.bFile = e.newFile(f.b, "", "b.txt")
	f.bFile.Tags = map[string]string{"userId": f.bb.FID}
	f.bFile = e.putFile(t, f.bFile)
	return f
}

func (f personFixture) person(u platform.ChatUser) store.Person {
	return store.Person{BotID: u.BotID, UserID: u.ID, Aliases: []string{u.ID, u.FID}, Mentions: []string{u.ID, u.FID}, FileTag: "userId"}
}

func counts(d store.PersonData) string {
	return fmt.Sprintf("owned %d joined %d messages %d chat events %d states %d code states %d workflows %d events %d files %d logs %d",
		len(d.Owned), len(d.Joined), len(d.Messages), len(d.ChatEvents), len(d.States), len(d.CodeStates), len(d.Workflows), len(d.Events), len(d.Files), len(d.Logs))
}

func testPersonData(t *testing.T, e *env) {
	f := e.personFixture(t)
	aBefore, err := e.s.PersonData(e.ctx, f.person(f.a))
	must(t, err, "PersonData of a")
	// Owned: a's conversation whole (3 messages of a, the bot and b), and
	// elsewhere a's own message and event; the log lines of a, of a's
	// conversation (b's there) and the one naming a.
	want := "owned 1 joined 1 messages 4 chat events 1 states 2 code states 1 workflows 1 events 1 files 2 logs 3"
	if got := counts(aBefore); got != want {
		t.Fatalf("PersonData of a: %s, want %s", got, want)
	}
	bBefore, err := e.s.PersonData(e.ctx, f.person(f.bb))
	must(t, err, "PersonData of b")

	got, blobs, err := e.s.ErasePerson(e.ctx, f.person(f.a))
	must(t, err, "ErasePerson")
	same(t, counts(got), counts(aBefore), "what ErasePerson deleted")
	same(t, blobs, []string{f.aFile.BlobKey}, "blob keys of the erased files")

	_, err = e.s.GetChatUser(e.ctx, f.b.ID, f.a.ID)
	wantErr(t, err, platform.ErrNotFound, "the erased user")
	_, err = e.s.PersonData(e.ctx, f.person(f.a))
	wantErr(t, err, platform.ErrNotFound, "PersonData of the erased user")
	_, err = e.s.GetConversationByID(e.ctx, f.ownA.ID)
	wantErr(t, err, platform.ErrNotFound, "the erased user's conversation")
	_, err = e.s.GetMessage(e.ctx, f.aMsgInB.ID)
	wantErr(t, err, platform.ErrNotFound, "the erased user's message in another's conversation")
	_, err = e.s.GetMessage(e.ctx, f.bMsgInA.ID)
	wantErr(t, err, platform.ErrNotFound, "another's message in the erased user's conversation")
	e.wantNoFile(t, f.aFile.ID, "the file tagged with the erased user's id")
	e.wantNoFile(t, f.aOwned.ID, "the file the erased user created")
	e.wantNoJobs(t, platform.JobSubjectBot(f.b.ID), "the erased user's scheduled event")
	_, err = e.s.GetWorkflow(e.ctx, f.b.ID, f.aWorkflow.ID)
	wantErr(t, err, platform.ErrNotFound, "the erased user's workflow")
	e.wantUsage(t, f.b.WorkspaceID, 0, 0, "storage after the erase")

	// b keeps all but what was in a's conversation (b's message there, the
	// line of it) and a's part of b's conversation.
	bAfter, err := e.s.PersonData(e.ctx, f.person(f.bb))
	must(t, err, "PersonData of b after")
	if got, want := counts(bAfter), "owned 1 joined 0 messages 1 chat events 1 states 2 code states 1 workflows 0 events 0 files 1 logs 1"; got != want {
		t.Fatalf("PersonData of b after a's erase: %s, want %s (before: %s)", got, want, counts(bBefore))
	}
	// The other bot's user with a's id, and the line of it, are not a's.
	e.getChatUser(t, f.other.ID, f.twin.FID)
	logs, _, err := e.s.ListLogs(e.ctx, store.LogFilter{Page: store.Page{Limit: 10}, BotID: f.other.ID, Start: t0, End: e.now()})
	must(t, err, "ListLogs")
	same(t, logIDs(logs), []string{f.twinLog.ID}, "the other bot's log")
	logs, _, err = e.s.ListLogs(e.ctx, store.LogFilter{Page: store.Page{Limit: 10}, BotID: f.b.ID, Start: t0, End: e.now()})
	must(t, err, "ListLogs")
	same(t, logIDs(logs), []string{f.bLog.ID}, "the bot's log after the erase")
}
