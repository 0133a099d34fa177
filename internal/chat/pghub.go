package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// PGHub shares signals between every server process using one PostgreSQL
// database, through LISTEN/NOTIFY: Publish and CloseUser deliver to this
// process's listeners at once and queue the signal for the other
// processes; one sender goroutine takes everything queued and notifies it
// in a single statement (one round trip, one transaction), packing several
// signals into each notification. Each process (the publishing one
// included) hears every notification and delivers to its own listeners.
//
// Order: Publish delivers locally and queues under one lock, the sender
// keeps the queue's order within a statement, and PostgreSQL delivers one
// transaction's notifications in order, after those of transactions that
// committed before: so every process sees one process's signals in the
// order that process published them.
//
// Channel: one per schema (the one the store's tables are in), so that
// installations sharing a database in different schemas do not hear each
// other: botplatform_signals for the public schema, and for another one
// botplatform_signals_ and the first 16 hex digits of its name's SHA-256.
//
// Notification payload: "v2|" then records, each
// "<kind>|<id>|<piece>|<pieces>|<subject>|<length>|<data>", <length> the
// bytes of <data>; kind "s" (signal to conversation <subject>) or "u"
// (close user <subject>). A payload holds at most 8,000 bytes, so a larger
// signal travels in numbered pieces, all in the same statement, that
// receivers put back together.
type PGHub struct {
	local   *LocalHub
	url     string
	channel string
	log     *slog.Logger

	mu     sync.Mutex // keeps local delivery and the queue in the same order
	seq    uint64
	queue  chan outgoing
	origin string

	notify  *pgx.Conn // the sender goroutine's
	partial map[string]*pieced

	gap     time.Duration // least time between two notifications while signals keep coming
	flushes atomic.Int64  // notifying statements sent, for tests

	notifyPID, listenPID atomic.Uint32 // backends, for tests

	cancel  context.CancelFunc
	closing sync.Once
	stop    chan struct{}
	done    chan struct{} // receive ended
	sent    chan struct{} // sendLoop ended
}

var _ Hub = (*PGHub)(nil)

const (
	pgChannel    = "botplatform_signals"
	payloadBytes = 7900 // PostgreSQL's payload limit is 8,000 bytes
	pieceBytes   = 7000 // leaves room for a record's header in a payload
	// queueLen is how many signals may wait for the sender: a publisher
	// waits when it is full, rather than losing signals under load.
	queueLen = 4096
	// batchBytes is about the most one statement carries, in payloads'
	// bytes (a signal's pieces always go together).
	batchBytes = 256 << 10
	// signalGap is the least time between two notifications of one
	// process while signals keep coming (sendLoop). Every notification
	// wakes each listening connection of the database and its process, so
	// with several nodes a notification per signal costs each node as much
	// as a signal's own work; batched, it is shared. A signal waits at most
	// this long, and only when another notification went out just before
	// (docs/benchmarks.md#several-nodes).
	signalGap = 5 * time.Millisecond
)

// channelOf is the channel of the hubs whose tables are in schema (nil
// when the search path names no schema that exists).
func channelOf(schema *string) string {
	if schema == nil || *schema == "public" {
		return pgChannel
	}
	sum := sha256.Sum256([]byte(*schema))
	return pgChannel + "_" + hex.EncodeToString(sum[:8])
}

// outgoing is a signal waiting for the sender.
type outgoing struct{ kind, id, subject, data string }

// pieced is a signal whose first pieces were received.
type pieced struct {
	n, got int
	data   strings.Builder
}

// NewPGHub connects to the database and starts listening.
func NewPGHub(ctx context.Context, url string, limits StreamLimits, log *slog.Logger) (*PGHub, error) {
	return newPGHub(ctx, url, limits, log, signalGap)
}

// newPGHub is NewPGHub with the gap between notifications (signalGap).
func newPGHub(ctx context.Context, url string, limits StreamLimits, log *slog.Logger, gap time.Duration) (*PGHub, error) {
	notify, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	listen, err := pgx.Connect(ctx, url)
	if err != nil {
		notify.Close(ctx)
		return nil, err
	}
	var schema *string
	err = listen.QueryRow(ctx, "SELECT current_schema()").Scan(&schema)
	channel := channelOf(schema)
	if err == nil {
		_, err = listen.Exec(ctx, "LISTEN "+channel)
	}
	if err != nil {
		notify.Close(ctx)
		listen.Close(ctx)
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	h := &PGHub{local: NewLocalHub(limits), url: url, channel: channel, log: log, notify: notify, partial: map[string]*pieced{},
		queue: make(chan outgoing, queueLen), origin: strconv.FormatInt(time.Now().UnixNano(), 36), gap: gap,
		cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}), sent: make(chan struct{})}
	h.notifyPID.Store(notify.PgConn().PID())
	h.listenPID.Store(listen.PgConn().PID())
	go h.receive(lctx, listen)
	go h.sendLoop()
	return h, nil
}

// Close sends what is queued, stops listening and closes the connections.
func (h *PGHub) Close() {
	h.closing.Do(func() { close(h.stop) })
	<-h.sent
	h.cancel()
	<-h.done
}

func (h *PGHub) Subscribe(conversationID, userID string) (*Subscription, error) {
	return h.local.Subscribe(conversationID, userID)
}

func (h *PGHub) CloseAll() { h.local.CloseAll() }

// Publish delivers to this process's listeners at once, as LocalHub does
// (a stream opened after the publication never receives it), and queues the
// signal for the other processes; this process skips its own notifications.
func (h *PGHub) Publish(conversationID string, s Signal) {
	frame, err := encodeSignal(s)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.local.publishFrame(conversationID, frame)
	h.enqueue("s", conversationID, string(frame))
}

func (h *PGHub) CloseUser(userID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.local.CloseUser(userID)
	h.enqueue("u", userID, "")
}

// enqueue queues a signal for the sender (h.mu held), waiting while the
// queue is full; after Close it drops the signal.
func (h *PGHub) enqueue(kind, subject, data string) {
	h.seq++
	o := outgoing{kind: kind, id: h.origin + "-" + strconv.FormatUint(h.seq, 36), subject: subject, data: data}
	select {
	case <-h.stop:
	default:
		select {
		case h.queue <- o:
		case <-h.stop:
		}
	}
}

// sendLoop notifies whatever is queued, all of it in one statement, until
// Close; then it sends what is left and closes the notify connection.
// While signals keep coming it notifies at most once per gap: a signal
// queued sooner after the last notification waits for the rest of the gap
// (or for batchBytes to be queued), and goes with whatever came meanwhile.
func (h *PGHub) sendLoop() {
	defer close(h.sent)
	defer func() {
		if h.notify != nil {
			h.notify.Close(context.Background())
		}
	}()
	var batch []outgoing
	var last time.Time // the end of the last notification
	for {
		batch = batch[:0]
		select {
		case o := <-h.queue:
			batch = append(batch, o)
		case <-h.stop:
			h.flushRest(batch)
			return
		}
		size := len(batch[0].data)
		if wait := h.gap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
		linger:
			for size < batchBytes {
				select {
				case o := <-h.queue:
					batch = append(batch, o)
					size += len(o.data)
				case <-t.C:
					break linger
				case <-h.stop:
					t.Stop()
					h.flushRest(batch)
					return
				}
			}
			t.Stop()
		}
	more:
		for size < batchBytes {
			select {
			case o := <-h.queue:
				batch = append(batch, o)
				size += len(o.data)
			default:
				break more
			}
		}
		h.flush(batch)
		last = time.Now()
	}
}

// flushRest notifies batch and everything still queued (at Close:
// publishers queue nothing more).
func (h *PGHub) flushRest(batch []outgoing) {
	for {
		select {
		case o := <-h.queue:
			batch = append(batch, o)
		default:
			if len(batch) > 0 {
				h.flush(batch)
			}
			return
		}
	}
}

// flush notifies batch in one statement. On failure the batch is lost
// (clients reload messages when they reconnect) and the connection is
// replaced.
func (h *PGHub) flush(batch []outgoing) {
	payloads := packPayloads(batch)
	if h.notify == nil {
		h.reconnectNotify()
		if h.notify == nil {
			h.log.Warn("signals not shared: no connection to the database", "signals", len(batch))
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// unnest yields the payloads in array order, and a transaction's
	// notifications are delivered in the order they were made.
	_, err := h.notify.Exec(ctx, "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", h.channel, payloads)
	h.flushes.Add(1)
	if err != nil {
		h.log.Warn("signals not shared", "signals", len(batch), "err", err)
		h.notify.Close(ctx)
		h.notify = nil
		h.reconnectNotify()
	}
}

// reconnectNotify opens a new notify connection (sender goroutine only);
// h.notify stays nil when that fails.
func (h *PGHub) reconnectNotify() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, h.url); err == nil {
		h.notify = conn
		h.notifyPID.Store(conn.PgConn().PID())
	}
}

// packPayloads writes the batch's records, big signals cut in pieces, into
// as few payloads as fit, in order.
func packPayloads(batch []outgoing) []string {
	const prefix = "v2|"
	var payloads []string
	var cur strings.Builder
	add := func(o outgoing, i, n int, data string) {
		rec := o.kind + "|" + o.id + "|" + strconv.Itoa(i) + "|" + strconv.Itoa(n) + "|" + o.subject + "|" + strconv.Itoa(len(data)) + "|"
		if cur.Len() > len(prefix) && cur.Len()+len(rec)+len(data) > payloadBytes {
			payloads = append(payloads, cur.String())
			cur.Reset()
		}
		if cur.Len() == 0 {
			cur.WriteString(prefix)
		}
		cur.WriteString(rec)
		cur.WriteString(data)
	}
	for _, o := range batch {
		pieces := splitPieces(o.data)
		for i, p := range pieces {
			add(o, i, len(pieces), p)
		}
	}
	if cur.Len() > 0 {
		payloads = append(payloads, cur.String())
	}
	return payloads
}

// splitPieces cuts data into pieces of at most pieceBytes, between runes.
func splitPieces(data string) []string {
	var pieces []string
	for len(data) > pieceBytes {
		cut := pieceBytes
		for cut > 0 && !utf8.RuneStart(data[cut]) {
			cut--
		}
		pieces = append(pieces, data[:cut])
		data = data[cut:]
	}
	return append(pieces, data)
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
					if _, err = conn.Exec(ctx, "LISTEN "+h.channel); err == nil {
						h.listenPID.Store(conn.PgConn().PID())
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

// deliver hands a payload's records to local listeners. It skips, before
// copying anything, the records this process published and the signals
// nobody here would receive: no listener of the conversation, and not a
// signal a new listener is replayed.
func (h *PGHub) deliver(payload string) {
	rest, ok := strings.CutPrefix(payload, "v2|")
	if !ok {
		return // another version's format
	}
	own := h.origin + "-"
	for rest != "" {
		var f [6]string
		for k := range f {
			var found bool
			if f[k], rest, found = strings.Cut(rest, "|"); !found {
				return
			}
		}
		kind, id, subject := f[0], f[1], f[4]
		i, err1 := strconv.Atoi(f[2])
		n, err2 := strconv.Atoi(f[3])
		size, err3 := strconv.Atoi(f[5])
		if err1 != nil || err2 != nil || err3 != nil || n < 1 || i < 0 || i >= n || size < 0 || size > len(rest) {
			return
		}
		data := rest[:size]
		rest = rest[size:]
		if strings.HasPrefix(id, own) {
			continue // published here, and delivered here already
		}
		if kind == "u" {
			h.local.CloseUser(subject)
			continue
		}
		if kind != "s" {
			continue
		}
		if n > 1 {
			// The pieces of a signal come in order, in one transaction.
			p := h.partial[id]
			if i == 0 {
				if !h.local.wants(subject, data) {
					continue
				}
				p = &pieced{n: n}
				h.partial[id] = p
			}
			if p == nil || p.got != i || p.n != n {
				delete(h.partial, id)
				continue
			}
			p.data.WriteString(data)
			if p.got++; p.got < n {
				continue
			}
			delete(h.partial, id)
			data = p.data.String()
		} else if !h.local.wants(subject, data) {
			continue
		}
		h.local.publishFrame(subject, []byte(data))
	}
}
