package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/signing"
	"github.com/botplatform/botplatform/internal/store"
)

// CreateBotKey creates a bot API key; its value is returned only here.
func (s *Service) CreateBotKey(ctx context.Context, a *platform.Actor, botID, note string) (platform.Token, string, error) {
	if err := require(a, platform.RoleDeveloper, "creating a bot API key"); err != nil {
		return platform.Token{}, "", err
	}
	if botID == "" {
		return platform.Token{}, "", platform.Invalid("botId", "is required")
	}
	if len(note) > 500 {
		return platform.Token{}, "", platform.Invalid("note", "at most 500 characters")
	}
	value, hash := newSecret(bakPrefix)
	t := platform.Token{ID: platform.NewID(platform.PrefixBotKey), OwnerID: botID, Note: note, Hash: hash, CreatedAt: s.clock.Now()}
	rec := audit.Record{Action: audit.CreateBotKey, ResourceID: t.ID, ResourceName: note, Value: "bot " + botID}
	return t, value, notFound(s.store.CreateBotKey(s.audited(ctx, a, rec), a.Member.WorkspaceID, t), "bot", botID)
}

func (s *Service) ListBotKeys(ctx context.Context, a *platform.Actor, botID string) ([]platform.Token, error) {
	if err := require(a, platform.RoleDeveloper, "listing bot API keys"); err != nil {
		return nil, err
	}
	if _, err := s.GetBot(ctx, a, botID); err != nil {
		return nil, err
	}
	return s.store.ListBotKeys(ctx, a.Member.WorkspaceID, botID)
}

func (s *Service) DeleteBotKey(ctx context.Context, a *platform.Actor, id string) error {
	if err := require(a, platform.RoleDeveloper, "deleting a bot API key"); err != nil {
		return err
	}
	rec := audit.Record{Action: audit.DeleteBotKey, ResourceID: id}
	defer s.auth.clear()
	return notFound(s.store.DeleteBotKey(s.audited(ctx, a, rec), a.Member.WorkspaceID, id), "bot API key", id)
}

// BotLogs lists a bot's logs between start and end (end defaults to now).
func (s *Service) BotLogs(ctx context.Context, a *platform.Actor, f store.LogFilter) ([]platform.LogEntry, string, error) {
	if _, err := s.GetBot(ctx, a, f.BotID); err != nil {
		return nil, "", err
	}
	return s.logs(ctx, f)
}

// IntegrationLogs lists the lines an integration version of the actor's
// workspace wrote in the workspace's bots that installed it
// (getIntegrationLogs; docs/integrations.md#its-logs). Lines it wrote in
// other workspaces' bots are theirs.
func (s *Service) IntegrationLogs(ctx context.Context, a *platform.Actor, id string, f store.LogFilter) ([]platform.LogEntry, string, error) {
	if _, err := s.GetVersion(ctx, a, Integrations, id); err != nil {
		return nil, "", err
	}
	f.BotID, f.Integration = "", &store.IntegrationLogs{IntegrationID: id, WorkspaceID: a.Member.WorkspaceID}
	return s.logs(ctx, f)
}

func (s *Service) logs(ctx context.Context, f store.LogFilter) ([]platform.LogEntry, string, error) {
	if f.End.IsZero() {
		f.End = s.clock.Now().Add(time.Microsecond)
	}
	if !f.End.After(f.Start) {
		return nil, "", platform.Errorf(platform.TypeInvalidQuery, "timeEnd: must be after timeStart")
	}
	if f.Limit == 0 {
		f.Limit = 100
	}
	return s.store.ListLogs(ctx, f)
}

// hostKeyNote marks the bot API key the server itself gives a bot's Node
// bundle (see HostKey).
const hostKeyNote = "the bot host's key: Node bundles call the platform with it"

// hostKeyKind is the first field of every host key's MAC.
const hostKeyKind = "botplatform node host key v2"

// legacyHostKeyID starts the ids of the host keys earlier builds derived
// from the bot's signing secret alone, which every workspace member could
// read: they authenticate nothing (AuthenticateBotKey), and migration 0027
// deleted those it found.
const legacyHostKeyID = platform.PrefixBotKey + "host"

// HostKey returns the bot API key a Node bundle of b calls the platform
// with: a MAC of the bot's id and signing secret under a secret of the
// server's that no API returns, so every server process computes the same
// key without storing it, nobody who reads the bot can, and rotating the
// signing secret replaces it. Its row (listed with the bot's keys) has a
// fixed id per bot.
func (s *Auth) HostKey(ctx context.Context, b platform.Bot) (string, error) {
	secret, err := s.secrets.get(ctx, s.store, "node-host-keys")
	if err != nil {
		return "", err
	}
	value := bakPrefix + signing.MAC(secret, hostKeyKind, b.ID, b.SigningSecret)
	hash := hashToken(value)
	if _, _, err := s.store.GetBotKeyByHash(ctx, hash); err == nil {
		return value, nil
	} else if !errors.Is(err, platform.ErrNotFound) {
		return "", err
	}
	suffix := strings.TrimPrefix(b.ID, platform.PrefixBot)
	id := platform.PrefixBotKey + "node" + suffix
	// The key of a previous signing secret, and one an earlier build made.
	defer s.auth.clear()
	for _, old := range []string{id, legacyHostKeyID + suffix} {
		if err := s.store.DeleteBotKey(ctx, b.WorkspaceID, old); err != nil && !errors.Is(err, platform.ErrNotFound) {
			return "", err
		}
	}
	t := platform.Token{ID: id, OwnerID: b.ID, Note: hostKeyNote, Hash: hash, CreatedAt: s.clock.Now()}
	if err := s.store.CreateBotKey(ctx, b.WorkspaceID, t); err != nil {
		// Another process may have created it at the same time.
		if _, _, gerr := s.store.GetBotKeyByHash(ctx, hash); gerr != nil {
			return "", err
		}
	}
	return value, nil
}

// integrationKeyKind is the first field of every integration key's MAC.
const integrationKeyKind = "botplatform integration key v1"

// IntegrationKey returns the key the code of an integration the bot
// installed calls the platform with (BP_TOKEN): a bot API key of that bot
// whose calls act as the integration only (platform.IntegrationKeyOf), derived like
// HostKey from a secret of the server's, the installation and the bot's
// signing secret. Its row has a fixed id per installation; reinstalling
// replaces it, and RemoveIntegrationKey deletes it when the integration
// is removed.
func (s *Auth) IntegrationKey(ctx context.Context, b platform.Bot, in platform.BotIntegration) (string, error) {
	secret, err := s.secrets.get(ctx, s.store, "node-host-keys")
	if err != nil {
		return "", err
	}
	value := bakPrefix + signing.MAC(secret, integrationKeyKind, b.ID, in.Name, in.IntegrationID, in.WebhookID, b.SigningSecret)
	hash := hashToken(value)
	if _, _, err := s.store.GetBotKeyByHash(ctx, hash); err == nil {
		return value, nil
	} else if !errors.Is(err, platform.ErrNotFound) {
		return "", err
	}
	id := integrationKeyID(b.ID, in.Name)
	defer s.auth.clear()
	if err := s.store.DeleteBotKey(ctx, b.WorkspaceID, id); err != nil && !errors.Is(err, platform.ErrNotFound) {
		return "", err
	}
	t := platform.Token{ID: id, OwnerID: b.ID, Note: platform.IntegrationKeyNote(in.Name, in.IntegrationID), Hash: hash, CreatedAt: s.clock.Now()}
	if err := s.store.CreateBotKey(ctx, b.WorkspaceID, t); err != nil {
		if _, _, gerr := s.store.GetBotKeyByHash(ctx, hash); gerr != nil {
			return "", err
		}
	}
	return value, nil
}

// RemoveIntegrationKey deletes the key of the bot's installation alias.
func (s *Auth) RemoveIntegrationKey(ctx context.Context, b platform.Bot, alias string) error {
	defer s.auth.clear()
	err := s.store.DeleteBotKey(ctx, b.WorkspaceID, integrationKeyID(b.ID, alias))
	if errors.Is(err, platform.ErrNotFound) {
		return nil
	}
	return err
}

func integrationKeyID(botID, alias string) string {
	sum := sha256.Sum256([]byte(botID + "\x00" + alias))
	return platform.IntegrationKeyPrefix + hex.EncodeToString(sum[:12])
}
