package main

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/nodehost"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sandbox"
	"github.com/botplatform/botplatform/internal/sdkbot"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/tunnel"
)

// sdkBots sets up what runs bots written with @botpress/sdk: the tunnels
// of `bp dev`, the Node bot host, and the caller that speaks the SDK's
// contract to them. close stops the tunnels and the Node processes.
//
// Sandboxed bundles reach the API at bundleAPI's address inside their
// sandbox; the server serves its connections (see serve).
func sdkBots(cfg config.Config, listen net.Addr, bundleAPI *sandbox.Listener, st store.Store, keys sdkbot.Keys, log *slog.Logger) (*sdkbot.Caller, *nodeBots, func(), error) {
	tunnels := tunnel.New(log)
	lines := newLineWriter(st, log)
	var outbound *sandbox.Outbound
	if len(cfg.BotEgressPorts) > 0 {
		dialer := &net.Dialer{Timeout: 30 * time.Second, Control: bundleEgressRule(cfg, listen).Control}
		outbound = &sandbox.Outbound{Ports: cfg.BotEgressPorts, Dial: dialer.DialContext}
		if cfg.BotHosts != nil {
			outbound.Lookup = cfg.BotHosts.Lookup(nil)
		}
	}
	host, err := nodehost.New(nodehost.Config{
		Node: cfg.NodeCommand, Dir: filepath.Join(cfg.DataDir, "node-bots"), MemoryMB: cfg.BotMemory,
		Lines: lines.add, API: bundleAPI, Outbound: outbound, Unsandboxed: cfg.UnsandboxedBots, CAFile: cfg.BotCAFile,
	}, log)
	if err != nil {
		lines.close()
		return nil, nil, nil, err
	}
	api := selfURL(listen)
	if !cfg.UnsandboxedBots {
		api = "http://" + bundleAPI.Addr().String()
	}
	caller := sdkbot.New(sdkbot.Config{Tunnels: tunnels, OwnHosts: ownHosts(listen, cfg.PublicURL), Dial: botURLRule(cfg, listen),
		Node: host, Keys: keys, APIURL: api, Log: log})
	return caller, &nodeBots{tunnels: tunnels, host: host, apiURL: api}, func() { tunnels.Close(); host.Close(); lines.close() }, nil
}

// nodeBots is what runs Node code besides the SDK bots' caller: the
// tunnels of `bp dev`, and the Node host with the address its processes
// call the API at (installed integrations run there too).
type nodeBots struct {
	tunnels *tunnel.Server
	host    *nodehost.Host
	apiURL  string
}

// selfURL is how processes on this machine reach the server: its listen
// address, with a wildcard host replaced by loopback.
func selfURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// bundleAPIAddr is where sandboxed bundles find the API: loopback inside
// their own network namespace, on the server's own port, so that the
// address reads the same as the server's.
func bundleAPIAddr(listen net.Addr) net.Addr {
	port := 80
	if a, ok := listen.(*net.TCPAddr); ok && a.Port != 0 {
		port = a.Port
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
}

// ownHosts are the host:port pairs a bot url may name to mean this server
// (a `bp dev` tunnel url): loopback names with the listen port, the listen
// address and the public URL's host.
func ownHosts(a net.Addr, publicURL string) []string {
	_, port, _ := net.SplitHostPort(a.String())
	hosts := []string{a.String(), "127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		hosts = append(hosts, u.Host)
	}
	return hosts
}

// botURLRule is what a bot's url may reach: public addresses, the ranges
// the operator allows, and loopback when the server is a developer's own
// (it listens only on loopback and its public URL names loopback too: a
// server behind a proxy has a public URL of its own). Never the server's
// own ports, its debug listener's included; other ports of a developer's
// machine, its database's too, are the developer's own, and a bot's url
// learns nothing from them (neither what answered nor how a connection
// failed reaches the bot's logs).
func botURLRule(cfg config.Config, listen net.Addr) egress.Rule {
	r := egress.Rule{Allow: cfg.BotURLPrivate, Setting: "--bot-url-private", OwnPorts: ownPorts(cfg, listen)}
	host, _, _ := net.SplitHostPort(listen.String())
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		u, err := url.Parse(cfg.PublicURL)
		pub := u.Hostname()
		ip, perr := netip.ParseAddr(pub)
		r.Loopback = err == nil && (pub == "localhost" || perr == nil && ip.IsLoopback())
	}
	return r
}

// bundleEgressRule is the address rule of bot code's outbound connections,
// sandboxed bundles' and the VM's fetch: public addresses, the addresses of
// the operator's host entries (--bot-hosts), the rest with
// --bot-fetch-private; never the server's own ports, which a bundle
// reaches as the API inside its sandbox.
func bundleEgressRule(cfg config.Config, listen net.Addr) egress.Rule {
	return egress.Rule{Private: cfg.BotFetchPrivate, Allow: cfg.BotHosts.Prefixes(), Setting: "--bot-fetch-private", OwnPorts: ownPorts(cfg, listen)}
}

// ownPorts are the ports this server listens on (--addr, --debug-addr).
func ownPorts(cfg config.Config, listen net.Addr) []int {
	var out []int
	for _, a := range []string{listen.String(), cfg.DebugAddr} {
		if _, port, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(port); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// lineWriter turns the log lines of Node bundles into the bots' logs,
// written in batches by one goroutine: a bot's process never waits for the
// database to print. Past maxPendingLines waiting, lines are dropped and
// counted.
type lineWriter struct {
	st      store.Store
	log     *slog.Logger
	in      chan platform.LogEntry
	done    chan struct{}
	dropped atomic.Int64
	mu      sync.RWMutex // add holds it to read closed; close to set it
	closed  bool
}

const maxPendingLines = 10000

func newLineWriter(st store.Store, log *slog.Logger) *lineWriter {
	w := &lineWriter{st: st, log: log, in: make(chan platform.LogEntry, maxPendingLines), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *lineWriter) add(l nodehost.Line) {
	if l.Integration != "" {
		// An integration's lines are in the logs of the bot that installed
		// it, named after it.
		l.Message = "[" + l.Integration + "] " + l.Message
	}
	e := platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: l.BotID, Timestamp: l.At, Level: l.Level,
		Message: l.Message, UserID: l.UserID, ConversationID: l.ConversationID, WorkflowID: l.WorkflowID}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return // a line printed as the server stops
	}
	select {
	case w.in <- e:
	default:
		w.dropped.Add(1)
	}
}

func (w *lineWriter) run() {
	defer close(w.done)
	for e := range w.in {
		batch := []platform.LogEntry{e}
	more:
		for len(batch) < 500 {
			select {
			case e, ok := <-w.in:
				if !ok {
					break more
				}
				batch = append(batch, e)
			default:
				break more
			}
		}
		if err := w.st.AppendLogs(context.Background(), batch); err != nil {
			w.log.Warn("node bot host: writing bots' log lines", "lines", len(batch), "err", err)
		}
		if n := w.dropped.Swap(0); n > 0 {
			w.log.Warn("node bot host: bots printed faster than their logs could be written; lines dropped", "lines", n)
		}
	}
}

// close writes the lines still waiting, then stops.
func (w *lineWriter) close() {
	w.mu.Lock()
	w.closed = true
	close(w.in)
	w.mu.Unlock()
	<-w.done
}
