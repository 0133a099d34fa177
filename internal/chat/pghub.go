package chat

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// PGHub shares signals between every server process using one PostgreSQL
// database, through LISTEN/NOTIFY: Publish and CloseUser notify a channel,
// and each process (the publishing one included) delivers what it hears to
// its own listeners. A notification carries at most 8,000 bytes, so larger
// signals travel in numbered pieces that receivers put back together.
//
// Notification payload: "<kind>|<id>|<piece>|<pieces>|<subject>|<data>",
// kind "s" (signal to conversation <subject>) or "u" (close user <subject>).
type PGHub struct {
	local *LocalHub
	url   string
	log   *slog.Logger

	mu     sync.Mutex // serialises notifications, keeping publish order
	notify *pgx.Conn

	partial map[string][]string // pieces received so far, by signal id
	seq     uint64
	origin  string
	cancel  context.CancelFunc
	done    chan struct{}
}

var _ Hub = (*PGHub)(nil)

const (
	pgChannel  = "botplatform_signals"
	pieceBytes = 7000 // below PostgreSQL's 8,000-byte payload limit, header included
)

// NewPGHub connects to the database and starts listening.
func NewPGHub(ctx context.Context, url string, limits StreamLimits, log *slog.Logger) (*PGHub, error) {
	notify, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	listen, err := pgx.Connect(ctx, url)
	if err != nil {
		notify.Close(ctx)
		return nil, err
	}
	if _, err := listen.Exec(ctx, "LISTEN "+pgChannel); err != nil {
		notify.Close(ctx)
		listen.Close(ctx)
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	h := &PGHub{local: NewLocalHub(limits), url: url, log: log, notify: notify, partial: map[string][]string{},
		origin: strconv.FormatInt(time.Now().UnixNano(), 36), cancel: cancel, done: make(chan struct{})}
	go h.receive(lctx, listen)
	return h, nil
}

// Close stops listening and closes the connections.
func (h *PGHub) Close() {
	h.cancel()
	<-h.done
	h.mu.Lock()
	h.notify.Close(context.Background())
	h.mu.Unlock()
}

func (h *PGHub) Subscribe(conversationID, userID string) (*Subscription, error) {
	return h.local.Subscribe(conversationID, userID)
}

func (h *PGHub) CloseAll() { h.local.CloseAll() }

// Publish delivers to this process's listeners at once, as LocalHub does
// (a stream opened after the publication never receives it), and notifies
// the other processes; this process skips its own notifications.
func (h *PGHub) Publish(conversationID string, s Signal) {
	frame, err := encodeSignal(s)
	if err != nil {
		return
	}
	h.local.publishFrame(conversationID, frame)
	h.send("s", conversationID, string(frame))
}

func (h *PGHub) CloseUser(userID string) {
	h.local.CloseUser(userID)
	h.send("u", userID, "")
}

// send notifies the channel, in pieces when data is large.
func (h *PGHub) send(kind, subject, data string) {
	var pieces []string
	for len(data) > pieceBytes {
		cut := pieceBytes
		for cut > 0 && !utf8.RuneStart(data[cut]) {
			cut--
		}
		pieces = append(pieces, data[:cut])
		data = data[cut:]
	}
	pieces = append(pieces, data)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	id := h.origin + "-" + strconv.FormatUint(h.seq, 36)
	for i, p := range pieces {
		payload := fmt.Sprintf("%s|%s|%d|%d|%s|%s", kind, id, i, len(pieces), subject, p)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := h.notify.Exec(ctx, "SELECT pg_notify($1, $2)", pgChannel, payload)
		cancel()
		if err != nil {
			h.log.Warn("signal not shared", "err", err)
			h.reconnectNotify()
			return
		}
	}
}

// reconnectNotify replaces a broken notify connection (h.mu held).
func (h *PGHub) reconnectNotify() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, h.url); err == nil {
		h.notify.Close(ctx)
		h.notify = conn
	}
}

// receive delivers notifications to local listeners until ctx ends,
// reconnecting when the connection drops (signals sent meanwhile are lost;
// clients reload messages when they reconnect).
func (h *PGHub) receive(ctx context.Context, conn *pgx.Conn) {
	defer close(h.done)
	defer func() { conn.Close(context.Background()) }()
	for {
		n, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.log.Warn("signal listener lost its connection", "err", err)
			conn.Close(context.Background())
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				if conn, err = pgx.Connect(ctx, h.url); err == nil {
					if _, err = conn.Exec(ctx, "LISTEN "+pgChannel); err == nil {
						break
					}
					conn.Close(context.Background())
				}
			}
			continue
		}
		h.deliver(n.Payload)
	}
}

func (h *PGHub) deliver(payload string) {
	parts := strings.SplitN(payload, "|", 6)
	if len(parts) != 6 {
		return
	}
	kind, id, subject, data := parts[0], parts[1], parts[4], parts[5]
	if strings.HasPrefix(id, h.origin+"-") {
		return // published here, and delivered here already
	}
	i, err1 := strconv.Atoi(parts[2])
	n, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return
	}
	if n > 1 {
		got := append(h.partial[id], data)
		if len(got) < n {
			h.partial[id] = got
			return
		}
		delete(h.partial, id)
		data = strings.Join(got, "")
	}
	switch kind {
	case "s":
		h.local.publishFrame(subject, []byte(data))
	case "u":
		h.local.CloseUser(subject)
	}
}
