package sandbox

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Outbound carries what sandboxes send outside: the TCP connections made to their egress ports (Options.Egress),
// dialed at the address the program connected to, and the DNS queries of their nameserver (Options.DNS),
// answered with the host's resolver. One Outbound serves every sandbox; Serve starts serving one.
type Outbound struct {
	// Ports are the egress ports to give each sandbox.
	Ports []int
	// Dial dials where a program connected to. It holds the address rule (a net.Dialer whose Control is
	// egress.Rule.Control): a refusal resets the program's connection and is logged.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Lookup resolves a name asked of the nameserver; network is "ip4" or "ip6". Default:
	// net.DefaultResolver.LookupNetIP, the host's /etc/hosts and DNS.
	Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// MaxConns bounds one sandbox's connections at once (DNS over TCP included); default DefaultMaxConns.
	MaxConns int

	mu    sync.Mutex
	links map[*Link]bool
}

// DefaultMaxConns is Outbound.MaxConns's default.
const DefaultMaxConns = 64

const (
	dialTimeout = 30 * time.Second
	refuseWait  = time.Second
	// maxQueries bounds one sandbox's DNS queries over UDP in flight; more are dropped, and retried.
	maxQueries = 32
)

// Link is one sandbox's traffic to the outside, until Close.
type Link struct {
	o      *Outbound
	socks  *Sockets
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
}

// Serve carries the traffic of a sandbox's egress and DNS sockets (s.Listen are not its) until the Link is
// closed; log receives what it refuses and why.
func (o *Outbound) Serve(s *Sockets, log *slog.Logger) *Link {
	max := o.MaxConns
	if max <= 0 {
		max = DefaultMaxConns
	}
	l := &Link{o: o, socks: s, log: log, slots: make(chan struct{}, max), conns: map[net.Conn]bool{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	o.mu.Lock()
	if o.links == nil {
		o.links = map[*Link]bool{}
	}
	o.links[l] = true
	o.mu.Unlock()
	for _, ln := range s.Egress {
		l.accept(ln, l.carry)
	}
	if s.DNSTCP != nil {
		l.accept(s.DNSTCP, l.dnsStream)
	}
	if s.DNS != nil {
		l.wg.Go(func() { l.dnsPackets(s.DNS) })
	}
	return l
}

// Len says how many sandboxes o serves.
func (o *Outbound) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.links)
}

// Close stops the sandbox's sockets and ends its connections, and waits until they are done.
func (l *Link) Close() {
	l.cancel()
	for _, ln := range l.socks.Egress {
		ln.Close()
	}
	if l.socks.DNSTCP != nil {
		l.socks.DNSTCP.Close()
	}
	if l.socks.DNS != nil {
		l.socks.DNS.Close()
	}
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.conns = nil
	l.mu.Unlock()
	l.wg.Wait()
	l.o.mu.Lock()
	delete(l.o.links, l)
	l.o.mu.Unlock()
}

// accept hands ln's connections to serve, each holding one of the sandbox's slots.
func (l *Link) accept(ln net.Listener, serve func(net.Conn)) {
	l.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			select {
			case l.slots <- struct{}{}:
			default:
				l.log.Warn("sandbox connection refused: too many at once", "to", c.LocalAddr().String(), "max", cap(l.slots))
				refuse(c)
				continue
			}
			if !l.track(c) {
				c.Close()
				<-l.slots
				return
			}
			l.wg.Go(func() {
				defer func() { l.untrack(c); <-l.slots }()
				serve(c)
			})
		}
	})
}

// track records c so that Close ends it; false when the Link is already closed.
func (l *Link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns == nil {
		return false
	}
	l.conns[c] = true
	return true
}

func (l *Link) untrack(c net.Conn) {
	l.mu.Lock()
	if l.conns != nil {
		delete(l.conns, c)
	}
	l.mu.Unlock()
	c.Close()
}

// carry dials where in was meant to go, its local address inside the sandbox, and copies both ways.
func (l *Link) carry(in net.Conn) {
	to := in.LocalAddr().String()
	ctx, cancel := context.WithTimeout(l.ctx, dialTimeout)
	out, err := l.o.Dial(ctx, "tcp", to)
	cancel()
	if err != nil {
		l.log.Warn("sandbox connection refused", "to", to, "err", err)
		refuse(in)
		return
	}
	if !l.track(out) {
		out.Close()
		return
	}
	defer l.untrack(out)
	splice(in, out)
}

// splice copies a to b and b to a; the end of one direction half-closes the other side's, and an error
// in either ends both.
func splice(a, b net.Conn) {
	done := make(chan struct{})
	cp := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		cw, ok := dst.(interface{ CloseWrite() error })
		if err != nil || !ok || cw.CloseWrite() != nil {
			a.Close()
			b.Close()
		}
	}
	go func() { defer close(done); cp(b, a) }()
	cp(a, b)
	<-done
}

// refuse closes c with a TCP reset, so that the program sees its connection refused rather than ended; once
// the program has sent its first bytes, or after refuseWait of silence: Node 20's fetch may wait forever on
// a connection reset before it wrote its request (1 in 300 times, measured).
func refuse(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(refuseWait))
	c.Read(make([]byte, 4096))
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
