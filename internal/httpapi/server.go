package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/botarchive"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/cognitive"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/openapi"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/privacy"
	"github.com/botplatform/botplatform/internal/ratelimit"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/tables"
)

// Payload limits per surface (spec section 8).
const (
	AdminLimit = 50 << 20
	FilesLimit = 1 << 20
	ChatLimit  = 1 << 20
	// RuntimeLimit is the Runtime API's (spec section 8).
	RuntimeLimit = 1 << 20
)

// Actions calls a bot's action with input and returns its output
// (dispatch.Dispatcher: the code of the bot runs it).
type Actions interface {
	CallAction(ctx context.Context, botID, name string, input json.RawMessage) (json.RawMessage, error)
}

// Deps are what the surfaces are built from; every one is required.
type Deps struct {
	Log   *slog.Logger
	Clock platform.Clock // the server's, for the usage period
	Store store.Store
	Admin *admin.Service
	Files *files.Service
	Chat  *chat.Service
	// Indexing searches indexed files.
	Indexing *indexing.Service
	// Actions calls the bots' actions (dispatch.Dispatcher).
	Actions Actions
	// Webhooks delivers providers' webhooks to installed integrations;
	// nil: /webhooks/ is not served.
	Webhooks Webhooks
	// RuntimeAPI is the bot-facing half of the API.
	RuntimeAPI *runtimeapi.Service
	// Cognitive is the LLM API (/v2/cognitive).
	Cognitive *cognitive.Service
	// Tables is the Tables API.
	Tables *tables.Service
	// Privacy exports and erases a chat user's data (Admin API).
	Privacy *privacy.Service
	// BotArchive exports and imports bots (Admin API).
	BotArchive *botarchive.Service
	// ChatPath is the path of the Chat API's base URL ("/chat").
	ChatPath string
	// PublicURL and ChatURL are the server's public URL and its Chat API's
	// base URL when they are configured, for the web chat's embed codes;
	// empty: the request's origin (and ChatPath).
	PublicURL, ChatURL string
	// PingInterval is the longest silence on a signal stream.
	PingInterval time.Duration
	// StreamWriteTimeout is how long a signal stream's listener may take
	// to accept a write before the stream is ended.
	StreamWriteTimeout time.Duration
	Version            string
	// Tunnels serves the WebSocket tunnels of `bp dev --tunnelUrl`
	// (tunnel.Server); nil: none.
	Tunnels Tunnels
	// Metrics counts requests and is served at GET /metrics, to requests
	// bearing MetricsToken when it is set; nil: no metrics.
	Metrics      *metrics.Metrics
	MetricsToken string
	// Limits are the request rate limits (admit); nil: none.
	Limits *ratelimit.Limits
	// Console serves the web console at /console/ (console.Console);
	// nil: none.
	Console http.Handler
	// Blobs is the file storage /readyz checks (a blob.Store).
	Blobs interface{ Check(context.Context) error }
}

// Tunnels accepts a `bp dev` tunnel connection and serves it until it ends.
type Tunnels interface {
	Accept(w http.ResponseWriter, r *http.Request, id string) error
}

// handlerFunc is a handler that returns its error instead of writing it, so
// no branch can forget to answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// api adapts handlerFuncs and holds what handlers share.
type api struct{ Deps }

func (a *api) h(f handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			writeError(w, r, a.Log, err)
		}
	})
}

// New returns the whole server's handler: every surface behind the shared
// middleware (request id, access log, panic recovery).
func New(d Deps) http.Handler { return build(d).handler }

// server is what build makes of Deps.
type server struct {
	handler http.Handler
	tables  []*table // the root table first, then every surface's
	doc     []byte   // the OpenAPI document of the tables' operations
}

func build(d Deps) server {
	defaults := config.Defaults()
	d.PingInterval = cmp.Or(d.PingInterval, defaults.SSEPingInterval)
	d.StreamWriteTimeout = cmp.Or(d.StreamWriteTimeout, defaults.SSEWriteTimeout)
	a := &api{d}
	for _, k := range d.Limits.Kinds() {
		d.Metrics.RateLimits(string(k))
	}
	doc := &document{}
	root := newTable("Operations")
	root.handle("GET /healthz", "getHealth", nil, a.h(a.healthz))
	root.handle("GET /readyz", "getReadiness", nil, a.h(a.readyz))
	if d.Metrics != nil {
		root.handle("GET /metrics", "getMetrics", nil, secured{d.Metrics.Handler(d.MetricsToken), openapi.Operator})
	}
	root.handle("GET /openapi.json", "getOpenAPIDocument", nil, doc)
	if d.Tunnels != nil {
		root.handle("GET /v1/tunnels/{id}", "openTunnel", nil, a.h(a.tunnel))
	}
	if d.Webhooks != nil {
		// Providers' webhooks to installed integrations: any method and
		// path below the webhook id (webhooks.go).
		root.mount(limit(WebhookLimit, a.h(a.integrationWebhook)), "/webhooks/")
	}
	adm := a.adminRoutes()
	root.mount(limit(AdminLimit, a.routed(adm.mux)), "/v1/admin/")
	// An archive is bigger than any other Admin request.
	root.mount(limit(ImportLimit, a.routed(adm.mux)), "POST /v1/admin/bots/import")
	fls := a.filesRoutes()
	root.mount(limit(FilesLimit, a.routed(fls.mux)), "/v1/files", "/v1/files/")
	// Method patterns: other requests under these prefixes, such as
	// copyFile of a file whose key is "public", are Files API calls.
	content := a.contentRoutes()
	root.mount(a.routed(content.mux), content.patterns...)
	root.mount(http.HandlerFunc(capabilityPreflight), "OPTIONS /v1/files/upload/{id}")
	rt := a.runtimeRoutes()
	root.mount(limit(RuntimeLimit, a.routed(rt.mux)), "/v1/chat/")
	tbl := a.tablesRoutes()
	root.mount(limit(TablesLimit, a.routed(tbl.mux)), "/v1/tables", "/v1/tables/")
	cog := a.cognitiveRoutes()
	root.mount(limit(CognitiveLimit, a.routed(cog.mux)), "/v2/cognitive/")
	prefix := strings.TrimRight(d.ChatPath, "/")
	ch := a.chatRoutes(prefix)
	root.mount(a.cors(prefix, limit(ChatLimit, a.routed(ch.mux))), prefix+"/")
	wc := a.webchatRoutes()
	root.mount(a.routed(wc.mux), "/webchat/")

	s := server{tables: []*table{root, adm, fls, content, rt, tbl, cog, ch, wc}}
	if d.Console != nil {
		con := consoleRoutes(d.Console)
		root.mount(a.routed(con.mux), "/{$}", "/console", "/console/")
		s.tables = append(s.tables, con)
	}
	doc.build(s.tables, d.Version)
	s.doc = doc.body
	s.handler = a.middleware(a.chatStreams(prefix, a.routed(root.mux)))
	return s
}

// limit caps request bodies at n bytes; reading past it fails with
// *http.MaxBytesError, which writeError turns into 413 PayloadTooLarge.
func limit(n int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		h.ServeHTTP(w, r)
	})
}

func (a *api) healthz(w http.ResponseWriter, r *http.Request) error {
	if err := a.Store.Ping(r.Context()); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": a.Version})
	return nil
}

// readyz tells a load balancer whether this node can serve: its database
// and its file storage answer. Each check has a few seconds, so that a
// hung store fails the probe rather than holding it.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var failed []string
	if err := a.Store.Ping(ctx); err != nil {
		a.Log.WarnContext(ctx, "readiness: the database does not answer", "err", err)
		failed = append(failed, "the database")
	}
	if a.Blobs != nil {
		if err := a.Blobs.Check(ctx); err != nil {
			a.Log.WarnContext(ctx, "readiness: the file storage does not answer", "err", err)
			failed = append(failed, "the file storage")
		}
	}
	if len(failed) > 0 {
		return platform.Errorf(platform.TypeUnavailable, "not ready: %s does not answer", strings.Join(failed, " and "))
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": a.Version})
	return nil
}

// routed serves a route table, answering unknown routes (404
// ResourceNotFound) and wrong methods (405 MethodNotFound) with the standard
// error body instead of the mux's plain text.
func (a *api) routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		setRoute(r, pattern, false)
		if pattern == "" {
			// Ask the mux what it would answer (404 or 405, with Allow), then
			// answer that in our own format.
			probe := &statusProbe{header: http.Header{}}
			h.ServeHTTP(probe, r)
			if probe.status == http.StatusMethodNotAllowed {
				w.Header().Set("Allow", probe.header.Get("Allow"))
				writeError(w, r, a.Log, platform.Errorf(platform.TypeMethodNotFound, "method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow")))
				return
			}
			writeError(w, r, a.Log, platform.Errorf(platform.TypeResourceNotFound, "no route for %s %s", r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(w, r) // not h: only the mux fills r.PathValue
	})
}

// route is the route a request matched, noted by routed for the access log
// and the metrics (the innermost route table's pattern, without its
// method).
type route struct {
	pattern string
	stream  bool // an event stream: its duration is the stream's life
	// The caller, once authenticated: its workspace and bot (for the
	// access log; never a token or a key).
	workspace, bot string
	// body is the schema the route's body is checked against (decode).
	body *jsonbody.Schema
	// webhook is the Chat API webhook the request is for, once found.
	webhook *chat.Webhook
}

type routeKey struct{}

// setRoute notes the pattern r matched.
func setRoute(r *http.Request, pattern string, stream bool) {
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok {
		if _, path, ok := strings.Cut(pattern, " "); ok {
			pattern = path
		}
		rt.pattern, rt.stream = pattern, stream
	}
}

// noteCaller notes who the request acts for, for the access log.
func noteCaller(r *http.Request, workspaceID, botID string) {
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok {
		rt.workspace, rt.bot = workspaceID, botID
	}
}

// methodLabel is the request's method as the metrics count it: another
// than the standard ones is "other", so that a client cannot make up
// series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// statusProbe records the status and headers a handler writes, discarding the body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(s int)           { p.status = s }

var requestIDRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// middleware gives every response an x-request-id (the caller's, when it is
// sane), logs every request, and turns a panic into a 500.
func (a *api) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("x-request-id")
		if !requestIDRe.MatchString(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = "req_" + hex.EncodeToString(b[:])
		}
		w.Header().Set("x-request-id", id)
		rt := &route{}
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, rt))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.Log.Error("panic", "panic", p, "stack", string(debug.Stack()), "request_id", id)
				if !rec.wrote {
					writeError(rec, r, a.Log, fmt.Errorf("panic: %v", p))
				}
			}
			took := time.Since(start)
			pattern := cmp.Or(rt.pattern, metrics.Unmatched)
			a.Metrics.Request(pattern, methodLabel(r.Method), rec.status, took, rt.stream)
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", pattern),
				slog.Int("status", rec.status), slog.Int("bytes", rec.bytes), slog.Float64("duration_ms", float64(took.Microseconds())/1000),
				slog.String("request_id", id)}
			if rt.workspace != "" {
				attrs = append(attrs, slog.String("workspace", rt.workspace))
			}
			if rt.bot != "" {
				attrs = append(attrs, slog.String("bot", rt.bot))
			}
			a.Log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		if err := checkURL(r); err != nil {
			writeError(rec, r, a.Log, err)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// recorder notes the status and size of a response for the access log. It
// passes Flush and the rest through Unwrap (http.ResponseController).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (r *recorder) WriteHeader(s int) {
	if !r.wrote {
		r.status, r.wrote = s, true
	}
	r.ResponseWriter.WriteHeader(s)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ReadFrom keeps the connection's zero-copy path (sendfile) for file
// contents, counting what was sent.
func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	r.wrote = true
	var n int64
	var err error
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(struct{ io.Writer }{r.ResponseWriter}, src)
	}
	r.bytes += int(n)
	return n, err
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}
