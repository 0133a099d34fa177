package admin

import (
	"context"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
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
	return t, value, notFound(s.store.CreateBotKey(ctx, a.Member.WorkspaceID, t), "bot", botID)
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
	return notFound(s.store.DeleteBotKey(ctx, a.Member.WorkspaceID, id), "bot API key", id)
}

// BotLogs lists a bot's logs between start and end (end defaults to now).
func (s *Service) BotLogs(ctx context.Context, a *platform.Actor, f store.LogFilter) ([]platform.LogEntry, string, error) {
	if _, err := s.GetBot(ctx, a, f.BotID); err != nil {
		return nil, "", err
	}
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
