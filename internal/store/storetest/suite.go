package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Run is the store conformance suite: every store.Store implementation must
// pass it. open returns a fresh, migrated, empty store that is closed when
// the test ends; it is called once per subtest (and once up front, so that a
// backend that is not available is skipped once, with its reason).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	open(t) // a backend that cannot run skips here, with its reason

	tests := []struct {
		name string
		f    func(t *testing.T, e *env)
	}{
		{"PingAndClose", testPingAndClose},
		{"Migrate", testMigrate},
		{"Empty", testEmpty},
		{"Accounts", testAccounts},
		{"CreateOwner", testCreateOwner},
		{"PATs", testPATs},
		{"GetCredential", testGetCredential},
		{"Workspaces", testWorkspaces},
		{"PublicWorkspaces", testPublicWorkspaces},
		{"ListWorkspaces", testListWorkspaces},
		{"UpdateWorkspace", testUpdateWorkspace},
		{"DeleteWorkspace", testDeleteWorkspace},
		{"Preferences", testPreferences},
		{"Members", testMembers},
		{"ListMembers", testListMembers},
		{"Bots", testBots},
		{"UpdateBot", testUpdateBot},
		{"DeleteBot", testDeleteBot},
		{"GetIntegrationByWebhook", testGetIntegrationByWebhook},
		{"Integrations", testIntegrations},
		{"Interfaces", testInterfaces},
		{"Plugins", testPlugins},
		{"ListBotsFilters", testListBotsFilters},
		{"ListBotsSort", testListBotsSort},
		{"ListBotsKeysetUnderWrites", testListBotsKeysetUnderWrites},
		{"InvalidNextToken", testInvalidNextToken},
		{"BotKeys", testBotKeys},
		{"AppendLogs", testAppendLogs},
		{"IntegrationLogs", testIntegrationLogs},
		{"ListLogsFilters", testListLogsFilters},
		{"ListLogsPagination", testListLogsPagination},
		{"AuditRecords", testAuditRecords},
		{"AuditPrune", testAuditPrune},
		{"AuditWithChange", testAuditWithChange},
		{"Files", testFiles},
		{"PutFileReplace", testPutFileReplace},
		{"CompleteUpload", testCompleteUpload},
		{"CompleteUploadConcurrent", testCompleteUploadConcurrent},
		{"FileUploadRaces", testFileUploadRaces},
		{"FailUpload", testFailUpload},
		{"UpdateFile", testUpdateFile},
		{"DeleteFile", testDeleteFile},
		{"DeleteBotWithFiles", testDeleteBotWithFiles},
		{"ConcurrentWrites", testConcurrentWrites},
		{"ExpiredFiles", testExpiredFiles},
		{"ListFilesVisibility", testListFilesVisibility},
		{"ListFilesFilters", testListFilesFilters},
		{"ListFilesSort", testListFilesSort},
		{"ListFilesKeysetUnderWrites", testListFilesKeysetUnderWrites},
		{"ListFilesInvalidToken", testListFilesInvalidToken},
		{"FileTags", testFileTags},
		{"Storage", testStorage},
		{"ChatUsers", testChatUsers},
		{"ChatConversations", testChatConversations},
		{"ListConversations", testListConversations},
		{"ChatParticipants", testChatParticipants},
		{"ChatMessages", testChatMessages},
		{"ListMessages", testListMessages},
		{"LastMessages", testLastMessages},
		{"ChatEvents", testChatEvents},
		{"DeleteBotWithChat", testDeleteBotWithChat},
		{"RuntimeChatTags", testRuntimeChatTags},
		{"ListChatUsersFilters", testListChatUsersFilters},
		{"ListBotConversations", testListBotConversations},
		{"MessageCounts", testMessageCounts},
		{"InTx", testInTx},
		{"FindMessagesAndTagValues", testFindMessagesAndTagValues},
		{"RuntimeStates", testRuntimeStates},
		{"RuntimeEvents", testRuntimeEvents},
		{"Workflows", testWorkflows},
		{"ExpireRuntimeStates", testExpireRuntimeStates},
		{"BotAnalytics", testBotAnalytics},
		{"PersonData", testPersonData},
		{"Tables", testTables},
		{"EnqueueJob", testEnqueueJob},
		{"ClaimJobs", testClaimJobs},
		{"QueuedWakes", testQueuedWakes},
		{"ClaimJobsLimit", testClaimJobsLimit},
		{"ClaimJobsConcurrent", testClaimJobsConcurrent},
		{"ClaimJobsRunningHoldsSubject", testClaimJobsRunningHoldsSubject},
		{"JobHeadUnderConcurrentWrites", testJobHeadUnderConcurrentWrites},
		{"FinishJobClaimNext", testFinishJobClaimNext},
		{"FinishJob", testFinishJob},
		{"KeptJobs", testKeptJobs},
		{"RetryJob", testRetryJob},
		{"RetryJobKeepsOrder", testRetryJobKeepsOrder},
		{"ReleaseJobs", testReleaseJobs},
		{"ReleaseJobsOfNode", testReleaseJobsOfNode},
		{"ExtendLease", testExtendLease},
		{"NextJobAt", testNextJobAt},
		{"JobQueues", testJobQueues},
		{"BotStates", testBotStates},
		{"BotVersion", testBotVersion},
		{"BotVersions", testBotVersions},
		{"RecurringBots", testRecurringBots},
		{"GetConversationByID", testGetConversationByID},
		{"RuntimeDeletes", testRuntimeDeletes},
		{"NoCodeNoBotEvents", testNoCodeNoBotEvents},
		{"AIUsage", testAIUsage},
		{"Passages", testPassages},
		{"PassagesMany", testPassagesMany},
		{"PassageHeadings", testPassageHeadings},
		{"KnowledgeBases", testKnowledgeBases},
		{"Secret", testSecret},
		{"ManyQueryShapes", testManyQueryShapes},
		{"ConcurrentUse", testConcurrentUse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f(t, &env{
				s:     open(t),
				ctx:   t.Context(),
				clock: platform.NewManualClock(t0),
				open:  open,
			})
		})
	}
}

// t0 has nanoseconds below the microsecond on purpose: stores keep Unix
// microseconds, so every comparison truncates.
var t0 = time.Date(2025, time.March, 14, 15, 9, 26, 535897932, time.UTC)

// env is one subtest's fresh store with a manual clock and fixture helpers.
// Helpers take the *testing.T of the (sub)test calling them.
type env struct {
	s     store.Store
	ctx   context.Context
	clock *platform.ManualClock
	open  func(t *testing.T) store.Store
	seq   int
}

// now advances the clock by a little more than a second and returns it, so
// fixtures get distinct, increasing times.
func (e *env) now() time.Time {
	e.clock.Advance(1500*time.Millisecond + 7*time.Nanosecond)
	return e.clock.Now()
}

func (e *env) next() int { e.seq++; return e.seq }

func (e *env) newAccount(name string) platform.Account {
	n := e.next()
	return platform.Account{
		ID:          platform.NewID(platform.PrefixAccount),
		Email:       fmt.Sprintf("%s.%d@example.com", name, n),
		DisplayName: fmt.Sprintf("%s %d", name, n),
		CreatedAt:   e.now(),
	}
}

func (e *env) account(t *testing.T, name string) platform.Account {
	t.Helper()
	a := e.newAccount(name)
	must(t, e.s.CreateAccount(e.ctx, a), "CreateAccount %s", a.Email)
	return a
}

// newWorkspace returns an unsaved workspace of owner and its owner membership
// (with the account's email and display name, as reads return it).
func (e *env) newWorkspace(owner platform.Account) (platform.Workspace, platform.Member) {
	now := e.now()
	w := platform.Workspace{
		ID: platform.NewID(platform.PrefixWorkspace), Name: fmt.Sprintf("Workspace %d", e.next()), OwnerID: owner.ID,
		Plan: "community", BillingVersion: "v4", SpendingLimit: 100, CreatedAt: now, UpdatedAt: now,
	}
	m := platform.Member{
		ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: owner.ID,
		Email: owner.Email, DisplayName: owner.DisplayName, Role: platform.RoleOwner, CreatedAt: now,
	}
	return w, m
}

func (e *env) workspace(t *testing.T, owner platform.Account) (platform.Workspace, platform.Member) {
	t.Helper()
	w, m := e.newWorkspace(owner)
	must(t, e.s.CreateWorkspace(e.ctx, w, m), "CreateWorkspace")
	return w, m
}

func (e *env) member(t *testing.T, workspaceID string, a platform.Account, role platform.Role) platform.Member {
	t.Helper()
	m := platform.Member{
		ID: platform.NewID(platform.PrefixMember), WorkspaceID: workspaceID, AccountID: a.ID,
		Email: a.Email, DisplayName: a.DisplayName, Role: role, CreatedAt: e.now(),
	}
	must(t, e.s.CreateMember(e.ctx, m), "CreateMember")
	return m
}

// newToken returns an unsaved PAT or bot key with a fresh SHA-256 hash.
func (e *env) newToken(prefix, ownerID, note string) platform.Token {
	sum := sha256.Sum256([]byte(platform.RandomToken(24)))
	return platform.Token{ID: platform.NewID(prefix), OwnerID: ownerID, Note: note, Hash: sum[:], CreatedAt: e.now()}
}

// newIntegration returns an integration whose id and name differ, so that a
// filter on the wrong column shows.
func (e *env) newIntegration(botID, name string) platform.BotIntegration {
	now := e.now()
	return platform.BotIntegration{
		BotID: botID, IntegrationID: "intg_" + name, Name: name, Version: "1.0.0",
		WebhookID: platform.NewID("wh_"), Enabled: true, Status: platform.IntegrationRegistered,
		Configuration: map[string]any{"encryptionKey": platform.RandomToken(8)}, DisabledChannels: []string{},
		CreatedAt: now, UpdatedAt: now,
	}
}

// newBot returns an unsaved bot with the chat integration.
func (e *env) newBot(workspaceID, name string) platform.Bot {
	now := e.now()
	id := platform.NewID(platform.PrefixBot)
	return platform.Bot{
		ID: id, WorkspaceID: workspaceID, Name: name, Type: "studio", Status: "active",
		SigningSecret: "secret-" + name, CreatedBy: "acc_creator", Tags: map[string]string{}, Code: "bot.on.message(() => {})",
		CreatedAt: now, UpdatedAt: now, Integrations: []platform.BotIntegration{e.newIntegration(id, "chat")},
	}
}

func (e *env) bot(t *testing.T, workspaceID, name string) platform.Bot {
	t.Helper()
	b := e.newBot(workspaceID, name)
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot %s", name)
	return b
}

// ---- assertions ----

func must(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", fmt.Sprintf(format, args...), err)
	}
}

// errOf is the error of a call that also says something else.
func errOf[T any](_ T, err error) error { return err }

func wantErr(t *testing.T, err, target error, format string, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want errors.Is(err, %v)", fmt.Sprintf(format, args...), err, target)
	}
}

func wantInvalidQuery(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	pe, ok := platform.AsError(err)
	if !ok || pe.Type != platform.TypeInvalidQuery {
		t.Fatalf("%s: got error %v, want a *platform.Error of type %s", fmt.Sprintf(format, args...), err, platform.TypeInvalidQuery)
	}
}

// same fails unless got and want are deeply equal; values are shown as JSON.
func same(t *testing.T, got, want any, format string, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got: %s\nwant: %s", fmt.Sprintf(format, args...), show(got), show(want))
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// mt is what a store keeps of a time: Unix microseconds, in UTC.
func mt(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

func normAccount(a platform.Account) platform.Account { a.CreatedAt = mt(a.CreatedAt); return a }

func normToken(t platform.Token) platform.Token { t.CreatedAt = mt(t.CreatedAt); return t }

func normMember(m platform.Member) platform.Member { m.CreatedAt = mt(m.CreatedAt); return m }

func normWorkspace(w platform.Workspace) platform.Workspace {
	w.CreatedAt, w.UpdatedAt = mt(w.CreatedAt), mt(w.UpdatedAt)
	return w
}

func normIntegration(in platform.BotIntegration) platform.BotIntegration {
	in.CreatedAt, in.UpdatedAt = mt(in.CreatedAt), mt(in.UpdatedAt)
	return in
}

func normBot(b platform.Bot) platform.Bot {
	b.CreatedAt, b.UpdatedAt = mt(b.CreatedAt), mt(b.UpdatedAt)
	if b.DeployedAt != nil {
		d := mt(*b.DeployedAt)
		b.DeployedAt = &d
	}
	if b.Integrations != nil {
		ins := make([]platform.BotIntegration, len(b.Integrations))
		for i, in := range b.Integrations {
			ins[i] = normIntegration(in)
		}
		b.Integrations = ins
	}
	return b
}

func normLog(l platform.LogEntry) platform.LogEntry { l.Timestamp = mt(l.Timestamp); return l }

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func tokenIDs(ts []platform.Token) []string {
	return mapSlice(ts, func(t platform.Token) string { return t.ID })
}
func botIDs(bs []platform.Bot) []string {
	return mapSlice(bs, func(b platform.Bot) string { return b.ID })
}
func logIDs(ls []platform.LogEntry) []string {
	return mapSlice(ls, func(l platform.LogEntry) string { return l.ID })
}
func memberIDs(ms []platform.Member) []string {
	return mapSlice(ms, func(m platform.Member) string { return m.ID })
}
func workspaceIDs(ws []platform.Workspace) []string {
	return mapSlice(ws, func(w platform.Workspace) string { return w.ID })
}

func sortByID[T any](rows []T, id func(T) string) {
	sort.Slice(rows, func(i, j int) bool { return id(rows[i]) < id(rows[j]) })
}

func sorted(ids ...string) []string {
	out := append([]string{}, ids...)
	sort.Strings(out)
	return out
}

// collect pages through a keyset listing with the given limit and returns
// every row. It checks the paging contract: no page exceeds the limit, a page
// followed by a nextToken is full, and the last page is never an empty page
// reached through a nextToken.
func collect[T any](t *testing.T, what string, limit int, list func(token string) ([]T, string, error)) []T {
	t.Helper()
	all := []T{}
	token := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatalf("%s: more than 1000 pages; the nextToken does not advance", what)
		}
		page, next, err := list(token)
		must(t, err, "%s: page %d", what, i+1)
		if len(page) > limit {
			t.Fatalf("%s: page %d has %d rows, limit %d", what, i+1, len(page), limit)
		}
		if next != "" && len(page) != limit {
			t.Fatalf("%s: page %d has %d rows and a nextToken, want a full page of %d", what, i+1, len(page), limit)
		}
		if next == "" && len(page) == 0 && i > 0 {
			t.Fatalf("%s: page %d is empty but the previous page gave a nextToken", what, i+1)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		token = next
	}
}

// ---- tests: connection, migrations, accounts, owner, PATs ----

func testPingAndClose(t *testing.T, e *env) {
	must(t, e.s.Ping(e.ctx), "Ping")
	s := e.open(t)
	must(t, s.Ping(e.ctx), "Ping before Close")
	must(t, s.Close(), "Close")
	if err := s.Ping(e.ctx); err == nil {
		t.Fatalf("Ping after Close: got nil error, want one")
	}
}

// migrator is what *sqlstore.Store offers beyond store.Store.
type migrator interface {
	Migrate(ctx context.Context) ([]string, error)
}

func testMigrate(t *testing.T, e *env) {
	m, ok := e.s.(migrator)
	if !ok {
		t.Skipf("%T has no Migrate method", e.s)
	}
	a := e.account(t, "before")
	for i := 1; i <= 2; i++ {
		applied, err := m.Migrate(e.ctx)
		must(t, err, "Migrate run %d on a migrated store", i)
		if len(applied) != 0 {
			t.Fatalf("Migrate run %d on a migrated store applied %v, want nothing", i, applied)
		}
	}
	got, err := e.s.GetAccount(e.ctx, a.ID)
	must(t, err, "GetAccount after Migrate")
	same(t, got, normAccount(a), "account after Migrate")
}

func testEmpty(t *testing.T, e *env) {
	empty, err := e.s.Empty(e.ctx)
	must(t, err, "Empty on a new store")
	if !empty {
		t.Fatalf("Empty on a new store = false, want true")
	}
	e.account(t, "first")
	empty, err = e.s.Empty(e.ctx)
	must(t, err, "Empty after CreateAccount")
	if empty {
		t.Fatalf("Empty after CreateAccount = true, want false")
	}
}

func testAccounts(t *testing.T, e *env) {
	a := e.account(t, "alice")
	b := e.account(t, "bob")
	b.DisplayName = "" // an account may have no display name
	b.ID, b.Email = platform.NewID(platform.PrefixAccount), "nameless@example.com"
	must(t, e.s.CreateAccount(e.ctx, b), "CreateAccount without display name")

	for _, want := range []platform.Account{a, b} {
		got, err := e.s.GetAccount(e.ctx, want.ID)
		must(t, err, "GetAccount %s", want.ID)
		same(t, got, normAccount(want), "GetAccount %s", want.ID)
		got, err = e.s.GetAccountByEmail(e.ctx, want.Email)
		must(t, err, "GetAccountByEmail %s", want.Email)
		same(t, got, normAccount(want), "GetAccountByEmail %s", want.Email)
	}

	dupEmail := e.newAccount("alice2")
	dupEmail.Email = a.Email
	wantErr(t, e.s.CreateAccount(e.ctx, dupEmail), platform.ErrConflict, "CreateAccount with a taken email")
	_, err := e.s.GetAccount(e.ctx, dupEmail.ID)
	wantErr(t, err, platform.ErrNotFound, "GetAccount of the rejected duplicate")

	dupID := e.newAccount("carol")
	dupID.ID = a.ID
	wantErr(t, e.s.CreateAccount(e.ctx, dupID), platform.ErrConflict, "CreateAccount with a taken id")
	got, err := e.s.GetAccount(e.ctx, a.ID)
	must(t, err, "GetAccount after rejected duplicate id")
	same(t, got, normAccount(a), "account after rejected duplicate id")

	_, err = e.s.GetAccount(e.ctx, "acc_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetAccount unknown id")
	_, err = e.s.GetAccountByEmail(e.ctx, "nobody@example.com")
	wantErr(t, err, platform.ErrNotFound, "GetAccountByEmail unknown email")

	// UpdateAccount sets the name and picture only; a PAT's credential reads them.
	upd := a
	upd.DisplayName, upd.ProfilePicture = "Alice L.", "https://example.com/alice.png"
	upd.Email, upd.CreatedAt = "changed@example.com", upd.CreatedAt.Add(time.Hour)
	must(t, e.s.UpdateAccount(e.ctx, upd), "UpdateAccount")
	want := a
	want.DisplayName, want.ProfilePicture = upd.DisplayName, upd.ProfilePicture
	got, err = e.s.GetAccount(e.ctx, a.ID)
	must(t, err, "GetAccount after UpdateAccount")
	same(t, got, normAccount(want), "account after UpdateAccount")
	tok := platform.Token{ID: platform.NewID(platform.PrefixPAT), OwnerID: a.ID, Note: "n", Hash: []byte("update-account-hash"), CreatedAt: e.now()}
	must(t, e.s.CreatePAT(e.ctx, tok), "CreatePAT")
	_, cred, _, err := e.s.GetCredential(e.ctx, tok.Hash, "")
	must(t, err, "GetCredential")
	same(t, cred, normAccount(want), "the credential's account after UpdateAccount")
	wantErr(t, e.s.UpdateAccount(e.ctx, platform.Account{ID: "acc_unknown", DisplayName: "x"}), platform.ErrNotFound, "UpdateAccount unknown id")

	// DeleteAccount: refused, with nothing deleted, while the account owns a
	// workspace; then its tokens and memberships go with it, the workspaces
	// it was a member of stay.
	owner := e.account(t, "owner-of-one")
	ws, m := e.newWorkspace(owner)
	must(t, e.s.CreateWorkspace(e.ctx, ws, m), "CreateWorkspace")
	member := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: ws.ID, AccountID: a.ID, Email: a.Email, Role: platform.RoleViewer, CreatedAt: e.now()}
	must(t, e.s.CreateMember(e.ctx, member), "CreateMember")
	owned, err := e.s.DeleteAccount(e.ctx, owner.ID)
	wantErr(t, err, platform.ErrConflict, "DeleteAccount of a workspace's owner")
	if len(owned) != 1 || owned[0] != ws.ID {
		t.Fatalf("DeleteAccount of a workspace's owner: owned %v, want [%s]", owned, ws.ID)
	}
	_, err = e.s.GetAccount(e.ctx, owner.ID)
	must(t, err, "the owner's account after a refused DeleteAccount")
	owned, err = e.s.DeleteAccount(e.ctx, a.ID)
	must(t, err, "DeleteAccount")
	if len(owned) != 0 {
		t.Fatalf("DeleteAccount: owned %v", owned)
	}
	_, err = e.s.GetAccount(e.ctx, a.ID)
	wantErr(t, err, platform.ErrNotFound, "GetAccount after DeleteAccount")
	_, _, _, err = e.s.GetCredential(e.ctx, tok.Hash, "")
	wantErr(t, err, platform.ErrNotFound, "a deleted account's token")
	members, _, err := e.s.ListMembers(e.ctx, ws.ID, store.Page{Limit: 10})
	must(t, err, "ListMembers after DeleteAccount")
	for _, got := range members {
		if got.AccountID == a.ID {
			t.Fatalf("a deleted account is still a member: %+v", got)
		}
	}
	_, err = e.s.GetWorkspace(e.ctx, ws.ID)
	must(t, err, "the workspace a deleted account was a member of")
	_, err = e.s.DeleteAccount(e.ctx, a.ID)
	wantErr(t, err, platform.ErrNotFound, "DeleteAccount again")
}

func testCreateOwner(t *testing.T, e *env) {
	a := e.newAccount("owner")
	w, m := e.newWorkspace(a)
	w.Handle = "first-ws"
	tok := e.newToken(platform.PrefixPAT, a.ID, "bootstrap")
	must(t, e.s.CreateOwner(e.ctx, a, w, m, tok), "CreateOwner")

	empty, err := e.s.Empty(e.ctx)
	must(t, err, "Empty")
	if empty {
		t.Fatalf("Empty after CreateOwner = true, want false")
	}
	gotA, err := e.s.GetAccount(e.ctx, a.ID)
	must(t, err, "GetAccount")
	same(t, gotA, normAccount(a), "owner account")
	gotW, err := e.s.GetWorkspace(e.ctx, w.ID)
	must(t, err, "GetWorkspace")
	same(t, gotW, normWorkspace(w), "owner workspace")
	gotM, err := e.s.GetMember(e.ctx, w.ID, a.ID)
	must(t, err, "GetMember")
	same(t, gotM, normMember(m), "owner membership")
	gotT, err := e.patByHash(tok.Hash)
	must(t, err, "token by hash")
	same(t, gotT, normToken(tok), "owner token")
	list, _, err := e.s.ListWorkspaces(e.ctx, a.ID, store.WorkspaceFilter{Page: store.Page{Limit: 10}})
	must(t, err, "ListWorkspaces")
	same(t, workspaceIDs(list), []string{w.ID}, "owner's workspaces")

	// assertNothing checks that no row of a rejected CreateOwner exists.
	assertNothing := func(t *testing.T, a platform.Account, w platform.Workspace, m platform.Member, tok platform.Token) {
		t.Helper()
		_, err := e.s.GetAccount(e.ctx, a.ID)
		wantErr(t, err, platform.ErrNotFound, "GetAccount of rejected owner")
		_, err = e.s.GetWorkspace(e.ctx, w.ID)
		wantErr(t, err, platform.ErrNotFound, "GetWorkspace of rejected owner")
		_, err = e.s.GetMemberByID(e.ctx, w.ID, m.ID)
		wantErr(t, err, platform.ErrNotFound, "GetMemberByID of rejected owner")
		pats, err := e.s.ListPATs(e.ctx, a.ID)
		must(t, err, "ListPATs of rejected owner")
		if len(pats) != 0 {
			t.Fatalf("ListPATs of rejected owner = %s, want none", show(pats))
		}
		got, err := e.patByHash(tok.Hash)
		if !errors.Is(err, platform.ErrNotFound) && !(err == nil && got.ID != tok.ID) {
			t.Fatalf("token by hash of rejected owner: got %s, %v; want ErrNotFound or the earlier token", show(got), err)
		}
	}

	t.Run("same email conflicts and leaves nothing", func(t *testing.T) {
		a2 := e.newAccount("intruder")
		a2.Email = a.Email
		w2, m2 := e.newWorkspace(a2)
		tok2 := e.newToken(platform.PrefixPAT, a2.ID, "bootstrap")
		wantErr(t, e.s.CreateOwner(e.ctx, a2, w2, m2, tok2), platform.ErrConflict, "second CreateOwner with the same email")
		assertNothing(t, a2, w2, m2, tok2)
		got, err := e.s.GetAccountByEmail(e.ctx, a.Email)
		must(t, err, "GetAccountByEmail")
		same(t, got, normAccount(a), "first owner after rejected second")
	})
	t.Run("failure of a later row rolls back the earlier ones", func(t *testing.T) {
		// The workspace handle is taken: account insert succeeds first.
		a3 := e.newAccount("late-ws")
		w3, m3 := e.newWorkspace(a3)
		w3.Handle = w.Handle
		tok3 := e.newToken(platform.PrefixPAT, a3.ID, "bootstrap")
		wantErr(t, e.s.CreateOwner(e.ctx, a3, w3, m3, tok3), platform.ErrConflict, "CreateOwner with a taken handle")
		assertNothing(t, a3, w3, m3, tok3)
		_, err := e.s.GetAccountByEmail(e.ctx, a3.Email)
		wantErr(t, err, platform.ErrNotFound, "GetAccountByEmail after rollback")

		// The token hash is taken: the last insert fails.
		a4 := e.newAccount("late-pat")
		w4, m4 := e.newWorkspace(a4)
		tok4 := e.newToken(platform.PrefixPAT, a4.ID, "bootstrap")
		tok4.Hash = tok.Hash
		wantErr(t, e.s.CreateOwner(e.ctx, a4, w4, m4, tok4), platform.ErrConflict, "CreateOwner with a taken token hash")
		assertNothing(t, a4, w4, m4, tok4)
		got, err := e.patByHash(tok.Hash)
		must(t, err, "token by hash of the first token")
		same(t, got, normToken(tok), "first token after rejected duplicate hash")
	})
	t.Run("rejected attempts created no workspace", func(t *testing.T) {
		list, _, err := e.s.ListWorkspaces(e.ctx, a.ID, store.WorkspaceFilter{Page: store.Page{Limit: 10}})
		must(t, err, "ListWorkspaces")
		same(t, workspaceIDs(list), []string{w.ID}, "owner's workspaces")
	})
}

func testPATs(t *testing.T, e *env) {
	a := e.account(t, "a")
	b := e.account(t, "b")
	a1 := e.newToken(platform.PrefixPAT, a.ID, "laptop")
	a2 := e.newToken(platform.PrefixPAT, a.ID, "")
	b1 := e.newToken(platform.PrefixPAT, b.ID, "ci")
	for _, tok := range []platform.Token{a2, b1, a1} {
		must(t, e.s.CreatePAT(e.ctx, tok), "CreatePAT %s", tok.ID)
	}
	listed := func(tok platform.Token) platform.Token { tok.Hash = nil; return normToken(tok) }
	byID := func(ts ...platform.Token) []platform.Token {
		out := mapSlice(ts, listed)
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out
	}
	list := func(accountID string) []platform.Token {
		t.Helper()
		ts, err := e.s.ListPATs(e.ctx, accountID)
		must(t, err, "ListPATs %s", accountID)
		for i := range ts {
			ts[i].Hash = nil // listings need not carry the hash
		}
		return ts
	}
	same(t, list(a.ID), byID(a1, a2), "ListPATs of a")
	same(t, list(b.ID), byID(b1), "ListPATs of b")
	if got := list("acc_unknown"); len(got) != 0 {
		t.Fatalf("ListPATs of an unknown account = %s, want none", show(got))
	}

	for _, tok := range []platform.Token{a1, a2, b1} {
		got, err := e.patByHash(tok.Hash)
		must(t, err, "token by hash %s", tok.ID)
		same(t, got, normToken(tok), "token by hash %s", tok.ID)
	}
	unknown := sha256.Sum256([]byte("unknown"))
	_, err := e.patByHash(unknown[:])
	wantErr(t, err, platform.ErrNotFound, "token by hash unknown hash")

	dup := e.newToken(platform.PrefixPAT, b.ID, "dup")
	dup.Hash = a1.Hash
	wantErr(t, e.s.CreatePAT(e.ctx, dup), platform.ErrConflict, "CreatePAT with a taken hash")
	same(t, list(b.ID), byID(b1), "ListPATs of b after rejected duplicate")

	wantErr(t, e.s.DeletePAT(e.ctx, b.ID, a1.ID), platform.ErrNotFound, "DeletePAT of another account's token")
	same(t, list(a.ID), byID(a1, a2), "ListPATs of a after b's delete attempt")
	must(t, e.s.DeletePAT(e.ctx, a.ID, a1.ID), "DeletePAT")
	same(t, list(a.ID), byID(a2), "ListPATs of a after delete")
	same(t, list(b.ID), byID(b1), "ListPATs of b after a's delete")
	_, err = e.patByHash(a1.Hash)
	wantErr(t, err, platform.ErrNotFound, "token by hash of a deleted token")
	wantErr(t, e.s.DeletePAT(e.ctx, a.ID, a1.ID), platform.ErrNotFound, "DeletePAT twice")
	wantErr(t, e.s.DeletePAT(e.ctx, a.ID, "pat_unknown"), platform.ErrNotFound, "DeletePAT unknown id")
}

func testGetCredential(t *testing.T, e *env) {
	a := e.account(t, "a")
	b := e.account(t, "b")
	w, owner := e.workspace(t, a)
	bw, _ := e.workspace(t, b)
	bm := e.member(t, w.ID, b, platform.RoleViewer)
	ta := e.newToken(platform.PrefixPAT, a.ID, "a's token")
	tb := e.newToken(platform.PrefixPAT, b.ID, "b's token")
	must(t, e.s.CreatePAT(e.ctx, ta), "CreatePAT")
	must(t, e.s.CreatePAT(e.ctx, tb), "CreatePAT")

	type result struct {
		Token   platform.Token
		Account platform.Account
		Member  *platform.Member
	}
	get := func(t *testing.T, hash []byte, workspaceID string) result {
		t.Helper()
		tok, acc, m, err := e.s.GetCredential(e.ctx, hash, workspaceID)
		must(t, err, "GetCredential(%s)", workspaceID)
		if m != nil {
			n := normMember(*m)
			m = &n
		}
		return result{tok, acc, m}
	}
	mem := func(m platform.Member) *platform.Member { n := normMember(m); return &n }
	for _, tc := range []struct {
		name      string
		tok       platform.Token
		acc       platform.Account
		workspace string
		member    *platform.Member
	}{
		{"no workspace", ta, a, "", nil},
		{"owner", ta, a, w.ID, mem(owner)},
		{"member", tb, b, w.ID, mem(bm)},
		{"not a member", ta, a, bw.ID, nil},
		{"unknown workspace", ta, a, "wkspace_unknown", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same(t, get(t, tc.tok.Hash, tc.workspace), result{normToken(tc.tok), normAccount(tc.acc), tc.member}, "GetCredential")
		})
	}

	unknown := sha256.Sum256([]byte("unknown"))
	_, _, _, err := e.s.GetCredential(e.ctx, unknown[:], w.ID)
	wantErr(t, err, platform.ErrNotFound, "GetCredential unknown hash")

	must(t, e.s.UpdateMemberRole(e.ctx, w.ID, bm.ID, platform.RoleManager), "UpdateMemberRole")
	if got := get(t, tb.Hash, w.ID); got.Member == nil || got.Member.Role != platform.RoleManager {
		t.Fatalf("GetCredential after UpdateMemberRole: member %s, want role %s", show(got.Member), platform.RoleManager)
	}
	must(t, e.s.DeleteMember(e.ctx, w.ID, bm.ID), "DeleteMember")
	if got := get(t, tb.Hash, w.ID); got.Member != nil {
		t.Fatalf("GetCredential after DeleteMember: member %s, want none", show(got.Member))
	}
	must(t, e.s.DeletePAT(e.ctx, b.ID, tb.ID), "DeletePAT")
	_, _, _, err = e.s.GetCredential(e.ctx, tb.Hash, "")
	wantErr(t, err, platform.ErrNotFound, "GetCredential of a deleted token")
}

// testManyQueryShapes runs more distinct query texts than a store may cache
// as prepared statements: every one must still answer correctly.
func testManyQueryShapes(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.newBot(w.ID, "tagged")
	b.Tags = map[string]string{"k": "v"}
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
	vals := []string{"v"}
	for n := 1; n <= 300; n++ {
		got, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Limit: 5}, Tags: map[string][]string{"k": vals}})
		must(t, err, "ListBots with %d tag values", n)
		if len(got) != 1 || got[0].ID != b.ID {
			t.Fatalf("ListBots with %d tag values = %s, want [%s]", n, show(botIDs(got)), b.ID)
		}
		vals = append(vals, fmt.Sprintf("x%d", n))
	}
}

// testConcurrentUse reads from several goroutines while another writes; run
// with -race it also checks the store's own shared state.
func testConcurrentUse(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	tok := e.newToken(platform.PrefixPAT, a.ID, "t")
	must(t, e.s.CreatePAT(e.ctx, tok), "CreatePAT")
	first := e.bot(t, w.ID, "first")
	const writers, readers, rounds = 1, 6, 20
	bots := make([]platform.Bot, rounds)
	for i := range bots {
		bots[i] = e.newBot(w.ID, fmt.Sprintf("c%02d", i))
	}
	errs := make(chan error, (writers+readers)*rounds*4)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, b := range bots {
			if err := e.s.CreateBot(e.ctx, b); err != nil {
				errs <- fmt.Errorf("CreateBot: %w", err)
			}
		}
	}()
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if got, err := e.s.GetBot(e.ctx, w.ID, first.ID); err != nil || got.ID != first.ID {
					errs <- fmt.Errorf("reader %d: GetBot = %s, %v", r, got.ID, err)
				}
				if _, _, m, err := e.s.GetCredential(e.ctx, tok.Hash, w.ID); err != nil || m == nil {
					errs <- fmt.Errorf("reader %d: GetCredential member %v, %v", r, m, err)
				}
				if list, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Limit: 100}}); err != nil || len(list) == 0 || list[0].ID != first.ID {
					errs <- fmt.Errorf("reader %d: ListBots = %d rows, %v", r, len(list), err)
				}
				if _, err := e.s.GetWorkspace(e.ctx, w.ID); err != nil {
					errs <- fmt.Errorf("reader %d: GetWorkspace: %w", r, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := e.s.GetWorkspace(e.ctx, w.ID)
	must(t, err, "GetWorkspace")
	if got.BotCount != rounds+1 {
		t.Fatalf("BotCount after concurrent writes = %d, want %d", got.BotCount, rounds+1)
	}
}

// patByHash looks a personal access token up the way requests do.
func (e *env) patByHash(hash []byte) (platform.Token, error) {
	t, _, _, err := e.s.GetCredential(e.ctx, hash, "")
	return t, err
}

// deleteBot and deleteWorkspace delete, discarding the content keys (the
// file tests check those).
func (e *env) deleteBot(ctx context.Context, workspaceID, id string) error {
	_, err := e.s.DeleteBot(ctx, workspaceID, id)
	return err
}

func (e *env) deleteWorkspace(ctx context.Context, id string) error {
	_, err := e.s.DeleteWorkspace(ctx, id)
	return err
}

// Concurrent write transactions, some failing, each get their own outcome:
// a failure (here a duplicate token hash, the last of four inserts) undoes
// only its own transaction, even where the backend commits several together.
func testConcurrentWrites(t *testing.T, e *env) {
	const n = 60
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a := platform.Account{ID: fmt.Sprintf("acc_cw_%02d", i), Email: fmt.Sprintf("cw%02d@example.com", i), CreatedAt: e.now()}
			w := platform.Workspace{ID: fmt.Sprintf("wkspace_cw_%02d", i), Name: "w", OwnerID: a.ID, Plan: "community", BillingVersion: "v4", CreatedAt: e.now(), UpdatedAt: e.now()}
			m := platform.Member{ID: fmt.Sprintf("wkmember_cw_%02d", i), WorkspaceID: w.ID, AccountID: a.ID, Role: platform.RoleOwner, CreatedAt: e.now()}
			tok := platform.Token{ID: fmt.Sprintf("pat_cw_%02d", i), OwnerID: a.ID, Note: "n", Hash: []byte(fmt.Sprintf("hash-cw-%02d", i/2)), CreatedAt: e.now()}
			errs[i] = e.s.CreateOwner(e.ctx, a, w, m, tok)
		})
	}
	wg.Wait()
	for pair := 0; pair < n/2; pair++ {
		a, b := errs[2*pair], errs[2*pair+1]
		if (a == nil) == (b == nil) {
			t.Fatalf("pair %d: errors %v and %v; want exactly one success", pair, a, b)
		}
		winner, loser := 2*pair, 2*pair+1
		if a != nil {
			winner, loser = loser, winner
			a = b
		}
		if err := errs[loser]; !errors.Is(err, platform.ErrConflict) {
			t.Fatalf("pair %d: loser error %v, want ErrConflict", pair, err)
		}
		if _, err := e.s.GetWorkspace(e.ctx, fmt.Sprintf("wkspace_cw_%02d", winner)); err != nil {
			t.Fatalf("pair %d: the winner's workspace: %v", pair, err)
		}
		if _, err := e.s.GetWorkspace(e.ctx, fmt.Sprintf("wkspace_cw_%02d", loser)); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("pair %d: the failed transaction's workspace exists (%v): a failure leaked into another's commit", pair, err)
		}
	}
}
