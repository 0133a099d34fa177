package main

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/backup"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/blob/s3"
	"github.com/botplatform/botplatform/internal/botarchive"
	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/cognitive"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/console"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/egress"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/httpapi"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/indexing/embed"
	"github.com/botplatform/botplatform/internal/integration"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/privacy"
	"github.com/botplatform/botplatform/internal/ratelimit"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/sandbox"
	"github.com/botplatform/botplatform/internal/sdkbot"
	"github.com/botplatform/botplatform/internal/store/postgres"
	"github.com/botplatform/botplatform/internal/store/sqlite"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/tables"
)

func newLogger(c config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the configured database and applies pending migrations.
func openStore(ctx context.Context, c config.Config) (*sqlstore.Store, error) {
	if c.DatabaseURL != "" {
		s, err := postgres.Open(ctx, c.DatabaseURL, c.DatabaseConns)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		return s, nil
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(c.DataDir, "botplatform.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	return s, nil
}

// openBlobs opens the file storage (the bucket of --blob-url, else
// <data>/blobs) and checks that it is the one the database knows: a
// process started with other storage on a shared database would otherwise
// answer 404 for every file's content.
// openBlobs opens the file storage the configuration names and checks that
// it is this database's; where says which it is (a directory, or the bucket
// and prefix), for the start-up log.
func openBlobs(ctx context.Context, c config.Config, st *sqlstore.Store, mx *metrics.Metrics) (blobs blob.Store, where string, err error) {
	if c.Blob != nil {
		b, err := s3.New(ctx, *c.Blob, func(rt http.RoundTripper) http.RoundTripper { return mx.Upstream("object-storage", rt) })
		if err != nil {
			return nil, "", fmt.Errorf("blob-url: %w", err)
		}
		blobs, where = b, b.String()
	} else {
		dir, err := filepath.Abs(filepath.Join(c.DataDir, "blobs"))
		if err != nil {
			return nil, "", err
		}
		if blobs, err = blob.NewFS(dir); err != nil {
			return nil, "", fmt.Errorf("file storage: %w", err)
		}
		where = dir
	}
	record := func(ctx context.Context, v []byte) ([]byte, error) { return st.Secret(ctx, "file-storage", v) }
	err = blob.Attach(ctx, blobs, where, record, c.AdoptData)
	var fe *blob.ForeignError
	if errors.As(err, &fe) {
		return nil, "", fmt.Errorf("%w. This process would not find the files stored there: point --data (or --blob-url) at "+
			"that storage (with several processes, storage they all share), or, if %s does hold this database's files "+
			"(restored from a backup, or moved), start once with --adopt-data", err, fe.Store.Where)
	}
	return blobs, where, err
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := config.Parse("serve", args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	var backups *backup.Schedule // checked before anything is started or written
	if cfg.Backup.Cron != "" {
		dir := cmp.Or(cfg.Backup.Dir, filepath.Join(cfg.DataDir, "backups"))
		if backups, err = backup.NewSchedule(cfg.Backup.Cron, backup.Schedule{DataDir: cfg.DataDir, Dir: dir, Version: version,
			Keep: cfg.Backup.Keep, Log: log}); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another program listens on %s; choose another address with --addr (BOTPLATFORM_ADDR), e.g. --addr 127.0.0.1:0 for any free port", err, cfg.Addr)
	}
	if err != nil {
		return err
	}
	defer ln.Close()
	publicURLSet, chatURLSet := cfg.PublicURL != "", cfg.ChatURL != ""
	cfg.Resolve(ln.Addr().String())
	// The web chat's embed codes name the configured URLs (a chat URL
	// derived from a configured public URL included), else the address the
	// Admin API was called at (not the listen address): "" here.
	var webchatPublic, webchatChat string
	if publicURLSet {
		webchatPublic = cfg.PublicURL
	}
	if publicURLSet || chatURLSet {
		webchatChat = cfg.ChatURL
	}
	if cfg.DebugAddr != "" {
		dln, err := net.Listen("tcp", cfg.DebugAddr)
		if err != nil {
			return fmt.Errorf("debug-addr: %w", err)
		}
		dsrv := &http.Server{Handler: httpapi.Debug(time.Now()), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = dsrv.Serve(dln) }()
		defer dsrv.Close()
		fmt.Fprintf(stdout, "debug endpoints on http://%s\n", dln.Addr())
	}

	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	mx := metrics.New()
	for name, db := range st.Pools() {
		mx.WatchDB(name, db)
	}
	mx.WatchJobs(st.JobQueues)
	// Before the first start's bootstrap: storage that cannot be used stops
	// the start before anything is written.
	blobs, blobsWhere, err := openBlobs(ctx, cfg, st, mx)
	if err != nil {
		return err
	}

	// Authentication first: the Files API and the SDK bot host use it,
	// and the admin service, built once the runtime is, shares it.
	auth := admin.NewAuth(st, platform.SystemClock{}, cfg.AuthCacheTTL)

	node, releaseNode, err := nodeID(cfg.NodeID, cfg.DataDir)
	if err != nil {
		return err
	}
	defer releaseNode()

	// Indexing: the built-in embedder, or an OpenAI-compatible server.
	var emb embed.Embedder
	if cfg.EmbeddingsURL != "" {
		emb = embed.NewOpenAI(cfg.EmbeddingsURL, cfg.EmbeddingsModel, cfg.EmbeddingsKey, 0,
			&http.Client{Timeout: time.Minute, Transport: mx.Upstream("embeddings", nil)})
	}
	// AI-assisted indexing: an OpenAI-compatible model server, if set.
	aiCfg := ai.Config{URL: cfg.AIURL, Key: cfg.AIKey, Models: cfg.AIModels, Aliases: cfg.AIModelMap, Prices: cfg.AIPrices, Timeout: cfg.AITimeout}
	for name, srv := range cfg.AIServers {
		if aiCfg.Servers == nil {
			aiCfg.Servers = map[string]ai.Server{}
		}
		aiCfg.Servers[name] = ai.Server{URL: srv.URL, Key: srv.Key}
	}
	var model ai.Model
	cognitiveCfg := cognitive.Config{AI: aiCfg, PerBot: cfg.AIBotConcurrency, PerWorkspace: cfg.AIWorkspaceConcurrency, LogPrompts: cfg.AILogPrompts, Log: log}
	if cfg.AIURL != "" {
		m, err := ai.New(aiCfg, &http.Client{Transport: mx.Upstream("model", nil)})
		if err != nil {
			return fmt.Errorf("ai-url: %w", err)
		}
		model, cognitiveCfg.Model = m, m
	}
	cognitiveSvc := cognitive.New(st, platform.SystemClock{}, cognitiveCfg)
	idx := indexing.New(st, blobs, platform.SystemClock{}, indexing.Config{Workers: cfg.IndexWorkers, Embedder: emb, Log: log, Metrics: mx,
		Node: node, ReleaseAtStart: cfg.DatabaseURL == "", Lease: cfg.JobLease, Model: model, AI: aiCfg, RewriteQueries: cfg.AISearchRewrite,
		IndexQuestions: cfg.AIIndexQuestions,
		StorageRoom:    func(ctx context.Context, ws string) (int64, error) { return files.StorageRoom(ctx, st, ws) }})
	fsvc, err := files.New(ctx, st, blobs, auth, platform.SystemClock{}, log, files.Config{
		PublicURL: cfg.PublicURL, UploadURLTTL: cfg.UploadURLTTL, DownloadURLTTL: cfg.DownloadURLTTL,
		RedirectDownloads: cfg.BlobDownload == "redirect", CheckIndexing: idx.CheckUpsert,
	})
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	// Live signals: in process with SQLite; shared by every process through
	// LISTEN/NOTIFY with PostgreSQL.
	streams := chat.StreamLimits{PerUser: cfg.StreamsPerUser, PerConversation: cfg.StreamsPerConversation}
	var hub chat.Hub = chat.NewLocalHub(streams)
	if cfg.DatabaseURL != "" {
		pg, err := chat.NewPGHub(ctx, cfg.DatabaseURL, streams, log)
		if err != nil {
			return fmt.Errorf("signal hub: %w", err)
		}
		defer pg.Close()
		hub = pg
	}
	chatSvc := chat.New(st, hub, platform.SystemClock{})

	// Bot code runs for every queued event. With SQLite this process owns
	// the database, so every event claimed before a crash is handed back at
	// once; with PostgreSQL, this node's own are (its id is recorded on
	// what it claims), and other processes' are taken back when their lease
	// runs out.
	// Bot code runs in sandboxes where this machine can make them. Without,
	// Node bundles are refused (unless --unsandboxed-bots) and the
	// embedded VM's processes, which give bot code no access to the system,
	// run as the server's user.
	boxErr := sandbox.Available()
	switch {
	case boxErr == nil:
		log.Info("bot code runs in sandboxes", "egress_ports", cfg.BotEgressPorts)
	case cfg.UnsandboxedBots:
		log.Warn("no sandbox for bot code: Node bundles run as the server's own user (--unsandboxed-bots)", "why", boxErr)
	default:
		log.Warn("no sandbox for bot code: Node bundles will be refused (start with --unsandboxed-bots for a single trusted tenant)", "why", boxErr)
	}
	var botCAs *x509.CertPool // the system's, unless the operator adds some
	if cfg.BotCAFile != "" {
		if botCAs, err = egress.ReadCAFile(cfg.BotCAFile); err != nil {
			return err
		}
	}
	bundleAPI := sandbox.NewListener(bundleAPIAddr(ln.Addr()))
	sdk, nodeRun, closeSDK, err := sdkBots(cfg, ln.Addr(), bundleAPI, st, auth, log)
	if err != nil {
		return err
	}
	defer closeSDK()
	tunnels := nodeRun.tunnels
	// The integrations workspaces deploy run in the Node host too, one
	// process per bot that installed one (docs/integrations.md).
	integrations := integration.New(st, integration.Config{Node: nodeRun.host, HTTP: sdk, Keys: auth, APIURL: nodeRun.apiURL,
		WebhookURL: strings.TrimRight(cfg.PublicURL, "/") + "/webhooks", Timeout: cfg.BotTimeout, Log: log})
	rtAPI := runtimeapi.New(st, chatSvc, platform.SystemClock{}, runtimeapi.Config{MaxScheduled: cfg.BotMaxScheduled, Channels: integrations})
	vm := botruntime.New(st, chatSvc, platform.SystemClock{}, botruntime.Config{
		StateLimit: cfg.BotStateLimit, Memory: int64(cfg.BotMemory) << 20, MaxScheduled: cfg.BotMaxScheduled,
		Log: log, Fetch: bundleEgressRule(cfg, ln.Addr()), Hosts: cfg.BotHosts, RootCAs: botCAs, Sandbox: boxErr == nil, Workflows: rtAPI, Searcher: botSearch{idx}, Outbound: rtAPI,
	})
	rt := dispatch.New(st, platform.SystemClock{}, dispatch.Config{
		Workers: cfg.BotWorkers, Timeout: cfg.BotTimeout, MaxTimeout: cfg.BotTimeoutMax, Poll: cfg.BotPoll, Lease: cfg.JobLease,
		StopTimeout: cfg.ShutdownTimeout, Node: node, ReleaseAtStart: cfg.DatabaseURL == "", Log: log, Metrics: mx, States: rtAPI,
		Integrations: map[string]dispatch.Integration{platform.LLMIntegrationID: llmActions{cognitiveSvc}, platform.ChatIntegrationID: chatActions{rtAPI, chatSvc}, platform.WebchatIntegrationID: chatActions{rtAPI, chatSvc}},
		Deployed:     deployedActions{integrations},
	}, sdkbot.NewExecutor(sdk, rtAPI, st, platform.SystemClock{}, log), vm)
	tablesSvc := tables.New(st, fsvc, platform.SystemClock{})
	adm := admin.New(st, platform.SystemClock{}, admin.Config{ChatURL: cfg.ChatURL, Auth: auth,
		VersionsKept: cfg.BotVersionsKept, PublicURL: cfg.PublicURL, Content: blobs,
		Checker: botChecker{vm, sdk}, Tables: tablesSvc, BotsChanged: rt.RecurringChanged,
		Integrations: integrations, IntegrationWebhooks: strings.TrimRight(cfg.PublicURL, "/") + "/webhooks"})
	boot, err := adm.Bootstrap(ctx, cfg.AdminToken)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if !boot.Created {
		// The credentials stay; the addresses are this start's, so that the
		// client commands reach the server after a restart on another port.
		if err := refreshBootstrap(cfg); err != nil {
			log.Warn("bootstrap.json keeps an earlier start's address", "err", err)
		}
	}
	if boot.Created {
		if err := writeBootstrap(cfg, boot); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "First start: created an owner account, a workspace and an access token.\n")
		fmt.Fprintf(stdout, "  token:        %s\n  workspace id: %s\n  (also in %s; shown only once)\n",
			boot.Token, boot.WorkspaceID, filepath.Join(cfg.DataDir, "bootstrap.json"))
	}

	workers, stopWorkers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { fsvc.RunReaper(workers, cfg.ReaperInterval) })
	wg.Go(func() { adm.Audit().RunPruner(workers, cfg.ReaperInterval, cfg.AuditRetention, log) })
	if cfg.IndexWorkers > 0 {
		wg.Go(func() { idx.Run(workers) })
	}
	defer func() { stopWorkers(); wg.Wait() }()
	if backups != nil {
		backups.Report = mx
		backups.Done = func(ctx context.Context, to string, m backup.Manifest) error {
			return recordBackup(ctx, adm.Audit(), "scheduled backup", to, m)
		}
		mx.BackupsScheduled()
		log.Info("scheduled backups", "cron", cfg.Backup.Cron, "dir", backups.Dir, "keep", cfg.Backup.Keep)
		wg.Go(func() { backups.Run(workers) })
	}

	chatURL, _ := url.Parse(cfg.ChatURL)
	// Archives being imported are spooled beside the data, not in a
	// possibly small temporary directory.
	archives := botarchive.New(st, blobs, func(ctx context.Context, ws string) (int64, int64, int64, error) {
		return files.StorageLimits(ctx, st, ws)
	}, platform.SystemClock{}, log, version, cfg.DataDir)
	handler := httpapi.New(httpapi.Deps{
		Log: log, Clock: platform.SystemClock{}, Store: st, Admin: adm, Files: fsvc, Version: version, Actions: rt, Indexing: idx,
		Chat: chatSvc, RuntimeAPI: rtAPI, Webhooks: webhookDelivery{integrations, st, log}, Cognitive: cognitiveSvc, Tables: tablesSvc, Tunnels: tunnels, Privacy: privacy.New(st, blobs, hub, platform.SystemClock{}, log), BotArchive: archives, ChatPath: chatURL.Path, PublicURL: webchatPublic, ChatURL: webchatChat, PingInterval: cfg.SSEPingInterval,
		StreamWriteTimeout: cfg.SSEWriteTimeout, Metrics: mx, MetricsToken: cfg.MetricsToken,
		Limits: ratelimit.New(cfg.RateLimits, platform.SystemClock{}, 0), Console: console.New(), Blobs: blobs,
	})
	vm.SetAPI(handler) // bot code's client calls the API in-process
	runtimeCtx, stopRuntime := context.WithCancel(context.Background())
	var runtimeDone sync.WaitGroup
	runtimeDone.Go(func() { rt.Run(runtimeCtx) })
	defer func() { stopRuntime(); runtimeDone.Wait() }()

	srv := &http.Server{
		Handler: handler,
		// Uploads and event streams extend their own deadlines.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(hub.CloseAll) // event streams end, so the drain can finish
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go srv.Serve(bundleAPI) // the API as sandboxed Node bundles reach it; Shutdown closes it
	log.Info("listening", "addr", ln.Addr().String(), "api_url", cfg.PublicURL, "chat_url", cfg.ChatURL, "database", st.Dialect(),
		"files", blobsWhere, "node", node, "version", version)
	var rates []any
	for _, k := range ratelimit.Kinds {
		if r, ok := cfg.RateLimits[k]; ok {
			rates = append(rates, string(k), r.String())
		}
	}
	if len(rates) > 0 {
		log.Info("rate limits", rates...)
	}
	// The first line names where the process listens: behind a proxy (a
	// --public-url of its own) that is not the URL clients use, which
	// follows.
	if publicURLSet {
		fmt.Fprintf(stdout, "botplatform %s listening on http://%s\n  public URL: %s\n", version, ln.Addr(), cfg.PublicURL)
	} else {
		fmt.Fprintf(stdout, "botplatform %s listening on %s\n", version, cfg.PublicURL)
	}
	fmt.Fprintf(stdout, "  bots written with @botpress/sdk: bp login --apiUrl %s; bp dev --tunnelUrl %s/v1/tunnels\n", cfg.PublicURL, cfg.PublicURL)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// writeBootstrap records the first start's credentials for scripts, readable
// by the owner only.
func writeBootstrap(cfg config.Config, b admin.Bootstrap) error {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	return saveBootstrap(cfg, map[string]string{"token": b.Token, "workspaceId": b.WorkspaceID})
}

// refreshBootstrap writes this start's addresses into an existing
// bootstrap.json; none is no error (it was removed, or another process
// made the first start).
func refreshBootstrap(cfg config.Config) error {
	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "bootstrap.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var boot map[string]string
	if err := json.Unmarshal(raw, &boot); err != nil {
		return err
	}
	if boot["apiUrl"] == cfg.PublicURL && boot["chatUrl"] == cfg.ChatURL {
		return nil
	}
	return saveBootstrap(cfg, boot)
}

// saveBootstrap writes boot, with this start's addresses, to bootstrap.json.
func saveBootstrap(cfg config.Config, boot map[string]string) error {
	boot["apiUrl"], boot["chatUrl"] = cfg.PublicURL, cfg.ChatURL
	body, _ := json.MarshalIndent(boot, "", "  ")
	path := filepath.Join(cfg.DataDir, "bootstrap.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(body, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := config.Parse("migrate", args, stderr)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg) // opening applies the migrations
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "%s database is up to date\n", st.Dialect())
	return nil
}

func issueToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var email, note string
	var rest []string
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&email, "email", "", "account email (the account is created if it does not exist)")
	fs.StringVar(&note, "note", "issued by botplatform token", "note stored with the token")
	// token shares serve's database flags; split them from its own.
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if name == "h" || name == "help" {
			fmt.Fprintln(stderr, "usage: botplatform token --email EMAIL [--note TEXT] [database flags of serve]\n\n"+
				"Prints a new personal access token for the account EMAIL (created if it does not exist),\n"+
				"made in the server's database directly: run it where serve's --data or --database-url reach.\n\nFlags:")
			fs.PrintDefaults()
			return flag.ErrHelp
		}
		if name == "email" || name == "note" {
			if !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				a += "=" + args[i]
			}
			if err := fs.Parse([]string{a}); err != nil {
				return err
			}
			continue
		}
		rest = append(rest, a)
	}
	if email == "" {
		return errors.New("token: --email is required")
	}
	cfg, err := config.Parse("token", rest, stderr)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	value, err := admin.New(st, platform.SystemClock{}, admin.Config{}).IssueToken(ctx, email, note)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, value)
	return nil
}
