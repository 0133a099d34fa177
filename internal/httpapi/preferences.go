package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/botplatform/botplatform/internal/platform"
)

// Preferences of the caller's account and of the x-workspace-id workspace:
// a key (in the path) and any JSON value.

var setPreferenceSchema = schema("set-preference.json", `{"type":"object","additionalProperties":false,"properties":{"value":{}}}`)

// setPreference is setAccountPreference or setWorkspacePreference, as set.
func setPreference(set func(context.Context, *platform.Actor, string, json.RawMessage) error) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		var in struct{ Value json.RawMessage }
		if err := decode(r, &in); err != nil {
			return err
		}
		if err := set(r.Context(), act, r.PathValue("key"), in.Value); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, struct{}{})
		return nil
	}
}

// getPreference is getAccountPreference or getWorkspacePreference, as get.
func getPreference(get func(context.Context, *platform.Actor, string) (json.RawMessage, error)) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
		v, err := get(r.Context(), act, r.PathValue("key"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]json.RawMessage{"value": v})
		return nil
	}
}

// workspacePaths serves GET /v1/admin/workspaces/{id}/{key}: the mux cannot
// hold GET /v1/admin/workspaces/preferences/{key} beside the workspace's
// GET …/{id}/quotas and the like (neither pattern is more specific), so
// this one pattern takes getWorkspacePreference (id "preferences", never a
// workspace's id) and answers any other path as an unknown route. pref is
// that operation; the keys those other routes take are withPreference's.
func (a *api) workspacePaths(pref http.Handler) http.Handler {
	return a.h(func(w http.ResponseWriter, r *http.Request) error {
		if r.PathValue("id") != "preferences" {
			return platform.Errorf(platform.TypeResourceNotFound, "no route for %s %s", r.Method, r.URL.Path)
		}
		pref.ServeHTTP(w, r)
		return nil
	})
}

// withPreference serves h, a GET /v1/admin/workspaces/{id}/<key> route, but
// hands GET /v1/admin/workspaces/preferences/<key> to pref: that path
// matches h's pattern, the more specific.
func withPreference(key string, pref, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "preferences" {
			r.SetPathValue("key", key)
			pref.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
