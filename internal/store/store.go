// Package store declares what the services need from persistence. The
// services own every rule; a store only persists and queries. Both backends
// (sqlite and postgres) are checked by the same conformance suite in storetest.
package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
)

// Store is implemented by *sqlstore.Store for SQLite and PostgreSQL.
type Store interface {
	Tables
	Close() error
	Ping(ctx context.Context) error
	// Empty reports whether no account exists yet (first start).
	Empty(ctx context.Context) (bool, error)

	// CreateOwner creates, in one transaction, the first account with its
	// workspace, owner membership and token. ErrConflict when the account's
	// email is taken (another process bootstrapped first).
	CreateOwner(ctx context.Context, a platform.Account, w platform.Workspace, m platform.Member, t platform.Token) error

	// CreateAccount creates a, without a picture (UpdateAccount sets it).
	CreateAccount(ctx context.Context, a platform.Account) error
	GetAccount(ctx context.Context, id string) (platform.Account, error)
	// UpdateAccount sets the account's display name and picture
	// (ErrNotFound when there is no such account).
	UpdateAccount(ctx context.Context, a platform.Account) error
	GetAccountByEmail(ctx context.Context, email string) (platform.Account, error)
	// DeleteAccount deletes the account with its tokens, memberships and
	// preferences, unless it owns workspaces: then it deletes nothing and
	// returns their ids (at most 10) with ErrConflict. ErrNotFound when
	// there is no such account.
	DeleteAccount(ctx context.Context, id string) (owned []string, err error)

	CreatePAT(ctx context.Context, t platform.Token) error
	ListPATs(ctx context.Context, accountID string) ([]platform.Token, error)
	DeletePAT(ctx context.Context, accountID, id string) error
	// GetCredential resolves a PAT hash to its token and account, and the
	// account's membership of workspaceID (nil when not a member, or when
	// workspaceID is empty), in one round trip: it runs on every request.
	GetCredential(ctx context.Context, hash []byte, workspaceID string) (platform.Token, platform.Account, *platform.Member, error)

	// CreateWorkspace inserts the workspace and its owner membership at once.
	CreateWorkspace(ctx context.Context, w platform.Workspace, owner platform.Member) error
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
	// GetWorkspaceByHandle returns the workspace with that handle, of any
	// account.
	GetWorkspaceByHandle(ctx context.Context, handle string) (platform.Workspace, error)
	ListWorkspaces(ctx context.Context, accountID string, f WorkspaceFilter) ([]platform.Workspace, string, error)
	// ListPublicWorkspaces lists the workspaces whose profile is public
	// (isPublic), by id, narrowed by f.
	ListPublicWorkspaces(ctx context.Context, f PublicWorkspaceFilter) ([]platform.Workspace, string, error)
	UpdateWorkspace(ctx context.Context, w platform.Workspace) error
	// DeleteWorkspace removes the workspace with its members, bots, keys and
	// files, and returns the blob keys of the files' content to remove.
	DeleteWorkspace(ctx context.Context, id string) ([]string, error)

	GetMember(ctx context.Context, workspaceID, accountID string) (platform.Member, error)
	GetMemberByID(ctx context.Context, workspaceID, id string) (platform.Member, error)
	ListMembers(ctx context.Context, workspaceID string, p Page) ([]platform.Member, string, error)
	CreateMember(ctx context.Context, m platform.Member) error
	UpdateMemberRole(ctx context.Context, workspaceID, id string, role platform.Role) error
	DeleteMember(ctx context.Context, workspaceID, id string) error

	// CreateBot inserts the bot with its tags and integrations.
	CreateBot(ctx context.Context, b platform.Bot) error
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	// UpdateBot replaces the stored bot (tags and integrations included).
	UpdateBot(ctx context.Context, b platform.Bot) error
	// DeleteBot removes the bot with its keys, logs and files, releasing
	// the files' storage, and returns the blob keys of their content.
	DeleteBot(ctx context.Context, workspaceID, id string) ([]string, error)
	ListBots(ctx context.Context, workspaceID string, f BotFilter) ([]platform.BotSummary, string, error)
	GetIntegrationByWebhook(ctx context.Context, webhookID string) (platform.BotIntegration, error)
	// GetWebhookUser is GetIntegrationByWebhook and the lookup of its bot's
	// chat user by foreign id, in one query: found says whether that user
	// exists (GetChatUser's second try, by internal id, is not made).
	GetWebhookUser(ctx context.Context, webhookID, fid string) (in platform.BotIntegration, u platform.ChatUser, found bool, err error)

	// Integrations that workspaces deploy, one row per version.
	// CreateIntegration fails with ErrConflict when a production version
	// with i's name and version exists, ErrNotFound when i's workspace does
	// not. GetIntegration reads one of any workspace, code included;
	// GetIntegrationByName the production version name@version.
	// UpdateIntegration replaces the stored version's visibility, spec and
	// code. ListIntegrations leaves the code out.
	CreateIntegration(ctx context.Context, i platform.Integration) error
	GetIntegration(ctx context.Context, id string) (platform.Integration, error)
	GetIntegrationByName(ctx context.Context, name, version string) (platform.Integration, error)
	UpdateIntegration(ctx context.Context, i platform.Integration) error
	DeleteIntegration(ctx context.Context, workspaceID, id string) error
	ListIntegrations(ctx context.Context, f IntegrationFilter) ([]platform.Integration, string, error)
	// Interfaces (what integrations implement), stored as integrations
	// are (without code), in their own name space.
	CreateInterface(ctx context.Context, i platform.Integration) error
	GetInterface(ctx context.Context, id string) (platform.Integration, error)
	GetInterfaceByName(ctx context.Context, name, version string) (platform.Integration, error)
	UpdateInterface(ctx context.Context, i platform.Integration) error
	DeleteInterface(ctx context.Context, workspaceID, id string) error
	ListInterfaces(ctx context.Context, f IntegrationFilter) ([]platform.Integration, string, error)
	// Plugins, stored as integrations are (code: {"node", "browser"}), in
	// their own name space.
	CreatePlugin(ctx context.Context, i platform.Integration) error
	GetPlugin(ctx context.Context, id string) (platform.Integration, error)
	GetPluginByName(ctx context.Context, name, version string) (platform.Integration, error)
	UpdatePlugin(ctx context.Context, i platform.Integration) error
	DeletePlugin(ctx context.Context, workspaceID, id string) error
	ListPlugins(ctx context.Context, f IntegrationFilter) ([]platform.Integration, string, error)
	// CountPluginInstallations is how many bots installed the plugin
	// version.
	CountPluginInstallations(ctx context.Context, pluginID string) (int, error)
	// IntegrationVersion is when an integration version last changed
	// (ErrNotFound when it is gone): one cheap query tells whether a cached
	// copy is current.
	IntegrationVersion(ctx context.Context, id string) (time.Time, error)

	// CountInstallations is how many bots installed the integration
	// version.
	CountInstallations(ctx context.Context, integrationID string) (int, error)
	// UpdateIntegrationStatus stores the registration status of each of
	// the bot's installations in ins (by integration id and alias), and
	// nothing else of the bot.
	UpdateIntegrationStatus(ctx context.Context, botID string, ins []platform.BotIntegration) error

	// SaveBotVersion records v as the next version of its bot (ErrNotFound
	// when the bot is not in the workspace), first replacing the bot with
	// *update when set, in one transaction, and removes the bot's versions
	// older than its newest keep. It returns v as stored: its Seq set, and
	// its Name "v<seq>" when empty.
	SaveBotVersion(ctx context.Context, workspaceID string, v platform.BotVersion, keep int, update *platform.Bot) (platform.BotVersion, error)
	// ListBotVersions returns the bot's versions, newest first, without
	// their code and spec.
	ListBotVersions(ctx context.Context, workspaceID, botID string) ([]platform.BotVersion, error)
	GetBotVersion(ctx context.Context, workspaceID, botID, id string) (platform.BotVersion, error)

	CreateBotKey(ctx context.Context, workspaceID string, t platform.Token) error
	ListBotKeys(ctx context.Context, workspaceID, botID string) ([]platform.Token, error)
	DeleteBotKey(ctx context.Context, workspaceID, id string) error
	// GetBotKeyByHash returns the key and the workspace of its bot.
	GetBotKeyByHash(ctx context.Context, hash []byte) (platform.Token, string, error)

	// GetBotWorkspace returns the workspace a bot belongs to.
	GetBotWorkspace(ctx context.Context, botID string) (string, error)

	// PutFile creates f, or replaces the file with the same bot, scope and
	// key: that file keeps its id and creation time and gets f's fields, a
	// new generation and no content. The storage counted for the replaced
	// content is released in the same transaction; the replaced file is
	// returned so that its content can be removed.
	PutFile(ctx context.Context, f platform.File) (stored platform.File, replaced *platform.File, err error)
	// GetFile returns a file of the bot; with botID "", the file with that id.
	GetFile(ctx context.Context, botID, id string) (platform.File, error)
	// GetFiles returns those of the files with these ids (of any bot) that
	// exist, in no particular order, in one query.
	GetFiles(ctx context.Context, ids []string) ([]platform.File, error)
	GetFileByKey(ctx context.Context, botID, scope, key string) (platform.File, error)
	ListFiles(ctx context.Context, f FileFilter) ([]platform.File, string, error)
	// UpdateFile stores f's tags, metadata, access policies and expiry.
	UpdateFile(ctx context.Context, f platform.File) error
	// DeleteFile removes the file, releasing its storage, and returns it.
	DeleteFile(ctx context.Context, botID, id string) (platform.File, error)
	// CompleteUpload records the content of generation u.Generation of a
	// file still upload_pending and counts it against the workspace's
	// storage within the given limits, enqueuing an indexing job when the
	// file is indexed. ErrConflict when the file moved on (replaced, or no
	// longer pending); a *QuotaError when a limit would be exceeded.
	CompleteUpload(ctx context.Context, u Upload) (platform.File, error)
	// FailUpload marks generation gen of a pending file upload_failed.
	FailUpload(ctx context.Context, id string, gen int64, reason string, now time.Time) (platform.File, error)
	ListFileTags(ctx context.Context, v FileVisibility, p Page) ([]string, string, error)
	ListFileTagValues(ctx context.Context, v FileVisibility, key string, p Page) ([]string, string, error)
	// DeleteExpiredFile is DeleteFile for a file whose expiry is at or
	// before now (ErrNotFound otherwise, e.g. when its expiry was pushed back).
	DeleteExpiredFile(ctx context.Context, id string, now time.Time) (platform.File, error)
	// ExpiredFiles lists up to limit files whose expiry is at or before now.
	ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]platform.File, error)

	GetStorage(ctx context.Context, workspaceID string) (platform.Storage, error)
	// SetStorageLimits sets the workspace's limit overrides (nil: plan default).
	SetStorageLimits(ctx context.Context, workspaceID string, s platform.Storage) error
	// ListJobs lists the jobs about subject, oldest first.
	ListJobs(ctx context.Context, subject string) ([]platform.Job, error)
	// EnqueueJob queues a job; ErrConflict when one with its id exists.
	EnqueueJob(ctx context.Context, j platform.Job) error
	// CountOwnedJobs counts the jobs of kind queued with Owner owner that
	// are not done (pending or running).
	CountOwnedJobs(ctx context.Context, kind, owner string) (int, error)
	// ClaimJobs leases up to limit jobs of kind until leaseUntil to node
	// (the claiming process): each is the first of its subject (by
	// run_after, then id), due by now, and pending or with an expired lease.
	// A subject's next job is not claimed before the one ahead of it is
	// finished, so a subject's jobs run one at a time and in order.
	ClaimJobs(ctx context.Context, kind, node string, now, leaseUntil time.Time, limit int) ([]platform.Job, error)
	// ExtendLease moves a running job's lease to until, while its worker
	// is busy with it (ErrNotFound when it no longer runs).
	ExtendLease(ctx context.Context, id string, until time.Time) error
	// FinishJob ends a job and, in the same transaction, saves states and
	// appends log entries. A job whose id is derived from what it does
	// (keep) stays as a done row, so that queueing it again is a conflict,
	// until PurgeJobs; other jobs are deleted.
	FinishJob(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, now time.Time) error
	// FinishJobClaimNext is FinishJob that, in the same transaction, also
	// claims for node, as ClaimJobs would, the next job of the finished
	// one's subject when it is claimable now: the worker that ran a
	// conversation's event goes on with the next at once. next is nil when
	// there is none; then waiting tells whether the subject still has an
	// unfinished job (not due yet, or held back), which a claim must look at
	// again: when it is false, nothing waited for the finished job. now is
	// read in the transaction, once it holds the subject: a job queued
	// while the finish waited for the database is due by then. The next
	// job's lease lasts lease from then.
	FinishJobClaimNext(ctx context.Context, id string, keep bool, states []platform.BotState, logs []platform.LogEntry, node string, now func() time.Time, lease time.Duration) (next *platform.Job, waiting bool, err error)
	// PurgeJobs deletes the done jobs of kind due before before.
	PurgeJobs(ctx context.Context, kind string, before time.Time) (int, error)
	// RetryJob hands a claimed job back, to be claimed again from runAfter;
	// it keeps its place in its subject's order.
	RetryJob(ctx context.Context, id string, runAfter time.Time) error
	// ReleaseJobs hands back the running jobs of kind that node claimed (a
	// node starting again: none of them is still being worked on); node ""
	// hands back every running job of kind (a single process owning the
	// database).
	ReleaseJobs(ctx context.Context, kind, node string) (int, error)
	// NextJobAt is when the earliest pending job of kind not yet due at
	// after becomes due (or its retry may run). A dispatcher passes the now
	// of its last ClaimJobs: what was due then, that claim has seen (taken,
	// or held behind its subject's running job), and what becomes due later
	// is what it must wake up for, even if that moment has passed already.
	NextJobAt(ctx context.Context, kind string, after time.Time) (time.Time, bool, error)
	// InTx runs f as one transaction: the calls of the store made with the
	// context f is given are its steps; they commit together when f returns
	// nil and are rolled back together when it returns an error. A failed
	// step is undone by itself first, so f may go on after it. Inside
	// another InTx, f is a part of that one. Every call inside f must use
	// the context f is given: a write made with another waits for the
	// transaction to end (with SQLite's one writer, forever).
	InTx(ctx context.Context, f func(ctx context.Context) error) error
	// Queued returns a channel closed once a job of kind queued through this
	// store is committed after the call: take it before claiming, then wait
	// on it (other processes' jobs are found by polling).
	Queued(kind string) <-chan struct{}
	// JobQueues returns, for each kind with unfinished jobs, how many are
	// due by now, due later and running, and when the oldest due one fell
	// due; kinds in order.
	JobQueues(ctx context.Context, now time.Time) ([]JobQueue, error)

	// BotStates loads the bot's state and that of a user and a conversation
	// (either id may be empty), keyed by scope; absent states are missing.
	BotStates(ctx context.Context, botID, userID, conversationID string) (map[string]json.RawMessage, error)
	// BotVersion returns a bot's workspace and last update time (which
	// changes with its code), to tell whether a cached copy is current.
	BotVersion(ctx context.Context, botID string) (workspaceID string, updatedAt time.Time, err error)
	// RecurringBots lists the bots that declare recurring events.
	RecurringBots(ctx context.Context) ([]platform.Bot, error)

	// Indexing. CompleteIndexing replaces a file's passages and marks it
	// indexed, and FailIndexing marks it failed, both only while the file's
	// content is still generation gen (ErrConflict otherwise).
	CompleteIndexing(ctx context.Context, fileID string, gen int64, stack string, ps []platform.Passage, now time.Time) error
	FailIndexing(ctx context.Context, fileID string, gen int64, reason string, now time.Time) error
	// QueueIndexing sets a file back to indexing_pending with a job to index
	// it again (payload: a platform.IndexJob).
	QueueIndexing(ctx context.Context, fileID string, payload json.RawMessage, now time.Time) error
	ListPassages(ctx context.Context, fileID string, p Page) ([]platform.Passage, string, error)
	// PassageImage returns the image of a file's passage and its MIME type
	// (ErrNotFound when it has none).
	PassageImage(ctx context.Context, fileID, passageID string) (mimeType string, image []byte, err error)
	// PassagesAround returns a file's passages with positions in [from, to].
	PassagesAround(ctx context.Context, fileID string, from, to int) ([]platform.Passage, error)
	PassagesBySeq(ctx context.Context, seqs []int64) ([]platform.Passage, error)
	// PassageStats returns the newest seq and the count of a bot's
	// passages, and a number that grows with every change of them (a
	// passage stored or deleted), read in constant time.
	PassageStats(ctx context.Context, botID string) (maxSeq int64, count int, changes int64, err error)
	// PassageVectors returns seq, file and vector of a bot's passages stored
	// after afterSeq.
	PassageVectors(ctx context.Context, botID string, afterSeq, upToSeq int64) ([]platform.Passage, error)
	// SearchableFiles lists the indexed files v may see that pass the tag
	// filters, among the files of among when it is not nil.
	SearchableFiles(ctx context.Context, v FileVisibility, tags, notTags map[string][]string, among []string) ([]string, error)
	// TextCandidates returns, in no order and with their content, up to
	// budget of those files' passages holding words (words.Query's), the
	// rarer first, for a ranking done by the caller; df holds the words'
	// counts from TermStats (nil: counted by the store).
	TextCandidates(ctx context.Context, v FileVisibility, tags, notTags map[string][]string, words []string, df []int64, budget int) ([]platform.Passage, error)
	// TermStats returns the statistics BM25 needs, over every bot's
	// passages: how many there are, and how many hold each word, counted
	// up to limit (counting visits each); up to a minute old.
	TermStats(ctx context.Context, words []string, limit int) (total int64, df []int64, err error)

	// AI Spend. RecordAIUsage stores one metered model call; AISpend sums
	// the cost (nanodollars) of a workspace's calls made at or after since,
	// in all and by bot.
	RecordAIUsage(ctx context.Context, u platform.AIUsage) error
	AISpend(ctx context.Context, workspaceID string, since time.Time) (total int64, byBot map[string]int64, err error)
	// AISpendByDay sums the cost of a workspace's calls made at or after
	// from and before until by day (UTC), bot and purpose, in that order.
	AISpendByDay(ctx context.Context, workspaceID string, from, until time.Time) ([]AISpendDay, error)

	// Preferences of an account or a workspace (o names one). SetPreference
	// stores value (JSON) under key, replacing what was there; ErrNotFound
	// when the owner does not exist. GetPreference returns the value stored
	// under key, ErrNotFound when none is. Deleting the owner deletes them.
	SetPreference(ctx context.Context, o PreferenceOwner, key string, value json.RawMessage, now time.Time) error
	GetPreference(ctx context.Context, o PreferenceOwner, key string) (json.RawMessage, error)

	// Knowledge bases of a bot.
	CreateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error
	GetKnowledgeBase(ctx context.Context, botID, id string) (platform.KnowledgeBase, error)
	// UpdateKnowledgeBase replaces name, tags and update time.
	UpdateKnowledgeBase(ctx context.Context, kb platform.KnowledgeBase) error
	DeleteKnowledgeBase(ctx context.Context, botID, id string) error
	ListKnowledgeBases(ctx context.Context, botID string, tags map[string][]string, p Page) ([]platform.KnowledgeBase, string, error)

	// Secret returns the server secret with that name, creating it with
	// value when it does not exist yet (every process then shares it).
	Secret(ctx context.Context, name string, value []byte) ([]byte, error)

	// Chat API. Users and conversations are found by foreign id, or else by
	// internal id.
	CreateChatUser(ctx context.Context, u platform.ChatUser) error
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	UpdateChatUser(ctx context.Context, u platform.ChatUser) error
	DeleteChatUser(ctx context.Context, id string) error
	// CreateConversation inserts it with its owner as first participant.
	CreateConversation(ctx context.Context, c platform.Conversation) error
	GetConversation(ctx context.Context, botID, id string) (platform.Conversation, error)
	// GetConversationAs is GetConversation that also tells whether userID
	// is one of its participants, in one query.
	GetConversationAs(ctx context.Context, botID, id, userID string) (c platform.Conversation, participant bool, err error)
	// GetConversationByID finds a conversation of any bot by internal id.
	GetConversationByID(ctx context.Context, id string) (platform.Conversation, error)
	DeleteConversation(ctx context.Context, id string) error
	// ListConversations lists the conversations ownerID owns in the built-in
	// integration's channel ("chat" or "webchat"), by id.
	ListConversations(ctx context.Context, ownerID, integration string, p Page) ([]platform.Conversation, string, error)
	// LastMessages returns the newest message of each of the conversations
	// that has one, by conversation (internal) id.
	LastMessages(ctx context.Context, conversationIDs []string) (map[string]platform.Message, error)
	AddParticipant(ctx context.Context, conversationID, userID string, atMicros int64) error
	IsParticipant(ctx context.Context, conversationID, userID string) (bool, error)
	RemoveParticipant(ctx context.Context, conversationID, userID string) error
	ListParticipants(ctx context.Context, conversationID string, p Page) ([]platform.ChatUser, string, error)
	// CreateMessage and CreateChatEvent also queue a user's message or event
	// for delivery to the bot (a bot_event job), in the same transaction;
	// queued says whether they did (not for a bot's own, nor for a bot
	// without code or url).
	CreateMessage(ctx context.Context, m platform.Message) (queued bool, err error)
	GetMessage(ctx context.Context, id string) (platform.Message, error)
	DeleteMessage(ctx context.Context, id string) error
	ListMessages(ctx context.Context, conversationID string, p Page) ([]platform.Message, string, error)
	CreateChatEvent(ctx context.Context, e platform.ChatEvent) (queued bool, err error)

	// Runtime API: a bot's users, conversations and messages, listed with
	// filters; CreateChatUser, CreateConversation and CreateMessage store
	// their tags.
	ListChatUsers(ctx context.Context, f ChatUserFilter) ([]platform.ChatUser, string, error)
	ListBotConversations(ctx context.Context, f ConversationFilter) ([]CountedConversation, string, error)
	CountMessages(ctx context.Context, conversationID string) (int64, error)
	// UpdateConversation replaces its tags and update date.
	UpdateConversation(ctx context.Context, c platform.Conversation) error
	FindMessages(ctx context.Context, f MessageFilter) ([]platform.Message, string, error)
	// UpdateMessage replaces the payload, metadata, tags and update date of a message of botID.
	UpdateMessage(ctx context.Context, m platform.Message, botID string) error
	// GetRuntimeState returns a named state not lapsed at now.
	GetRuntimeState(ctx context.Context, botID, typ, scopeID, name string, now time.Time) (platform.RuntimeState, error)
	// PutRuntimeState creates or replaces a named state (onlyIfAbsent: unless
	// one exists that has not lapsed) and returns it as stored.
	PutRuntimeState(ctx context.Context, st platform.RuntimeState, onlyIfAbsent bool) (platform.RuntimeState, error)
	// UpdateRuntimeState writes st if it is still at st.Version, else ErrConflict.
	UpdateRuntimeState(ctx context.Context, st platform.RuntimeState) error
	DeleteRuntimeState(ctx context.Context, botID, typ, scopeID, name string) error
	// LapsedRuntimeStates returns up to limit states lapsed at now.
	LapsedRuntimeStates(ctx context.Context, now time.Time, limit int) ([]platform.RuntimeState, error)
	// ExpireRuntimeState deletes a lapsed state still at its version and
	// queues j with it; false when another write or process came first.
	ExpireRuntimeState(ctx context.Context, st platform.RuntimeState, now time.Time, j platform.Job) (bool, error)
	// CreateRuntimeEvent records an event and queues the job that delivers it.
	CreateRuntimeEvent(ctx context.Context, ev platform.RuntimeEvent, j platform.Job) error
	GetRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error)
	ListRuntimeEvents(ctx context.Context, f EventFilter) ([]platform.RuntimeEvent, string, error)
	// EndRuntimeEvent records the outcome of the delivery by a job (a no-op
	// for jobs that deliver no recorded event).
	EndRuntimeEvent(ctx context.Context, jobID, status, reason string) error
	// CancelRuntimeEvent cancels an event whose delivery has not started
	// (ErrConflict otherwise).
	CancelRuntimeEvent(ctx context.Context, botID, id string) (platform.RuntimeEvent, error)
	// PurgeRuntimeEvents deletes the events that ended and were due before before.
	PurgeRuntimeEvents(ctx context.Context, before time.Time) (int, error)
	// CreateWorkflow inserts a workflow and queues jobs with it.
	CreateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error
	GetWorkflow(ctx context.Context, botID, id string) (platform.Workflow, error)
	// UpdateWorkflow writes w if it is still at w.Version (else ErrConflict)
	// and queues jobs with it (a job whose id exists is already queued).
	UpdateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error
	DeleteWorkflow(ctx context.Context, botID, id string) error
	ListWorkflows(ctx context.Context, f WorkflowFilter) ([]platform.Workflow, string, error)
	// TrackAnalytics adds count to a bot's named counter of at's UTC day.
	TrackAnalytics(ctx context.Context, botID, name string, count int64, at time.Time) error
	// BotAnalytics computes a bot's figures for UTC days from..to (day
	// numbers since the epoch, to excluded); days without any are absent.
	BotAnalytics(ctx context.Context, botID string, from, to int64) (map[int64]*DayAnalytics, error)
	// ListChatTagValues pages through a tag key's values on one kind (TagKind*).
	ListChatTagValues(ctx context.Context, botID, kind, key string, p Page) ([]string, string, error)
	GetChatEvent(ctx context.Context, id string) (platform.ChatEvent, error)

	AppendLogs(ctx context.Context, entries []platform.LogEntry) error
	ListLogs(ctx context.Context, f LogFilter) ([]platform.LogEntry, string, error)

	// PersonData reads everything stored about one chat user of a bot, as
	// Person selects it (internal/privacy sets the rules).
	PersonData(ctx context.Context, p Person) (PersonData, error)
	// ErasePerson deletes, in one transaction, what PersonData reads (the
	// files with their passages, releasing their storage) and returns what
	// it deleted, with the blob keys of the files' content to remove.
	ErasePerson(ctx context.Context, p Person) (PersonData, []string, error)

	// Audit log. Every write transaction also appends the records its
	// context carries (audit.With): a change and its record commit
	// together, or neither does. ListAuditRecords lists a workspace's
	// records newest first; PruneAuditRecords deletes those recorded
	// before before.
	AppendAuditRecords(ctx context.Context, recs []audit.Record) error
	ListAuditRecords(ctx context.Context, workspaceID string, p Page) ([]audit.Record, string, error)
	PruneAuditRecords(ctx context.Context, before time.Time) (int, error)
	// WorkspaceIDs lists every workspace's id, for what concerns them all
	// (a backup's audit record).
	WorkspaceIDs(ctx context.Context) ([]string, error)
	// EachBotRow calls fn with each of a bot's rows of one kind (Row*), in
	// id order, reading a page at a time: a bot of any size is exported
	// without holding it whole or keeping a read open while fn writes.
	EachBotRow(ctx context.Context, botID, kind string, fn func(row any) error) error
	// ImportBot writes in one transaction what a bot archive holds
	// (internal/botarchive sets the rules and the ids): the bot when
	// in.Bot is set, then every row whose id is not stored yet (a row
	// already there is left as it is). New files' storage is counted
	// within the limits (a *QuotaError otherwise). It returns how many rows
	// of each kind it added.
	ImportBot(ctx context.Context, in BotImport) (map[string]int, error)
}

// Kinds of a bot's rows (EachBotRow, ImportBot's counts), and the type
// EachBotRow hands each as.
const (
	RowVersions      = "versions"      // platform.BotVersion, whole
	RowUsers         = "users"         // platform.ChatUser
	RowConversations = "conversations" // BotConversation
	RowMessages      = "messages"      // platform.Message
	RowStates        = "states"        // platform.RuntimeState
	RowCodeStates    = "codeStates"    // platform.BotState
	RowWorkflows     = "workflows"     // platform.Workflow
	RowFiles         = "files"         // platform.File
	RowPassages      = "passages"      // platform.Passage, with its vector and image
)

// BotConversation is a conversation with its participants.
type BotConversation struct {
	platform.Conversation
	Participants []Participant
}

// Participant is a user's participation in a conversation (internal ids).
type Participant struct {
	UserID    string
	CreatedAt time.Time
}

// BotImport is what ImportBot writes, ids already those of the bot
// written to. Files carry the blob key of their content, stored already.
type BotImport struct {
	WorkspaceID, BotID string
	Bot                *platform.Bot // the bot to create; nil: it exists
	// Rows calls fn with each row to write, as the types EachBotRow hands
	// them, kind after kind in the order of the Row* constants (a row's
	// references come before it). ImportBot calls it once, in its
	// transaction: the rows are read as they are written, never all held.
	Rows       func(fn func(row any) error) error
	MaxStorage int64 // File Storage limit of the workspace, bytes
	MaxVector  int64 // Vector DB Storage limit, bytes
	Now        time.Time
}

// Person selects what the store holds about one chat user of a bot: the
// user, the conversations they own (each whole), their messages and custom
// events elsewhere, their states, workflows and events, the files linked to
// them, and the bot's log lines that name them.
type Person struct {
	BotID  string
	UserID string // internal id
	// Aliases are the ids the user is recorded under (internal, and as
	// clients see it): in log lines, file owners and FileTag's values.
	Aliases []string
	// Mentions are the strings whose presence in a log line or an event's
	// payload makes it theirs (free text: long enough not to match others').
	Mentions []string
	// FileTag is the tag whose value, one of Aliases, links a file to them.
	FileTag string
}

// PersonData is what the store holds about a Person.
type PersonData struct {
	User platform.ChatUser
	// Owned are the conversations the user owns (created); Joined those
	// they take part in without owning them.
	Owned, Joined []platform.Conversation
	// Messages and ChatEvents are every one of Owned's, and the user's in
	// the bot's other conversations.
	Messages   []platform.Message
	ChatEvents []platform.ChatEvent
	// States are the user's (type user), Owned's and the workflows'.
	States []platform.RuntimeState
	// CodeStates are the bot code's event.state of the user and of Owned.
	CodeStates []platform.BotState
	Workflows  []platform.Workflow
	Events     []platform.RuntimeEvent
	Files      []platform.File
	Logs       []platform.LogEntry
}

// PreferenceOwner is whose preferences: an account or a workspace, exactly
// one of the two set.
type PreferenceOwner struct {
	AccountID   string
	WorkspaceID string
}

// Page selects one page of a keyset-paginated listing. Token is the opaque
// nextToken of the previous page; Limit is at least 1.
type Page struct {
	Token string
	Limit int
}

// WorkspaceFilter narrows listWorkspaces.
type WorkspaceFilter struct {
	Page
	Handle string
}

// PublicWorkspaceFilter narrows listPublicWorkspaces: the workspaces of IDs
// when given, and those whose name or handle holds Search (in any case).
type PublicWorkspaceFilter struct {
	Page
	IDs    []string
	Search string
}

// BotFilter narrows listBots. Dev selects dev bots (true) or production bots
// (false). Tags must all match; a tag listing several values matches any.
type BotFilter struct {
	Page
	Dev  bool
	Tags map[string][]string
	// IntegrationNames, when set, keeps bots having all these integrations.
	IntegrationNames []string
	SortField        string // "createdAt" or "updatedAt"
	Descending       bool
}

// IntegrationFilter narrows ListIntegrations; the zero value lists every
// integration of the server, oldest first.
type IntegrationFilter struct {
	Page
	WorkspaceID string // "": of any workspace
	Name        string
	Version     string
	Dev         *bool    // nil: dev and production
	Visibility  []string // any of these; none: any visibility
	IDs         []string // only these; none: any
}

// LogFilter narrows getBotLogs.
type LogFilter struct {
	Page
	BotID string
	// Integration, instead of BotID, lists the lines an integration
	// version's code wrote in the bots of a workspace that installed it
	// (each starting "[<alias>] ").
	Integration     *IntegrationLogs
	Start, End      time.Time
	Level           string
	UserID          string
	ConversationID  string
	WorkflowID      string
	MessageContains string
}

// IntegrationLogs names an integration version and the workspace whose
// bots' lines of it are read.
type IntegrationLogs struct {
	IntegrationID, WorkspaceID string
}

// FileVisibility selects the files a caller may see: all files of the bot,
// or (for an integration) the files of its scope and those shared with
// integrations.
type FileVisibility struct {
	BotID string
	All   bool
	Scope string
}

// FileFilter narrows listFiles.
type FileFilter struct {
	Page
	FileVisibility
	Tags       map[string][]string // all keys must match; any of a key's values
	NotTags    map[string][]string // none of a key's values may match
	IDs        []string
	Indexed    *bool
	SortField  string // key, size, createdAt (default), updatedAt, status
	Descending bool
}

// Kinds of tagged chat rows (ListChatTagValues).
const (
	TagKindUser         = "user"
	TagKindConversation = "conversation"
	TagKindMessage      = "message"
)

// DateRange bounds a list by date, both ends excluded; nil is unbounded.
type DateRange struct{ After, Before *time.Time }

// ChatUserFilter narrows the Runtime API's listUsers (which never lists the
// user a bot speaks as). Ids are internal.
type ChatUserFilter struct {
	Page
	DateRange      // on the sort date
	BotID          string
	ConversationID string              // participants of this conversation only
	Tags           map[string][]string // all keys must match, each with one of its values
	ByUpdate       bool                // sort by update date, not creation date
	Descending     bool
}

// ConversationFilter narrows the Runtime API's listConversations.
type ConversationFilter struct {
	Page
	DateRange
	BotID                    string
	ParticipantIDs           []string // all must take part (internal ids)
	Tags                     map[string][]string
	Channel, Integration     string
	MinMessages, MaxMessages *int64
	ByUpdate                 bool
	Descending               bool
}

// EventFilter narrows the Runtime API's listEvents (newest first). Status
// scheduled and pending are told apart by Now.
type EventFilter struct {
	Page
	BotID                                                       string
	Type, ConversationID, UserID, MessageID, WorkflowID, Status string
	Now                                                         time.Time
}

// WorkflowFilter narrows the Runtime API's listWorkflows (newest first,
// unless Oldest). Ids are internal.
type WorkflowFilter struct {
	Page
	BotID                                  string
	Name, ConversationID, UserID, ParentID string
	Statuses                               []string
	Tags                                   map[string][]string
	Oldest                                 bool
}

// DayAnalytics are a bot's figures for one UTC day.
type DayAnalytics struct {
	Messages, UserMessages, BotMessages int64
	NewUsers, ReturningUsers, Sessions  int64
	Events                              int64
	EventTypes, CustomEvents            map[string]int64
	LLM                                 LLMAnalytics
}

// LLMAnalytics describes a day's metered model calls.
type LLMAnalytics struct {
	Calls, Errors, InputTokens, OutputTokens int64
	Latency                                  Stats // milliseconds
	TokensPerSecond                          Stats // output tokens per second, of answered calls
	Cost                                     Stats // nanodollars
}

// Stats are the sums a mean and a standard deviation come from.
// AISpendDay is what a workspace's calls of one bot and purpose cost on
// one day (UTC), in nanodollars.
type AISpendDay struct {
	Day     time.Time // its midnight, UTC
	BotID   string
	Purpose string
	Cost    int64
}

type Stats struct {
	N                         int64
	Sum, SumSquares, Min, Max float64
}

// CountedConversation is a conversation with its number of messages.
type CountedConversation struct {
	platform.Conversation
	Messages int64
}

// MessageFilter narrows the Runtime API's listMessages (newest first).
type MessageFilter struct {
	Page
	DateRange
	BotID          string
	ConversationID string // internal; empty: every conversation of the bot
	Tags           map[string][]string
}

// Upload is the outcome of a finished content upload.
type Upload struct {
	FileID     string
	Generation int64
	BlobKey    string
	Size       int64
	SHA256     string
	Status     string // upload_completed or indexing_pending
	MaxStorage int64  // File Storage limit of the workspace, bytes
	MaxVector  int64  // Vector DB Storage limit, bytes
	Now        time.Time
}

// QuotaError reports the storage limit an upload would exceed.
type QuotaError struct {
	Quota string // "file storage" or "vector storage"
	Used  int64
	Limit int64
	Size  int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%s quota exceeded: %d bytes used of %d, this file needs %d more", e.Quota, e.Used, e.Limit, e.Size)
}

// Tables is what the Tables API needs of the database. A table's rows live
// in a database table of their own (created, altered and dropped with it).
type Tables interface {
	CreateTable(ctx context.Context, t platform.Table) error
	// GetTable finds a table of the bot by id, or else by name.
	GetTable(ctx context.Context, botID, idOrName string) (platform.Table, error)
	ListTables(ctx context.Context, botID string, tags map[string][]string) ([]platform.Table, error)
	// UpdateTable writes t over version t.Version (ErrConflict otherwise),
	// adding the database columns of added.
	UpdateTable(ctx context.Context, t platform.Table, added []platform.TableColumn) error
	DeleteTable(ctx context.Context, t platform.Table) error
	CountTableRows(ctx context.Context, t platform.Table) (int64, error)
	// CountWorkspaceTableRows counts the rows of all the tables of a
	// workspace's bots, each weighted by its table's factor.
	CountWorkspaceTableRows(ctx context.Context, workspaceID string) (int64, error)
	InsertTableRows(ctx context.Context, t platform.Table, rows []platform.TableRow) ([]platform.TableRow, error)
	// UpdateTableRows sets the given values of rows found by id (missing
	// ids are ErrNotFound) and returns them whole.
	UpdateTableRows(ctx context.Context, t platform.Table, rows []platform.TableRow) ([]platform.TableRow, error)
	// UpsertTableRows updates the rows whose key column value exists and
	// inserts the others.
	UpsertTableRows(ctx context.Context, t platform.Table, key string, rows []platform.TableRow) (inserted, updated []platform.TableRow, err error)
	FindTableRows(ctx context.Context, t platform.Table, q TableQuery) ([]platform.TableRow, bool, error)
	// GroupTableRows groups the rows q keeps by the key aggregates and
	// computes the others per group, a page of groups at a time, in key
	// order; each group's values are named by As.
	GroupTableRows(ctx context.Context, t platform.Table, q TableQuery, aggs []Aggregate) ([]map[string]any, bool, error)
	DeleteTableRows(ctx context.Context, t platform.Table, ids []int64, where *Cond, all bool) (int64, error)
	// CopyTableRows copies the rows of from into to, which has the same columns.
	CopyTableRows(ctx context.Context, from, to platform.Table) error
	// PutTableJob records a table job, or its new state.
	PutTableJob(ctx context.Context, j platform.TableJob) error
	// ListTableJobs lists a table's last 100 jobs, newest first.
	ListTableJobs(ctx context.Context, tableID string) ([]platform.TableJob, error)
}

// TableQuery is findTableRows' query, checked against the table's columns.
type TableQuery struct {
	Where   *Cond
	OrderBy string // a column, or id (default), createdAt, updatedAt
	Desc    bool
	Limit   int
	Offset  int
}

// Aggregate is one figure of a group: a key column, or avg, max, min, sum
// or count of a column, answered under the name As.
type Aggregate struct {
	Column, Op, As string
}

// Cond is a row filter: a conjunction, a disjunction, a negation, or a
// test of a column (or of a value at Path inside a JSON column).
type Cond struct {
	And, Or []Cond
	Not     *Cond
	Column  string   // a column, or id, createdAt, updatedAt
	Path    []string // keys inside a JSON column
	Op      string   // eq, ne, gt, gte, lt, lte, in, nin, exists, regex
	Value   any      // string, float64, bool or nil; for in/nin, []any
	Flags   string   // regex options (i)
}

// JobQueue is the state of one kind's unfinished jobs (Store.JobQueues).
type JobQueue struct {
	Kind string
	// Due are pending and due (some may wait behind their subject's running
	// job); Scheduled are pending and due later; Running are claimed.
	Due, Scheduled, Running int64
	// OldestDue is when the oldest due job fell due (zero when none is).
	OldestDue time.Time
}
