package egress

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// Hosts are an operator's static host entries for bot code (--bot-hosts):
// a name, in lower case without a final dot, and the addresses it stands
// for instead of what DNS says. A name with entries resolves to them only.
// The operator named these addresses, so the rule lets them through even
// when they are not public (Prefixes); never the server's own ports.
type Hosts map[string][]netip.Addr

// Addrs are the entries of host, nil when it has none.
func (h Hosts) Addrs(host string) []netip.Addr {
	if len(h) == 0 {
		return nil
	}
	return h[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// Lookup resolves a name with the entries first, then with next
// (net.DefaultResolver.LookupNetIP when nil); network is "ip", "ip4" or
// "ip6", as for net.Resolver.LookupNetIP.
func (h Hosts) Lookup(next func(ctx context.Context, network, host string) ([]netip.Addr, error)) func(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if next == nil {
		next = net.DefaultResolver.LookupNetIP
	}
	return func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		addrs := h.Addrs(host)
		if addrs == nil {
			return next(ctx, network, host)
		}
		var out []netip.Addr
		for _, a := range addrs {
			if network == "ip" || a.Is4() == (network == "ip4") {
				out = append(out, a)
			}
		}
		return out, nil
	}
}

// Dial wraps a dial function: an address whose host has entries is dialed
// at each of them in turn (the first that answers), the others as they are.
func (h Hosts) Dial(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	if len(h) == 0 {
		return dial
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		addrs := h.Addrs(host)
		if err != nil || addrs == nil {
			return dial(ctx, network, address)
		}
		var errs []error
		for _, a := range addrs {
			c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// Prefixes are the entries' addresses, each a range of one, for Rule.Allow.
func (h Hosts) Prefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, addrs := range h {
		for _, a := range addrs {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

// ParseHosts reads "name=address,name=address" (a name may repeat, for
// several addresses). flag names the setting in errors.
func ParseHosts(flag, v string) (Hosts, error) {
	out := Hosts{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		name, addr, ok := strings.Cut(f, "=")
		name = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
		a, err := netip.ParseAddr(strings.TrimSpace(addr))
		if !ok || name == "" || strings.ContainsAny(name, " /:@") || err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%s: %q is not an entry such as api.example.com=10.0.0.5", flag, f)
		}
		out[name] = append(out[name], a.Unmap())
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// ReadCAFile reads a PEM file of certificate authorities (--bot-ca-file)
// and returns the system's pool with them added; the file must hold at
// least one certificate, and nothing that is not one.
func ReadCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bot-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if strings.TrimSpace(string(rest)) != "" {
				return nil, fmt.Errorf("bot-ca-file: %s: text that is not a PEM block after %d certificates", path, n)
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("bot-ca-file: %s: a %q block, where only certificates belong", path, b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bot-ca-file: %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("bot-ca-file: %s: no certificate in it", path)
	}
	return pool, nil
}
