package files

import (
	"context"
	"errors"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Knowledge bases: named sets of a bot's indexed files, those tagged
// kbId = the knowledge base's id; search them with that tag filter.

func checkKBName(name string) error {
	if name == "" || len(name) > 200 {
		return platform.Invalid("name", "must be 1 to 200 characters")
	}
	return nil
}

func checkKBTags(tags map[string]*string) error {
	for k, v := range tags {
		if k == "" || len(k) > 100 {
			return platform.Invalid("tags", "tag names must be 1 to 100 characters")
		}
		if v != nil && len(*v) > 1000 {
			return platform.Invalid("tags."+k, "at most 1000 characters")
		}
	}
	return nil
}

// CreateKnowledgeBase creates a knowledge base of the caller's bot.
func (s *Service) CreateKnowledgeBase(ctx context.Context, c *Caller, name string, tags map[string]*string) (platform.KnowledgeBase, error) {
	if err := c.requireWrite(); err != nil {
		return platform.KnowledgeBase{}, err
	}
	if err := checkKBName(name); err != nil {
		return platform.KnowledgeBase{}, err
	}
	if err := checkKBTags(tags); err != nil {
		return platform.KnowledgeBase{}, err
	}
	now := s.clock.Now()
	kb := platform.KnowledgeBase{ID: platform.NewID("kb_"), BotID: c.BotID, Name: name, Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	for k, v := range tags {
		if v != nil {
			kb.Tags[k] = *v
		}
	}
	return kb, s.store.CreateKnowledgeBase(ctx, kb)
}

// UpdateKnowledgeBase renames a knowledge base and changes its tags (a nil
// value removes a tag).
func (s *Service) UpdateKnowledgeBase(ctx context.Context, c *Caller, id, name string, tags map[string]*string) (platform.KnowledgeBase, error) {
	if err := c.requireWrite(); err != nil {
		return platform.KnowledgeBase{}, err
	}
	if err := checkKBName(name); err != nil {
		return platform.KnowledgeBase{}, err
	}
	if err := checkKBTags(tags); err != nil {
		return platform.KnowledgeBase{}, err
	}
	kb, err := s.store.GetKnowledgeBase(ctx, c.BotID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return kb, platform.NotFound("knowledge base", id)
	}
	if err != nil {
		return kb, err
	}
	kb.Name, kb.UpdatedAt = name, s.clock.Now()
	for k, v := range tags {
		if v == nil {
			delete(kb.Tags, k)
		} else {
			kb.Tags[k] = *v
		}
	}
	if err := s.store.UpdateKnowledgeBase(ctx, kb); errors.Is(err, platform.ErrNotFound) {
		return kb, platform.NotFound("knowledge base", id)
	} else if err != nil {
		return kb, err
	}
	return kb, nil
}

// DeleteKnowledgeBase deletes a knowledge base (its files stay).
func (s *Service) DeleteKnowledgeBase(ctx context.Context, c *Caller, id string) error {
	if err := c.requireWrite(); err != nil {
		return err
	}
	if err := s.store.DeleteKnowledgeBase(ctx, c.BotID, id); errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("knowledge base", id)
	} else if err != nil {
		return err
	}
	return nil
}

// ListKnowledgeBases lists the bot's knowledge bases.
func (s *Service) ListKnowledgeBases(ctx context.Context, c *Caller, tags map[string][]string, p store.Page) ([]platform.KnowledgeBase, string, error) {
	return s.store.ListKnowledgeBases(ctx, c.BotID, tags, p)
}
