package botruntime

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/platform"
)

// Bot code's fetch: outbound HTTP to the hosts the bot's allowlist names
// (Spec.FetchHosts; none: off), never to loopback, private or link-local
// addresses unless the operator allows them (checked on the address each
// connection dials, after DNS, so on every redirect too), bounded in time,
// size and calls, each call in the bot's logs.

// Limits of fetch.
const (
	fetchTimeout   = 10 * time.Second
	fetchMaxBytes  = 1 << 20
	fetchMaxCalls  = 20 // per invocation
	fetchRedirects = 5
)

// hostAllowed reports whether host is on the allowlist: a name itself, or a
// subdomain of a "*.name" entry.
func hostAllowed(allow []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range allow {
		if a == host || (strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:])) {
			return true
		}
	}
	return false
}

// errFetchRefused marks a refusal of fetch's own rules.
type errFetchRefused struct{ msg string }

func (e *errFetchRefused) Error() string { return e.msg }

// fetchClient is an HTTP client for one bot: no proxy, its own dialer
// refusing addresses fetch may not reach (the rule of egress, which a
// bot's url follows too), and redirects to allowed hosts.
func (r *Runtime) fetchClient(allow []string) *http.Client {
	dialer := &net.Dialer{Timeout: fetchTimeout, Control: r.cfg.Fetch.Control}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: r.cfg.Hosts.Dial(dialer.DialContext), TLSHandshakeTimeout: fetchTimeout,
			ResponseHeaderTimeout: fetchTimeout, DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: r.cfg.RootCAs}},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= fetchRedirects {
				return &errFetchRefused{fmt.Sprintf("more than %d redirects", fetchRedirects)}
			}
			if !hostAllowed(allow, req.URL.Hostname()) {
				return &errFetchRefused{fmt.Sprintf("redirected to %s, which is not on the bot's fetch allowlist", req.URL.Hostname())}
			}
			return nil
		},
	}
}

func (c *call) fetch(in []byte) (any, error) {
	var a struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
		Body    *string           `json:"body"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	allow := c.bot.Spec.FetchHosts
	refuse := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		c.log("warn", "fetch "+a.URL+": refused: "+msg)
		return platform.Errorf(platform.TypeForbidden, "fetch: %s", msg)
	}
	if len(allow) == 0 {
		return nil, refuse("fetch is off for this bot (its allowlist of hosts is empty: PUT /v1/admin/bots/{id}/fetch)")
	}
	c.fetches++
	if c.fetches > fetchMaxCalls {
		c.log("warn", "fetch "+a.URL+": refused: more than "+fmt.Sprint(fetchMaxCalls)+" calls in one run")
		return nil, platform.Errorf(platform.TypeLimitExceeded, "fetch: at most %d calls per run of the bot's code", fetchMaxCalls)
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, platform.Invalid("url", "must be an absolute http or https URL")
	}
	if !hostAllowed(allow, u.Hostname()) {
		return nil, refuse("%s is not on the bot's fetch allowlist", u.Hostname())
	}
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = http.MethodGet
	}
	ctx, cancel := context.WithTimeout(c.ctx, fetchTimeout)
	defer cancel()
	var body io.Reader
	if a.Body != nil {
		body = strings.NewReader(*a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, platform.Invalid("method", "%v", err)
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.r.fetchClient(allow).Do(req)
	if err != nil {
		var refused *errFetchRefused
		var address *egress.RefusedError
		switch {
		case errors.As(err, &refused):
			return nil, refuse("%s", refused.msg)
		case errors.As(err, &address):
			return nil, refuse("%s", address.Error())
		case errors.Is(err, context.DeadlineExceeded):
			c.log("warn", fmt.Sprintf("fetch %s %s: no answer within %s", method, a.URL, fetchTimeout))
			return nil, platform.Errorf(platform.TypeOperationTimeout, "fetch: no answer within %s", fetchTimeout)
		}
		c.log("warn", fmt.Sprintf("fetch %s %s: %v", method, a.URL, err))
		return nil, platform.Errorf(platform.TypeRuntime, "fetch: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, fetchMaxBytes+1))
	if err != nil {
		return nil, platform.Errorf(platform.TypeRuntime, "fetch: reading the answer: %v", err)
	}
	if len(data) > fetchMaxBytes {
		c.log("warn", fmt.Sprintf("fetch %s %s: the answer passed %d bytes", method, a.URL, fetchMaxBytes))
		return nil, platform.Errorf(platform.TypeLimitExceeded, "fetch: the answer passed %d bytes", fetchMaxBytes)
	}
	c.log("info", fmt.Sprintf("fetch %s %s: %d (%d bytes, %d ms)", method, a.URL, resp.StatusCode, len(data), time.Since(start).Milliseconds()))
	headers := map[string]string{}
	for k, v := range resp.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return map[string]any{"status": resp.StatusCode, "statusText": http.StatusText(resp.StatusCode), "headers": headers,
		"body": string(data), "url": resp.Request.URL.String()}, nil
}
