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
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/ratelimit"
)

// Config is every setting of `botplatform serve`.
type Config struct {
	Addr            string
	DataDir         string
	DatabaseURL     string
	DatabaseConns   int  // PostgreSQL connections at most
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
	// JobLease is how long a node's claim on a job (a bot event, an
	// indexing) holds without being renewed.
	JobLease        time.Duration
	BotWorkers      int
	BotStateLimit   int
	BotMemory       int
	BotMaxScheduled int
	// BotVersionsKept is how many versions of each bot are kept.
	BotVersionsKept int
	// BotFetchPrivate lets bot code's fetch reach loopback, private and
	// link-local addresses.
	BotFetchPrivate bool
	// BotEgressPorts are the TCP ports sandboxed Node bundles may connect
	// to on any IPv4 address, under the rule of BotFetchPrivate.
	BotEgressPorts []int
	// BotHosts are static host entries for bot code's outbound
	// connections (a name stands for these addresses instead of what DNS
	// says, and they are reachable whatever BotFetchPrivate says).
	BotHosts egress.Hosts
	// BotCAFile is a PEM file of certificate authorities bot code trusts
	// besides the system's.
	BotCAFile string
	// UnsandboxedBots runs Node bundles as the server's own user where no
	// sandbox can be made (one trusted tenant only).
	UnsandboxedBots bool
	// BotURLPrivate are the ranges, not public, that a bot's url may
	// reach (bots served on the deployment's own network).
	BotURLPrivate []netip.Prefix
	// NodeCommand is the node executable that runs bots deployed as Node
	// bundles (default: node on PATH).
	NodeCommand     string
	IndexWorkers    int
	EmbeddingsURL   string
	EmbeddingsModel string
	EmbeddingsKey   string
	// The model server of AI-assisted indexing (OpenAI-compatible).
	AIURL    string
	AIModels map[string]string // model type -> name
	// AIServers are more model servers by name (--ai-servers), each with
	// its key (BOTPLATFORM_AI_KEY_<NAME>): a model name ending in
	// @<name> is served by that one (ai.Config.Servers).
	AIServers map[string]AIServer
	// AIModelMap maps the model ids bots ask for to model names
	// (--ai-model-map), beyond best, auto and fast.
	AIModelMap map[string]string
	AIKey      string
	AIPrices   map[string]platform.ModelPrice // model name -> price
	AITimeout  time.Duration                  // per request to the model server
	// AIBotConcurrency is how many model calls of the LLM API one bot makes
	// at once; more wait for one of them to end.
	AIBotConcurrency int
	// AIWorkspaceConcurrency is how many model calls the bots of one
	// workspace make at once.
	AIWorkspaceConcurrency int
	// AILogPrompts puts the messages and the answer of each LLM API call
	// in the bot's logs.
	AILogPrompts bool
	// AISearchRewrite has the model turn each search's question into
	// search terms first (needs AIURL).
	AISearchRewrite bool
	// AIIndexQuestions has the model write, for each passage indexed, the
	// questions it answers (a lower-weighted full-text field; needs AIURL).
	AIIndexQuestions bool
	// DebugAddr is the loopback address of the debug endpoints (runtime
	// figures, pprof); empty: none.
	DebugAddr string
	// MetricsToken, when set, is the bearer token GET /metrics requires.
	MetricsToken string
	// RateLimits are the request rate limits by kind; none by default.
	RateLimits ratelimit.Rates
	// Backup schedules backups of the data directory.
	Backup Backup
	// AuditRetention is how long audit records are kept; 0: forever.
	AuditRetention time.Duration
	// Blob is the bucket that holds file contents; nil: <data>/blobs.
	Blob *blob.S3Config
	// BlobDownload is how content in the bucket is downloaded: "stream"
	// through the server, or "redirect" to a presigned URL of the bucket.
	BlobDownload string
}

// env returns BOTPLATFORM_<name>, or the content of the file named by
// BOTPLATFORM_<name>_FILE (for secrets), or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("BOTPLATFORM_" + name); ok {
		return v
	}
	if v, set, err := fileEnv("BOTPLATFORM_" + name); set && err == nil {
		return v
	}
	return def
}

// fileEnv is the trimmed content of the file that name_FILE names; set is
// false when name_FILE is not set.
func fileEnv(name string) (v string, set bool, err error) {
	p, set := os.LookupEnv(name + "_FILE")
	if !set {
		return "", false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", true, fmt.Errorf("%s_FILE: %v", name, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// A setting is one flag (none for variables that hold secrets) with its
// BOTPLATFORM_<env> variable, default, help and parser: the one place each
// is declared. set parses the value in force (flag, else variable, else
// def) into the Config, and says what is wrong with it naming the flag.
type setting struct {
	flag, env, def, usage string
	isBool                bool // the flag may be given without a value
	set                   func(s setting, v string) error
}

// AIServer is a model server beside --ai-url's.
type AIServer struct {
	URL, Key string
}

// pending holds what several settings decide together, after all are read.
type pending struct {
	aiModel    string
	aiTypes    map[string]string
	aiPrices   string
	aiServers  string
	aiModelMap string
}

// settings is every setting of serve, in the order of its help and checks.
func settings(c *Config, p *pending) []setting {
	list := []setting{
		{flag: "addr", env: "ADDR", def: "127.0.0.1:8080", usage: "address to listen on", set: text(&c.Addr)},
		{flag: "data", env: "DATA", def: "./data", usage: "data directory: SQLite database, blobs, bootstrap.json", set: text(&c.DataDir)},
		{flag: "database-url", env: "DATABASE_URL", usage: "empty for SQLite in the data directory, or postgres://…", set: text(&c.DatabaseURL)},
		{flag: "database-connections", env: "DATABASE_CONNECTIONS", def: "20", usage: "PostgreSQL connections this process opens at most; several nodes open this many each (docs/deploy.md#sizing)", set: whole(&c.DatabaseConns, 4)},
		{flag: "adopt-data", env: "ADOPT_DATA", def: "false", isBool: true, usage: "make this data directory's file storage the one the database uses, when the database recorded another (see docs/configuration.md)", set: boolean(&c.AdoptData)},
		{flag: "node-id", env: "NODE_ID", usage: "this process's id among those sharing a PostgreSQL database (at start it takes back its own jobs left by a crash); default: one kept in <data>/nodes", set: text(&c.NodeID)},
		{flag: "public-url", env: "PUBLIC_URL", usage: "absolute base URL of every URL the server hands out; default http://<addr>", set: text(&c.PublicURL)},
		{flag: "chat-url", env: "CHAT_URL", usage: "base URL of the Chat API; default <public-url>/chat", set: text(&c.ChatURL)},
		{flag: "embeddings-url", env: "EMBEDDINGS_URL", usage: "base URL of an OpenAI-compatible embeddings API (…/v1); empty uses the built-in embedder", set: text(&c.EmbeddingsURL)},
		{flag: "embeddings-model", env: "EMBEDDINGS_MODEL", usage: "embeddings model name, required with --embeddings-url", set: text(&c.EmbeddingsModel)},
		{env: "EMBEDDINGS_KEY", usage: "the embeddings server's API key", set: text(&c.EmbeddingsKey)},
		{flag: "ai-url", env: "AI_URL", usage: "base URL of an OpenAI-compatible chat completions API (…/v1) for AI-assisted indexing and the bots' LLM API (/v2/cognitive); empty: none", set: text(&c.AIURL)},
		{flag: "ai-model", env: "AI_MODEL", usage: "model name for every model type, required with --ai-url unless each type is set", set: text(&p.aiModel)},
	}
	for _, t := range platform.ModelTypes {
		list = append(list, setting{flag: "ai-model-" + t, env: "AI_MODEL_" + strings.ToUpper(t), usage: "model name for modelType " + t + "; default --ai-model",
			set: func(_ setting, v string) error { p.aiTypes[t] = v; return nil }})
	}
	list = append(list, []setting{
		{env: "AI_KEY", usage: "the model server's API key", set: text(&c.AIKey)},
		{flag: "ai-prices", env: "AI_PRICES", usage: `AI Spend price table, JSON {"model": {"input": USD per 1M tokens, "output": …}} or @file`, set: text(&p.aiPrices)},
		{flag: "ai-servers", env: "AI_SERVERS", usage: "more model servers, name=URL,…: a model name ending in @name is served by that one (its key: BOTPLATFORM_AI_KEY_<NAME>); needs --ai-url", set: text(&p.aiServers)},
		{flag: "ai-model-map", env: "AI_MODEL_MAP", usage: `model ids bots ask for mapped to your models, JSON {"openai:gpt-4o": "qwen2.5:32b@gpu"} or @file; needs --ai-url`, set: text(&p.aiModelMap)},
		{flag: "debug-addr", env: "DEBUG_ADDR", usage: "loopback address (127.0.0.1:PORT) of the debug endpoints /debug/runtime and /debug/pprof/; empty: none", set: text(&c.DebugAddr)},
		{flag: "metrics-token", env: "METRICS_TOKEN", usage: "bearer token that GET /metrics (Prometheus) requires; empty: /metrics answers anyone who reaches the server", set: text(&c.MetricsToken)},
		{flag: "log-format", env: "LOG_FORMAT", def: "text", usage: "text or json", set: text(&c.LogFormat)},
		{flag: "log-level", env: "LOG_LEVEL", def: "info", usage: "debug, info, warn or error", set: text(&c.LogLevel)},
		{env: "ADMIN_TOKEN", usage: "value of the token created at the first start", set: text(&c.AdminToken)},
		{flag: "shutdown-timeout", env: "SHUTDOWN_TIMEOUT", def: "15s", usage: "time allowed to drain requests on SIGINT/SIGTERM",
			set: func(_ setting, v string) error {
				var err error
				if c.ShutdownTimeout, err = time.ParseDuration(v); err != nil {
					return fmt.Errorf("shutdown-timeout: %v", err)
				}
				return nil
			}},
		{flag: "upload-url-ttl", env: "UPLOAD_URL_TTL", def: "1h", usage: "lifetime of a file's uploadUrl", set: duration(&c.UploadURLTTL, time.Second)},
		{flag: "download-url-ttl", env: "DOWNLOAD_URL_TTL", def: "15m", usage: "lifetime of a signed file url (files without public_content)", set: duration(&c.DownloadURLTTL, time.Second)},
		{flag: "reaper-interval", env: "REAPER_INTERVAL", def: "1m", usage: "how often expired files are deleted", set: duration(&c.ReaperInterval, time.Second)},
		{flag: "sse-ping-interval", env: "SSE_PING_INTERVAL", def: "4s", usage: "longest silence on a conversation's event stream before a ping", set: duration(&c.SSEPingInterval, 100*time.Millisecond)},
		{flag: "sse-write-timeout", env: "SSE_WRITE_TIMEOUT", def: "15s", usage: "longest wait for a listener to take a signal or ping before its stream is ended", set: duration(&c.SSEWriteTimeout, 100*time.Millisecond)},
		{flag: "bot-timeout", env: "BOT_TIMEOUT", def: "10s", usage: "deadline of one run of bot code, for bots that set no maxExecutionTime", set: duration(&c.BotTimeout, 10*time.Millisecond)},
		{flag: "bot-timeout-max", env: "BOT_TIMEOUT_MAX", def: "60s", usage: "ceiling on a bot's maxExecutionTime", set: duration(&c.BotTimeoutMax, 10*time.Millisecond)},
		{flag: "bot-poll", env: "BOT_POLL", def: "1s", usage: "longest wait before looking for bot events queued by other processes (PostgreSQL) or whose lease ran out", set: duration(&c.BotPoll, 10*time.Millisecond)},
		{flag: "job-lease", env: "JOB_LEASE", def: "1m", usage: "how long a claim on a bot event or an indexing job holds unless its process renews it (every third of this, while it works): a process that dies has its jobs taken over this long after", set: duration(&c.JobLease, time.Second)},
		{flag: "ai-timeout", env: "AI_TIMEOUT", def: "2m", usage: "longest wait for one answer of the model server (each attempt)", set: duration(&c.AITimeout, time.Second)},
		{flag: "ai-bot-concurrency", env: "AI_BOT_CONCURRENCY", def: "4", usage: "model calls one bot makes at once through the LLM API (docs/llm.md); more wait for one to end, so that a bot never waits behind another bot's calls", set: whole(&c.AIBotConcurrency, 1)},
		{flag: "ai-workspace-concurrency", env: "AI_WORKSPACE_CONCURRENCY", def: "16", usage: "model calls the bots of one workspace make at once through the LLM API (docs/llm.md); more wait, so that one workspace cannot take the whole model server", set: whole(&c.AIWorkspaceConcurrency, 1)},
		{flag: "ai-log-prompts", env: "AI_LOG_PROMPTS", def: "false", isBool: true, usage: "put the messages and the answer of each LLM API call in the bot's logs (8 KB of each at most); off: only the model, tokens, cost and time", set: boolean(&c.AILogPrompts)},
		{flag: "bot-workers", env: "BOT_WORKERS", def: "64", usage: "how many bot events run at once (one at a time per conversation)", set: whole(&c.BotWorkers, 1)},
		{flag: "bot-state-limit", env: "BOT_STATE_LIMIT", def: "131072", usage: "largest event.state scope (bot, user, conversation) in bytes of JSON", set: whole(&c.BotStateLimit, 2)},
		{flag: "streams-per-user", env: "STREAMS_PER_USER", def: "32", usage: "open conversation streams one chat user may hold on this process; 0: no limit", set: whole(&c.StreamsPerUser, 0)},
		{flag: "streams-per-conversation", env: "STREAMS_PER_CONVERSATION", def: "128", usage: "open streams of one conversation on this process; 0: no limit", set: whole(&c.StreamsPerConversation, 0)},
		{flag: "bot-memory", env: "BOT_MEMORY", def: "256", usage: "memory limit of each bot's process, in MiB", set: whole(&c.BotMemory, 64)},
		{flag: "bot-max-scheduled", env: "BOT_MAX_SCHEDULED", def: "1000", usage: "most scheduled events a bot may have pending (scheduleEvent fails beyond)", set: whole(&c.BotMaxScheduled, 1)},
		{flag: "bot-versions-keep", env: "BOT_VERSIONS_KEEP", def: "50", usage: "how many versions of each bot are kept (the oldest are removed)", set: whole(&c.BotVersionsKept, 1)},
		{flag: "bot-fetch-private", env: "BOT_FETCH_PRIVATE", def: "false", isBool: true, usage: "let bot code's fetch reach loopback, private and link-local addresses (off: refused after DNS resolution, and on every redirect)", set: boolean(&c.BotFetchPrivate)},
		{flag: "bot-egress-ports", env: "BOT_EGRESS_PORTS", def: "80,443", usage: "TCP ports sandboxed Node bundles may connect to, on any IPv4 address the address rule of bot code's fetch allows (see --bot-fetch-private); with their names resolved by the server; none: no outbound network",
			set: func(s setting, v string) error {
				var err error
				c.BotEgressPorts, err = ports(s.flag, v)
				return err
			}},
		{flag: "bot-hosts", env: "BOT_HOSTS", usage: "static host entries for bot and integration code, comma-separated (api.example.com=10.0.0.5): the name stands for the address instead of what DNS says, and the address is reachable although it may not be public; for a service on the deployment's own network, or a stand-in of one in tests",
			set: func(s setting, v string) error {
				var err error
				c.BotHosts, err = egress.ParseHosts(s.flag, v)
				return err
			}},
		{flag: "bot-ca-file", env: "BOT_CA_FILE", usage: "PEM file of certificate authorities that bot and integration code trusts besides the system's (a company's own CA, a TLS-inspecting proxy's)", set: text(&c.BotCAFile)},
		{flag: "unsandboxed-bots", env: "UNSANDBOXED_BOTS", def: "false", isBool: true, usage: "run Node bundles without a sandbox, as the server's own user, where this machine cannot make one (single tenant only: any developer's bundle can then read the server's data)", set: boolean(&c.UnsandboxedBots)},
		{flag: "bot-url-private", env: "BOT_URL_PRIVATE", usage: "address ranges (10.0.0.0/8,fd00::/8) that bots' urls may reach although not public; others, loopback aside on a server that listens only on loopback, are refused after DNS resolution",
			set: func(s setting, v string) error {
				var err error
				c.BotURLPrivate, err = prefixes(s.flag, v)
				return err
			}},
		{flag: "ai-search-rewrite", env: "AI_SEARCH_REWRITE", def: "false", isBool: true, usage: "have the model server (--ai-url) turn each searchFiles question into search terms first, charged as AI Spend", set: boolean(&c.AISearchRewrite)},
		{flag: "ai-index-questions", env: "AI_INDEX_QUESTIONS", def: "false", isBool: true, usage: "have the model server (--ai-url) write, for each passage indexed, the questions it answers, searched as a lower-weighted field; charged as AI Spend", set: boolean(&c.AIIndexQuestions)},
		{flag: "node", env: "NODE", usage: "node executable that runs bots deployed as Node bundles (bp deploy); default: node on PATH", set: text(&c.NodeCommand)},
		{flag: "index-workers", env: "INDEX_WORKERS", def: "2", usage: "how many files are indexed at once; 0 leaves indexing to other processes", set: whole(&c.IndexWorkers, 0)},
		{flag: "auth-cache-ttl", env: "AUTH_CACHE_TTL", def: "5s", usage: "how long a successful authentication is reused; 0 disables",
			set: func(_ setting, v string) error {
				var err error
				if c.AuthCacheTTL, err = time.ParseDuration(v); err != nil || c.AuthCacheTTL < 0 {
					return fmt.Errorf("auth-cache-ttl: must be a duration such as 5s, or 0")
				}
				return nil
			}},
	}...)
	list = append(list, rateSettings(c)...)
	list = append(list, auditSettings(c)...)
	list = append(list, blobSettings(c)...)
	return append(list, backupSettings(c)...)
}

// prefixes reads a comma-separated list of address ranges, a lone address
// being a range of one.
func prefixes(flag, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%s: %q is not an address range such as 10.0.0.0/8 or an address", flag, f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ports reads a comma-separated list of TCP ports; "" and "none" are none.
func ports(flag, v string) ([]int, error) {
	var out []int
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%s: %q is not a TCP port (1 to 65535)", flag, f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func text(dst *string) func(setting, string) error {
	return func(_ setting, v string) error { *dst = v; return nil }
}

func duration(dst *time.Duration, min time.Duration) func(setting, string) error {
	return func(s setting, v string) error {
		var err error
		if *dst, err = time.ParseDuration(v); err != nil || *dst < min {
			return fmt.Errorf("%s: must be a duration of at least %s, such as %s", s.flag, min, s.def)
		}
		return nil
	}
}

func boolean(dst *bool) func(setting, string) error {
	return func(s setting, v string) error {
		var err error
		if *dst, err = strconv.ParseBool(v); err != nil && v != "" {
			return fmt.Errorf("%s: must be true or false", s.flag)
		}
		return nil
	}
}

func whole(dst *int, min int) func(setting, string) error {
	return func(s setting, v string) error {
		var err error
		if *dst, err = strconv.Atoi(v); err != nil || *dst < min {
			return fmt.Errorf("%s: must be a whole number of at least %d, such as %s", s.flag, min, s.def)
		}
		return nil
	}
}

// help is a setting's line in --help: what it is, its variable and default.
func (s setting) help() string {
	if s.def == "" {
		return fmt.Sprintf("%s (BOTPLATFORM_%s)", s.usage, s.env)
	}
	return fmt.Sprintf("%s (BOTPLATFORM_%s, default %s)", s.usage, s.env, s.def)
}

// Defaults is the configuration with every setting at its default. The
// services fall back to its values when built without a setting (tests).
var Defaults = sync.OnceValue(func() Config {
	var c Config
	p := pending{aiTypes: map[string]string{}}
	for _, s := range settings(&c, &p) {
		if err := s.set(s, s.def); err != nil {
			panic(err) // a default that fails its own check
		}
	}
	return c
})

// Parse reads the flags of a subcommand (args excludes the subcommand name).
func Parse(cmd string, args []string, stderr io.Writer) (Config, error) {
	var c Config
	p := pending{aiTypes: map[string]string{}}
	list := settings(&c, &p)
	given := map[string]string{}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, s := range list {
		if s.flag == "" {
			continue
		}
		record := func(v string) error { given[s.flag] = v; return nil }
		if s.isBool {
			fs.BoolFunc(s.flag, s.help(), record)
		} else {
			fs.Func(s.flag, s.help(), record)
		}
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range list {
		v, ok := given[s.flag]
		if !ok || s.flag == "" {
			v = env(s.env, s.def)
		}
		if err := s.set(s, v); err != nil {
			return c, err
		}
	}
	if err := p.apply(&c); err != nil {
		return c, err
	}
	if c.BotTimeoutMax < c.BotTimeout {
		return c, fmt.Errorf("bot-timeout-max: must be at least bot-timeout (%s)", c.BotTimeout)
	}
	return c, c.validate()
}

// apply fills the model names and the price table, which depend on each
// other's settings.
func (p *pending) apply(c *Config) error {
	if c.AISearchRewrite && c.AIURL == "" {
		return fmt.Errorf("ai-search-rewrite: needs a model server (--ai-url)")
	}
	if c.AIIndexQuestions && c.AIURL == "" {
		return fmt.Errorf("ai-index-questions: needs a model server (--ai-url)")
	}
	if c.AIURL != "" {
		c.AIModels = map[string]string{}
		for _, t := range platform.ModelTypes {
			if c.AIModels[t] = p.aiTypes[t]; c.AIModels[t] == "" {
				c.AIModels[t] = p.aiModel
			}
			if c.AIModels[t] == "" {
				return fmt.Errorf("ai-model: required with ai-url (or ai-model-%s)", t)
			}
		}
	}
	if err := p.applyServers(c); err != nil {
		return err
	}
	if p.aiPrices == "" {
		return nil
	}
	b, err := jsonSetting("ai-prices", p.aiPrices)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &c.AIPrices); err != nil {
		return fmt.Errorf(`ai-prices: must be JSON such as {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}: %v`, err)
	}
	for m, pr := range c.AIPrices {
		if pr.Input < 0 || pr.Output < 0 {
			return fmt.Errorf("ai-prices: %s: prices must not be negative", m)
		}
	}
	return nil
}

// jsonSetting is the JSON of a setting given inline or as @file.
func jsonSetting(flag, v string) ([]byte, error) {
	name, ok := strings.CutPrefix(v, "@")
	if !ok {
		return []byte(v), nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	return b, nil
}

var serverNameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// applyServers reads --ai-servers and --ai-model-map, and checks that
// every model name ending in @name names a server.
func (p *pending) applyServers(c *Config) error {
	if c.AIURL == "" {
		if p.aiServers != "" || p.aiModelMap != "" {
			return fmt.Errorf("ai-servers, ai-model-map: need a model server (--ai-url)")
		}
		return nil
	}
	for entry := range strings.SplitSeq(p.aiServers, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		name, u, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || !serverNameRe.MatchString(name) {
			return fmt.Errorf("ai-servers: %q: want name=URL, the name lower-case letters, digits and dashes", entry)
		}
		if pu, err := url.Parse(strings.TrimSpace(u)); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return fmt.Errorf("ai-servers: %s: must be an absolute http(s) URL", name)
		}
		if c.AIServers == nil {
			c.AIServers = map[string]AIServer{}
		}
		if _, dup := c.AIServers[name]; dup {
			return fmt.Errorf("ai-servers: %s: named twice", name)
		}
		c.AIServers[name] = AIServer{URL: strings.TrimSpace(u), Key: env("AI_KEY_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_")), "")}
	}
	if p.aiModelMap != "" {
		b, err := jsonSetting("ai-model-map", p.aiModelMap)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &c.AIModelMap); err != nil {
			return fmt.Errorf(`ai-model-map: must be JSON such as {"openai:gpt-4o": "qwen2.5:32b"}: %v`, err)
		}
	}
	check := func(flag, model string) error {
		if strings.TrimSpace(model) == "" {
			return fmt.Errorf("%s: a model name must not be empty", flag)
		}
		if _, server, ok := cutServer(model); ok {
			if _, known := c.AIServers[server]; !known {
				return fmt.Errorf("%s: %s: no model server %q in --ai-servers", flag, model, server)
			}
		}
		return nil
	}
	for _, t := range platform.ModelTypes {
		if err := check("ai-model-"+t, c.AIModels[t]); err != nil {
			return err
		}
	}
	for id, model := range c.AIModelMap {
		if err := check("ai-model-map: "+id, model); err != nil {
			return err
		}
	}
	return nil
}

// cutServer splits a model name of the form name@server.
func cutServer(model string) (name, server string, ok bool) {
	i := strings.LastIndexByte(model, '@')
	if i <= 0 || i == len(model)-1 {
		return model, "", false
	}
	return model[:i], model[i+1:], true
}

func (c *Config) validate() error {
	var errs []error
	if err := c.validateBackup(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateBlob(); err != nil {
		errs = append(errs, err)
	}
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
	if c.BotCAFile != "" {
		if _, err := egress.ReadCAFile(c.BotCAFile); err != nil {
			errs = append(errs, err)
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
