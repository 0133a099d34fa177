package httpapi

import (
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/openapi"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/store"
)

// filesRoutes is the Files API's route table (compat-notes §2.2).
func (a *api) filesRoutes() *table {
	t := newTable("Files")
	t.handle("PUT /v1/files", "upsertFile", upsertFileSchema, a.caller(a.upsertFile))
	t.handle("GET /v1/files", "listFiles", nil, a.caller(a.listFiles))
	t.handle("GET /v1/files/tags", "listFileTags", nil, a.caller(a.listFileTags))
	t.handle("GET /v1/files/tags/{tag}/values", "listFileTagValues", nil, a.caller(a.listFileTagValues))
	t.handle("GET /v1/files/search", "searchFiles", nil, a.caller(a.searchFiles))
	t.handle("GET /v1/files/{id}/passages", "listFilePassages", nil, a.caller(a.listFilePassages))
	t.serve("PUT /v1/files/{first}/{second}", a.putFileChild(
		t.op("PUT /v1/files/knowledge-bases/{id}", "updateKnowledgeBase", updateKBSchema, a.caller(a.updateKnowledgeBase)),
		t.op("PUT /v1/files/{id}/passages", "setFilePassages", setPassagesSchema, a.caller(a.setFilePassages))))
	t.handle("POST /v1/files/knowledge-bases", "createKnowledgeBase", createKBSchema, a.caller(a.createKnowledgeBase))
	t.handle("GET /v1/files/knowledge-bases", "listKnowledgeBases", nil, a.caller(a.listKnowledgeBases))
	t.handle("DELETE /v1/files/knowledge-bases/{id}", "deleteKnowledgeBase", nil, a.caller(a.deleteKnowledgeBase))
	t.handle("GET /v1/files/{id}", "getFile", nil, a.caller(a.getFile))
	t.handle("PUT /v1/files/{id}", "updateFileMetadata", updateFileSchema, a.caller(a.updateFileMetadata))
	t.handle("DELETE /v1/files/{id}", "deleteFile", emptyBodySchema, a.caller(a.deleteFile))
	t.handle("POST /v1/files/{idOrKey}/{destinationKey}", "copyFile", copyFileSchema, a.caller(a.copyFile))
	return t
}

// contentRoutes serves file contents through signed or public URLs. They
// carry no credentials and are limited by quotas, not by the 1 MB limit.
func (a *api) contentRoutes() *table {
	t := newTable("Content")
	t.handle("PUT /v1/files/upload/{id}", "uploadFileContent", nil, anyOrigin(a.h(a.uploadContent)))
	t.handle("GET /v1/files/content/{id}", "getFileContent", nil, a.h(a.signedContent))
	t.handle("GET /v1/files/public/{id}", "getPublicFileContent", nil, anyOrigin(a.h(a.publicContent)))
	return t
}

// anyOrigin lets pages of any origin use a URL that is its own permission
// (a signed upload URL, a public file's): no credentials are involved.
func anyOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Expose-Headers", "ETag")
		}
		h.ServeHTTP(w, r)
	})
}

// capabilityPreflight answers a browser's preflight of an upload: pages
// upload with a PUT that carries headers (the web chat's attachments).
func capabilityPreflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "PUT")
	h.Set("Access-Control-Allow-Headers", "Content-Type, x-amz-tagging")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

type callerFunc func(w http.ResponseWriter, r *http.Request, c *files.Caller) error

func (a *api) caller(f callerFunc) http.Handler {
	return secured{a.h(func(w http.ResponseWriter, r *http.Request) error {
		// Bot code served in-process carries its caller, and no token; the
		// bot's limit counts it as it does the same code run as a Node bundle.
		c, inProcess := files.CallerFrom(r.Context())
		token := ""
		if !inProcess {
			token = bearer(r)
			var err error
			c, err = a.Files.Authorize(r.Context(), token, files.Headers{
				BotID: r.Header.Get("x-bot-id"), IntegrationID: r.Header.Get("x-integration-id"),
				IntegrationAlias: r.Header.Get("x-integration-alias"), IntegrationName: r.Header.Get("x-integration-name"),
				UserID: r.Header.Get("x-user-id"), UserRole: r.Header.Get("x-user-role"),
			})
			if err != nil {
				return err
			}
		}
		noteCaller(r, c.WorkspaceID, c.BotID)
		if err := a.admit(w, who{token: token, bot: c.BotID}); err != nil {
			return err
		}
		if c.Integration {
			if id := r.Header.Get("x-integration-id"); id != "" && r.Header.Get("x-integration-alias") == "" && c.Owner.Alias == id {
				// Named by id only (the client of @botpress/sdk 0.x, e.g.
				// under `bp dev`): the alias is the bot's for it.
				if b, err := a.Store.GetBot(r.Context(), c.WorkspaceID, c.BotID); err == nil {
					for _, in := range b.Integrations {
						if in.IntegrationID == id {
							c.Owner.Alias, c.Owner.Name = in.Name, in.Name
							c.Scope = "integration:" + in.Name
						}
					}
				}
			}
			// The Runtime API stores what an integration sends as the bot
			// sees it (its tags and events prefixed with its alias).
			r = r.WithContext(runtimeapi.AsIntegration(r.Context(), c.Owner.Alias))
		}
		return f(w, r, c)
	}), openapi.Bot}
}

type fileJSON struct {
	ID                 string             `json:"id"`
	BotID              string             `json:"botId"`
	Key                string             `json:"key"`
	URL                string             `json:"url"`
	Size               *int64             `json:"size"`
	ContentType        string             `json:"contentType"`
	Tags               map[string]string  `json:"tags"`
	Metadata           map[string]any     `json:"metadata"`
	CreatedAt          string             `json:"createdAt"`
	UpdatedAt          string             `json:"updatedAt"`
	AccessPolicies     []string           `json:"accessPolicies"`
	Index              bool               `json:"index"`
	Status             string             `json:"status"`
	FailedStatusReason string             `json:"failedStatusReason,omitempty"`
	ExpiresAt          string             `json:"expiresAt,omitempty"`
	Owner              platform.FileOwner `json:"owner"`
	IndexingStack      string             `json:"indexingStack,omitempty"`
	UploadURL          string             `json:"uploadUrl,omitempty"`
}

// toFile renders a file. Its uploadUrl is a write capability, so only
// callers that may change files get it.
func (a *api) toFile(f platform.File, c *files.Caller) fileJSON {
	out := fileJSON{
		ID: f.ID, BotID: f.BotID, Key: f.Key, URL: a.Files.ContentURL(f), Size: f.Size, ContentType: f.ContentType,
		Tags: f.Tags, Metadata: f.Metadata, CreatedAt: platform.FormatTime(f.CreatedAt), UpdatedAt: platform.FormatTime(f.UpdatedAt),
		AccessPolicies: f.AccessPolicies, Index: f.Index, Status: f.Status, Owner: f.Owner, IndexingStack: f.IndexingStack,
	}
	if c.CanWrite {
		out.UploadURL = a.Files.UploadURL(f)
	}
	if f.Status == platform.FileUploadFailed || f.Status == platform.FileIndexFailed {
		out.FailedStatusReason = f.FailedReason
	}
	if f.ExpiresAt != nil {
		out.ExpiresAt = platform.FormatTime(*f.ExpiresAt)
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if out.AccessPolicies == nil {
		out.AccessPolicies = []string{}
	}
	return out
}

func (a *api) writeFile(w http.ResponseWriter, f platform.File, c *files.Caller) {
	writeJSON(w, http.StatusOK, map[string]any{"file": a.toFile(f, c)})
}

func (a *api) upsertFile(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in files.UpsertInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := a.Files.Upsert(r.Context(), c, in)
	if err != nil {
		return err
	}
	a.writeFile(w, f, c)
	return nil
}

func (a *api) getFile(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	f, err := a.Files.Get(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	a.writeFile(w, f, c)
	return nil
}

func (a *api) listFiles(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	f := store.FileFilter{Page: p, IDs: q.list("ids")}
	if f.Tags, f.NotTags, err = q.tagFilter(); err != nil {
		return err
	}
	if f.Indexed, err = q.boolean("indexed"); err != nil {
		return err
	}
	if f.SortField, err = q.enum("sortField", "key", "size", "createdAt", "updatedAt", "status"); err != nil {
		return err
	}
	dir, err := q.enum("sortDirection", "asc", "desc")
	if err != nil {
		return err
	}
	f.Descending = dir == "desc"
	list, next, err := a.Files.List(r.Context(), c, f)
	if err != nil {
		return err
	}
	out := make([]fileJSON, len(list))
	for i, x := range list {
		out[i] = a.toFile(x, c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) deleteFile(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Files.Delete(r.Context(), c, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) updateFileMetadata(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in files.MetadataUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := a.Files.UpdateMetadata(r.Context(), c, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	a.writeFile(w, f, c)
	return nil
}

func (a *api) copyFile(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct{ Overwrite bool }
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := a.Files.Copy(r.Context(), c, r.PathValue("idOrKey"), r.PathValue("destinationKey"), r.Header.Get("x-destination-bot-id"), in.Overwrite)
	if err != nil {
		return err
	}
	a.writeFile(w, f, c)
	return nil
}

func (a *api) listFileTags(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	p, err := page(newQuery(r), 100)
	if err != nil {
		return err
	}
	tags, next, err := a.Files.Tags(r.Context(), c, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tags": tags, "meta": metaJSON{next}})
	return nil
}

func (a *api) listFileTagValues(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	p, err := page(newQuery(r), 100)
	if err != nil {
		return err
	}
	values, next, err := a.Files.TagValues(r.Context(), c, r.PathValue("tag"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"values": values, "meta": metaJSON{next}})
	return nil
}

func signed(r *http.Request) files.SignedRequest {
	return files.ParseSigned(r.PathValue("id"), r.URL.Query())
}

// transferDeadline is how long one upload or download may take.
const transferDeadline = time.Hour

func (a *api) uploadContent(w http.ResponseWriter, r *http.Request) error {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(transferDeadline))
	f, err := a.Files.Upload(r.Context(), signed(r), r.Header.Get("x-amz-tagging"), r.Body)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", `"`+f.SHA256+`"`)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (a *api) signedContent(w http.ResponseWriter, r *http.Request) error {
	if req := signed(r); req.Passage != "" {
		typ, img, err := a.Files.PassageImage(r.Context(), req)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", typ)
		w.Header().Set("Content-Length", strconv.Itoa(len(img)))
		w.Header().Set("Cache-Control", "private, max-age=60")
		_, _ = w.Write(img)
		return nil
	}
	if redirect(a.Files, r) {
		loc, err := a.Files.ContentLocation(r.Context(), signed(r))
		return redirectTo(w, r, loc, err)
	}
	f, rd, err := a.Files.Content(r.Context(), signed(r))
	if err != nil {
		return err
	}
	defer rd.Close()
	serve(w, r, f, rd)
	return nil
}

func (a *api) publicContent(w http.ResponseWriter, r *http.Request) error {
	if redirect(a.Files, r) {
		loc, err := a.Files.PublicContentLocation(r.Context(), r.PathValue("id"))
		return redirectTo(w, r, loc, err)
	}
	f, rd, err := a.Files.PublicContent(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	defer rd.Close()
	serve(w, r, f, rd)
	return nil
}

// redirect tells whether to answer a download with a redirect to the blob
// store (--blob-download redirect): plain GETs only. A presigned URL is
// signed for GET, so HEAD is answered here; and the store's ETag is not
// the file's SHA-256, so conditional requests are too.
func redirect(fs *files.Service, r *http.Request) bool {
	if !fs.Redirects() || r.Method != http.MethodGet {
		return false
	}
	for _, h := range []string{"If-None-Match", "If-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return true
}

// redirectTo answers 307 (the client repeats its GET, Range included, at
// loc), or the error.
func redirectTo(w http.ResponseWriter, r *http.Request, loc string, err error) error {
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // loc expires
	http.Redirect(w, r, loc, http.StatusTemporaryRedirect)
	return nil
}

// serve writes content with its type, length and ETag, answering Range and
// conditional requests.
func serve(w http.ResponseWriter, r *http.Request, f platform.File, rd blob.Reader) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(transferDeadline))
	w.Header().Set("Content-Type", f.ContentType)
	// The content is shown as its type says, never sniffed, and a page
	// among it runs in a sandbox of its own origin, not this server's. PDF
	// is left out: browsers' viewers refuse sandboxed documents, and run a
	// PDF's scripts apart from the page's origin anyway.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if mt, _, _ := mime.ParseMediaType(f.ContentType); mt != "application/pdf" {
		w.Header().Set("Content-Security-Policy", "sandbox")
	}
	if f.SHA256 != "" {
		w.Header().Set("ETag", `"`+f.SHA256+`"`)
	}
	w.Header().Set("Cache-Control", "private, max-age=0")
	var content io.ReadSeeker = rd
	if of, ok := rd.(interface{ OSFile() *os.File }); ok {
		content = of.OSFile() // lets the connection use sendfile
	}
	http.ServeContent(w, r, path.Base(f.Key), f.UpdatedAt, content)
}
