package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

var (
	createKBSchema = schema("create-kb.json", `{"type":"object","additionalProperties":false,"required":["name"],
		"properties":{"name":{"type":"string"},"tags":{"type":"object","additionalProperties":{"type":"string"}}}}`)
	updateKBSchema = schema("update-kb.json", `{"type":"object","additionalProperties":false,"required":["name"],
		"properties":{"name":{"type":"string"},"tags":{"type":"object","additionalProperties":{"type":["string","null"]}}}}`)
)

type kbBody struct {
	Name string             `json:"name"`
	Tags map[string]*string `json:"tags"`
}

func kbJSON(kb platform.KnowledgeBase) map[string]any {
	return map[string]any{"id": kb.ID, "name": kb.Name, "tags": kb.Tags, "createdAt": platform.FormatTime(kb.CreatedAt)}
}

func (a *api) createKnowledgeBase(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var b kbBody
	if err := decode(r, &b); err != nil {
		return err
	}
	kb, err := a.Files.CreateKnowledgeBase(r.Context(), c, b.Name, b.Tags)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"knowledgeBase": kbJSON(kb)})
	return nil
}

func (a *api) updateKnowledgeBase(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var b kbBody
	if err := decode(r, &b); err != nil {
		return err
	}
	kb, err := a.Files.UpdateKnowledgeBase(r.Context(), c, r.PathValue("id"), b.Name, b.Tags)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"knowledgeBase": kbJSON(kb)})
	return nil
}

func (a *api) deleteKnowledgeBase(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if err := a.Files.DeleteKnowledgeBase(r.Context(), c, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (a *api) listKnowledgeBases(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	tags, err := q.tags()
	if err != nil {
		return err
	}
	kbs, next, err := a.Files.ListKnowledgeBases(r.Context(), c, tags, p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(kbs))
	for _, kb := range kbs {
		out = append(out, kbJSON(kb))
	}
	writeJSON(w, http.StatusOK, map[string]any{"knowledgeBases": out, "meta": metaJSON{next}})
	return nil
}

// putFileChild serves PUT /v1/files/{first}/{second}: updateKnowledgeBase
// (knowledge-bases/{id}) and setFilePassages ({id}/passages) share the
// shape, which the router cannot tell apart. Other paths of that shape (the
// content URLs) answer 405 before any authentication, as routing does.
func (a *api) putFileChild(updateKB, setPassages http.Handler) http.Handler {
	notAllowed := a.h(func(w http.ResponseWriter, r *http.Request) error {
		return platform.Errorf(platform.TypeMethodNotFound, "method %s is not allowed on %s", r.Method, r.URL.Path)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, second := r.PathValue("first"), r.PathValue("second")
		switch {
		case first == "knowledge-bases":
			r.SetPathValue("id", second)
			updateKB.ServeHTTP(w, r)
		case second == "passages":
			r.SetPathValue("id", first)
			setPassages.ServeHTTP(w, r)
		default:
			notAllowed.ServeHTTP(w, r)
		}
	})
}
