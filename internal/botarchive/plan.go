package botarchive

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
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

// Kinds of the archived rows that others refer to.
const (
	kindUser = iota + 1
	kindConversation
	kindWorkflow
	kindFile
)

// plan checks an archive's rows and maps their ids, reading the archive
// once (check), then hands the rows to the store, reading it again (rows):
// rows are never all held, whatever the archive's size.
type plan struct {
	s        *Service
	ctx      context.Context
	in       *store.BotImport
	ids      ids
	bounds   Bounds
	existing bool                     // the bot exists: look rows up by the keys clients use
	content  map[string]platform.File // new files by archived id, to store the content of (id, blob key, sizes)
	kinds    map[string]uint8         // archived ids of users, conversations, workflows and files
	seed     maphash.Seed
	seen     map[uint64]int // the current entry's keys (hashed), with their line
}

func newPlan(s *Service, ctx context.Context, in *store.BotImport, src string, existing bool) *plan {
	return &plan{s: s, ctx: ctx, in: in, ids: ids{bot: in.BotID, src: src, m: map[string]string{}}, bounds: s.bounds, existing: existing,
		content: map[string]platform.File{}, kinds: map[string]uint8{src: kindUser}, seed: maphash.MakeSeed(), seen: map[uint64]int{}}
}

// rowEntry calls fn with each record of each JSON Lines entry of the
// archive at path, in archive order, within the bounds.
func (p *plan) rowEntry(path string, fn func(name string, line int, rec []byte) error) error {
	total, last := 0, -1
	return eachEntry(path, func(name string, _ int64, r io.Reader) error {
		i := slices.Index(rowEntries, name)
		if i < 0 {
			return nil
		}
		if i < last {
			return damaged("entry %s comes after %s (entries of rows come in the order %s)", name, rowEntries[last], strings.Join(rowEntries, ", "))
		}
		last = i
		clear(p.seen)
		l := newLines(name, r, p.bounds, &total)
		for {
			rec, err := l.next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(name, l.line, rec); err != nil {
				return err
			}
		}
	})
}

// check reads every record, refuses one that repeats a key of its entry or
// refers to a row the archive lacks (the database would refuse it, or keep
// an orphan), and maps the ids of rows others refer to. Nothing is written.
func (p *plan) check(path string) error {
	x := p.ids
	return p.rowEntry(path, func(name string, line int, rec []byte) error {
		bad := func(format string, args ...any) error {
			return damaged("entry %s, line %d: "+format, append([]any{name, line}, args...)...)
		}
		unique := func(what, key string) error {
			h := maphash.String(p.seed, what+"\x00"+key)
			if prev, dup := p.seen[h]; dup {
				return bad("%s %q appears twice (first at line %d)", what, key, prev)
			}
			p.seen[h] = line
			return nil
		}
		r, err := decodeRow(name, rec)
		if err != nil {
			return bad("%v", err)
		}
		switch v := r.(type) {
		case *versionRecord:
			return firstErr(unique("version", v.ID), unique("version number", fmt.Sprint(v.Seq)))
		case *userRecord:
			u := v
			if err := firstErr(unique("user", u.ID), unique("user fid", u.FID)); err != nil {
				return err
			}
			found, err := p.find(func() (string, error) { v, err := p.s.store.GetChatUser(p.ctx, x.bot, u.FID); return v.ID, err }, u.ID != x.src)
			if err != nil {
				return err
			}
			x.define("user_", u.ID, found, u.CreatedAt)
			p.kinds[u.ID] = kindUser
		case *conversationRecord:
			c := v
			if err := firstErr(unique("conversation", c.ID), unique("conversation fid", c.FID)); err != nil {
				return err
			}
			for _, pa := range c.Participants {
				if p.kinds[pa.UserID] != kindUser {
					return bad("conversation %q: its participant %q is not in users.jsonl", c.ID, pa.UserID)
				}
			}
			found, err := p.find(func() (string, error) { v, err := p.s.store.GetConversation(p.ctx, x.bot, c.FID); return v.ID, err }, true)
			if err != nil {
				return err
			}
			x.define("conv_", c.ID, found, c.CreatedAt)
			p.kinds[c.ID] = kindConversation
		case *messageRecord:
			m := v
			if err := unique("message", m.ID); err != nil {
				return err
			}
			if p.kinds[m.ConversationID] != kindConversation {
				return bad("message %q: its conversation %q is not in conversations.jsonl", m.ID, m.ConversationID)
			}
		case *stateRecord:
			st := v
			if err := firstErr(unique("state", st.ID), unique("state name", st.Type+" "+st.ScopeID+" "+st.Name)); err != nil {
				return err
			}
			return p.scope("state "+st.ID, st.Type, st.ScopeID, bad)
		case *codeStateRecord:
			st := v
			if err := unique("event.state of", st.Scope+" "+st.ScopeID); err != nil {
				return err
			}
			return p.scope("event.state", st.Scope, st.ScopeID, bad)
		case *workflowRecord:
			w := v
			if err := unique("workflow", w.ID); err != nil {
				return err
			}
			if w.ConversationID != "" && p.kinds[w.ConversationID] != kindConversation {
				return bad("workflow %q: its conversation %q is not in conversations.jsonl", w.ID, w.ConversationID)
			}
			x.define("wfl_", w.ID, "", w.CreatedAt)
			p.kinds[w.ID] = kindWorkflow
		case *fileRecord:
			f := v
			if err := firstErr(unique("file", f.ID), unique("file key", f.Scope+" "+f.Key)); err != nil {
				return err
			}
			found, err := p.find(func() (string, error) {
				v, err := p.s.store.GetFileByKey(p.ctx, x.bot, f.Scope, f.Key)
				return v.ID, err
			}, true)
			if err != nil {
				return err
			}
			x.define("file_", f.ID, found, f.CreatedAt)
			p.kinds[f.ID] = kindFile
			if found == "" { // a key the bot has already keeps its file
				size := f.Size
				nf := platform.File{ID: x.of(f.ID), Generation: 1, Size: &size, ExtraBytes: f.ExtraBytes}
				nf.BlobKey = newBlobKey(nf)
				p.content[f.ID] = nf
			}
		case *passageRecord:
			ps := v
			if err := unique("passage", ps.ID); err != nil {
				return err
			}
			if p.kinds[ps.FileID] != kindFile {
				return bad("passage %q: its file %q is not in files.jsonl", ps.ID, ps.FileID)
			}
		}
		return nil
	})
}

// scope checks that a state's user or conversation is in the archive (a
// state outlives neither); a workflow's states are not checked, as
// workflows come after states.
func (p *plan) scope(what, typ, id string, bad func(string, ...any) error) error {
	switch {
	case typ == "user" && p.kinds[id] != kindUser:
		return bad("%s: its user %q is not in users.jsonl", what, id)
	case typ == "conversation" && p.kinds[id] != kindConversation:
		return bad("%s: its conversation %q is not in conversations.jsonl", what, id)
	}
	return nil
}

// decodeRow decodes a record of the JSON Lines entry name.
func decodeRow(name string, rec []byte) (any, error) {
	var r any
	switch name {
	case "versions.jsonl":
		r = &versionRecord{}
	case "users.jsonl":
		r = &userRecord{}
	case "conversations.jsonl":
		r = &conversationRecord{}
	case "messages.jsonl":
		r = &messageRecord{}
	case "states.jsonl":
		r = &stateRecord{}
	case "code-states.jsonl":
		r = &codeStateRecord{}
	case "workflows.jsonl":
		r = &workflowRecord{}
	case "files.jsonl":
		r = &fileRecord{}
	case "passages.jsonl":
		r = &passageRecord{}
	}
	return r, json.Unmarshal(rec, r)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// rows hands the store the rows to write, reading the archive again (it
// was checked whole by check, and its entries' SHA-256 by verify), with
// the ids of the bot.
func (p *plan) rows(path string) func(fn func(row any) error) error {
	x := p.ids
	return func(fn func(row any) error) error {
		return p.rowEntry(path, func(name string, _ int, rec []byte) error {
			r, err := decodeRow(name, rec)
			if err != nil {
				return err
			}
			var row any
			switch v := r.(type) {
			case *versionRecord:
				row = platform.BotVersion{ID: derive(platform.PrefixVersion, x.bot, v.ID, v.CreatedAt), Seq: v.Seq, Name: v.Name,
					Description: v.Description, BotName: v.BotName, Code: v.Code, Tags: v.Tags, Spec: v.Spec, Digest: v.Digest, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
			case *userRecord:
				u := v
				fid := u.FID
				if u.ID == x.src {
					fid = x.bot // the user the bot speaks as has the bot's id
				}
				row = platform.ChatUser{ID: x.of(u.ID), FID: fid, Name: u.Name, PictureURL: u.PictureURL, Profile: u.Profile,
					Tags: u.Tags, Properties: u.Properties, Attributes: u.Attributes, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
			case *conversationRecord:
				c := v
				conv := store.BotConversation{Conversation: platform.Conversation{ID: x.of(c.ID), FID: c.FID, OwnerID: x.of(c.OwnerID), Tags: c.Tags,
					Channel: c.Channel, Integration: c.Integration, Properties: c.Properties, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}}
				for _, pa := range c.Participants {
					conv.Participants = append(conv.Participants, store.Participant{UserID: x.of(pa.UserID), CreatedAt: pa.CreatedAt})
				}
				row = conv
			case *messageRecord:
				m := v
				msg := platform.Message{ID: derive("msg_", x.bot, m.ID, m.CreatedAt), ConversationID: x.of(m.ConversationID), UserID: x.of(m.UserID),
					Payload: m.Payload, Metadata: m.Metadata, IsBot: m.IsBot, Tags: m.Tags, CreatedAt: m.CreatedAt}
				if m.UpdatedAt != nil {
					msg.UpdatedAt = *m.UpdatedAt
				}
				row = msg
			case *stateRecord:
				st := v
				row = platform.RuntimeState{ID: derive("state_", x.bot, st.ID, st.CreatedAt), Type: st.Type, ScopeID: x.of(st.ScopeID),
					Name: st.Name, Payload: st.Payload, Expiry: st.Expiry, ExpiresAt: st.ExpiresAt, Version: st.Version, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt}
			case *codeStateRecord:
				st := v
				row = platform.BotState{Scope: st.Scope, ScopeID: x.of(st.ScopeID), Value: st.Value}
			case *workflowRecord:
				w := v
				row = platform.Workflow{ID: x.of(w.ID), Name: w.Name, Status: w.Status, Input: w.Input, Output: w.Output,
					ParentID: x.of(w.ParentID), ConversationID: x.of(w.ConversationID), UserID: x.of(w.UserID), Tags: w.Tags, FailureReason: w.FailureReason,
					TimeoutAt: w.TimeoutAt, CompletedAt: w.CompletedAt, Version: w.Version, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
			case *fileRecord:
				f := v
				c, isNew := p.content[f.ID]
				if !isNew {
					return nil // the bot has a file of that key already
				}
				size := f.Size
				owner := f.Owner
				if owner.Type == "bot" {
					owner.ID = x.of(owner.ID)
				}
				row = platform.File{ID: c.ID, Scope: f.Scope, Key: f.Key, Status: f.Status, Size: &size, DeclaredSize: size, ContentType: f.ContentType,
					Tags: f.Tags, Metadata: f.Metadata, AccessPolicies: f.AccessPolicies, Index: f.Index, PublicNow: f.PublicNow, FailedReason: f.FailedReason,
					IndexingStack: f.IndexingStack, ExpiresAt: f.ExpiresAt, Owner: owner, Generation: c.Generation, SHA256: f.SHA256, Counted: true,
					ExtraBytes: f.ExtraBytes, BlobKey: c.BlobKey, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
			case *passageRecord:
				ps := v
				if _, ok := p.content[ps.FileID]; !ok {
					return nil // its file is the bot's already, with its own passages
				}
				row = platform.Passage{ID: derive("psg_", x.bot, ps.ID, time.Time{}), FileID: x.of(ps.FileID), Position: ps.Position,
					Content: ps.Content, Type: ps.Type, Subtype: ps.Subtype, PageNumber: ps.PageNumber, Breadcrumb: ps.Breadcrumb, Questions: ps.Questions, Vector: ps.Vector,
					ImageType: ps.ImageType, Image: ps.Image}
			default:
				return nil
			}
			return fn(row)
		})
	}
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
