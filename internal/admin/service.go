// Package admin holds the Admin API's rules: who may do what in a workspace,
// accounts and their tokens, workspaces and members, bots and bot keys.
package admin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
)

// Service implements the Admin API on a store.
type Service struct {
	*Auth
	store   Store
	clock   platform.Clock
	chatURL string // base of every chat webhook URL
	content ContentRemover
	check   BotChecker
	tables  TableDeployer
	onBots  func()
	// registrar runs installed integrations' register and unregister; nil:
	// their code does not run here.
	registrar Registrar
	// integrationWebhooks is the base of installed integrations' webhook
	// URLs.
	integrationWebhooks string
	versions            versions
	audit               *audit.Recorder
}

// ContentRemover deletes stored file content (the blob store). Deleting a
// bot or a workspace deletes its files, whose content goes too.
type ContentRemover interface {
	Delete(ctx context.Context, key string) error
}

func (s *Service) botsChanged() {
	if s.onBots != nil {
		s.onBots()
	}
}

// BotChecker checks, before a bot is saved, what the bot runtime will run
// (cmd/botplatform injects the runtime): its code, compiled in a bot
// process (a syntax error, or code too costly to compile, is an
// InvalidPayload error on code), its recurring events (each needs a
// type and a cron schedule the runtime understands), and the url it is
// served at (one the runtime would refuse to call is an error on url).
type BotChecker interface {
	CheckCode(ctx context.Context, code string) (platform.CodeDefinition, error)
	CheckRecurring(spec json.RawMessage) error
	CheckURL(url string) error
}

// TableDeployer creates or migrates the tables a bot declares at deploy
// (tables.Service).
type TableDeployer interface {
	DeployTables(ctx context.Context, botID string, declared map[string]json.RawMessage) error
}

func (s *Service) deployTables(ctx context.Context, b platform.Bot, declared map[string]json.RawMessage) error {
	if len(declared) == 0 {
		return nil
	}
	if s.tables == nil {
		return platform.Invalid("tables", "this server has no Tables API")
	}
	return s.tables.DeployTables(ctx, b.ID, declared)
}

// errNoRuntime refuses what only a bot runtime could check and run.
func errNoRuntime(field string) error {
	return platform.Invalid(field, "this server does not run bot code")
}

// checkCode checks bot code about to be deployed; without a checker (a
// server without a bot runtime) code is refused.
func (s *Service) checkCode(ctx context.Context, code string) (platform.CodeDefinition, error) {
	if s.check == nil {
		return platform.CodeDefinition{}, errNoRuntime("code")
	}
	return s.check.CheckCode(ctx, code)
}

// checkRecurring checks a bot's recurring events as they will be saved;
// without a checker they are refused, as code is.
func (s *Service) checkRecurring(spec json.RawMessage) error {
	if s.check == nil {
		return errNoRuntime("recurringEvents")
	}
	return s.check.CheckRecurring(spec)
}

// removeContent deletes content no file refers to any more.
func (s *Service) removeContent(ctx context.Context, keys []string) {
	if s.content == nil {
		return
	}
	for _, k := range keys {
		_ = s.content.Delete(ctx, k) // unreachable now in any case
	}
}

// Config tunes the admin service.
type Config struct {
	ChatURL string // the Chat API's base, which every chat webhook URL starts with
	// AuthCacheTTL is how long a successful authentication is reused
	// without asking the database; 0: never.
	AuthCacheTTL time.Duration
	VersionsKept int    // versions kept of each bot; 0 = DefaultVersionsKept
	PublicURL    string // the server's public base URL, which getBotVersion's url starts with
	// Content is where deleted files' content is removed from (nil: it
	// stays where it is).
	Content ContentRemover
	// Auth authenticates the callers; nil: one of the service's own, with
	// AuthCacheTTL. Give the one the Files API and the SDK bot host use.
	Auth *Auth
	// Checker checks bots' code, recurring events and url before they are
	// saved (the bot runtime); nil: code and recurring events are refused.
	Checker BotChecker
	// Tables deploys the tables a bot declares; nil: declaring tables is
	// refused.
	Tables TableDeployer
	// BotsChanged is called after a bot is created, updated or deleted (the
	// runtime reloads recurring events); may be nil.
	BotsChanged func()
	// Integrations tells deployed integrations' code about bots'
	// installations (package integration); nil: installing one marks it
	// registration_failed.
	Integrations Registrar
	// IntegrationWebhooks is the base of installed integrations' webhook
	// URLs (<public URL>/webhooks).
	IntegrationWebhooks string
}

// New returns a Service.
func New(s Store, clock platform.Clock, cfg Config) *Service {
	if cfg.VersionsKept <= 0 {
		cfg.VersionsKept = DefaultVersionsKept
	}
	if cfg.Auth == nil {
		cfg.Auth = NewAuth(s, clock, cfg.AuthCacheTTL)
	}
	return &Service{Auth: cfg.Auth, store: s, clock: clock, chatURL: strings.TrimRight(cfg.ChatURL, "/"),
		audit: audit.NewRecorder(s, clock), content: cfg.Content, versions: versions{kept: cfg.VersionsKept, publicURL: cfg.PublicURL},
		check: cfg.Checker, tables: cfg.Tables, onBots: cfg.BotsChanged, registrar: cfg.Integrations,
		integrationWebhooks: strings.TrimRight(cfg.IntegrationWebhooks, "/")}
}

// Token prefixes tell a personal access token from a bot API key.
const (
	patPrefix = "bp_pat_"
	bakPrefix = "bp_bak_"
)

func newSecret(prefix string) (value string, hash []byte) {
	value = prefix + platform.RandomToken(30)
	return value, hashToken(value)
}

func hashToken(v string) []byte {
	h := sha256.Sum256([]byte(v))
	return h[:]
}

var errBadToken = platform.Errorf(platform.TypeUnauthorized, "invalid or missing access token")

// require fails with 403 unless the actor's role is at least min.
func require(a *platform.Actor, min platform.Role, action string) error {
	return a.Require(min, action)
}

// notFound maps a store's ErrNotFound to a 404 naming the resource.
func notFound(err error, kind, id string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound(kind, id)
	}
	return err
}

// PageSize validates a requested page size: default def, 1 to 100.
func PageSize(v *int, def int) (int, error) { return PageSizeUpTo(v, def, 100) }

// PageSizeUpTo validates a requested page size: default def, 1 to max.
func PageSizeUpTo(v *int, def, max int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > max {
		return 0, platform.Errorf(platform.TypeInvalidQuery, "pageSize: must be between 1 and %d", max)
	}
	return *v, nil
}
