package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/httpapi"
	"github.com/botplatform/botplatform/internal/indexing"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/tables"
)

// env is a real store of the backend after the first start, with the
// owner authenticated in the first workspace.
type env struct {
	ctx   context.Context
	st    *sqlstore.Store
	admin *admin.Service
	boot  admin.Bootstrap
	act   *platform.Actor
}

func newEnv(t testing.TB, backend string) *env {
	t.Helper()
	e := &env{ctx: context.Background(), st: storetest.Open(t, backend)}
	e.admin = admin.New(e.st, platform.SystemClock{}, admin.Config{ChatURL: "http://127.0.0.1/chat", AuthCacheTTL: config.Defaults().AuthCacheTTL})
	var err error
	if e.boot, err = e.admin.Bootstrap(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	if e.act, err = e.admin.Authenticate(e.ctx, e.boot.Token, e.boot.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	return e
}

// server is the whole server's handler on e's store, wired as serve.go
// wires it (no workers run), with the services tests call directly.
type server struct {
	http.Handler
	files *files.Service
	chat  *chat.Service
}

func (e *env) server(tb testing.TB, log *slog.Logger) server {
	tb.Helper()
	blobs, err := blob.NewFS(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	clock := platform.SystemClock{}
	fsvc, err := files.New(e.ctx, e.st, blobs, e.admin, clock, log, files.Config{PublicURL: "http://127.0.0.1"})
	if err != nil {
		tb.Fatal(err)
	}
	csvc := chat.New(e.st, chat.NewLocalHub(chat.StreamLimits{}), clock)
	idx := indexing.New(e.st, blobs, clock, indexing.Config{Log: log})
	vm := botruntime.New(e.st, csvc, clock, botruntime.Config{Log: log})
	rt := dispatch.New(e.st, clock, dispatch.Config{Log: log}, vm)
	h := httpapi.New(httpapi.Deps{
		Log: log, Clock: clock, Store: e.st, Admin: e.admin, Files: fsvc, Chat: csvc, Indexing: idx, Actions: rt,
		RuntimeAPI: runtimeapi.New(e.st, csvc, clock, runtimeapi.Config{}), Tables: tables.New(e.st, fsvc, clock),
		ChatPath: "/chat", Version: "test", Metrics: metrics.New(), // as serve has them
	})
	return server{h, fsvc, csvc}
}

// BenchmarkListBots measures GET /v1/admin/bots (a page of 20, authenticated)
// over real HTTP on 127.0.0.1 against each database, and in the same run a
// trivial net/http JSON handler as the baseline. Run with `make bench`.
func BenchmarkListBots(b *testing.B) {
	b.Run("baseline", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"bots": []any{}, "meta": map[string]any{}})
		}))
		defer srv.Close()
		hammer(b, srv.URL+"/v1/admin/bots", nil)
	})
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			svc, ctx, boot, act := e.admin, e.ctx, e.boot, e.act
			for i := range 100 {
				name := fmt.Sprintf("bot-%03d", i)
				if _, err := svc.CreateBot(ctx, act, admin.BotInput{Name: &name, Tags: map[string]*string{"team": &name}}); err != nil {
					b.Fatal(err)
				}
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			srv := httptest.NewServer(e.server(b, log))
			defer srv.Close()
			hammer(b, srv.URL+"/v1/admin/bots?pageSize=20", http.Header{
				"Authorization":  {"Bearer " + boot.Token},
				"X-Workspace-Id": {boot.WorkspaceID},
			})
		})
	}
}

// BenchmarkUpsertFile measures PUT /v1/files over real HTTP on 127.0.0.1
// from 32 concurrent clients, each request creating or replacing a file
// with tags, on each database.
func BenchmarkUpsertFile(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			svc, ctx, boot, act := e.admin, e.ctx, e.boot, e.act
			name := "files"
			bot, err := svc.CreateBot(ctx, act, admin.BotInput{Name: &name})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(e.server(b, slog.New(slog.NewTextHandler(io.Discard, nil))))
			defer srv.Close()
			var n atomic.Int64
			b.SetParallelism(16) // 16 × GOMAXPROCS(2) = 32 clients
			load(b, func() *http.Request {
				i := n.Add(1)
				body := fmt.Sprintf(`{"key":"bench/%d.txt","size":100,"tags":{"batch":"b%d"}}`, i%5000, i%7)
				req, _ := http.NewRequest("PUT", srv.URL+"/v1/files", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+boot.Token)
				req.Header.Set("x-bot-id", bot.ID)
				req.Header.Set("Content-Type", "application/json")
				return req
			}, `"file"`)
		})
	}
}

// BenchmarkListParticipants measures a listParticipants page (5
// participants) over HTTP on SQLite in a conversation of 10 participants
// and in one of 100,000: keyset pagination should make them cost the same.
func BenchmarkListParticipants(b *testing.B) {
	e := newEnv(b, "sqlite")
	st, svc, ctx, act := e.st, e.admin, e.ctx, e.act
	bot, err := svc.CreateBot(ctx, act, admin.BotInput{})
	if err != nil {
		b.Fatal(err)
	}
	full := e.server(b, slog.New(slog.NewTextHandler(io.Discard, nil)))
	csvc := full.chat
	srv := httptest.NewServer(full)
	defer srv.Close()
	webhook := srv.URL + "/chat/" + bot.Integrations[0].WebhookID
	cb, err := csvc.Webhook(ctx, bot.Integrations[0].WebhookID)
	if err != nil {
		b.Fatal(err)
	}
	owner, userKey, err := csvc.CreateUser(ctx, cb, chat.UserInput{})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{10, 100_000} {
		id := fmt.Sprintf("conv-%d", size)
		conv, err := csvc.CreateConversation(ctx, cb, owner, &id, false)
		if err != nil {
			b.Fatal(err)
		}
		// Fill the conversation from many goroutines: writes share commits.
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 64 {
			wg.Go(func() {
				for i := next.Add(1); i < int64(size); i = next.Add(1) {
					now := time.Now()
					u := platform.ChatUser{ID: fmt.Sprintf("user_%s_%07d", id, i), BotID: bot.ID, CreatedAt: now, UpdatedAt: now}
					u.FID = u.ID
					if err := st.CreateChatUser(ctx, u); err != nil {
						b.Error(err)
						return
					}
					if err := st.AddParticipant(ctx, conv.ID, u.ID, now.UnixMicro()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.Run(fmt.Sprintf("participants=%d", size), func(b *testing.B) {
			url := webhook + "/conversations/" + id + "/participants?pageSize=5"
			token := ""
			for b.Loop() {
				req, _ := http.NewRequest("GET", url+token, nil)
				req.Header.Set("x-user-key", userKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var page struct{ Meta struct{ NextToken string } }
				err = json.NewDecoder(resp.Body).Decode(&page)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("status %d, %v", resp.StatusCode, err)
				}
				token = ""
				if page.Meta.NextToken != "" {
					token = "&nextToken=" + page.Meta.NextToken // walk on; wrap at the end
				}
			}
		})
	}
}

// hammer sends b.N GET requests from parallel clients and reports
// requests per second and the p50/p99 latency.
func hammer(b *testing.B, url string, h http.Header) {
	b.SetParallelism(4)
	load(b, func() *http.Request {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header = h.Clone()
		return req
	}, `"bots"`)
}

// load sends b.N requests made by next from parallel clients, checks each
// answers 200 with want in its body, and reports requests per second and
// the p50/p99 latency.
func load(b *testing.B, next func() *http.Request, want string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		var body bytes.Buffer
		for pb.Next() {
			req := next()
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			body.Reset()
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			local = append(local, time.Since(t0))
			if resp.StatusCode != 200 || !bytes.Contains(body.Bytes(), []byte(want)) {
				b.Errorf("status %d: %s", resp.StatusCode, body.String())
				return
			}
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
