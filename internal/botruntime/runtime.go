// Package botruntime runs bot code: JavaScript deployed with a bot, executed
// in sandboxed VMs (goja) in a child process per bot, for every event the Chat API hands to the bot,
// for the bot's recurring and scheduled events, and for actions called
// through the API. See docs/bot-code.md for the programming model.
package botruntime

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/sdkbot"
)

// Config tunes the runtime.
type Config struct {
	// Metrics counts handled events (nil: none).
	Metrics *metrics.Metrics
	// Workers is how many events run at once (each conversation's events
	// still run one at a time, in order).
	Workers int
	// Timeout is the deadline of an invocation for bots that set no
	// maxExecutionTime; MaxTimeout caps what a bot may set.
	Timeout, MaxTimeout time.Duration
	// Poll is the longest the dispatcher sleeps before looking for work
	// queued by another process.
	Poll time.Duration
	// Lease is how long a claimed event is held without being renewed
	// (default --job-lease's): its worker renews it while the event runs;
	// past it, the worker is taken for dead and the event handled again.
	Lease time.Duration
	// Node is this process's id among those sharing the database: its
	// claims are recorded under it, and at start it hands back the events
	// it held when it last stopped (a crash).
	Node string
	// ReleaseAtStart hands back, at start, every event claimed by anyone
	// (a single process owns the database).
	ReleaseAtStart bool
	// StateLimit caps each of event.state's scopes, in bytes of JSON.
	StateLimit int
	// Memory is the memory limit of each bot process, in bytes.
	Memory int64
	// Command starts a bot process (the server's own binary, bot-vm).
	Command []string
	// Sandbox runs each bot process in a sandbox (package sandbox): no
	// file of the server's, no network, no child process. The VM gives bot
	// code none of these; the sandbox holds should the VM ever fail to.
	Sandbox bool
	// StopTimeout bounds the wait for the events in progress when the
	// runtime stops; past it their processes are killed.
	StopTimeout time.Duration
	// MaxScheduled caps a bot's pending scheduled events.
	MaxScheduled int
	// FetchPrivate lets bot code's fetch reach loopback, private and
	// link-local addresses.
	FetchPrivate bool
	Log          *slog.Logger

	// RuntimeAPI makes the workflow_update events and expires states (nil:
	// neither happens).
	RuntimeAPI RuntimeAPI
	// Searcher lets bot code search the bot's files (client.searchFiles;
	// nil: the search finds nothing).
	Searcher Searcher
	// Remote runs the bots written with the SDK (nil: none).
	Remote Remote
}

// DefaultMemory is a bot process's memory limit in bytes when none is set
// (--bot-memory's default).
func DefaultMemory() int64 { return int64(config.Defaults().BotMemory) << 20 }

// Runtime dispatches events to bot code.
type Runtime struct {
	store Store
	chat  *chat.Service
	// api is the Runtime API (nil: no workflow_update or state_expired events).
	api RuntimeAPI
	// remote runs bots written with the SDK (nil: none).
	remote Remote
	// apiHandler serves bot code's calls of the Runtime and Tables APIs.
	apiHandler http.Handler
	clock      platform.Clock
	cfg        Config
	log        *slog.Logger

	recurringChanged chan struct{}

	botsMu sync.Mutex
	bots   map[string]*botInfo

	hostsMu sync.Mutex
	hosts   map[string]*host // by bot id

	inflight sync.WaitGroup

	// suspects are the events that were running in a bot process that
	// died of memory alongside others: the next time, they are at fault.
	suspectsMu sync.Mutex
	suspects   map[string]bool

	search Searcher
}

// Searcher searches a bot's indexed files (the indexing service, adapted
// by cmd/botplatform).
type Searcher interface {
	Search(ctx context.Context, q SearchQuery) ([]SearchResult, error)
}

// SearchQuery is a search of all of a bot's indexed files.
type SearchQuery struct {
	BotID string
	Text  string
	Tags  map[string][]string // tag filters, as in the Files API's search
	Limit int                 // passages returned
}

// SearchResult is a passage found by a search, and the file it is from.
type SearchResult struct {
	Passage platform.Passage
	Score   float64
	File    platform.File
}

// New returns a runtime; Run starts it.
func New(st Store, cs *chat.Service, clock platform.Clock, cfg Config) *Runtime {
	// Settings left zero take serve's defaults.
	defaults := config.Defaults()
	if cfg.Workers <= 0 {
		cfg.Workers = defaults.BotWorkers
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaults.BotTimeout
	}
	if cfg.MaxTimeout < cfg.Timeout {
		cfg.MaxTimeout = max(cfg.Timeout, defaults.BotTimeoutMax)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = defaults.BotPoll
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaults.JobLease
	}
	if cfg.StateLimit <= 0 {
		cfg.StateLimit = defaults.BotStateLimit
	}
	if cfg.MaxScheduled <= 0 {
		cfg.MaxScheduled = defaults.BotMaxScheduled
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Memory <= 0 {
		cfg.Memory = DefaultMemory()
	}
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		cfg.Command = []string{exe, "bot-vm"}
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = defaults.ShutdownTimeout
	}
	return &Runtime{store: st, chat: cs, clock: clock, cfg: cfg, log: cfg.Log, api: cfg.RuntimeAPI, search: cfg.Searcher, remote: cfg.Remote,
		recurringChanged: make(chan struct{}, 1), bots: map[string]*botInfo{}, hosts: map[string]*host{}, suspects: map[string]bool{}}
}

// RuntimeAPI is what the runtime needs of the Runtime API: the payloads of
// the workflow_update events it delivers, and the expiry of states (whose
// state_expired events it delivers).
type RuntimeAPI interface {
	WorkflowEvent(ctx context.Context, botID, id, update string) (json.RawMessage, error)
	ExpireStates(ctx context.Context, now time.Time) (int, error)
	// DeliveryFor builds what a bot written with the SDK receives for a job.
	DeliveryFor(ctx context.Context, j platform.Job, p platform.BotEventJob) (runtimeapi.Delivery, error)
}

// botInfo is a bot as the runtime needs it, cached per version.
type botInfo struct {
	platform.Bot
	updated time.Time
	version string
	ctxJSON string
	timeout time.Duration
	// bundle: the code is a Node bundle (sdkbot.IsNodeBundle, asked once
	// per version: bundles are megabytes).
	bundle bool
}

// botInfo returns the bot's current version: one cheap query tells whether
// the cached copy is current, so new code takes effect from the next event.
func (r *Runtime) botInfo(ctx context.Context, botID string) (*botInfo, error) {
	ws, updated, err := r.store.BotVersion(ctx, botID)
	if err != nil {
		return nil, err
	}
	r.botsMu.Lock()
	b, ok := r.bots[botID]
	r.botsMu.Unlock()
	if ok && b.updated.Equal(updated) {
		return b, nil
	}
	bot, err := r.store.GetBot(ctx, ws, botID)
	if err != nil {
		return nil, err
	}
	b = &botInfo{Bot: bot, updated: bot.UpdatedAt, version: strconv.FormatInt(bot.UpdatedAt.UnixMicro(), 10), timeout: r.cfg.Timeout,
		bundle: sdkbot.IsNodeBundle(bot.Code)}
	if t := bot.Spec.MaxExecutionTime; t != nil {
		b.timeout = min(time.Duration(*t)*time.Second, r.cfg.MaxTimeout)
	}
	configuration := json.RawMessage(`{}`)
	var cfg struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(bot.Spec.Configuration, &cfg) == nil && len(cfg.Data) > 0 && string(cfg.Data) != "null" {
		configuration = cfg.Data
	}
	secrets := bot.Spec.Secrets
	if secrets == nil {
		secrets = map[string]string{}
	}
	ctxJSON, _ := json.Marshal(map[string]any{"botId": bot.ID, "workspaceId": bot.WorkspaceID, "configuration": configuration, "secrets": secrets})
	b.ctxJSON = string(ctxJSON)
	r.botsMu.Lock()
	r.bots[botID] = b
	r.botsMu.Unlock()
	return b, nil
}

// idleBots is how long a bot's process and cached settings are kept
// without events.
const idleBots = 10 * time.Minute

// forgetIdle closes the processes of bots without events for idleBots
// (deleted bots among them) and drops the cached settings of every bot.
func (r *Runtime) forgetIdle(now time.Time) {
	r.hostsMu.Lock()
	for id, h := range r.hosts {
		if now.Sub(h.lastUsed) > idleBots {
			delete(r.hosts, id)
			h.close()
		}
	}
	r.hostsMu.Unlock()
	r.botsMu.Lock()
	clear(r.bots) // a cache: reloaded at the next event
	r.botsMu.Unlock()
}

// killProcesses kills every bot process; the events they run are handed
// back.
func (r *Runtime) killProcesses() {
	r.hostsMu.Lock()
	hosts := r.hosts
	r.hosts = map[string]*host{}
	r.hostsMu.Unlock()
	for _, h := range hosts {
		<-h.ready
		if h.startErr == nil {
			h.killAll()
		}
	}
}
