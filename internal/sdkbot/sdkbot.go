// Package sdkbot speaks the HTTP contract of bots written with
// @botpress/sdk: it sends a bot's events and actions to the bot served at
// its url, down a `bp dev` tunnel, or to its Node bundle in the bot host.
// See docs/sdk-bots.md.
package sdkbot

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/nodehost"
	"github.com/botplatform/botplatform/internal/platform"
)

// The operations of the contract (header x-bp-operation).
const (
	OpEvent  = "event_received"
	OpAction = "action_triggered"
)

// SignatureHeader carries the request's signature: t=UNIX,v1=HEX, where
// HEX is the HMAC-SHA256 of "UNIX.BODY" with the bot's signing secret.
const SignatureHeader = "x-bp-signature"

// MaxResponse bounds what is read of a bot's answer.
const MaxResponse = 4 << 20

// NodeHost runs Node bundles (nodehost.Host).
type NodeHost interface {
	Call(ctx context.Context, b nodehost.Bundle, req nodehost.Request) (nodehost.Response, error)
	Check(ctx context.Context, code string) (nodehost.Definition, error)
}

// Keys mints the bot API key a Node bundle calls the platform with.
type Keys interface {
	HostKey(ctx context.Context, b platform.Bot) (string, error)
}

// Config is what a Caller needs.
type Config struct {
	// Tunnels carries requests to the server's own tunnel urls
	// (tunnel.Server); nil: no tunnels.
	Tunnels http.RoundTripper
	// OwnHosts are the host:port pairs the server answers on: a bot url
	// http://OWN/<id> is the tunnel <id>; no other url of the server's own
	// is a bot's.
	OwnHosts []string
	// Dial is the rule of the addresses a bot's url may reach, applied to
	// each connection after DNS.
	Dial egress.Rule
	// Node runs Node bundles; nil: they are refused.
	Node NodeHost
	Keys Keys
	// APIURL is the base URL Node bundles call the platform at.
	APIURL string
	Log    *slog.Logger
}

// Caller sends requests of the contract to bots.
type Caller struct {
	cfg   Config
	route routeTransport // http's transport
	http  *http.Client
	// keys caches each bot's host key for keyTTL, by its signing secret,
	// from which it derives (a rotated secret is a miss); past keyTTL the
	// key's row is looked at again (a deleted one is created again).
	keys sync.Map // bot id -> hostKey
	// bound is the bot each tunnel carries the events of.
	bound sync.Map // tunnel id -> bot id
}

// ErrUnreachable wraps the error of a request that did not reach the bot
// (refused, reset, no such host, an address Dial refuses, no `bp dev` on the
// tunnel): sending it again may help. A Node bundle that crashed, or any
// answer, is not such an error.
var ErrUnreachable = errors.New("the bot cannot be reached")

// errNoAnswer is ErrUnreachable over the network: its text is the same
// whatever happened, so that a bot's url cannot map the network from the
// failures its developer reads; the detail is in the server's log.
var errNoAnswer = fmt.Errorf("%w at its url (no answer there, or an address this server does not dial for bots: the server's log says which)", ErrUnreachable)

// ErrTunnelTaken is a delivery to a tunnel that carries another bot's
// events: sending it again cannot help.
var ErrTunnelTaken = errors.New("another bot uses this tunnel")

type hostKey struct {
	secret, key string
	at          time.Time
}

const keyTTL = time.Minute

// New returns a Caller.
func New(cfg Config) *Caller {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	own := map[string]bool{}
	for _, h := range cfg.OwnHosts {
		own[strings.ToLower(h)] = true
	}
	dialer := &net.Dialer{Control: cfg.Dial.Control}
	plain := &http.Transport{Proxy: nil, DialContext: dialer.DialContext, MaxIdleConnsPerHost: 32, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 0}
	route := routeTransport{plain: plain, tunnels: cfg.Tunnels, own: own}
	return &Caller{cfg: cfg, route: route, http: &http.Client{Transport: route, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// IsNodeBundle tells whether deployed code is a Node bundle rather than
// code for the embedded VM: it assigns module.exports, exports' property
// or a property of either (module.exports.handler = …). Every bundle `bp build` emits (esbuild, CommonJS) does, and code
// for the embedded VM cannot (it has neither object). A plain scan, not a
// regular expression: bundles are megabytes, and the runtime asks once per
// deployed version.
func IsNodeBundle(code string) bool {
	for _, word := range []string{"module.exports", "exports."} {
		for i := 0; ; {
			j := strings.Index(code[i:], word)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(word)
			if at > 0 && (isIdent(code[at-1]) || code[at-1] == '.') {
				continue // a property or a longer name
			}
			k := i
			if word == "exports." {
				if k = skipIdent(code, k); k == i {
					continue
				}
			}
			// module.exports.handler = …, exports.a.b = …, module.exports["default"] = …
			for k = skipSpace(code, k); k < len(code); k = skipSpace(code, k) {
				if code[k] == '.' {
					if n := skipIdent(code, skipSpace(code, k+1)); n > skipSpace(code, k+1) {
						k = n
						continue
					}
				} else if code[k] == '[' {
					if n := strings.IndexByte(code[k:], ']'); n > 0 {
						k += n + 1
						continue
					}
				}
				break
			}
			if k+1 < len(code) && code[k] == '=' && code[k+1] != '=' {
				return true
			}
		}
	}
	return false
}

// shortID is a tunnel id as the bot's logs show it: its first 8 characters.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[:8] + "…"
}

func skipIdent(code string, k int) int {
	for k < len(code) && isIdent(code[k]) {
		k++
	}
	return k
}

func skipSpace(code string, k int) int {
	for k < len(code) && strings.IndexByte(" \t\r\n", code[k]) >= 0 {
		k++
	}
	return k
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Call is one request to a bot.
type Call struct {
	Bot platform.Bot
	// Version names the bot's deployed code (a new one starts a new Node
	// process).
	Version string
	// Bundle says the bot's code is a Node bundle (IsNodeBundle).
	Bundle    bool
	Operation string
	Type      string
	Body      []byte
}

// Result is a bot's answer.
type Result struct {
	Status int
	Body   []byte
	// Via names where the request went: the url's origin ("http://host:port"), "tunnel 5f0c4a3e…" or "node".
	Via string
}

// Send sends c and returns the bot's answer, whatever its status; an error
// is a request that got no answer (unreachable, past ctx's deadline, a
// crashed process).
func (c *Caller) Send(ctx context.Context, call Call) (Result, error) {
	h, err := c.headers(call)
	if err != nil {
		return Result{}, err
	}
	if call.Bot.Spec.URL != "" {
		return c.sendHTTP(ctx, call, h)
	}
	if !call.Bundle {
		return Result{}, fmt.Errorf("bot %s has neither a url nor a Node bundle", call.Bot.ID)
	}
	if c.cfg.Node == nil {
		return Result{Via: "node"}, errors.New("this server does not run Node bundles")
	}
	b, err := c.bundle(ctx, call)
	if err != nil {
		return Result{Via: "node"}, err
	}
	res, err := c.cfg.Node.Call(ctx, b, nodehost.Request{Method: http.MethodPost, Path: "/", Header: h, Body: call.Body})
	return Result{Status: res.Status, Body: res.Body, Via: "node"}, err
}

// CheckURL checks the url a bot is about to be served at, so that what
// would be refused when dialed is refused now, naming the field: a url of
// the server's own other than a `bp dev` tunnel's, and an IP address the
// Dial rule refuses (a name is checked on each address it resolves to,
// when dialed).
func (c *Caller) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return platform.Invalid("url", "must be an absolute http or https URL")
	}
	if c.route.own[strings.ToLower(u.Host)] {
		if _, ok := c.route.tunnelID(u); !ok {
			return platform.Invalid("url", "names this server itself: of its urls, only a `bp dev` tunnel's (http://%s/<tunnel id>) may be a bot's", u.Host)
		}
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if err := c.cfg.Dial.CheckHost(u.Hostname(), port); err != nil {
		return platform.Invalid("url", "%v", err)
	}
	return nil
}

// CheckCode checks a Node bundle about to be deployed and returns what it
// declares.
func (c *Caller) CheckCode(ctx context.Context, code string) (platform.CodeDefinition, error) {
	if c.cfg.Node == nil {
		return platform.CodeDefinition{}, platform.Invalid("code", "is a Node bundle, and this server does not run Node bundles")
	}
	def, err := c.cfg.Node.Check(ctx, code)
	if errors.Is(err, nodehost.ErrNoNode) || errors.Is(err, nodehost.ErrNoSandbox) {
		return platform.CodeDefinition{}, platform.Invalid("code", "%v", err)
	}
	if err != nil {
		return platform.CodeDefinition{}, platform.Invalid("code", "the Node bundle does not load: %v", err)
	}
	return platform.CodeDefinition{Tables: def.Tables}, nil
}

// headers are the contract's headers of c, signed.
func (c *Caller) headers(call Call) (http.Header, error) {
	conf, err := configuration(call.Bot)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("x-bot-id", call.Bot.ID)
	h.Set("x-bot-user-id", call.Bot.ID)
	h.Set("x-bp-operation", call.Operation)
	h.Set("x-bp-type", call.Type)
	h.Set("x-bp-configuration", base64.StdEncoding.EncodeToString(conf))
	h.Set(SignatureHeader, Sign(call.Bot.SigningSecret, time.Now(), call.Body))
	return h, nil
}

// Sign returns the signature header's value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// configuration is the bot's configuration.data ({} when none).
func configuration(b platform.Bot) ([]byte, error) {
	var cfg struct {
		Data json.RawMessage `json:"data"`
	}
	if len(b.Spec.Configuration) > 0 {
		if err := json.Unmarshal(b.Spec.Configuration, &cfg); err != nil {
			return nil, fmt.Errorf("the bot's configuration: %w", err)
		}
	}
	if len(cfg.Data) == 0 || string(cfg.Data) == "null" {
		return []byte(`{}`), nil
	}
	return cfg.Data, nil
}

func (c *Caller) sendHTTP(ctx context.Context, call Call, h http.Header) (Result, error) {
	return c.Post(ctx, call.Bot.ID, call.Bot.Spec.URL, h, call.Body)
}

// describeOwner names a tunnel's owner in an error: a bot, or an
// integration a bot installed ("<bot id>/<alias>").
func describeOwner(owner string) string {
	if bot, alias, ok := strings.Cut(owner, "/"); ok {
		return "integration " + alias + " of bot " + bot
	}
	return "bot " + owner
}

// Post sends a request of the contract to the code served at url for
// owner (a bot's id, or an installed dev integration's: a `bp dev` tunnel
// carries one owner's requests), under the rules of bots' urls, and returns
// the answer whatever its status; an error is a request that got no answer.
func (c *Caller) Post(ctx context.Context, owner, rawURL string, h http.Header, body []byte) (Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Result{Via: "its url"}, errors.New("the bot's url cannot be parsed")
	}
	req.Header = h
	// Via is read by every member in the bot's logs: the url's origin only
	// (a path may hold a token), a tunnel's id cut short (it is the
	// tunnel's only credential).
	via := req.URL.Scheme + "://" + req.URL.Host
	id, tunnel := c.route.tunnelID(req.URL)
	if tunnel {
		via = "tunnel " + shortID(id)
		// A tunnel carries the events of the first bot sent down it (the
		// dev bot whose url names it), for the life of this process.
		if bound, taken := c.bound.LoadOrStore(id, owner); taken && bound != owner {
			return Result{Via: via}, fmt.Errorf("%w: tunnel %s carries the events of %s", ErrTunnelTaken, shortID(id), describeOwner(bound.(string)))
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// What the tunnel server says, without the url (the bot's logs show
		// neither it nor the tunnel's whole id).
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		if tunnel {
			err = errors.New(strings.ReplaceAll(err.Error(), id, shortID(id)))
		}
		switch {
		case ctx.Err() != nil:
			return Result{Via: via}, err // its deadline: not sent again
		case tunnel:
			return Result{Via: via}, fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		c.cfg.Log.Info("sdk bot: the bot's url cannot be reached", "bot", owner, "url", rawURL, "err", err)
		return Result{Via: via}, errNoAnswer
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		c.cfg.Log.Info("sdk bot: reading the bot's answer", "bot", owner, "url", rawURL, "err", err)
		return Result{Status: resp.StatusCode, Via: via}, errors.New("the bot's answer broke off")
	}
	return Result{Status: resp.StatusCode, Body: answer, Via: via}, nil
}

// bundle is what the Node host needs to run call's bot.
func (c *Caller) bundle(ctx context.Context, call Call) (nodehost.Bundle, error) {
	if c.cfg.Keys == nil {
		return nodehost.Bundle{}, errors.New("no bot API keys for Node bundles")
	}
	var key string
	if k, ok := c.keys.Load(call.Bot.ID); ok && k.(hostKey).secret == call.Bot.SigningSecret && time.Since(k.(hostKey).at) < keyTTL {
		key = k.(hostKey).key
	} else {
		var err error
		if key, err = c.cfg.Keys.HostKey(ctx, call.Bot); err != nil {
			return nodehost.Bundle{}, fmt.Errorf("the bot's API key: %w", err)
		}
		c.keys.Store(call.Bot.ID, hostKey{call.Bot.SigningSecret, key, time.Now()})
	}
	env := []string{"BP_API_URL=" + c.cfg.APIURL, "BP_TOKEN=" + key, "BP_BOT_ID=" + call.Bot.ID, "BP_WORKSPACE_ID=" + call.Bot.WorkspaceID}
	names := make([]string, 0, len(call.Bot.Spec.Secrets))
	for k := range call.Bot.Spec.Secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, "SECRET_"+k+"="+call.Bot.Spec.Secrets[k])
	}
	return nodehost.Bundle{BotID: call.Bot.ID, Version: call.Version, Code: call.Bot.Code, Env: env}, nil
}

// routeTransport sends requests for the server's own tunnel urls down the
// tunnel, and the others over the network.
type routeTransport struct {
	plain   http.RoundTripper
	tunnels http.RoundTripper
	own     map[string]bool
}

var tunnelPath = regexp.MustCompile(`^/[A-Za-z0-9_-]{1,100}$`)

// tunnelID tells whether u is one of the server's own tunnels: a url
// on one of its own hosts whose path is one segment, the tunnel id (what
// `bp dev` registers: the tunnel url's path is dropped).
func (t routeTransport) tunnelID(u *url.URL) (string, bool) {
	if t.tunnels == nil || !t.own[strings.ToLower(u.Host)] || !tunnelPath.MatchString(u.Path) {
		return "", false
	}
	return u.Path[1:], true
}

func (t routeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := t.tunnelID(req.URL); ok {
		return t.tunnels.RoundTrip(req)
	}
	if t.own[strings.ToLower(req.URL.Host)] {
		return nil, errOwnURL
	}
	return t.plain.RoundTrip(req)
}

// errOwnURL refuses a url of the server's own that is not a tunnel's: the
// server never calls its own API for a bot.
var errOwnURL = errors.New("the url names this server itself and is not one of its `bp dev` tunnels")
