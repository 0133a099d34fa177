// Package files holds the Files API's rules: who may see and change which
// files, upserts and their validation, signed upload and download URLs,
// storage quotas, and the expiry reaper.
package files

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Config holds the Files settings.
type Config struct {
	PublicURL      string        // absolute base of upload and content URLs
	UploadURLTTL   time.Duration // lifetime of an uploadUrl
	DownloadURLTTL time.Duration // lifetime of a signed content url
	// RedirectDownloads sends a content url's GET, once checked, to a
	// presigned URL of the blob store (when it presigns) instead of
	// streaming the content through the server.
	RedirectDownloads bool
	// CheckIndexing vets, at upsert, the configuration of a file to index;
	// nil: every configuration is taken.
	CheckIndexing IndexingCheck
}

// Service implements the Files API.
type Service struct {
	store  Store
	blobs  blob.Store
	auth   Accounts
	clock  platform.Clock
	log    *slog.Logger
	cfg    Config
	secret []byte

	orphanMu        sync.Mutex
	lastOrphanSweep time.Time
}

// Accounts authenticates the callers of the Files API and of the storage
// quota routes: the admin service, injected by cmd/botplatform.
type Accounts interface {
	// Authenticate resolves a personal access token to its account and,
	// when workspaceID is not empty, to its membership of that workspace
	// (platform.ErrNotMember when the account is not a member).
	Authenticate(ctx context.Context, token, workspaceID string) (*platform.Actor, error)
	// AuthenticateBotKey resolves a bot API key to the key (its id, and its
	// bot as OwnerID) and the bot's workspace; ok is false when token is not
	// a bot API key at all.
	AuthenticateBotKey(ctx context.Context, token string) (key platform.Token, workspaceID string, ok bool, err error)
	// GetWorkspace is workspace id as act sees it: a 404 unless act's
	// account is a member; act's Member becomes that membership.
	GetWorkspace(ctx context.Context, act *platform.Actor, id string) (platform.Workspace, error)
}

// IndexingCheck checks, at upsert of a file with index true, that its
// indexing configuration can be honoured (plan, model server, AI Spend);
// raw is the upsert's indexing object, possibly empty.
type IndexingCheck func(ctx context.Context, workspaceID, contentType, key string, raw json.RawMessage) error

// New returns a Service. The URL signing key is shared by every process
// using the database.
func New(ctx context.Context, st Store, blobs blob.Store, auth Accounts, clock platform.Clock, log *slog.Logger, cfg Config) (*Service, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret, err := st.Secret(ctx, "file-url-signing", key)
	if err != nil {
		return nil, err
	}
	if cfg.UploadURLTTL <= 0 {
		cfg.UploadURLTTL = config.Defaults().UploadURLTTL
	}
	if cfg.DownloadURLTTL <= 0 {
		cfg.DownloadURLTTL = config.Defaults().DownloadURLTTL
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if _, ok := blobs.(blob.Presigner); cfg.RedirectDownloads && !ok {
		return nil, errors.New("downloads can be redirected only to a blob store that presigns URLs (an S3 bucket)")
	}
	return &Service{store: st, blobs: blobs, auth: auth, clock: clock, log: log, cfg: cfg, secret: secret}, nil
}

// Caller is who calls the Files API, for which bot.
type Caller struct {
	BotID       string
	WorkspaceID string
	CanWrite    bool
	Integration bool   // acting for an integration: sees its own files and shared ones
	Scope       string // key namespace: "" for the bot, else the integration's
	Owner       platform.FileOwner
	// Actor is who holds the token, as the audit log records them: the
	// account of a personal access token, or the bot API key.
	Actor audit.Actor
}

// IntegrationAlias is the alias of the integration the caller acts as, ""
// when it acts as the bot.
func (c *Caller) IntegrationAlias() string {
	if !c.Integration {
		return ""
	}
	return c.Owner.Alias
}

// Headers are the Files API context headers (spec section 5).
type Headers struct {
	BotID, IntegrationID, IntegrationAlias, IntegrationName, UserID, UserRole string
}

// Visibility is the set of files the caller may see, for listings and search.
func (c *Caller) Visibility() store.FileVisibility { return c.visibility() }

func (c *Caller) visibility() store.FileVisibility {
	return store.FileVisibility{BotID: c.BotID, All: !c.Integration, Scope: c.Scope}
}

// sees reports whether the caller may see f.
func (c *Caller) sees(f platform.File) bool {
	return f.BotID == c.BotID && (!c.Integration || f.Scope == c.Scope || f.Has(platform.PolicyIntegrations))
}

// Authorize resolves the bearer token and context headers. The token is a
// personal access token of a member of the bot's workspace (viewers may
// only read), or an API key of that bot. A bot the token cannot reach is
// reported as not found.
func (s *Service) Authorize(ctx context.Context, token string, h Headers) (*Caller, error) {
	if token == "" {
		return nil, platform.Errorf(platform.TypeUnauthorized, "invalid or missing access token")
	}
	if h.BotID == "" {
		return nil, platform.Invalid("x-bot-id", "header is required")
	}
	c := &Caller{BotID: h.BotID}
	if key, ws, ok, err := s.auth.AuthenticateBotKey(ctx, token); ok || err != nil {
		if err != nil {
			return nil, err
		}
		if key.OwnerID != h.BotID {
			return nil, platform.Errorf(platform.TypeForbidden, "x-bot-id: this bot API key belongs to another bot")
		}
		c.WorkspaceID, c.CanWrite, c.Actor = ws, true, audit.BotKey(key.ID)
		if alias, id, ok := platform.IntegrationKeyOf(key); ok {
			// An installed integration's key acts as that integration
			// only, whatever the headers say.
			if h.IntegrationID != "" && h.IntegrationID != id || h.IntegrationAlias != "" && h.IntegrationAlias != alias {
				return nil, platform.Errorf(platform.TypeForbidden, "x-integration-id: this key is the key of integration %q of the bot", alias)
			}
			c.Integration, c.Scope = true, "integration:"+alias
			c.Owner = platform.FileOwner{Type: "integration", Name: alias, Alias: alias}
			return c, nil
		}
	} else {
		ws, err := s.store.GetBotWorkspace(ctx, h.BotID)
		if errors.Is(err, platform.ErrNotFound) {
			if _, aerr := s.auth.Authenticate(ctx, token, ""); aerr != nil {
				return nil, aerr
			}
			return nil, platform.NotFound("bot", h.BotID)
		}
		if err != nil {
			return nil, err
		}
		act, err := s.auth.Authenticate(ctx, token, ws)
		if err == platform.ErrNotMember {
			return nil, platform.NotFound("bot", h.BotID) // not a member: the bot is invisible
		}
		if err != nil {
			return nil, err
		}
		c.WorkspaceID, c.CanWrite, c.Actor = ws, act.Member.Role.AtLeast(platform.RoleDeveloper), audit.Account(act.Account)
	}
	switch {
	case h.IntegrationID != "" || h.IntegrationAlias != "" || h.IntegrationName != "":
		c.Integration = true
		c.Scope = "integration:" + firstNonEmpty(h.IntegrationID, h.IntegrationAlias, h.IntegrationName)
		c.Owner = platform.FileOwner{Type: "integration", Name: firstNonEmpty(h.IntegrationName, h.IntegrationAlias, h.IntegrationID), Alias: firstNonEmpty(h.IntegrationAlias, h.IntegrationName, h.IntegrationID)}
	case h.UserID != "":
		c.Owner = platform.FileOwner{Type: "user", ID: h.UserID}
	default:
		c.Owner = platform.FileOwner{Type: "bot", ID: h.BotID}
	}
	return c, nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func (c *Caller) requireWrite() error {
	if !c.CanWrite {
		return platform.Errorf(platform.TypeForbidden, "changing files requires the developer role or higher, or a bot API key")
	}
	return nil
}

// file loads a file the caller may see, else 404.
func (s *Service) file(ctx context.Context, c *Caller, id string) (platform.File, error) {
	f, err := s.store.GetFile(ctx, c.BotID, id)
	if err == nil && !c.sees(f) {
		err = platform.ErrNotFound
	}
	if errors.Is(err, platform.ErrNotFound) {
		return f, platform.NotFound("file", id)
	}
	return f, err
}

// changeable loads a file the caller may change: an integration changes
// only the files of its own keys, as the integrations access policy shares
// the others for reading (spec 4.1: read, search and list).
func (s *Service) changeable(ctx context.Context, c *Caller, id string) (platform.File, error) {
	f, err := s.file(ctx, c, id)
	if err == nil && c.Integration && f.Scope != c.Scope {
		err = platform.Errorf(platform.TypeForbidden, "file %q is shared with integrations for reading only; it cannot be changed or deleted by this integration", id)
	}
	return f, err
}

// removeBlob deletes content that no file refers to any more; failures are
// logged, as the content is unreachable anyway.
func (s *Service) removeBlob(ctx context.Context, key string) {
	if key == "" {
		return
	}
	if err := s.blobs.Delete(ctx, key); err != nil {
		s.log.Warn("removing file content", "blob", key, "err", err)
	}
}

// callerKey holds a Caller the server itself made, for a request it serves
// in-process on a bot's behalf (bot code calling the API).
type callerKey struct{}

// WithCaller returns ctx carrying c as the caller of an in-process request.
// Requests from the network never carry one.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller an in-process request carries, if any.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}
