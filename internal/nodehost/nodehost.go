// Package nodehost runs bots deployed as Node bundles (what `bp build` of @botpress/sdk emits) in supervised node child processes.
package nodehost

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/sandbox"
)

//go:embed host.js
var hostJS []byte

// Config tunes a Host.
type Config struct {
	Node      string        // node executable; "" = look up "node" on PATH
	Dir       string        // where bundles are written, e.g. <data>/node-bots; created 0700
	MemoryMB  int           // per process; default 256
	IdleAfter time.Duration // stop a process after this long with no call; default 5m
	// Lines receives every log line the processes emit. It is called from several goroutines at once and
	// must not block: a slow Lines holds up the answers of the process that logged. May be nil.
	Lines func(Line)
	// Every process runs in a sandbox (package sandbox): it sees its bundle, Node.js and the system's
	// libraries, a private /tmp, and on the network API's address, whose connections the server serves,
	// and what Outbound carries. Where no sandbox can be made, bundles are refused, unless Unsandboxed says to run them as
	// the server's own user (one tenant, who is trusted with the machine).
	API *sandbox.Listener
	// Outbound, when set, carries a sandboxed process's TCP connections to its egress ports on any IPv4
	// address, under the rule of its Dial, and answers its DNS queries. Nil: nothing outside is reachable.
	Outbound    *sandbox.Outbound
	Unsandboxed bool
	Limits      sandbox.Limits // what a sandboxed process may use besides memory (MemoryMB)
	// CAFile is a PEM file of certificate authorities the processes trust besides Node's own
	// (NODE_EXTRA_CA_CERTS; a sandbox gets a copy).
	CAFile string
}

// Bundle is one version of a bot's code. BotID and Version identify it: the Code of a version that already
// has a process is not compared again.
type Bundle struct {
	BotID, Version string
	// Integration, when set, is the alias of an integration the bot
	// installed, whose code this is: it runs in a process of its own, one
	// per bot and integration.
	Integration string
	Code        string
	Env         []string // KEY=VALUE, added to a minimal environment
}

// slot names the process a bundle runs in: the bot's, or that of one of its
// integrations.
func (b Bundle) slot() string {
	if b.Integration == "" {
		return b.BotID
	}
	return b.BotID + "/" + b.Integration
}

// Line is one log line of a bot's process.
type Line struct {
	BotID, Version                                         string
	Integration                                            string // the integration whose process logged, if any
	Level                                                  string // debug|info|warn|error
	Message                                                string
	ConversationID, UserID, EventID, MessageID, WorkflowID string
	At                                                     time.Time
}

// Request is what the bot's handler receives.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Response is what the bot's handler returned.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Host runs one node process per bot version.
type Host struct {
	cfg    Config
	log    *slog.Logger
	script string // <Dir>/host.js

	mu      sync.Mutex
	current map[string]*proc // the process serving each bot's latest version
	procs   map[*proc]bool   // every live process, including draining ones
	backoff map[key]*backoff // versions that crashed while loading
	closed  bool
	starts  int // processes started, for tests
	wg      sync.WaitGroup
}

type key struct{ botID, integration, version string }

// backoff keeps a version that crashed at load from being respawned on every call.
type backoff struct {
	err   error
	until time.Time
	delay time.Duration
}

const (
	defaultMemoryMB  = 256
	defaultIdleAfter = 5 * time.Minute
	firstBackoff     = time.Second
	maxBackoff       = 30 * time.Second
)

var errClosed = errors.New("nodehost: the host is closed")

// New prepares Dir and returns a Host. A missing node executable is reported by Call and Check, not here,
// so that a server without Node.js still runs its other bots.
func New(cfg Config, log *slog.Logger) (*Host, error) {
	if cfg.Dir == "" {
		return nil, errors.New("nodehost: Config.Dir is required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("nodehost: %w", err)
	}
	cfg.Dir = dir
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = defaultMemoryMB
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = defaultIdleAfter
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nodehost: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nodehost: %w", err)
	}
	// package.json stops node's search for a parent package.json whose "type": "module" would make host.js ESM.
	files := map[string][]byte{"host.js": hostJS, "package.json": []byte(`{"type": "commonjs"}` + "\n")}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("nodehost: %w", err)
		}
	}
	// Bundles left by a server that did not shut down cleanly.
	stale, _ := filepath.Glob(filepath.Join(dir, "bundle-*.cjs"))
	for _, f := range stale {
		os.Remove(f)
	}
	return &Host{
		cfg:     cfg,
		log:     log,
		script:  filepath.Join(dir, "host.js"),
		current: map[string]*proc{},
		procs:   map[*proc]bool{},
		backoff: map[key]*backoff{},
	}, nil
}

// Call runs the bot's handler for req in the process of b's version, starting it if needed. A call for a
// new version retires the bot's older process, which exits once its in-flight calls are done.
func (h *Host) Call(ctx context.Context, b Bundle, req Request) (Response, error) {
	if ctx.Err() != nil {
		return Response{}, deadlineError(ctx)
	}
	p, err := h.acquire(b)
	if err != nil {
		return Response{}, err
	}
	defer h.release(p)
	return p.call(ctx, req)
}

func (h *Host) acquire(b Bundle) (*proc, error) {
	if b.BotID == "" {
		return nil, errors.New("nodehost: Bundle.BotID is required")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	old := h.current[b.slot()]
	if old != nil && old.version == b.Version {
		old.inflight++
		return old, nil
	}
	if bo := h.backoff[key{b.BotID, b.Integration, b.Version}]; bo != nil && time.Now().Before(bo.until) {
		return nil, bo.err
	}
	p, err := h.spawn(b, false)
	if err != nil {
		return nil, err
	}
	if old != nil {
		h.retire(old)
	}
	h.current[b.slot()] = p
	h.procs[p] = true
	p.inflight = 1
	return p, nil
}

func (h *Host) release(p *proc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p.inflight--
	p.lastUse = time.Now()
	if p.inflight > 0 || !h.procs[p] { // busy, or already ended
		return
	}
	if p.retired {
		p.stop()
		return
	}
	if p.idle == nil {
		p.idle = time.AfterFunc(h.cfg.IdleAfter, func() { h.idleCheck(p) })
	} else {
		p.idle.Reset(h.cfg.IdleAfter)
	}
}

func (h *Host) idleCheck(p *proc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.inflight > 0 || p.retired {
		return
	}
	if wait := h.cfg.IdleAfter - time.Since(p.lastUse); wait > 0 {
		p.idle.Reset(wait)
		return
	}
	h.log.Debug("stopping idle node bot process", "bot", p.botID, "version", p.version)
	h.retire(p)
}

// retire takes p out of service; it stops once its in-flight calls are done. h.mu must be held.
func (h *Host) retire(p *proc) {
	p.retired = true
	if h.current[p.slot] == p {
		delete(h.current, p.slot)
	}
	if p.inflight == 0 {
		p.stop()
	}
}

// spawn writes b's code to a file and starts a process for it. h.mu must be held, so that Close cannot
// miss a process.
func (h *Host) spawn(b Bundle, check bool) (*proc, error) {
	node, err := findNode(h.cfg.Node)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(h.cfg.Dir, "bundle-*.cjs")
	if err != nil {
		return nil, fmt.Errorf("nodehost: writing the bundle: %w", err)
	}
	_, werr := f.WriteString(b.Code)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("nodehost: writing the bundle: %w", werr)
	}
	script, bundle, home, env := h.script, f.Name(), h.cfg.Dir, b.Env
	var box *sandbox.Options
	if !h.cfg.Unsandboxed {
		if err := sandbox.Available(); err != nil {
			os.Remove(f.Name())
			return nil, noSandboxError{err}
		}
		box = &sandbox.Options{
			Files: []sandbox.File{{Name: "host.js", Path: h.script}, {Name: "package.json", Path: filepath.Join(h.cfg.Dir, "package.json")},
				{Name: "bundle.cjs", Path: f.Name()}},
			Limits: h.cfg.Limits,
		}
		if h.cfg.CAFile != "" {
			box.Files = append(box.Files, sandbox.File{Name: "extra-ca.pem", Path: h.cfg.CAFile})
		}
		box.Limits.Memory = uint64(h.cfg.MemoryMB+memoryHeadroomMB) << 20
		if h.cfg.API != nil {
			box.Listen = []string{h.cfg.API.Addr().String()}
		}
		if h.cfg.Outbound != nil {
			box.Egress, box.DNS = h.cfg.Outbound.Ports, true
		}
		script, bundle, home = "/app/host.js", "/app/bundle.cjs", "/tmp"
		env = append([]string{"TMPDIR=/tmp"}, b.Env...)
	}
	if ca := h.cfg.CAFile; ca != "" {
		if box != nil {
			ca = "/app/extra-ca.pem"
		}
		// Last: the operator's setting wins over a bundle's own Env.
		env = append(env[:len(env):len(env)], "NODE_EXTRA_CA_CERTS="+ca)
	}
	args := []string{script, bundle}
	if check {
		args = []string{script, "--check", bundle}
	}
	spec := procSpec{
		botID: b.BotID, integration: b.Integration, slot: b.slot(), version: b.Version, node: node, args: args, bundle: f.Name(),
		dir: h.cfg.Dir, env: childEnv(home, env), memoryMB: h.cfg.MemoryMB,
		check: check, start: startChild, exited: h.exited, sandbox: box, api: h.cfg.API,
		outbound: h.cfg.Outbound, log: h.log.With("bot", b.BotID, "integration", b.Integration, "version", b.Version),
	}
	if !check {
		spec.lines = h.cfg.Lines
	}
	h.wg.Add(1)
	p, err := startProc(spec)
	if err != nil {
		h.wg.Done()
		os.Remove(f.Name())
		return nil, err
	}
	h.starts++
	h.log.Debug("node bot process started", "bot", b.BotID, "version", b.Version, "pid", p.cmd.Process.Pid)
	return p, nil
}

// exited is called once per process, after it ended and before its callers learn why.
func (h *Host) exited(p *proc) {
	defer h.wg.Done()
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.idle != nil {
		p.idle.Stop()
	}
	if p.check {
		return
	}
	delete(h.procs, p)
	if h.current[p.slot] == p {
		delete(h.current, p.slot)
	}
	k := key{p.botID, p.integration, p.version}
	switch {
	case p.isReady():
		delete(h.backoff, k)
	case !p.wasStopped():
		bo := h.backoff[k]
		if bo == nil {
			bo = &backoff{delay: firstBackoff}
			h.backoff[k] = bo
		} else {
			bo.delay = min(2*bo.delay, maxBackoff)
		}
		bo.err, bo.until = p.err, time.Now().Add(bo.delay)
	}
	if p.wasStopped() {
		h.log.Debug("node bot process stopped", "bot", p.botID, "version", p.version)
	} else {
		h.log.Warn("node bot process ended", "bot", p.botID, "version", p.version, "err", p.err)
	}
}

// Stop stops botID's processes, failing their in-flight calls, and waits for them to exit. Its next call
// starts a fresh process.
func (h *Host) Stop(botID string) {
	h.mu.Lock()
	var stopped []*proc
	for p := range h.procs {
		if p.botID == botID {
			h.retire(p)
			p.stop()
			stopped = append(stopped, p)
		}
	}
	for k := range h.backoff {
		if k.botID == botID {
			delete(h.backoff, k)
		}
	}
	h.mu.Unlock()
	for _, p := range stopped {
		<-p.done
	}
}

// Close stops every process and waits for them to exit. Later calls fail.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	for p := range h.procs {
		h.retire(p)
		p.stop()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// Running reports how many processes botID has, including one still draining an older version.
func (h *Host) Running(botID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p := range h.procs {
		if p.botID == botID {
			n++
		}
	}
	return n
}
