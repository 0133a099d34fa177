package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"time"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/botarchive"
	"github.com/botplatform/botplatform/internal/platform"
)

// ImportLimit caps the archive importBot reads (file contents included):
// over it, 413 PayloadTooLarge. The archive is spooled to disk, never held
// in memory.
const ImportLimit = 4 << 30

// exportBot answers the bot's archive as a download (botarchive). A
// failure once the archive has begun cannot change the status: it cuts the
// download short, and the archive then fails its manifest's check.
func (a *api) exportBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	secrets, err := newQuery(r).boolean("secrets")
	if err != nil {
		return err
	}
	withSecrets := secrets != nil && *secrets
	b, err := a.BotArchive.Prepare(r.Context(), act, r.PathValue("id"), withSecrets)
	if err != nil {
		return err
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(transferDeadline))
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+archiveName(b)+`"`)
	w.WriteHeader(http.StatusOK)
	if _, err := a.BotArchive.Export(r.Context(), b, withSecrets, w); err != nil {
		a.Log.ErrorContext(r.Context(), "bot export failed", "bot", b.ID, "err", err)
		panic(http.ErrAbortHandler) // the client must see a cut download, not an end
	}
	// Recorded once the whole archive went out (an export changes nothing
	// to record it with).
	value := "without secrets"
	if withSecrets {
		value = "with secrets"
	}
	rec := audit.Record{WorkspaceID: act.Member.WorkspaceID, Actor: audit.Account(act.Account), Action: audit.DownloadBotArchive,
		ResourceID: b.ID, ResourceName: b.Name, Value: value}
	if err := a.Admin.Audit().Record(context.WithoutCancel(r.Context()), rec); err != nil {
		a.Log.ErrorContext(r.Context(), "audit: recording a bot export", "bot", b.ID, "err", err)
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// archiveName is the archive's file name: the bot's name, made safe.
func archiveName(b platform.Bot) string {
	name := unsafeName.ReplaceAllString(b.Name, "-")
	if name == "" || name == "-" {
		name = b.ID
	}
	return name + ".botarchive.tar.gz"
}

// importBot reads an archive (the body) into the caller's workspace.
func (a *api) importBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(transferDeadline))
	res, err := a.BotArchive.Import(r.Context(), act, r.Body, botarchive.ImportOptions{Name: newQuery(r).str("name")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
