package tunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// tunnel is one connection from `bp dev`. Accept's goroutine owns the
// socket; everyone else ends the tunnel with end and lets serve close it.
type tunnel struct {
	id  string
	ws  *websocket.Conn
	log *slog.Logger

	pingEvery, pingWait time.Duration

	// writing lets one frame be written at a time. coder/websocket would
	// serialise writes itself, but it closes the whole connection when a
	// write's context ends: a RoundTrip's context may only wait here.
	writing chan struct{}
	// helloDue asks keepalive to answer a hello, so the read loop never
	// waits on a write.
	helloDue chan struct{}

	mu      sync.Mutex
	pending map[string]chan inbound

	once   sync.Once
	done   chan struct{} // closed by end
	code   websocket.StatusCode
	reason string
	why    string // what pending requests are told
}

func newTunnel(id string, ws *websocket.Conn, s *Server) *tunnel {
	return &tunnel{
		id: id, ws: ws, log: s.log,
		pingEvery: s.pingEvery, pingWait: s.pingWait,
		writing:  make(chan struct{}, 1),
		helloDue: make(chan struct{}, 1),
		pending:  map[string]chan inbound{},
		done:     make(chan struct{}),
	}
}

// end ends the tunnel once. code and reason go in the close frame; code 0
// closes without a handshake (the peer is gone or not answering). why is
// what pending requests are told.
func (t *tunnel) end(code websocket.StatusCode, reason string) { t.endWhy(code, reason, reason) }

func (t *tunnel) endWhy(code websocket.StatusCode, reason, why string) {
	t.once.Do(func() {
		t.code, t.reason, t.why = code, reason, why
		close(t.done)
	})
}

func (t *tunnel) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// closedErr is what a request on an ended tunnel fails with.
func (t *tunnel) closedErr() error {
	return fmt.Errorf("tunnel %s: the `bp dev` connection closed (%s)", t.id, t.why)
}

// serve runs the tunnel until it ends, then closes the socket and waits
// for its goroutines.
func (t *tunnel) serve() {
	var wg sync.WaitGroup
	wg.Go(t.readLoop)
	wg.Go(t.keepalive)
	<-t.done
	if t.code == 0 {
		_ = t.ws.CloseNow()
	} else {
		_ = t.ws.Close(t.code, t.reason)
	}
	wg.Wait()
}

func (t *tunnel) readLoop() {
	for {
		// Never a cancellable context: its end would close the socket.
		_, data, err := t.ws.Read(context.Background())
		if err != nil {
			t.endWhy(0, "", peerGone(err))
			return
		}
		f, err := parseFrame(data)
		if err != nil {
			t.log.Warn("tunnel: invalid frame from `bp dev`, closing", "tunnel", t.id, "err", err)
			t.end(closeInvalidResponse, "invalid response payload")
			return
		}
		if f.Type == "hello" {
			select {
			case t.helloDue <- struct{}{}:
			default: // one answer is already due
			}
			continue
		}
		t.deliver(f)
	}
}

// peerGone says how the socket ended from the peer's side.
func peerGone(err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		var ce websocket.CloseError
		if errors.As(err, &ce) && ce.Reason != "" {
			return fmt.Sprintf("`bp dev` closed it: %d %s", code, ce.Reason)
		}
		return fmt.Sprintf("`bp dev` closed it: %d", code)
	}
	return err.Error()
}

// answers tells whether the peer answers a ping within pingWait. Nothing
// of the caller's bounds the wait: a caller that goes away must not make a
// live peer look dead.
func (t *tunnel) answers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), t.pingWait)
	defer cancel()
	return t.ws.Ping(ctx) == nil
}

// keepalive answers hellos and pings the peer.
func (t *tunnel) keepalive() {
	tick := time.NewTicker(t.pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-t.helloDue:
			_ = t.send(context.Background(), helloFrame)
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), t.pingWait)
			err := t.ws.Ping(ctx)
			cancel()
			if err != nil && !t.ended() {
				t.log.Info("tunnel: `bp dev` does not answer pings", "tunnel", t.id, "err", err)
				t.endWhy(0, "", "no answer to ping")
			}
		}
	}
}

// send writes one frame. ctx bounds only the wait for the writer.
func (t *tunnel) send(ctx context.Context, frame []byte) error {
	select {
	case t.writing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("tunnel %s: %w", t.id, ctx.Err())
	case <-t.done:
		return t.closedErr()
	}
	defer func() { <-t.writing }()
	if t.ended() {
		return t.closedErr()
	}
	wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := t.ws.Write(wctx, websocket.MessageText, frame); err != nil {
		// coder/websocket has closed the socket already.
		t.endWhy(0, "", "writing to it failed: "+err.Error())
		return t.closedErr()
	}
	return nil
}

// await registers request id; its answer arrives on the returned channel.
func (t *tunnel) await(id string) chan inbound {
	ch := make(chan inbound, 1)
	t.mu.Lock()
	t.pending[id] = ch
	t.mu.Unlock()
	return ch
}

// forget drops request id, answered or abandoned.
func (t *tunnel) forget(id string) {
	t.mu.Lock()
	delete(t.pending, id)
	t.mu.Unlock()
}

// deliver hands a response to the request waiting for it. A response
// nobody waits for (its request gave up, or a duplicate) is dropped.
func (t *tunnel) deliver(f inbound) {
	t.mu.Lock()
	ch := t.pending[*f.RequestID]
	delete(t.pending, *f.RequestID)
	t.mu.Unlock()
	if ch == nil {
		t.log.Debug("tunnel: response to no pending request", "tunnel", t.id, "request", *f.RequestID)
		return
	}
	ch <- f
}
