package indexing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// fixture is a real store (SQLite in a temporary directory, or a fresh
// PostgreSQL schema) with a workspace and a bot, a blob store, and an
// indexing service over them.
type fixture struct {
	ctx   context.Context
	st    *sqlstore.Store
	blobs *blob.FS
	svc   *Service
	bot   platform.Bot
	vis   store.FileVisibility
	files []platform.File
	// analyze, when set, brings the database's planner statistics up to
	// date (PostgreSQL), as autovacuum does within a minute of a bulk load.
	analyze func(testing.TB)
}

func newFixture(tb testing.TB, backend string, workers int) *fixture {
	tb.Helper()
	return newFixtureOn(tb, storetest.Open(tb, backend), workers)
}

// newFixtureOn is newFixture on an open store.
func newFixtureOn(tb testing.TB, st *sqlstore.Store, workers int) *fixture {
	tb.Helper()
	ctx := context.Background()
	blobs, err := blob.NewFS(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	acc := platform.Account{ID: platform.NewID(platform.PrefixAccount), Email: "bench@example.com", DisplayName: "Bench", CreatedAt: now}
	must(tb, st.CreateAccount(ctx, acc))
	w := platform.Workspace{ID: platform.NewID(platform.PrefixWorkspace), Name: "Bench", OwnerID: acc.ID, Plan: "community",
		BillingVersion: "v4", SpendingLimit: 100, CreatedAt: now, UpdatedAt: now}
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: w.ID, AccountID: acc.ID, Email: acc.Email,
		DisplayName: acc.DisplayName, Role: platform.RoleOwner, CreatedAt: now}
	must(tb, st.CreateWorkspace(ctx, w, m))
	b := platform.Bot{ID: platform.NewID(platform.PrefixBot), WorkspaceID: w.ID, Name: "bench", Type: "studio", Status: "active",
		SigningSecret: "s", CreatedBy: acc.ID, Tags: map[string]string{}, Code: "", CreatedAt: now, UpdatedAt: now}
	must(tb, st.CreateBot(ctx, b))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := New(st, blobs, platform.SystemClock{}, Config{Workers: workers, Poll: 20 * time.Millisecond, Log: log})
	return &fixture{ctx: ctx, st: st, blobs: blobs, svc: svc, bot: b, vis: store.FileVisibility{BotID: b.ID, All: true}}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// upload stores an indexed file with its content, as an upload does: the
// file ends indexing_pending with its indexing job queued.
func (f *fixture) upload(tb testing.TB, key, contentType string, content []byte) platform.File {
	tb.Helper()
	return f.uploadMeta(tb, key, contentType, content, map[string]any{})
}

// uploadMeta is upload with the file's metadata.
func (f *fixture) uploadMeta(tb testing.TB, key, contentType string, content []byte, md map[string]any) platform.File {
	tb.Helper()
	now := time.Now()
	file := platform.File{ID: platform.NewID("file_"), BotID: f.bot.ID, WorkspaceID: f.bot.WorkspaceID, Key: key,
		Status: platform.FileUploadPending, DeclaredSize: int64(len(content)), ContentType: contentType, Index: true,
		Tags: map[string]string{}, Metadata: md, AccessPolicies: []string{},
		Owner: platform.FileOwner{Type: "bot", ID: f.bot.ID}, CreatedAt: now, UpdatedAt: now}
	stored, _, err := f.st.PutFile(f.ctx, file)
	must(tb, err)
	bk := stored.ID + ".1"
	info, err := f.blobs.Put(f.ctx, bk, bytes.NewReader(content), int64(len(content)))
	must(tb, err)
	sum := sha256.Sum256(content)
	got, err := f.st.CompleteUpload(f.ctx, store.Upload{FileID: stored.ID, Generation: stored.Generation, BlobKey: bk, Size: info.Size,
		SHA256: fmt.Sprintf("%x", sum), Status: platform.FileIndexPending, MaxStorage: 1 << 50, MaxVector: 1 << 50, Now: now})
	must(tb, err)
	f.files = append(f.files, got)
	return got
}

// indexAll runs the service's workers until every uploaded file is
// indexed, and returns how long that took.
func (f *fixture) indexAll(tb testing.TB, timeout time.Duration) time.Duration {
	tb.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { f.svc.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := start.Add(timeout)
	for {
		ids, err := f.st.SearchableFiles(f.ctx, f.vis, nil, nil, nil)
		must(tb, err)
		if len(ids) == len(f.files) {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			for _, file := range f.files {
				if g, err := f.st.GetFile(f.ctx, "", file.ID); err == nil && g.Status != platform.FileIndexCompleted {
					tb.Errorf("%s: %s %s", g.Key, g.Status, g.FailedReason)
				}
			}
			tb.Fatalf("%d of %d files indexed after %v", len(ids), len(f.files), timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// passages returns every passage of the bot's files.
func (f *fixture) passages(tb testing.TB) []platform.Passage {
	tb.Helper()
	var out []platform.Passage
	for _, file := range f.files {
		tok := ""
		for {
			ps, next, err := f.st.ListPassages(f.ctx, file.ID, store.Page{Limit: 1000, Token: tok})
			must(tb, err)
			out = append(out, ps...)
			if next == "" {
				break
			}
			tok = next
		}
	}
	return out
}

// backends are the databases the benchmarks run on: SQLite, and PostgreSQL
// when BOTPLATFORM_TEST_DATABASE_URL is set.
func backends() []string {
	if os.Getenv(storetest.PostgresEnv) == "" {
		return []string{"sqlite"}
	}
	return []string{"sqlite", "postgres"}
}

var machineLogged = map[string]bool{}

// logMachine logs the CPU model and core count once per benchmark.
func logMachine(tb testing.TB) {
	if machineLogged[tb.Name()] {
		return
	}
	machineLogged[tb.Name()] = true
	model := "unknown CPU"
	if out, err := exec.Command("lscpu").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Model name" {
				model = strings.TrimSpace(v)
			}
		}
	}
	tb.Logf("machine: %s, %d CPUs, GOMAXPROCS %d, %s %s/%s", model, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
