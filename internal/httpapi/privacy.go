package httpapi

import (
	"net/http"

	"github.com/botplatform/botplatform/internal/platform"
)

// exportBotUser answers everything stored about a chat user of a bot.
func (a *api) exportBotUser(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	x, err := a.Privacy.Export(r.Context(), act, r.PathValue("id"), r.PathValue("userId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// eraseBotUser deletes it, and answers what was deleted.
func (a *api) eraseBotUser(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	n, err := a.Privacy.Erase(r.Context(), act, r.PathValue("id"), r.PathValue("userId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"erased": n})
	return nil
}
