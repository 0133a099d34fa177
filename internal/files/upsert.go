package files

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// UpsertInput is the body of upsertFile (spec 4.1). Shapes, enums and the
// bounds of indexing.configuration are checked by the HTTP layer's schema.
type UpsertInput struct {
	Key                                string            `json:"key"`
	Size                               int64             `json:"size"`
	Tags                               map[string]string `json:"tags"`
	Index                              bool              `json:"index"`
	Indexing                           json.RawMessage   `json:"indexing"`
	AccessPolicies                     []string          `json:"accessPolicies"`
	ContentType                        string            `json:"contentType"`
	ExpiresAt                          *string           `json:"expiresAt"`
	PublicContentImmediatelyAccessible bool              `json:"publicContentImmediatelyAccessible"`
	Metadata                           map[string]any    `json:"metadata"`
}

// Limits of the spec (section 8).
const (
	MaxTagValue  = 1000
	MaxKeyLength = 1024
	MaxExpiry    = 90 * 24 * time.Hour
)

// IndexingMetadataKey is the metadata key under which a file's indexing
// configuration is stored (spec 4.1.1: "stored in the file's metadata").
const IndexingMetadataKey = "indexing"

func checkTags(field string, tags map[string]string) error {
	for k, v := range tags {
		if k == "" {
			return platform.Invalid(field, "tag names must not be empty")
		}
		if n := len([]rune(v)); n > MaxTagValue {
			return platform.Invalid(field+"."+k, "at most %d characters (got %d)", MaxTagValue, n)
		}
	}
	return nil
}

// parseExpiry checks an expiresAt: in the future, at most 90 days ahead;
// seconds and milliseconds are dropped.
func parseExpiry(field, v string, now time.Time) (*time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, platform.Invalid(field, "must be an ISO 8601 date-time such as 2025-01-31T12:00:00Z")
	}
	t = t.UTC().Truncate(time.Minute)
	if !t.After(now) {
		return nil, platform.Invalid(field, "must be in the future (minutes count; seconds are ignored)")
	}
	if t.Sub(now) > MaxExpiry {
		return nil, platform.Invalid(field, "must be at most 90 days from now")
	}
	return &t, nil
}

// Upsert creates the file with that key, or replaces it: the previous
// content is erased and its upload URL stops working. The new file waits
// for its content (upload_pending).
func (s *Service) Upsert(ctx context.Context, c *Caller, in UpsertInput) (platform.File, error) {
	if err := c.requireWrite(); err != nil {
		return platform.File{}, err
	}
	if strings.TrimSpace(in.Key) == "" {
		return platform.File{}, platform.Invalid("key", "must not be empty")
	}
	if len(in.Key) > MaxKeyLength {
		return platform.File{}, platform.Invalid("key", "at most %d bytes", MaxKeyLength)
	}
	if in.Size < 0 {
		return platform.File{}, platform.Invalid("size", "must not be negative")
	}
	if in.Index && in.Size > platform.MaxIndexBytes {
		return platform.File{}, platform.Invalid("size", "files larger than 95 MB (%d bytes) cannot be indexed; upload it with index false", int64(platform.MaxIndexBytes))
	}
	if err := checkTags("tags", in.Tags); err != nil {
		return platform.File{}, err
	}
	now := s.clock.Now()
	f := platform.File{
		ID: platform.NewID("file_"), BotID: c.BotID, WorkspaceID: c.WorkspaceID, Scope: c.Scope, Key: in.Key,
		Status: platform.FileUploadPending, DeclaredSize: in.Size, ContentType: in.ContentType, Tags: in.Tags,
		Metadata: in.Metadata, AccessPolicies: dedupe(in.AccessPolicies), Index: in.Index,
		PublicNow: in.PublicContentImmediatelyAccessible, Owner: c.Owner, CreatedAt: now, UpdatedAt: now,
	}
	if f.ContentType == "" {
		f.ContentType = ContentTypeOf(in.Key)
	}
	if in.ExpiresAt != nil {
		t, err := parseExpiry("expiresAt", *in.ExpiresAt, now)
		if err != nil {
			return f, err
		}
		f.ExpiresAt = t
	}
	if in.Index && s.cfg.CheckIndexing != nil {
		if err := s.cfg.CheckIndexing(ctx, c.WorkspaceID, f.ContentType, f.Key, in.Indexing); err != nil {
			return f, err
		}
	}
	if len(in.Indexing) > 0 {
		if f.Metadata == nil {
			f.Metadata = map[string]any{}
		}
		var cfg any
		_ = json.Unmarshal(in.Indexing, &cfg)
		f.Metadata[IndexingMetadataKey] = cfg
	}
	stored, replaced, err := s.store.PutFile(ctx, f)
	if err != nil {
		return stored, err
	}
	if replaced != nil {
		s.removeBlob(ctx, replaced.BlobKey)
	}
	return stored, nil
}

func dedupe(v []string) []string {
	out := []string{}
	for _, x := range v {
		seen := false
		for _, y := range out {
			seen = seen || x == y
		}
		if !seen {
			out = append(out, x)
		}
	}
	return out
}

// ContentTypeOf infers a MIME type from a key's extension, or
// application/octet-stream.
func ContentTypeOf(key string) string {
	ext := strings.ToLower(path.Ext(key))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	return "application/octet-stream"
}
