// Package config reads botplatform's settings from flags and BOTPLATFORM_*
// environment variables (a flag wins over its variable, which wins over the
// default) and validates them. docs/configuration.md lists every setting.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// Config is every setting of `botplatform serve`.
type Config struct {
	Addr            string
	DataDir         string
	DatabaseURL     string
	AdoptData       bool // the data directory's file storage becomes the database's
	NodeID          string
	PublicURL       string
	ChatURL         string
	LogFormat       string
	LogLevel        string
	AdminToken      string
	ShutdownTimeout time.Duration
	AuthCacheTTL    time.Duration
	UploadURLTTL    time.Duration
	DownloadURLTTL  time.Duration
	ReaperInterval  time.Duration
	SSEPingInterval time.Duration
	SSEWriteTimeout time.Duration
	// Open signal streams of one process, per chat user and per conversation.
	StreamsPerUser         int
	StreamsPerConversation int
	BotTimeout             time.Duration
	BotTimeoutMax          time.Duration
	BotPoll                time.Duration
	BotWorkers             int
	BotStateLimit          int
	BotMemory              int
	BotMaxScheduled        int
	IndexWorkers           int
	EmbeddingsURL          string
	EmbeddingsModel        string
	EmbeddingsKey          string
	// The model server of AI-assisted indexing (OpenAI-compatible).
	AIURL     string
	AIModels  map[string]string // model type -> name
	AIKey     string
	AIPrices  map[string]platform.ModelPrice // model name -> price
	AITimeout time.Duration                  // per request to the model server
	// DebugAddr is the loopback address of the debug endpoints (runtime
	// figures, pprof); empty: none.
	DebugAddr string
}

// env returns BOTPLATFORM_<name>, or the content of the file named by
// BOTPLATFORM_<name>_FILE (for secrets), or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("BOTPLATFORM_" + name); ok {
		return v
	}
	if p, ok := os.LookupEnv("BOTPLATFORM_" + name + "_FILE"); ok {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return def
}

// Parse reads the flags of a subcommand (args excludes the subcommand name).
func Parse(cmd string, args []string, stderr io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", env("ADDR", "127.0.0.1:8080"), "address to listen on (BOTPLATFORM_ADDR)")
	fs.StringVar(&c.DataDir, "data", env("DATA", "./data"), "data directory: SQLite database, blobs, bootstrap.json (BOTPLATFORM_DATA)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "empty for SQLite in the data directory, or postgres://… (BOTPLATFORM_DATABASE_URL)")
	adoptData := env("ADOPT_DATA", "false")
	fs.BoolFunc("adopt-data", "make this data directory's file storage the one the database uses, when the database recorded another (see docs/configuration.md) (BOTPLATFORM_ADOPT_DATA)", func(s string) error {
		adoptData = s
		return nil
	})
	fs.StringVar(&c.NodeID, "node-id", env("NODE_ID", ""), "this process's id among those sharing a PostgreSQL database (at start it takes back its own jobs left by a crash); default: one kept in <data>/nodes (BOTPLATFORM_NODE_ID)")
	fs.StringVar(&c.PublicURL, "public-url", env("PUBLIC_URL", ""), "absolute base URL of every URL the server hands out; default http://<addr> (BOTPLATFORM_PUBLIC_URL)")
	fs.StringVar(&c.ChatURL, "chat-url", env("CHAT_URL", ""), "base URL of the Chat API; default <public-url>/chat (BOTPLATFORM_CHAT_URL)")
	fs.StringVar(&c.EmbeddingsURL, "embeddings-url", env("EMBEDDINGS_URL", ""), "base URL of an OpenAI-compatible embeddings API (…/v1); empty uses the built-in embedder (BOTPLATFORM_EMBEDDINGS_URL)")
	fs.StringVar(&c.EmbeddingsModel, "embeddings-model", env("EMBEDDINGS_MODEL", ""), "embeddings model name, required with --embeddings-url (BOTPLATFORM_EMBEDDINGS_MODEL)")
	fs.StringVar(&c.AIURL, "ai-url", env("AI_URL", ""), "base URL of an OpenAI-compatible chat completions API (…/v1) for AI-assisted indexing; empty: none (BOTPLATFORM_AI_URL)")
	aiModel := fs.String("ai-model", env("AI_MODEL", ""), "model name for every model type, required with --ai-url unless each type is set (BOTPLATFORM_AI_MODEL)")
	aiTypes := map[string]*string{}
	for _, t := range platform.ModelTypes {
		aiTypes[t] = fs.String("ai-model-"+t, env("AI_MODEL_"+strings.ToUpper(t), ""), "model name for modelType "+t+"; default --ai-model (BOTPLATFORM_AI_MODEL_"+strings.ToUpper(t)+")")
	}
	aiPrices := fs.String("ai-prices", env("AI_PRICES", ""), `AI Spend price table, JSON {"model": {"input": USD per 1M tokens, "output": …}} or @file (BOTPLATFORM_AI_PRICES)`)
	fs.StringVar(&c.DebugAddr, "debug-addr", env("DEBUG_ADDR", ""), "loopback address (127.0.0.1:PORT) of the debug endpoints /debug/runtime and /debug/pprof/; empty: none (BOTPLATFORM_DEBUG_ADDR)")
	fs.StringVar(&c.LogFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (BOTPLATFORM_LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (BOTPLATFORM_LOG_LEVEL)")
	shutdown := env("SHUTDOWN_TIMEOUT", "15s")
	fs.Func("shutdown-timeout", "time allowed to drain requests on SIGINT/SIGTERM (BOTPLATFORM_SHUTDOWN_TIMEOUT, default 15s)", func(s string) error {
		shutdown = s
		return nil
	})
	durations := []struct {
		flag, env, def, usage string
		dst                   *time.Duration
		min                   time.Duration
	}{
		{"upload-url-ttl", "UPLOAD_URL_TTL", "1h", "lifetime of a file's uploadUrl", &c.UploadURLTTL, time.Second},
		{"download-url-ttl", "DOWNLOAD_URL_TTL", "15m", "lifetime of a signed file url (files without public_content)", &c.DownloadURLTTL, time.Second},
		{"reaper-interval", "REAPER_INTERVAL", "1m", "how often expired files are deleted", &c.ReaperInterval, time.Second},
		{"sse-ping-interval", "SSE_PING_INTERVAL", "4s", "longest silence on a conversation's event stream before a ping", &c.SSEPingInterval, 100 * time.Millisecond},
		{"sse-write-timeout", "SSE_WRITE_TIMEOUT", "15s", "longest wait for a listener to take a signal or ping before its stream is ended", &c.SSEWriteTimeout, 100 * time.Millisecond},
		{"bot-timeout", "BOT_TIMEOUT", "10s", "deadline of one run of bot code, for bots that set no maxExecutionTime", &c.BotTimeout, 10 * time.Millisecond},
		{"bot-timeout-max", "BOT_TIMEOUT_MAX", "60s", "ceiling on a bot's maxExecutionTime", &c.BotTimeoutMax, 10 * time.Millisecond},
		{"bot-poll", "BOT_POLL", "1s", "longest wait before looking for bot events queued by other processes (PostgreSQL) or whose lease ran out", &c.BotPoll, 10 * time.Millisecond},
		{"ai-timeout", "AI_TIMEOUT", "2m", "longest wait for one answer of the model server (each attempt)", &c.AITimeout, time.Second},
	}
	ints := []struct {
		flag, env, def, usage string
		dst                   *int
		min                   int
	}{
		{"bot-workers", "BOT_WORKERS", "64", "how many bot events run at once (one at a time per conversation)", &c.BotWorkers, 1},
		{"bot-state-limit", "BOT_STATE_LIMIT", "131072", "largest event.state scope (bot, user, conversation) in bytes of JSON", &c.BotStateLimit, 2},
		{"streams-per-user", "STREAMS_PER_USER", "32", "open conversation streams one chat user may hold on this process; 0: no limit", &c.StreamsPerUser, 0},
		{"streams-per-conversation", "STREAMS_PER_CONVERSATION", "128", "open streams of one conversation on this process; 0: no limit", &c.StreamsPerConversation, 0},
		{"bot-memory", "BOT_MEMORY", "256", "memory limit of each bot's process, in MiB", &c.BotMemory, 64},
		{"bot-max-scheduled", "BOT_MAX_SCHEDULED", "1000", "most scheduled events a bot may have pending (scheduleEvent fails beyond)", &c.BotMaxScheduled, 1},
		{"index-workers", "INDEX_WORKERS", "2", "how many files are indexed at once; 0 leaves indexing to other processes", &c.IndexWorkers, 0},
	}
	rawInts := make([]string, len(ints))
	for i, d := range ints {
		rawInts[i] = env(d.env, d.def)
		fs.Func(d.flag, d.usage+" (BOTPLATFORM_"+d.env+", default "+d.def+")", func(s string) error { rawInts[i] = s; return nil })
	}
	raw := make([]string, len(durations))
	for i, d := range durations {
		raw[i] = env(d.env, d.def)
		fs.Func(d.flag, d.usage+" (BOTPLATFORM_"+d.env+", default "+d.def+")", func(s string) error { raw[i] = s; return nil })
	}
	authTTL := env("AUTH_CACHE_TTL", "5s")
	fs.Func("auth-cache-ttl", "how long a successful authentication is reused; 0 disables (BOTPLATFORM_AUTH_CACHE_TTL, default 5s)", func(s string) error {
		authTTL = s
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.AdminToken = env("ADMIN_TOKEN", "")
	c.EmbeddingsKey = env("EMBEDDINGS_KEY", "")
	c.AIKey = env("AI_KEY", "")
	if c.AIURL != "" {
		c.AIModels = map[string]string{}
		for t, v := range aiTypes {
			if c.AIModels[t] = *v; *v == "" {
				c.AIModels[t] = *aiModel
			}
			if c.AIModels[t] == "" {
				return c, fmt.Errorf("ai-model: required with ai-url (or ai-model-%s)", t)
			}
		}
	}
	if *aiPrices != "" {
		b := []byte(*aiPrices)
		if name, ok := strings.CutPrefix(*aiPrices, "@"); ok {
			var err error
			if b, err = os.ReadFile(name); err != nil {
				return c, fmt.Errorf("ai-prices: %v", err)
			}
		}
		if err := json.Unmarshal(b, &c.AIPrices); err != nil {
			return c, fmt.Errorf(`ai-prices: must be JSON such as {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}: %v`, err)
		}
		for m, p := range c.AIPrices {
			if p.Input < 0 || p.Output < 0 {
				return c, fmt.Errorf("ai-prices: %s: prices must not be negative", m)
			}
		}
	}
	var err error
	if c.ShutdownTimeout, err = time.ParseDuration(shutdown); err != nil {
		return c, fmt.Errorf("shutdown-timeout: %v", err)
	}
	for i, d := range durations {
		if *d.dst, err = time.ParseDuration(raw[i]); err != nil || *d.dst < d.min {
			return c, fmt.Errorf("%s: must be a duration of at least %s, such as %s", d.flag, d.min, d.def)
		}
	}
	for i, d := range ints {
		if *d.dst, err = strconv.Atoi(rawInts[i]); err != nil || *d.dst < d.min {
			return c, fmt.Errorf("%s: must be a whole number of at least %d, such as %s", d.flag, d.min, d.def)
		}
	}
	if c.BotTimeoutMax < c.BotTimeout {
		return c, fmt.Errorf("bot-timeout-max: must be at least bot-timeout (%s)", c.BotTimeout)
	}
	if c.AdoptData, err = strconv.ParseBool(adoptData); err != nil && adoptData != "" {
		return c, fmt.Errorf("adopt-data: must be true or false")
	}
	if c.AuthCacheTTL, err = time.ParseDuration(authTTL); err != nil || c.AuthCacheTTL < 0 {
		return c, fmt.Errorf("auth-cache-ttl: must be a duration such as 5s, or 0")
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	var errs []error
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		errs = append(errs, errors.New("database-url: must be empty (SQLite) or start with postgres://"))
	}
	for name, v := range map[string]string{"public-url": c.PublicURL, "chat-url": c.ChatURL} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s: must be an absolute http(s) URL", name))
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, errors.New("log-format: must be text or json"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, errors.New("log-level: must be debug, info, warn or error"))
	}
	if c.EmbeddingsURL != "" {
		if u, err := url.Parse(c.EmbeddingsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("embeddings-url: must be an absolute http(s) URL"))
		}
		if c.EmbeddingsModel == "" {
			errs = append(errs, errors.New("embeddings-model: required with embeddings-url"))
		}
	}
	if c.AIURL != "" {
		if u, err := url.Parse(c.AIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("ai-url: must be an absolute http(s) URL"))
		}
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data: must not be empty"))
	}
	if c.DebugAddr != "" && !loopback(c.DebugAddr) {
		errs = append(errs, errors.New("debug-addr: must be a loopback address such as 127.0.0.1:6060 (the endpoints have no authentication)"))
	}
	return errors.Join(errs...)
}

// loopback tells whether addr (host:port) can only be reached from this
// machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Resolve fills the URLs derived from the address the server listens on.
func (c *Config) Resolve(listenAddr string) {
	if c.PublicURL == "" {
		host := listenAddr
		if h, p, err := net.SplitHostPort(listenAddr); err == nil && (h == "" || h == "0.0.0.0" || h == "::") {
			host = net.JoinHostPort("localhost", p)
		}
		c.PublicURL = "http://" + host
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.ChatURL == "" {
		c.ChatURL = c.PublicURL + "/chat"
	}
	c.ChatURL = strings.TrimRight(c.ChatURL, "/")
}
