package botarchive

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// derive is the id that the row with id source gets in the bot (or, for a
// bot, the workspace) scope: a ULID of the row's creation time whose random
// part is a hash of scope and source. The same row imported again gets the
// same id, so that it is found rather than written twice; ids stay sorted
// by creation like those the server makes. The prefix names the kind, as
// the source id's own prefix did.
func derive(prefix, scope, source string, at time.Time) string {
	if i := strings.IndexByte(source, '_'); i > 0 && i < 16 {
		prefix = source[:i+1]
	}
	h := sha256.Sum256([]byte(scope + "\x00" + source))
	var id ulid.ULID
	_ = id.SetTime(uint64(max(at.UnixMilli(), 0)))
	_ = id.SetEntropy(h[:10])
	return prefix + strings.ToLower(id.String())
}

// ids maps the archive's ids to the bot's.
type ids struct {
	bot, src string // the bot's id, the archived bot's
	m        map[string]string
}

// define gives source its id: found (an existing row's), or derived.
func (x ids) define(prefix, source, found string, at time.Time) string {
	switch {
	case source == x.src:
		return x.bot
	case found != "":
		x.m[source] = found
	default:
		x.m[source] = derive(prefix, x.bot, source, at)
	}
	return x.m[source]
}

// of maps a reference; one to a row not in the archive gets the id such a
// row would have had, the same at every import.
func (x ids) of(source string) string {
	if source == "" {
		return ""
	}
	if source == x.src {
		return x.bot
	}
	if id, ok := x.m[source]; ok {
		return id
	}
	return derive("", x.bot, source, time.Time{})
}

// plan turns an archive into the rows to write.
type plan struct {
	s        *Service
	ctx      context.Context
	in       *store.BotImport
	ids      ids
	existing bool                     // the bot exists: look rows up by the keys clients use
	content  map[string]platform.File // new files by archived id, to store the content of
}

func (p *plan) build(a archive) error {
	in, x := p.in, p.ids
	// Ids first: rows refer to users, conversations, workflows and files.
	for _, u := range a.users {
		found, err := p.find(func() (string, error) { v, err := p.s.store.GetChatUser(p.ctx, x.bot, u.FID); return v.ID, err }, u.ID != x.src)
		if err != nil {
			return err
		}
		x.define("user_", u.ID, found, u.CreatedAt)
	}
	for _, c := range a.conversations {
		found, err := p.find(func() (string, error) { v, err := p.s.store.GetConversation(p.ctx, x.bot, c.FID); return v.ID, err }, true)
		if err != nil {
			return err
		}
		x.define("conv_", c.ID, found, c.CreatedAt)
	}
	for _, w := range a.workflows {
		x.define("wfl_", w.ID, "", w.CreatedAt)
	}
	skipped := map[string]bool{} // files whose key the bot has already
	for _, f := range a.files {
		found, err := p.find(func() (string, error) {
			v, err := p.s.store.GetFileByKey(p.ctx, x.bot, f.Scope, f.Key)
			return v.ID, err
		}, true)
		if err != nil {
			return err
		}
		x.define("file_", f.ID, found, f.CreatedAt)
		skipped[f.ID] = found != ""
	}

	for _, v := range a.versions {
		in.Versions = append(in.Versions, platform.BotVersion{ID: derive(platform.PrefixVersion, x.bot, v.ID, v.CreatedAt), Seq: v.Seq, Name: v.Name,
			Description: v.Description, BotName: v.BotName, Code: v.Code, Tags: v.Tags, Spec: v.Spec, Digest: v.Digest, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt})
	}
	for _, u := range a.users {
		fid := u.FID
		if u.ID == x.src {
			fid = x.bot // the user the bot speaks as has the bot's id
		}
		in.Users = append(in.Users, platform.ChatUser{ID: x.of(u.ID), FID: fid, Name: u.Name, PictureURL: u.PictureURL, Profile: u.Profile,
			Tags: u.Tags, Properties: u.Properties, Attributes: u.Attributes, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt})
	}
	for _, c := range a.conversations {
		conv := store.BotConversation{Conversation: platform.Conversation{ID: x.of(c.ID), FID: c.FID, OwnerID: x.of(c.OwnerID), Tags: c.Tags,
			Channel: c.Channel, Integration: c.Integration, Properties: c.Properties, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}}
		for _, pa := range c.Participants {
			conv.Participants = append(conv.Participants, store.Participant{UserID: x.of(pa.UserID), CreatedAt: pa.CreatedAt})
		}
		in.Conversations = append(in.Conversations, conv)
	}
	for _, m := range a.messages {
		msg := platform.Message{ID: derive("msg_", x.bot, m.ID, m.CreatedAt), ConversationID: x.of(m.ConversationID), UserID: x.of(m.UserID),
			Payload: m.Payload, Metadata: m.Metadata, IsBot: m.IsBot, Tags: m.Tags, CreatedAt: m.CreatedAt}
		if m.UpdatedAt != nil {
			msg.UpdatedAt = *m.UpdatedAt
		}
		in.Messages = append(in.Messages, msg)
	}
	for _, st := range a.states {
		in.States = append(in.States, platform.RuntimeState{ID: derive("state_", x.bot, st.ID, st.CreatedAt), Type: st.Type, ScopeID: x.of(st.ScopeID),
			Name: st.Name, Payload: st.Payload, Expiry: st.Expiry, ExpiresAt: st.ExpiresAt, Version: st.Version, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt})
	}
	for _, st := range a.codeStates {
		in.CodeStates = append(in.CodeStates, platform.BotState{Scope: st.Scope, ScopeID: x.of(st.ScopeID), Value: st.Value})
	}
	for _, w := range a.workflows {
		in.Workflows = append(in.Workflows, platform.Workflow{ID: x.of(w.ID), Name: w.Name, Status: w.Status, Input: w.Input, Output: w.Output,
			ParentID: x.of(w.ParentID), ConversationID: x.of(w.ConversationID), UserID: x.of(w.UserID), Tags: w.Tags, FailureReason: w.FailureReason,
			TimeoutAt: w.TimeoutAt, CompletedAt: w.CompletedAt, Version: w.Version, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt})
	}
	for _, f := range a.files {
		if skipped[f.ID] {
			continue
		}
		size := f.Size
		owner := f.Owner
		if owner.Type == "bot" {
			owner.ID = x.of(owner.ID)
		}
		nf := platform.File{ID: x.of(f.ID), Scope: f.Scope, Key: f.Key, Status: f.Status, Size: &size, DeclaredSize: size, ContentType: f.ContentType,
			Tags: f.Tags, Metadata: f.Metadata, AccessPolicies: f.AccessPolicies, Index: f.Index, PublicNow: f.PublicNow, FailedReason: f.FailedReason,
			IndexingStack: f.IndexingStack, ExpiresAt: f.ExpiresAt, Owner: owner, Generation: 1, SHA256: f.SHA256, Counted: true,
			ExtraBytes: f.ExtraBytes, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
		nf.BlobKey = newBlobKey(nf)
		in.Files = append(in.Files, nf)
		p.content[f.ID] = nf
	}
	for _, ps := range a.passages {
		if _, ok := p.content[ps.FileID]; !ok {
			continue // its file is the bot's already, with its own passages
		}
		in.Passages = append(in.Passages, platform.Passage{ID: derive("psg_", x.bot, ps.ID, time.Time{}), FileID: x.of(ps.FileID), Position: ps.Position,
			Content: ps.Content, Type: ps.Type, Subtype: ps.Subtype, PageNumber: ps.PageNumber, Breadcrumb: ps.Breadcrumb, Questions: ps.Questions, Vector: ps.Vector,
			ImageType: ps.ImageType, Image: ps.Image})
	}
	return nil
}

// find looks a row up by the key clients use, when the bot existed
// before this import (a new bot has none).
func (p *plan) find(get func() (string, error), look bool) (string, error) {
	if !p.existing || !look {
		return "", nil
	}
	id, err := get()
	if errors.Is(err, platform.ErrNotFound) {
		return "", nil
	}
	return id, err
}

// bytes is the File Storage the new files take.
func (p *plan) bytes() int64 {
	var n int64
	for _, f := range p.content {
		n += *f.Size + f.ExtraBytes
	}
	return n
}

// storeContents stores the new files' contents from the archive, and
// returns the blob keys written.
func (p *plan) storeContents(path string) ([]string, error) {
	var keys []string
	err := eachEntry(path, func(name string, size int64, r io.Reader) error {
		id, ok := strings.CutPrefix(name, ContentDir)
		f, isNew := p.content[id]
		if !ok || !isNew {
			return nil
		}
		if _, err := p.s.contents.Put(p.ctx, f.BlobKey, r, size); err != nil {
			return err
		}
		keys = append(keys, f.BlobKey)
		return nil
	})
	if err == nil && len(keys) != len(p.content) {
		err = damaged("files.jsonl lists %d files without content entries", len(p.content)-len(keys))
	}
	return keys, err
}
