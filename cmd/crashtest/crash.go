package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
)

// crash is one run of the command.
type crash struct {
	opt     options
	out     io.Writer
	dataDir string
	dbURL   string
	addr    string

	srv   *harness.Server
	c     *harness.Client
	bot   harness.Bot
	users []*chatModel
	files []*fileWorker
	start time.Time

	mu       sync.Mutex
	failures []string
	cycle    int
}

type result struct {
	cycles   int
	kills    int
	checked  int
	failures []string
	elapsed  time.Duration
}

func (h *crash) failf(invariant, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := fmt.Sprintf("cycle %d: [%s] %s", h.cycle, invariant, fmt.Sprintf(format, args...))
	h.failures = append(h.failures, f)
	fmt.Fprintln(h.out, "FAIL", f)
}

func (h *crash) logf(format string, args ...any) {
	if h.opt.verbose {
		fmt.Fprintf(h.out, "  "+format+"\n", args...)
	}
}

// serverArgs: short bot deadlines keep the PostgreSQL lease of a bot event
// (the deadline ceiling plus 30 s) inside the settle time.
func (h *crash) serverArgs() []string {
	args := []string{"--addr", h.addr, "--data", h.dataDir, "--log-level", "warn",
		"--bot-timeout", "5s", "--bot-timeout-max", "5s", "--bot-workers", "16", "--index-workers", "2"}
	if h.dbURL != "" {
		args = append(args, "--database-url", h.dbURL)
	}
	return args
}

// startServer starts the server and requires a clean start.
func (h *crash) startServer(ctx context.Context) error {
	env := []string{"BOTPLATFORM_DATABASE_URL=", "BOTPLATFORM_ADMIN_TOKEN="}
	s, err := harness.Start(ctx, h.opt.bin, h.serverArgs(), env, 2*time.Minute)
	if err != nil {
		if s != nil && !s.Exited() {
			s.Kill()
		}
		return err
	}
	h.srv = s
	if h.c != nil {
		h.c.HTTP.CloseIdleConnections()
	}
	return nil
}

func (h *crash) run(ctx context.Context) (res result) {
	h.start = time.Now()
	defer func() {
		if h.srv != nil && !h.srv.Exited() {
			if err := h.srv.Stop(30 * time.Second); err != nil {
				h.failf("clean-stop", "after the last cycle: %v", err)
			}
		}
		res.failures = h.failures
		res.elapsed = time.Since(h.start)
	}()
	if err := h.startServer(ctx); err != nil {
		h.failf("clean-start", "first start: %v", err)
		return res
	}
	if err := h.setup(ctx); err != nil {
		h.failf("setup", "%v", err)
		return res
	}
	rng := rand.New(rand.NewPCG(h.opt.seed, 0))
	for h.cycle = 1; h.cycle <= h.opt.cycles && ctx.Err() == nil; h.cycle++ {
		began := time.Now()
		before := len(h.failures)
		load := h.opt.minLoad + time.Duration(rng.Int64N(int64(h.opt.maxLoad-h.opt.minLoad)+1))
		acked := h.load(ctx, load)
		h.srv.Kill()
		res.kills++
		again := ""
		if err := h.startServer(ctx); err != nil {
			h.failf("clean-start", "restart after the kill: %v", err)
			res.cycles++
			return res
		}
		// One cycle in four, kill it again while it recovers (the events and
		// indexing handed back at start run), and start it once more.
		if rng.IntN(4) == 0 {
			d := time.Duration(rng.Int64N(int64(500 * time.Millisecond)))
			time.Sleep(d)
			h.srv.Kill()
			res.kills++
			again = fmt.Sprintf(" and again %s after the restart", d.Round(time.Millisecond))
			if err := h.startServer(ctx); err != nil {
				h.failf("clean-start", "restart after a kill during recovery: %v", err)
				res.cycles++
				return res
			}
		}
		settle := h.check(ctx)
		res.cycles++
		res.checked += acked
		fmt.Fprintf(h.out, "cycle %d: killed after %s of load%s, %d acknowledged requests checked, queued work done %s after the restart, cycle %s: %s\n",
			h.cycle, load.Round(time.Millisecond), again, acked, settle.Round(10*time.Millisecond), time.Since(began).Round(10*time.Millisecond), okOr(len(h.failures)-before))
		if len(h.failures) > before && !h.opt.keepGoing {
			h.printServerErrors()
			return res
		}
	}
	return res
}

func okOr(failed int) string {
	if failed == 0 {
		return "ok"
	}
	return fmt.Sprintf("%d FAILED", failed)
}

func (h *crash) printServerErrors() {
	if lines := h.srv.ErrorLines(); len(lines) > 0 {
		fmt.Fprintf(h.out, "server error lines since the last start:\n  %s\n", strings.Join(lines, "\n  "))
	}
	if logs, err := h.c.BotLogs(context.Background(), h.bot.ID, h.start, "error"); err == nil && len(logs) > 0 {
		fmt.Fprintln(h.out, "bot error logs:")
		for _, l := range logs {
			fmt.Fprintf(h.out, "  %s %s %s\n", l.Timestamp, l.ConversationID, l.Message)
		}
	}
}

// setup creates the bot, its users and their conversations, and the file
// writers' key spaces.
func (h *crash) setup(ctx context.Context) error {
	boot, err := harness.ReadBootstrap(h.dataDir)
	if err != nil {
		return err
	}
	h.c = &harness.Client{URL: h.srv.URL, Token: boot.Token, WorkspaceID: boot.WorkspaceID, HTTP: harness.NewHTTP(30 * time.Second)}
	if h.bot, err = h.c.CreateBot(ctx, "crashtest counter", harness.CounterBotJS); err != nil {
		return err
	}
	for i := range h.opt.users {
		u, err := h.c.CreateChatUser(ctx, h.bot.ChatURL)
		if err != nil {
			return err
		}
		conv, err := h.c.CreateConversation(ctx, h.bot.ChatURL, u)
		if err != nil {
			return err
		}
		h.users = append(h.users, &chatModel{user: u, seq: i, conv: conv, acked: map[string]string{}, checked: map[string]bool{}})
	}
	for i := range h.opt.fileLoad {
		w := &fileWorker{id: i, keys: map[string]*fileModel{}}
		for k := range 10 {
			key := fmt.Sprintf("w%d/file-%d", i, k)
			w.keys[key] = &fileModel{key: key, cands: []fileState{{absent: true}}}
			w.order = append(w.order, key)
		}
		h.files = append(h.files, w)
	}
	return nil
}

// load runs every writer until d has passed, then kills the server where
// it is, and returns how many requests were acknowledged.
func (h *crash) load(ctx context.Context, d time.Duration) int {
	var killed atomic.Bool
	var acked atomic.Int64
	var wg sync.WaitGroup
	for _, u := range h.users {
		rng := rand.New(rand.NewPCG(h.opt.seed, uint64(h.cycle)<<16|uint64(u.seq)))
		wg.Go(func() { acked.Add(int64(h.chatLoad(ctx, u, rng, &killed))) })
	}
	for _, w := range h.files {
		rng := rand.New(rand.NewPCG(h.opt.seed, uint64(h.cycle)<<16|1<<15|uint64(w.id)))
		wg.Go(func() { acked.Add(int64(h.fileLoad(ctx, w, rng, &killed))) })
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	killed.Store(true)
	h.srv.Kill()
	wg.Wait()
	return int(acked.Load())
}

// check verifies every invariant after a restart: at once what must hold
// right after the start, then, once queued work had time to finish, the
// rest.
func (h *crash) check(ctx context.Context) (settle time.Duration) {
	h.checkQuotas(ctx, "right after the restart")
	h.checkFiles(ctx, false)
	h.checkMessages(ctx, false)
	began := time.Now()
	for time.Since(began) < h.opt.settle && ctx.Err() == nil && !h.settled(ctx) {
		time.Sleep(50 * time.Millisecond)
	}
	settle = time.Since(began)
	h.checkFiles(ctx, true)
	h.checkMessages(ctx, true)
	h.checkQuotas(ctx, "after the queued work finished")
	if lines := h.srv.ErrorLines(); len(lines) > 0 {
		h.failf("no-errors-logged", "the restarted server logged %d error lines, the first: %s", len(lines), harness.Tail(lines[0], 600))
	}
	return settle
}

// settled tells whether nothing is left to do: no file waits for indexing
// and every user message has its reply.
func (h *crash) settled(ctx context.Context) bool {
	files, err := h.c.ListFiles(ctx, h.bot.ID)
	if err != nil {
		return false
	}
	for _, f := range files {
		if f.Status == "indexing_pending" {
			return false
		}
	}
	for _, u := range h.users {
		// Only the newest messages can wait for a reply: every older one was
		// checked after an earlier restart.
		ms, err := h.c.ListMessages(ctx, h.bot.ChatURL, u.user, u.conv, 1)
		if err != nil {
			return false
		}
		answered := map[string]bool{}
		for _, m := range ms {
			if m.UserID == h.bot.ID {
				answered[strings.Fields(m.Payload.Text + " _ _")[1]] = true
			}
		}
		for _, m := range ms {
			if m.UserID == u.user.ID && !answered[m.ID] {
				return false
			}
		}
	}
	return true
}

// checkQuotas compares the workspace's usages with the sizes of its
// stored files.
func (h *crash) checkQuotas(ctx context.Context, when string) {
	files, err := h.c.ListFiles(ctx, h.bot.ID)
	if err != nil {
		h.failf("quota", "listFiles %s: %v", when, err)
		return
	}
	var storage, vector int64
	for _, f := range files {
		if counted(f.Status) && f.Size != nil {
			storage += *f.Size
			if f.Index {
				vector += *f.Size
			}
		}
	}
	for _, q := range []struct {
		typ  string
		want int64
	}{{"file_storage_bytes", storage}, {"knowledgebase_vector_storage", vector}} {
		used, limit, err := h.c.Usage(ctx, q.typ)
		if err != nil {
			h.failf("quota", "listWorkspaceUsages %s %s: %v", q.typ, when, err)
			continue
		}
		if used != q.want {
			h.failf("quota", "%s %s: listWorkspaceUsages says %d bytes, the stored files add up to %d", q.typ, when, used, q.want)
		}
		if got, err := h.c.Quota(ctx, q.typ); err != nil || got != limit {
			h.failf("quota", "%s %s: getWorkspaceQuota says %d (%v), listWorkspaceUsages %d", q.typ, when, got, err, limit)
		}
	}
}

// counted tells whether a file of that status holds content that counts
// against the storage quotas.
func counted(status string) bool {
	return status != "upload_pending" && status != "upload_failed"
}
