package botarchive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Prepare checks that the caller may export the bot (with its secrets when
// asked) and returns it; nothing is written yet, so that a refusal is
// still a plain error answer.
func (s *Service) Prepare(ctx context.Context, act *platform.Actor, botID string, secrets bool) (platform.Bot, error) {
	if err := act.Require(ExportRole, "exporting a bot"); err != nil {
		return platform.Bot{}, err
	}
	if secrets {
		if err := act.Require(SecretsRole, "exporting a bot with its secrets"); err != nil {
			return platform.Bot{}, err
		}
	}
	b, err := s.store.GetBot(ctx, act.Member.WorkspaceID, botID)
	return b, notFound(err, "bot", botID)
}

// Export writes the archive of b to w, streaming: each JSON Lines entry is
// spooled to a temporary file (a tar entry states its size first), file
// contents are copied from the blob store one at a time.
func (s *Service) Export(ctx context.Context, b platform.Bot, secrets bool, w io.Writer) (Manifest, error) {
	gz := gzip.NewWriter(w)
	x := &archiveWriter{tw: tar.NewWriter(gz), tmpDir: s.tmpDir, at: s.clock.Now()}
	m := Manifest{Format: FormatName, Version: FormatVersion, ServerVersion: s.version, ExportedAt: x.at, BotID: b.ID, BotName: b.Name,
		Secrets: secrets, Counts: map[string]int{}}
	if err := x.json(BotEntry, botOf(b, secrets)); err != nil {
		return m, err
	}
	var contents []platform.File // of the files exported: metadata only
	exported := map[string]bool{}
	kinds := []struct {
		kind string
		rec  func(any) any // nil: the row is left out
	}{
		{store.RowVersions, func(r any) any { return versionOf(r.(platform.BotVersion)) }},
		{store.RowUsers, func(r any) any { return userOf(r.(platform.ChatUser)) }},
		{store.RowConversations, func(r any) any { return conversationOf(r.(store.BotConversation)) }},
		{store.RowMessages, func(r any) any { return messageOf(r.(platform.Message)) }},
		{store.RowStates, func(r any) any { return stateOf(r.(platform.RuntimeState)) }},
		{store.RowCodeStates, func(r any) any { st := r.(platform.BotState); return codeStateRecord{st.Scope, st.ScopeID, st.Value} }},
		{store.RowWorkflows, func(r any) any { return workflowOf(r.(platform.Workflow)) }},
		{store.RowFiles, func(r any) any {
			f := r.(platform.File)
			if !hasContent(f) {
				return nil // an upload that never finished has nothing to move
			}
			contents = append(contents, platform.File{ID: f.ID, BlobKey: f.BlobKey, Size: f.Size})
			exported[f.ID] = true
			return fileOf(f)
		}},
		{store.RowPassages, func(r any) any {
			if p := r.(platform.Passage); exported[p.FileID] {
				return passageOf(p)
			}
			return nil
		}},
	}
	for i, k := range kinds {
		n, err := x.lines(rowEntries[i], func(write func(any) error) error {
			return s.store.EachBotRow(ctx, b.ID, k.kind, func(r any) error {
				if rec := k.rec(r); rec != nil {
					return write(rec)
				}
				return nil
			})
		})
		if err != nil {
			return m, err
		}
		m.Counts[k.kind] = n
	}
	for _, f := range contents {
		if err := s.content(ctx, x, f); err != nil {
			return m, err
		}
	}
	m.Counts["contents"] = len(contents)
	m.Entries = x.entries
	if err := x.json(ManifestEntry, m); err != nil {
		return m, err
	}
	if err := x.tw.Close(); err != nil {
		return m, err
	}
	return m, gz.Close()
}

func hasContent(f platform.File) bool {
	switch f.Status {
	case platform.FileUploadCompleted, platform.FileIndexPending, platform.FileIndexCompleted, platform.FileIndexFailed:
		return f.BlobKey != "" && f.Size != nil
	}
	return false
}

func (s *Service) content(ctx context.Context, x *archiveWriter, f platform.File) error {
	r, err := s.contents.Open(ctx, f.BlobKey)
	if err != nil {
		return fmt.Errorf("file %s: its content: %w", f.ID, err)
	}
	defer r.Close()
	return x.entry(ContentDir+f.ID, *f.Size, r)
}

// archiveWriter writes a tar and records each entry's size and SHA-256.
type archiveWriter struct {
	tw      *tar.Writer
	tmpDir  string
	at      time.Time
	entries []Entry
}

func (x *archiveWriter) entry(name string, size int64, r io.Reader) error {
	if err := x.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: x.at, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(x.tw, h), io.LimitReader(r, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s: %d bytes read, %d expected", name, n, size)
	}
	if err != nil {
		return err
	}
	if name != ManifestEntry {
		x.entries = append(x.entries, Entry{Name: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return nil
}

func (x *archiveWriter) json(name string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return x.entry(name, int64(len(raw)), bytes.NewReader(raw))
}

// lines writes a JSON Lines entry of what fill writes, one value a line,
// and returns how many lines it holds.
func (x *archiveWriter) lines(name string, fill func(write func(any) error) error) (int, error) {
	tmp, err := os.CreateTemp(x.tmpDir, "botarchive-*.jsonl")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	buf := bufio.NewWriter(tmp)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	n := 0
	if err := fill(func(v any) error { n++; return enc.Encode(v) }); err != nil {
		return 0, err
	}
	if err := buf.Flush(); err != nil {
		return 0, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return n, x.entry(name, size, tmp)
}

func botOf(b platform.Bot, secrets bool) botRecord {
	r := botRecord{ID: b.ID, Name: b.Name, Dev: b.Dev, Type: b.Type, Status: b.Status, Code: b.Code, Tags: b.Tags, Spec: b.Spec,
		DeployedAt: b.DeployedAt, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
	for _, in := range b.Integrations {
		if in.IntegrationID == platform.LLMIntegrationID || in.IntegrationID == platform.WebchatIntegrationID {
			r.Integrations = append(r.Integrations, in.Name)
		}
	}
	if !secrets {
		r.Spec.Secrets = nil
		return r
	}
	r.Secrets = &botSecrets{SigningSecret: b.SigningSecret}
	for _, in := range b.Integrations {
		if in.IntegrationID == platform.ChatIntegrationID {
			r.Secrets.ChatEncryptionKey, _ = in.Configuration["encryptionKey"].(string)
		}
	}
	return r
}

func versionOf(v platform.BotVersion) versionRecord {
	return versionRecord{v.ID, v.Seq, v.Name, v.Description, v.BotName, v.Code, v.Tags, v.Spec, v.Digest, v.CreatedBy, v.CreatedAt}
}

func userOf(u platform.ChatUser) userRecord {
	return userRecord{u.ID, u.FID, u.Name, u.PictureURL, u.Profile, u.Tags, u.Properties, u.Attributes, u.CreatedAt, u.UpdatedAt}
}

func conversationOf(c store.BotConversation) conversationRecord {
	ps := make([]participantRecord, len(c.Participants))
	for i, p := range c.Participants {
		ps[i] = participantRecord{p.UserID, p.CreatedAt}
	}
	return conversationRecord{c.ID, c.FID, c.OwnerID, c.Tags, c.Channel, c.Integration, c.Properties, ps, c.CreatedAt, c.UpdatedAt}
}

func messageOf(m platform.Message) messageRecord {
	r := messageRecord{ID: m.ID, ConversationID: m.ConversationID, UserID: m.UserID, IsBot: m.IsBot, Payload: m.Payload,
		Metadata: m.Metadata, Tags: m.Tags, CreatedAt: m.CreatedAt}
	if !m.UpdatedAt.IsZero() {
		r.UpdatedAt = &m.UpdatedAt
	}
	return r
}

func stateOf(st platform.RuntimeState) stateRecord {
	return stateRecord{st.ID, st.Type, st.ScopeID, st.Name, st.Payload, st.Expiry, st.ExpiresAt, st.Version, st.CreatedAt, st.UpdatedAt}
}

func workflowOf(w platform.Workflow) workflowRecord {
	return workflowRecord{w.ID, w.Name, w.Status, w.Input, w.Output, w.ParentID, w.ConversationID, w.UserID, w.Tags, w.FailureReason,
		w.TimeoutAt, w.CompletedAt, w.Version, w.CreatedAt, w.UpdatedAt}
}

func fileOf(f platform.File) fileRecord {
	return fileRecord{ID: f.ID, Scope: f.Scope, Key: f.Key, Status: f.Status, Size: *f.Size, SHA256: f.SHA256, ContentType: f.ContentType,
		Tags: f.Tags, Metadata: f.Metadata, AccessPolicies: f.AccessPolicies, Index: f.Index, PublicNow: f.PublicNow, FailedReason: f.FailedReason,
		IndexingStack: f.IndexingStack, ExpiresAt: f.ExpiresAt, Owner: f.Owner, ExtraBytes: f.ExtraBytes, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

func passageOf(p platform.Passage) passageRecord {
	return passageRecord{p.ID, p.FileID, p.Position, p.Content, p.Type, p.Subtype, p.PageNumber, p.Breadcrumb, p.Questions, p.Vector, p.ImageType, p.Image}
}
