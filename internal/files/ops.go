package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Get returns a file the caller may see.
//
// id may also be the file's key, as on the hosted platform, whose clients
// rely on it (@botpress/cognitive reads its model preferences by key): a
// file whose id it is not, and that the caller's scope holds under that
// key, is the one answered.
func (s *Service) Get(ctx context.Context, c *Caller, id string) (platform.File, error) {
	f, err := s.file(ctx, c, id)
	if e, ok := platform.AsError(err); !ok || e.Type != platform.TypeResourceNotFound {
		return f, err
	}
	byKey, kerr := s.store.GetFileByKey(ctx, c.BotID, c.Scope, id)
	if kerr != nil || !c.sees(byKey) {
		return f, err // the id's not-found
	}
	return byKey, nil
}

// List lists the files the caller may see.
func (s *Service) List(ctx context.Context, c *Caller, f store.FileFilter) ([]platform.File, string, error) {
	if len(f.IDs) > 50 {
		return nil, "", platform.Errorf(platform.TypeInvalidQuery, "ids: at most 50")
	}
	f.FileVisibility = c.visibility()
	return s.store.ListFiles(ctx, f)
}

// Delete removes a file, its content and its storage usage.
func (s *Service) Delete(ctx context.Context, c *Caller, id string) error {
	if err := c.requireWrite(); err != nil {
		return err
	}
	f, err := s.changeable(ctx, c, id)
	if err != nil {
		return err
	}
	rec := audit.Record{WorkspaceID: c.WorkspaceID, Actor: c.Actor, Action: audit.DeleteFile, ResourceID: f.ID, ResourceName: f.Key, Value: "bot " + c.BotID}
	f, err = s.store.DeleteFile(audit.With(ctx, s.clock, rec), c.BotID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("file", id)
	}
	if err != nil {
		return err
	}
	s.removeBlob(ctx, f.BlobKey)
	return nil
}

// MetadataUpdate is the body of updateFileMetadata. In metadata and tags, a
// null value removes the key; expiresAt null removes the expiry.
type MetadataUpdate struct {
	Metadata       map[string]json.RawMessage `json:"metadata"`
	Tags           map[string]*string         `json:"tags"`
	AccessPolicies *[]string                  `json:"accessPolicies"`
	ExpiresAt      json.RawMessage            `json:"expiresAt"`
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

// UpdateMetadata changes a file's metadata, tags, access policies or expiry.
func (s *Service) UpdateMetadata(ctx context.Context, c *Caller, id string, u MetadataUpdate) (platform.File, error) {
	if err := c.requireWrite(); err != nil {
		return platform.File{}, err
	}
	f, err := s.changeable(ctx, c, id)
	if err != nil {
		return f, err
	}
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	for k, v := range u.Metadata {
		if isNull(v) {
			delete(f.Metadata, k)
			continue
		}
		var x any
		_ = json.Unmarshal(v, &x)
		f.Metadata[k] = x
	}
	if f.Tags == nil {
		f.Tags = map[string]string{}
	}
	set := map[string]string{}
	for k, v := range u.Tags {
		if v == nil {
			delete(f.Tags, k)
		} else {
			set[k] = *v
			f.Tags[k] = *v
		}
	}
	if err := checkTags("tags", set); err != nil {
		return f, err
	}
	if u.AccessPolicies != nil {
		f.AccessPolicies = dedupe(*u.AccessPolicies)
	}
	now := s.clock.Now()
	if len(u.ExpiresAt) > 0 {
		if isNull(u.ExpiresAt) {
			f.ExpiresAt = nil
		} else {
			var v string
			_ = json.Unmarshal(u.ExpiresAt, &v)
			if f.ExpiresAt, err = parseExpiry("expiresAt", v, now); err != nil {
				return f, err
			}
		}
	}
	f.UpdatedAt = now
	if err := s.store.UpdateFile(ctx, f); err != nil {
		if errors.Is(err, platform.ErrNotFound) {
			return f, platform.NotFound("file", id)
		}
		return f, err
	}
	return f, nil
}

// Copy copies a file (found by id, or by key in the caller's scope) to
// destKey of destBotID (the same bot when empty), content included. An
// existing destination is replaced only with overwrite.
func (s *Service) Copy(ctx context.Context, c *Caller, idOrKey, destKey, destBotID string, overwrite bool) (platform.File, error) {
	if err := c.requireWrite(); err != nil {
		return platform.File{}, err
	}
	src, err := s.file(ctx, c, idOrKey)
	if err != nil {
		bykey, kerr := s.store.GetFileByKey(ctx, c.BotID, c.Scope, idOrKey)
		if kerr != nil {
			return src, err
		}
		src = bykey
	}
	if destKey == "" {
		return src, platform.Invalid("destinationKey", "must not be empty")
	}
	if !uploaded(src) {
		return src, platform.Errorf(platform.TypeInvalidPayload, "file %q has no content to copy yet (status %s)", src.ID, src.Status)
	}
	dest := *c
	if destBotID != "" && destBotID != c.BotID {
		ws, err := s.store.GetBotWorkspace(ctx, destBotID)
		if err != nil || ws != c.WorkspaceID {
			return src, platform.NotFound("bot", destBotID)
		}
		dest.BotID, dest.Owner = destBotID, platform.FileOwner{Type: "bot", ID: destBotID}
		if c.Integration {
			dest.Owner = c.Owner
		}
	}
	if existing, err := s.store.GetFileByKey(ctx, dest.BotID, dest.Scope, destKey); err == nil && !overwrite {
		return existing, platform.Errorf(platform.TypeAlreadyExists, "destinationKey: a file with key %q already exists; pass overwrite: true to replace it", destKey)
	} else if err != nil && !errors.Is(err, platform.ErrNotFound) {
		return src, err
	}
	in := UpsertInput{
		Key: destKey, Size: *src.Size, Tags: src.Tags, Index: src.Index, AccessPolicies: src.AccessPolicies,
		ContentType: src.ContentType, Metadata: src.Metadata, PublicContentImmediatelyAccessible: src.PublicNow,
	}
	if src.ExpiresAt != nil {
		v := platform.FormatTime(*src.ExpiresAt)
		in.ExpiresAt = &v
	}
	f, err := s.Upsert(ctx, &dest, in)
	if err != nil {
		return f, err
	}
	return s.copyContent(ctx, src, f)
}

// copyContent gives f (just upserted) the content of src, within quotas.
func (s *Service) copyContent(ctx context.Context, src, f platform.File) (platform.File, error) {
	lim, err := s.limits(ctx, f.WorkspaceID)
	if err != nil {
		return f, err
	}
	key := newBlobKey(f)
	if err := s.blobs.Copy(ctx, src.BlobKey, key); err != nil {
		return f, err
	}
	status := platform.FileUploadCompleted
	if f.Index {
		status = platform.FileIndexPending
	}
	done, err := s.store.CompleteUpload(ctx, store.Upload{
		FileID: f.ID, Generation: f.Generation, BlobKey: key, Size: *src.Size, SHA256: src.SHA256, Status: status,
		MaxStorage: lim.MaxStorage, MaxVector: lim.MaxVector, Now: s.clock.Now(),
	})
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		s.removeBlob(ctx, key)
		failed, ferr := s.store.FailUpload(ctx, f.ID, f.Generation, qe.Error(), s.clock.Now())
		if ferr != nil {
			return f, ferr
		}
		return failed, nil
	}
	if err != nil {
		s.removeBlob(ctx, key)
	}
	return done, err
}

// Tags lists the tag names of the files the caller may see.
func (s *Service) Tags(ctx context.Context, c *Caller, p store.Page) ([]string, string, error) {
	return s.store.ListFileTags(ctx, c.visibility(), p)
}

// TagValues lists the values of one tag over the files the caller may see.
func (s *Service) TagValues(ctx context.Context, c *Caller, tag string, p store.Page) ([]string, string, error) {
	return s.store.ListFileTagValues(ctx, c.visibility(), tag, p)
}

// Open reads the content of a file the caller sees, by id or key.
func (s *Service) Open(ctx context.Context, c *Caller, idOrKey string) (platform.File, blob.Reader, error) {
	f, err := s.fileByIDOrKey(ctx, c, idOrKey)
	if err != nil {
		return f, nil, err
	}
	return s.open(ctx, f)
}

// Store creates (or replaces) the file key with body as its content, as a
// client would with upsertFile and a PUT to its uploadUrl: the same checks
// and quotas apply.
func (s *Service) Store(ctx context.Context, c *Caller, key, contentType string, tags map[string]string, body []byte) (platform.File, error) {
	f, err := s.Upsert(ctx, c, UpsertInput{Key: key, Size: int64(len(body)), ContentType: contentType, Tags: tags})
	if err != nil {
		return f, err
	}
	return s.receive(ctx, f, bytes.NewReader(body))
}
