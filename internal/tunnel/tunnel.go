// Package tunnel serves the WebSocket tunnels that `bp dev --tunnelUrl` opens, and carries the platform's requests to a dev bot down them.
package tunnel

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// maxMessage bounds one frame read from `bp dev` and one request body sent
// to it. coder/websocket reads at most 32 KiB by default, less than many
// bot answers.
const maxMessage = 8 << 20

// pingInterval and pingTimeout drop a peer that stopped answering: the CLI's
// hellos only prove it can send, and a vanished laptop sends no close frame.
const (
	pingInterval = 15 * time.Second
	pingTimeout  = 15 * time.Second
)

// writeTimeout bounds writing one frame, so a stuck peer cannot hold the
// tunnel's writer forever (a full request body may take a while on a slow
// link, hence the margin).
const writeTimeout = time.Minute

// Close codes of the tunnel protocol (@bpinternal/tunnel CLOSE_CODES).
const (
	closeConflict        websocket.StatusCode = 4001
	closeInvalidResponse websocket.StatusCode = 4002
)

var (
	// ErrBadID is returned, wrapped, by Accept and RoundTrip for a tunnel id
	// that is not 1 to 100 letters, digits, '-' or '_'. Accept returns it
	// before upgrading and writes nothing: the caller answers 400 with the
	// error's text.
	ErrBadID = errors.New("invalid tunnel id")
	// ErrNoTunnel is returned, wrapped, by RoundTrip when no `bp dev` is
	// connected to the request's tunnel.
	ErrNoTunnel = errors.New("no `bp dev` is connected")
	// ErrServerClosed is returned by Accept after Close. It writes nothing:
	// the caller answers 503.
	ErrServerClosed = errors.New("tunnel server is shutting down")
	// ErrInUse is returned, wrapped, by Accept for the id of a tunnel whose
	// `bp dev` is alive (it answers a ping). It writes nothing: the caller
	// answers 409.
	ErrInUse = errors.New("a live `bp dev` connection holds this tunnel id")
)

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

func checkID(id string) error {
	if !validID.MatchString(id) {
		return fmt.Errorf("%w %.100q: use 1 to 100 letters, digits, '-' or '_'", ErrBadID, id)
	}
	return nil
}

// Server holds the connected tunnels, one per id.
type Server struct {
	log *slog.Logger
	seq atomic.Uint64 // request ids, unique across tunnels
	// pingEvery and pingWait are pingInterval and pingTimeout; tests shorten them.
	pingEvery, pingWait time.Duration

	mu      sync.Mutex
	tunnels map[string]*tunnel
	closed  bool
}

var _ http.RoundTripper = (*Server)(nil)

// New returns a Server with no tunnels.
func New(log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	return &Server{log: log, pingEvery: pingInterval, pingWait: pingTimeout, tunnels: map[string]*tunnel{}}
}

// Accept upgrades r to a WebSocket and serves it as tunnel id until it
// closes. The id is the only credential of a tunnel (the CLI sends none),
// so a connection never takes a live tunnel over: while the one connected
// with the id answers a ping, another is refused with ErrInUse. One that
// does not answer within the ping timeout is taken for dead, as keepalive
// would, and replaced: the CLI reconnects with the same id after a drop,
// often before the old socket is known dead here.
//
// Before upgrading it returns ErrBadID, ErrServerClosed or ErrInUse with
// nothing written. If the upgrade fails, coder/websocket has already
// answered. Once upgraded it returns nil however the tunnel ends; the end
// is logged.
func (s *Server) Accept(w http.ResponseWriter, r *http.Request, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrServerClosed
	}
	old := s.live(id)
	if old != nil && old.answers() {
		s.log.Warn("tunnel: a second connection for a live tunnel refused", "tunnel", id, "remote", r.RemoteAddr)
		return fmt.Errorf("%w: tunnel %s", ErrInUse, id)
	}
	// No InsecureSkipVerify: the CLI sends no Origin, which coder/websocket
	// accepts, while a page of another site (which does) stays refused.
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return fmt.Errorf("tunnel %s: %w", id, err)
	}
	ws.SetReadLimit(maxMessage)
	t := newTunnel(id, ws, s)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close(websocket.StatusGoingAway, "server is shutting down")
		return nil
	}
	if cur := s.tunnels[id]; cur != nil && cur != old && !cur.ended() {
		// Another connection came in meanwhile and won.
		s.mu.Unlock()
		_ = ws.Close(closeConflict, "another connection holds this tunnel id")
		return nil
	}
	s.tunnels[id] = t
	s.mu.Unlock()

	if old != nil {
		old.endWhy(0, "", "replaced: it answered no ping when a new connection came with its id")
	}
	s.log.Info("tunnel: `bp dev` connected", "tunnel", id, "remote", r.RemoteAddr, "replaced", old != nil)
	t.serve()

	s.mu.Lock()
	if s.tunnels[id] == t {
		delete(s.tunnels, id)
	}
	s.mu.Unlock()
	s.log.Info("tunnel: closed", "tunnel", id, "why", t.why)
	return nil
}

// Connected tells whether a `bp dev` is connected to tunnel id.
func (s *Server) Connected(id string) bool { return s.live(id) != nil }

// live is the open tunnel id, or nil. A tunnel that has ended but whose
// close handshake is still running counts as gone.
func (s *Server) live(id string) *tunnel {
	s.mu.Lock()
	t := s.tunnels[id]
	s.mu.Unlock()
	if t == nil || t.ended() {
		return nil
	}
	return t
}

// Close closes every tunnel, so their Accept calls return, and refuses new
// ones: hijacked connections are out of http.Server.Shutdown's reach.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*tunnel, 0, len(s.tunnels))
	for _, t := range s.tunnels {
		all = append(all, t)
	}
	s.mu.Unlock()
	for _, t := range all {
		t.end(websocket.StatusGoingAway, "server is shutting down")
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
