package files

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// fileByIDOrKey loads a file the caller may see by id, or else by key (in
// the caller's key namespace).
func (s *Service) fileByIDOrKey(ctx context.Context, c *Caller, idOrKey string) (platform.File, error) {
	f, err := s.file(ctx, c, idOrKey)
	if e, ok := platform.AsError(err); ok && e.Type == platform.TypeResourceNotFound {
		f, err = s.store.GetFileByKey(ctx, c.BotID, c.Scope, idOrKey)
		if errors.Is(err, platform.ErrNotFound) || (err == nil && !c.sees(f)) {
			return f, platform.NotFound("file", idOrKey)
		}
	}
	return f, err
}

// Passages lists an indexed file's passages, in order.
func (s *Service) Passages(ctx context.Context, c *Caller, idOrKey string, p store.Page) (platform.File, []platform.Passage, string, error) {
	f, err := s.fileByIDOrKey(ctx, c, idOrKey)
	if err != nil {
		return f, nil, "", err
	}
	ps, next, err := s.store.ListPassages(ctx, f.ID, p)
	return f, ps, next, err
}

// PassageTypes are the types setFilePassages accepts.
var PassageTypes = []string{"title", "subtitle", "paragraph", "blockquote", "list", "table", "code", "image"}

// SetPassages replaces an indexed file's passages with the caller's own:
// the file goes back to indexing_pending while they are embedded.
func (s *Service) SetPassages(ctx context.Context, c *Caller, idOrKey string, ps []platform.OwnPassage) error {
	if err := c.requireWrite(); err != nil {
		return err
	}
	f, err := s.fileByIDOrKey(ctx, c, idOrKey)
	if err != nil {
		return err
	}
	if c.Integration && f.Scope != c.Scope {
		return platform.Errorf(platform.TypeForbidden, "file %q is shared with integrations for reading only; its passages cannot be changed by this integration", idOrKey)
	}
	if !f.Index {
		return platform.Invalid("id", "file %q is not indexed: upsert it with index true first", idOrKey)
	}
	if f.Status == platform.FileUploadPending || f.Status == platform.FileUploadFailed {
		return platform.Invalid("id", "file %q has no content yet (status %s)", idOrKey, f.Status)
	}
	for i, p := range ps {
		if p.Content == "" {
			return platform.Invalid("passages."+itoa(int64(i))+".content", "must not be empty")
		}
	}
	payload, _ := json.Marshal(platform.IndexJob{FileID: f.ID, Generation: f.Generation, Own: true, Passages: ps})
	if err := s.store.QueueIndexing(ctx, f.ID, payload, s.clock.Now()); err != nil {
		return err
	}
	return nil
}
