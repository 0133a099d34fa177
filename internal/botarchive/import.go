package botarchive

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ImportOptions are the caller's choices for an import.
type ImportOptions struct {
	Name string // the new bot's name ("": the archived bot's)
}

// Result is what an import did.
type Result struct {
	BotID   string `json:"botId"`
	Name    string `json:"name"`
	Created bool   `json:"created"` // false: an earlier import's bot, completed
	Source  Source `json:"source"`
	// Added counts the rows of each kind written, and the contents stored;
	// Archive what the archive holds.
	Added   map[string]int `json:"added"`
	Archive map[string]int `json:"archive"`
}

// Source is where the archive comes from.
type Source struct {
	BotID         string `json:"botId"`
	ServerVersion string `json:"serverVersion"`
	ExportedAt    string `json:"exportedAt"`
}

// Import reads an archive from body into the caller's workspace. The
// archive is spooled to a temporary file and verified whole first; only
// then are the contents of new files stored and the rows written, in one
// transaction, read from the archive again rather than held (Bounds). The
// bot's id, and those of its rows, are derived from the workspace and the
// archived ids: importing the same bot again into the same workspace finds
// the bot it made and adds only what it lacks.
func (s *Service) Import(ctx context.Context, act *platform.Actor, body io.Reader, opt ImportOptions) (Result, error) {
	if err := act.Require(ImportRole, "importing a bot"); err != nil {
		return Result{}, err
	}
	path, err := s.spool(body)
	if path != "" {
		defer os.Remove(path)
	}
	if err != nil {
		return Result{}, err
	}
	m, err := verify(path, s.bounds)
	if err != nil {
		return Result{}, err
	}
	rec, err := readBot(path, s.bounds)
	if err != nil {
		return Result{}, err
	}
	ws := act.Member.WorkspaceID
	now := s.clock.Now()
	botID := derive(platform.PrefixBot, ws, m.BotID, rec.CreatedAt)
	b, err := s.store.GetBot(ctx, ws, botID)
	created := errors.Is(err, platform.ErrNotFound)
	if err != nil && !created {
		return Result{}, err
	}
	in := store.BotImport{WorkspaceID: ws, BotID: botID, Now: now}
	if created {
		b = newBot(rec, act, botID, opt.Name, now)
		in.Bot = &b
	}
	p := newPlan(s, ctx, &in, m.BotID, !created)
	if err := p.check(path); err != nil {
		return Result{}, err
	}
	in.Rows = p.rows(path)
	maxStorage, maxVector, room, err := s.limits(ctx, ws)
	if err != nil {
		return Result{}, err
	}
	if need := p.bytes(); need > room {
		return Result{}, platform.Errorf(platform.TypeQuotaExceeded, "file storage quota exceeded: the archive's files need %d bytes, %d are left under the workspace's limit of %d", need, room, maxStorage)
	}
	in.MaxStorage, in.MaxVector = maxStorage, maxVector
	stored, err := p.storeContents(path)
	if err == nil {
		var added map[string]int
		rec := audit.Record{WorkspaceID: ws, Actor: audit.Account(act.Account), Action: audit.ImportBot, ResourceID: botID, ResourceName: b.Name,
			Value: fmt.Sprintf("from the archive of %s (exported %s)", m.BotID, platform.FormatTime(m.ExportedAt))}
		if added, err = s.store.ImportBot(audit.With(ctx, s.clock, rec), in); err == nil {
			added["contents"] = len(stored)
			s.log.InfoContext(ctx, "bot imported", "workspace", ws, "bot", botID, "source", m.BotID, "created", created, "by", act.Account.ID)
			return Result{BotID: botID, Name: b.Name, Created: created, Added: added, Archive: m.Counts,
				Source: Source{m.BotID, m.ServerVersion, platform.FormatTime(m.ExportedAt)}}, nil
		}
	}
	for _, key := range stored {
		_ = s.contents.Delete(context.WithoutCancel(ctx), key)
	}
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		return Result{}, platform.Errorf(platform.TypeQuotaExceeded, "%s", qe.Error())
	}
	return Result{}, err
}

// spool copies body to a temporary file, read twice: once to verify it,
// once to import it.
func (s *Service) spool(body io.Reader) (string, error) {
	f, err := os.CreateTemp(s.tmpDir, "botarchive-import-*")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(f, body); err != nil {
		return f.Name(), fmt.Errorf("reading the archive: %w", err)
	}
	return f.Name(), f.Sync()
}

// errFound ends a walk of the archive early.
var errFound = errors.New("found")

// readBot reads bot.json, the archive's first entry.
func readBot(path string, b Bounds) (botRecord, error) {
	var r botRecord
	err := eachEntry(path, func(name string, size int64, body io.Reader) error {
		if name != BotEntry {
			return nil
		}
		if b.RecordBytes > 0 && size > int64(b.RecordBytes) {
			return tooLarge("entry %s has %d bytes, over the import's bound of %d bytes a record", name, size, b.RecordBytes)
		}
		if err := decodeJSON(name, body, &r); err != nil {
			return err
		}
		return errFound
	})
	if errors.Is(err, errFound) {
		err = nil
	}
	return r, err
}

// newBot is the bot an import creates: the archived one under a new id,
// with its secrets when the archive has them, else new ones (so that its
// users' keys must then be signed anew: see docs/data.md).
func newBot(r botRecord, act *platform.Actor, id, name string, now time.Time) platform.Bot {
	b := platform.Bot{ID: id, WorkspaceID: act.Member.WorkspaceID, Name: r.Name, Dev: r.Dev, Type: r.Type, Status: r.Status,
		SigningSecret: platform.RandomToken(32), Code: r.Code, CreatedBy: act.Account.ID, Tags: r.Tags, Spec: r.Spec,
		DeployedAt: r.DeployedAt, CreatedAt: r.CreatedAt, UpdatedAt: now}
	if name != "" {
		b.Name = name
	}
	if b.Tags == nil {
		b.Tags = map[string]string{}
	}
	key := ""
	if r.Secrets != nil {
		b.SigningSecret = cmpOr(r.Secrets.SigningSecret, b.SigningSecret)
		key = r.Secrets.ChatEncryptionKey
	} else {
		b.Spec.Secrets = nil
	}
	b.Integrations = []platform.BotIntegration{platform.NewChatIntegration(id, key, now)}
	if slices.Contains(r.Integrations, platform.LLMIntegration) {
		b.Integrations = append(b.Integrations, platform.NewLLMIntegration(id, now))
	}
	if slices.Contains(r.Integrations, platform.WebchatIntegrationID) {
		// A new webhook and key, as for a new bot: the web chat's users
		// get new keys (the Chat API's, by the archive's secret, stay).
		b.Integrations = append(b.Integrations, platform.NewWebchatIntegration(id, now))
	}
	return b
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// newBlobKey names an imported file's content as the Files service names
// an upload's ("<file id>.<generation>.<random>"), so that its orphan
// sweep recognises it.
func newBlobKey(f platform.File) string {
	return fmt.Sprintf("%s.%d.%s", f.ID, f.Generation, rand.Text())
}
