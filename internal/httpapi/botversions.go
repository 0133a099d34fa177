package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/platform"
)

// Bot version handlers of the Admin API (routes in admin.go; rules in
// admin/versions.go).

var (
	createBotVersionSchema = schema("create-bot-version.json", `{"type":"object","additionalProperties":false,"required":["name"],
	"properties":{"name":{"type":"string"},"description":{"type":"string"}}}`)
	deployBotVersionSchema = schema("deploy-bot-version.json", `{"type":"object","additionalProperties":false,"required":["versionId"],
	"properties":{"versionId":{"type":"string"}}}`)
)

// botVersionJSON is a version as listBotVersions and createBotVersion show
// it: the official fields (id, name, description) and when and by whom it
// was recorded.
type botVersionJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
	CreatedBy   string `json:"createdBy"`
	// Current is set in a listing on the versions the bot runs now (same
	// name, code, tags and definition).
	Current bool `json:"current,omitempty"`
}

func toBotVersion(v platform.BotVersion) botVersionJSON {
	return botVersionJSON{ID: v.ID, Name: v.Name, Description: v.Description, CreatedAt: platform.FormatTime(v.CreatedAt), CreatedBy: v.CreatedBy}
}

func (a *api) listBotVersions(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	vs, err := a.Admin.ListBotVersions(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	digest, err := a.Admin.BotDigest(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]botVersionJSON, len(vs))
	for i, v := range vs {
		out[i] = toBotVersion(v)
		out[i].Current = v.Digest == digest
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": out})
	return nil
}

func (a *api) createBotVersion(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := a.Admin.CreateBotVersion(r.Context(), act, r.PathValue("id"), in.Name, in.Description)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": toBotVersion(v)})
	return nil
}

func (a *api) getBotVersion(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	u, err := a.Admin.BotVersionURL(r.Context(), act, r.PathValue("id"), r.PathValue("versionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": u})
	return nil
}

func (a *api) deployBotVersion(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct {
		VersionID string `json:"versionId"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if _, err := a.Admin.DeployBotVersion(r.Context(), act, r.PathValue("id"), in.VersionID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

// botVersionContent answers the document getBotVersion's signed url
// designates (docs/data.md#bot-versions).
func (a *api) botVersionContent(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	v, err := a.Admin.SignedBotVersion(r.Context(), r.PathValue("id"), r.PathValue("versionId"), q.Get("expires"), q.Get("view"), q.Get("signature"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, max-age=0")
	writeJSON(w, http.StatusOK, struct {
		botVersionJSON
		BotID  string `json:"botId"`
		Seq    int64  `json:"seq"`
		Digest string `json:"digest"`
		Bot    any    `json:"bot"`
	}{toBotVersion(v), v.BotID, v.Seq, v.Digest, struct {
		Name string            `json:"name"`
		Code string            `json:"code"`
		Tags map[string]string `json:"tags"`
		Spec platform.BotSpec  `json:"spec"`
	}{v.BotName, v.Code, v.Tags, v.Spec}})
	return nil
}
