package admin

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/signing"
)

// Bot versions: every createBot, and every updateBot that changes what
// the bot runs (code, name, tags, definition), records an immutable
// version; createBotVersion records the bot as it stands under a name;
// deployBotVersion puts a version back. Only the newest VersionsKept of
// a bot are kept.

// DefaultVersionsKept is how many versions of a bot are kept by default
// (--bot-versions-keep).
const DefaultVersionsKept = 50

// VersionURLTTL is how long getBotVersion's url stays valid.
const VersionURLTTL = 15 * time.Minute

// versionURLKind starts every signed version url's MAC.
const versionURLKind = "botplatform bot version url v1"

// versions holds what the version operations need beyond the store.
type versions struct {
	kept      int
	publicURL string // base of getBotVersion's url
}

func (s *Service) versionsKept() int { return s.versions.kept }

// newVersion is the version of b as it stands, recorded by a.
func (s *Service) newVersion(a *platform.Actor, b platform.Bot) platform.BotVersion {
	v := platform.SnapshotBot(b)
	v.ID, v.CreatedBy, v.CreatedAt = platform.NewID(platform.PrefixVersion), a.Account.ID, s.clock.Now()
	return v
}

// saveBot stores b, updated from before, recording a version when what the
// bot runs changed.
func (s *Service) saveBot(ctx context.Context, a *platform.Actor, before, b platform.Bot) error {
	v := s.newVersion(a, b)
	if v.Digest == platform.SnapshotBot(before).Digest {
		return s.store.UpdateBot(ctx, b)
	}
	_, err := s.store.SaveBotVersion(ctx, b.WorkspaceID, v, s.versionsKept(), &b)
	return err
}

func (s *Service) ListBotVersions(ctx context.Context, a *platform.Actor, botID string) ([]platform.BotVersion, error) {
	vs, err := s.store.ListBotVersions(ctx, a.Member.WorkspaceID, botID)
	return vs, notFound(err, "bot", botID)
}

// BotDigest is the digest of the bot as it stands: the versions of the same
// digest are what it runs (the console loads its code from one).
func (s *Service) BotDigest(ctx context.Context, a *platform.Actor, botID string) (string, error) {
	b, err := s.GetBot(ctx, a, botID)
	if err != nil {
		return "", err
	}
	return platform.SnapshotBot(b).Digest, nil
}

// CreateBotVersion records the bot as it stands as a version named name.
func (s *Service) CreateBotVersion(ctx context.Context, a *platform.Actor, botID, name, description string) (platform.BotVersion, error) {
	if err := require(a, platform.RoleDeveloper, "creating a bot version"); err != nil {
		return platform.BotVersion{}, err
	}
	if err := checkName("name", name); err != nil {
		return platform.BotVersion{}, err
	}
	if len(description) > 2000 {
		return platform.BotVersion{}, platform.Invalid("description", "at most 2000 characters")
	}
	b, err := s.GetBot(ctx, a, botID)
	if err != nil {
		return platform.BotVersion{}, err
	}
	v := s.newVersion(a, b)
	v.Name, v.Description = name, description
	rec := audit.Record{Action: audit.CreateBotVersion, ResourceID: b.ID, ResourceName: b.Name, Value: "version " + name}
	v, err = s.store.SaveBotVersion(s.audited(ctx, a, rec), a.Member.WorkspaceID, v, s.versionsKept(), nil)
	return v, notFound(err, "bot", botID)
}

func (s *Service) getVersion(ctx context.Context, workspaceID, botID, id string) (platform.BotVersion, error) {
	v, err := s.store.GetBotVersion(ctx, workspaceID, botID, id)
	return v, notFound(err, "bot version", id)
}

// DeployBotVersion makes the bot run version id again: its code, name,
// tags and definition become the version's. The bot's secrets, signing
// secret, integrations and tables stay as they are. Events already running
// finish on the code they started with; later ones run the version.
func (s *Service) DeployBotVersion(ctx context.Context, a *platform.Actor, botID, id string) (platform.Bot, error) {
	if err := require(a, platform.RoleDeveloper, "deploying a bot version"); err != nil {
		return platform.Bot{}, err
	}
	b, err := s.GetBot(ctx, a, botID)
	if err != nil {
		return b, err
	}
	v, err := s.getVersion(ctx, a.Member.WorkspaceID, botID, id)
	if err != nil {
		return b, err
	}
	if v.Code != "" && v.Code != b.Code {
		// Checked again: the runtime's limits may have changed since.
		if _, err := s.checkCode(ctx, v.Code); err != nil {
			return b, err
		}
	}
	secrets := b.Spec.Secrets
	b.Name, b.Code, b.Tags, b.Spec = v.BotName, v.Code, v.Tags, v.Spec
	b.Spec.Secrets = secrets
	now := s.clock.Now()
	b.DeployedAt, b.UpdatedAt = &now, now
	rec := audit.Record{Action: audit.DeployBot, ResourceID: b.ID, ResourceName: b.Name, Value: audit.RollbackValue(v.Name + " (" + v.ID + ")")}
	if err := s.store.UpdateBot(s.audited(ctx, a, rec), b); err != nil {
		return b, notFound(err, "bot", botID)
	}
	s.botsChanged()
	return b, nil
}

func (s *Service) versionSecret(ctx context.Context) ([]byte, error) {
	return s.secrets.get(ctx, s.store, "bot-version-url-signing")
}

// BotVersionURL is where version id of the bot can be downloaded without
// credentials for VersionURLTTL (getBotVersion's url).
func (s *Service) BotVersionURL(ctx context.Context, a *platform.Actor, botID, id string) (string, error) {
	if _, err := s.getVersion(ctx, a.Member.WorkspaceID, botID, id); err != nil {
		return "", err
	}
	secret, err := s.versionSecret(ctx)
	if err != nil {
		return "", err
	}
	expires := strconv.FormatInt(s.clock.Now().Add(VersionURLTTL).Unix(), 10)
	q := url.Values{"expires": {expires}, "signature": {signing.MAC(secret, versionURLKind, botID, id, expires)}}
	if !a.Member.Role.AtLeast(BotSecretsRole) {
		// The document shows what its asker's getBot shows: signed, so that
		// dropping the parameter breaks the signature.
		q.Set("view", versionViewLimited)
		q.Set("signature", signing.MAC(secret, versionURLKind, botID, id, expires, versionViewLimited))
	}
	return s.versions.publicURL + "/v1/admin/bots/" + url.PathEscape(botID) + "/versions/" + url.PathEscape(id) + "/content?" + q.Encode(), nil
}

// SignedBotVersion returns the version a url of BotVersionURL designates,
// with its code and spec.
func (s *Service) SignedBotVersion(ctx context.Context, botID, id, expires, view, signature string) (platform.BotVersion, error) {
	bad := platform.Errorf(platform.TypeForbidden, "this URL is invalid or has expired; get a new one with getBotVersion")
	secret, err := s.versionSecret(ctx)
	if err != nil {
		return platform.BotVersion{}, err
	}
	fields := []string{versionURLKind, botID, id, expires}
	switch view {
	case "":
	case versionViewLimited:
		fields = append(fields, view)
	default:
		return platform.BotVersion{}, bad
	}
	exp, perr := strconv.ParseInt(expires, 10, 64)
	if !signing.Valid(secret, signature, fields...) || perr != nil || s.clock.Now().After(time.Unix(exp, 0)) {
		return platform.BotVersion{}, bad
	}
	ws, err := s.store.GetBotWorkspace(ctx, botID)
	if err != nil {
		return platform.BotVersion{}, notFound(err, "bot", botID)
	}
	v, err := s.getVersion(ctx, ws, botID, id)
	if view == versionViewLimited {
		v.Spec.URL = "" // as Shown
	}
	return v, err
}

// versionViewLimited is the view of a version url made for a role below
// BotSecretsRole.
const versionViewLimited = "limited"
