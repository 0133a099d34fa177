package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/tunnel"
)

// tunnel serves GET /v1/tunnels/{id}: the WebSocket `bp dev --tunnelUrl
// http://HOST/v1/tunnels` opens. It carries no credentials: its id is one,
// which a live connection holds until it ends (docs/sdk-bots.md).
func (a *api) tunnel(w http.ResponseWriter, r *http.Request) error {
	// The connection outlives the server's read and write timeouts.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	err := a.Tunnels.Accept(w, r, r.PathValue("id"))
	switch {
	case errors.Is(err, tunnel.ErrBadID):
		return platform.Invalid("id", "%v", err)
	case errors.Is(err, tunnel.ErrServerClosed):
		return platform.Errorf(platform.TypeResourceGone, "%v", err)
	case errors.Is(err, tunnel.ErrInUse):
		return platform.Errorf(platform.TypeAlreadyExists, "%v", err)
	case err != nil:
		// The upgrade answered, or the connection ended: nothing more to write.
		a.Log.Debug("tunnel ended", "id", r.PathValue("id"), "err", err)
	}
	return nil
}
