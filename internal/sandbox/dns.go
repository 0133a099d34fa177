package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	dnsTimeout = 10 * time.Second
	// dnsTTL: the host's resolver does not say how long an answer holds; Node and glibc do not cache.
	dnsTTL    = 30
	udpAnswer = 512 // the most a UDP answer holds without EDNS; past it, the answer says to ask over TCP
)

// dnsPackets answers the queries that arrive on pc, a few at once.
func (l *Link) dnsPackets(pc net.PacketConn) {
	inflight := make(chan struct{}, maxQueries)
	for {
		buf := make([]byte, 1500)
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		select {
		case inflight <- struct{}{}:
		default:
			continue // the resolver retries
		}
		l.wg.Go(func() {
			defer func() { <-inflight }()
			if ans := l.answer(buf[:n], udpAnswer); ans != nil {
				pc.WriteTo(ans, from)
			}
		})
	}
}

// dnsStream answers the queries of one DNS-over-TCP connection: each a 2-byte length and a message.
func (l *Link) dnsStream(c net.Conn) {
	for {
		c.SetDeadline(time.Now().Add(dnsTimeout))
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		ans := l.answer(q, 0xffff)
		if ans == nil {
			return
		}
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(ans))), ans...)); err != nil {
			return
		}
	}
}

// answer answers one query of an address (A or AAAA) with the addresses Lookup finds; other questions are
// not implemented. nil: not a query worth an answer.
func (l *Link) answer(query []byte, max int) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	qs, err := p.AllQuestions()
	res := dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	var addrs []netip.Addr
	switch {
	case err != nil || len(qs) != 1:
		res.RCode = dnsmessage.RCodeFormatError
	case h.OpCode != 0 || qs[0].Class != dnsmessage.ClassINET || qs[0].Type != dnsmessage.TypeA && qs[0].Type != dnsmessage.TypeAAAA:
		res.RCode = dnsmessage.RCodeNotImplemented
	default:
		res.RCode, addrs = l.resolve(qs[0])
	}
	for {
		b := dnsmessage.NewBuilder(make([]byte, 0, 512), res)
		b.EnableCompression()
		if err := b.StartQuestions(); err != nil {
			return nil
		}
		for _, q := range qs {
			if err := b.Question(q); err != nil {
				return nil
			}
		}
		if err := b.StartAnswers(); err != nil {
			return nil
		}
		for _, a := range addrs {
			rh := dnsmessage.ResourceHeader{Name: qs[0].Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
			if a.Is4() {
				err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
			} else {
				err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
			if err != nil {
				return nil
			}
		}
		msg, err := b.Finish()
		if err != nil {
			return nil
		}
		if len(msg) <= max || len(addrs) == 0 {
			return msg
		}
		res.Truncated, addrs = true, nil
	}
}

// resolve finds q's addresses. A name with addresses of the other family only has no answer, but exists.
func (l *Link) resolve(q dnsmessage.Question) (dnsmessage.RCode, []netip.Addr) {
	lookup := l.o.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ctx, cancel := context.WithTimeout(l.ctx, dnsTimeout)
	defer cancel()
	network := "ip4"
	if q.Type == dnsmessage.TypeAAAA {
		network = "ip6"
	}
	// The name keeps its final dot: absolute, the host's search domains do not apply.
	name := q.Name.String()
	found, err := lookup(ctx, network, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		if other, err := lookup(ctx, "ip", name); err == nil && len(other) > 0 {
			return dnsmessage.RCodeSuccess, nil
		}
		return dnsmessage.RCodeNameError, nil
	}
	if err != nil {
		l.log.Debug("sandbox name not resolved", "name", name, "err", err)
		return dnsmessage.RCodeServerFailure, nil
	}
	var addrs []netip.Addr
	for _, a := range found {
		if a = a.Unmap(); a.Is4() == (network == "ip4") {
			addrs = append(addrs, a)
		}
	}
	return dnsmessage.RCodeSuccess, addrs
}
