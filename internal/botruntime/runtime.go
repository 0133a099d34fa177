// Package botruntime runs bot code written for the embedded VM: JavaScript
// deployed with a bot, executed in sandboxed VMs (goja) in a child process
// per bot, for the events and actions the dispatcher (package dispatch)
// hands it. See docs/bot-code.md for the programming model.
package botruntime

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sdkbot"
)

// Config tunes the runtime.
type Config struct {
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
	// MaxScheduled caps a bot's pending scheduled events.
	MaxScheduled int
	// Fetch is the address rule of bot code's fetch (package egress);
	// Hosts are the operator's static host entries (--bot-hosts), which
	// fetch dials at their addresses; RootCAs are the certificate
	// authorities it trusts (nil: the system's).
	Fetch   egress.Rule
	Hosts   egress.Hosts
	RootCAs *x509.CertPool
	Log     *slog.Logger

	// Workflows gives the workflow_update events their payloads (nil: no
	// workflow event is delivered).
	Workflows Workflows
	// Searcher lets bot code search the bot's files (client.searchFiles;
	// nil: the search finds nothing).
	Searcher Searcher
	// Outbound sends the bot's messages in the conversations of
	// integrations it installed through their channels (nil: they are
	// only stored).
	Outbound Outbound
}

// Outbound sends a bot's message out through the channel of the
// integration its conversation is of (runtimeapi.Service).
type Outbound interface {
	SendOut(ctx context.Context, c platform.Conversation, u platform.ChatUser, v chat.MessageView) error
}

// DefaultMemory is a bot process's memory limit in bytes when none is set
// (--bot-memory's default).
func DefaultMemory() int64 { return int64(config.Defaults().BotMemory) << 20 }

// Runtime runs the bots whose code is a script for the embedded VM: a
// dispatch.Executor.
type Runtime struct {
	store Store
	chat  *chat.Service
	// workflows gives workflow_update events their payloads (nil: none).
	workflows Workflows
	// apiHandler serves bot code's calls of the Runtime and Tables APIs.
	apiHandler http.Handler
	clock      platform.Clock
	cfg        Config
	log        *slog.Logger

	hostsMu sync.Mutex
	hosts   map[string]*host // by bot id

	// suspects are the events that were running in a bot process that
	// died of memory alongside others: the next time, they are at fault.
	suspectsMu sync.Mutex
	suspects   map[string]bool

	search Searcher
}

var _ dispatch.Executor = (*Runtime)(nil)

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

// New returns a runtime.
func New(st Store, cs *chat.Service, clock platform.Clock, cfg Config) *Runtime {
	// Settings left zero take serve's defaults.
	defaults := config.Defaults()
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
	return &Runtime{store: st, chat: cs, clock: clock, cfg: cfg, log: cfg.Log, workflows: cfg.Workflows, search: cfg.Searcher,
		hosts: map[string]*host{}, suspects: map[string]bool{}}
}

// Workflows gives the workflow_update events their payloads, timing the
// workflow out for a time-out (runtimeapi.Service).
type Workflows interface {
	WorkflowEvent(ctx context.Context, botID, id, update string) (json.RawMessage, error)
}

// Serves tells whether b's code is a script for the embedded VM (not a
// Node bundle; not a bot served at a url).
func (r *Runtime) Serves(b *dispatch.Bot) bool {
	return b.Code != "" && b.Spec.URL == "" && !sdkbot.IsNodeBundle(b.Code)
}

// botContext is the bot's context as its handlers receive it (ctx):
// its ids, its configuration's data and its secrets, as JSON.
func botContext(b *dispatch.Bot) string {
	configuration := json.RawMessage(`{}`)
	var cfg struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b.Spec.Configuration, &cfg) == nil && len(cfg.Data) > 0 && string(cfg.Data) != "null" {
		configuration = cfg.Data
	}
	secrets := b.Spec.Secrets
	if secrets == nil {
		secrets = map[string]string{}
	}
	out, _ := json.Marshal(map[string]any{"botId": b.ID, "workspaceId": b.WorkspaceID, "configuration": configuration, "secrets": secrets})
	return string(out)
}

// Sweep closes the processes of bots without events since idle (deleted
// bots among them).
func (r *Runtime) Sweep(idle time.Time) {
	r.hostsMu.Lock()
	for id, h := range r.hosts {
		if h.lastUsed.Before(idle) {
			delete(r.hosts, id)
			h.close()
		}
	}
	r.hostsMu.Unlock()
}

// Stop kills every bot process: the events they run are handed back.
func (r *Runtime) Stop() { r.killProcesses() }

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
