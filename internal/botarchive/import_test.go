package botarchive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

type env struct {
	s   *Service
	st  store.Store
	act *platform.Actor
}

func newEnv(t *testing.T, backend string) env {
	st := storetest.Open(t, backend)
	now := time.Now().UTC()
	w := storetest.Workspace(t, st, now)
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	limits := func(context.Context, string) (int64, int64, int64, error) { return 1 << 40, 1 << 40, 1 << 40, nil }
	s := New(st, blobs, limits, platform.SystemClock{}, slog.New(slog.DiscardHandler), "test", t.TempDir())
	act := &platform.Actor{Account: platform.Account{ID: w.OwnerID}, Member: platform.Member{WorkspaceID: w.ID, AccountID: w.OwnerID, Role: platform.RoleOwner}}
	return env{s: s, st: st, act: act}
}

// wantError fails unless err is an *platform.Error of type typ whose
// message holds every one of parts.
func wantError(t *testing.T, err error, typ platform.ErrorType, parts ...string) {
	t.Helper()
	e, ok := platform.AsError(err)
	if !ok || e.Type != typ {
		t.Fatalf("import: %v, want %s", err, typ)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Errorf("import: %q does not name %q", e.Message, p)
		}
	}
}

func noBots(t *testing.T, e env) {
	t.Helper()
	bots, _, err := e.st.ListBots(context.Background(), e.act.Member.WorkspaceID, store.BotFilter{Page: store.Page{Limit: 10}})
	if err != nil || len(bots) != 0 {
		t.Errorf("after a refused import: %d bots (%v), want none", len(bots), err)
	}
}

var hostileOnce sync.Once
var hostile []byte

// hostileArchive is a bomb: messages.jsonl is 320 MiB of honest,
// well-formed lines (its size and SHA-256 in the manifest are right),
// compressed into well under a megabyte.
func hostileArchive(t *testing.T) []byte {
	hostileOnce.Do(func() {
		line := `{"id":"msg_1","conversationId":"conv_1","userId":"user_1","isBot":false,"payload":{"type":"text","text":"`
		line += strings.Repeat("x", 1023-len(line)-4) + `"}}` + "\n"
		chunk := []byte(strings.Repeat(line, 1024)) // 1 MiB
		hostile = buildArchive(t, entry(BotEntry, botJSON), part{name: "messages.jsonl", chunk: chunk, repeat: 320})
	})
	return hostile
}

// TestImportBomb: an archive small compressed and huge decompressed is
// refused with 413 naming the bound and the entry, and the server's heap
// does not grow with what the archive would decompress to.
func TestImportBomb(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, backend)
			body := hostileArchive(t)
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var peak uint64
			done := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapAlloc)
					select {
					case <-done:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			_, err := e.s.Import(context.Background(), e.act, bytes.NewReader(body), ImportOptions{})
			close(done)
			<-sampled
			growth := int64(peak) - int64(before.HeapAlloc)
			t.Logf("archive %d bytes compressed, 320 MiB decompressed: peak heap growth %.1f MiB in %v; %v",
				len(body), float64(growth)/(1<<20), time.Since(start).Round(time.Millisecond), err)
			wantError(t, err, platform.TypePayloadTooLarge, "messages.jsonl", "bytes")
			if growth > 64<<20 {
				t.Errorf("the import grew the heap by %d MiB, want under 64 MiB", growth>>20)
			}
			noBots(t, e)
		})
	}
}

// TestImportRefusesDanglingRecords: a record that refers to a row the
// archive lacks, or repeats an id, is refused before anything is written,
// naming the entry, the line and the record.
func TestImportRefusesDanglingRecords(t *testing.T) {
	const (
		user  = `{"id":"user_a","fid":"alice","tags":{},"createdAt":"2020-01-01T00:00:00Z","updatedAt":"2020-01-01T00:00:00Z"}`
		conv  = `{"id":"conv_a","fid":"conv_a","ownerId":"user_a","tags":{},"participants":[],"createdAt":"2020-01-01T00:00:00Z","updatedAt":"2020-01-01T00:00:00Z"}`
		msgOK = `{"id":"msg_1","conversationId":"conv_a","userId":"user_a","payload":{"type":"text","text":"hi"},"tags":{},"createdAt":"2020-01-01T00:00:00Z"}`
	)
	cases := []struct {
		name  string
		parts []part
		want  []string
	}{
		{"a message of an absent conversation", []part{entry("users.jsonl", user), entry("conversations.jsonl", conv),
			entry("messages.jsonl", msgOK, `{"id":"msg_2","conversationId":"conv_gone","userId":"user_a","payload":{},"createdAt":"2020-01-01T00:00:00Z"}`)},
			[]string{"messages.jsonl, line 2", "msg_2", "conv_gone"}},
		{"a participant absent from users", []part{entry("users.jsonl", user),
			entry("conversations.jsonl", strings.Replace(conv, `"participants":[]`, `"participants":[{"userId":"user_gone","createdAt":"2020-01-01T00:00:00Z"}]`, 1))},
			[]string{"conversations.jsonl, line 1", "conv_a", "user_gone"}},
		{"a state of an absent conversation", []part{entry("users.jsonl", user), entry("conversations.jsonl", conv),
			entry("states.jsonl", `{"id":"state_1","type":"conversation","scopeId":"conv_gone","name":"n","payload":{}}`)},
			[]string{"states.jsonl, line 1", "state_1", "conv_gone"}},
		{"an event.state of an absent user", []part{entry("users.jsonl", user),
			entry("code-states.jsonl", `{"scope":"user","scopeId":"user_gone","value":{}}`)},
			[]string{"code-states.jsonl, line 1", "user_gone"}},
		{"a workflow of an absent conversation", []part{entry("workflows.jsonl", `{"id":"wfl_1","name":"w","conversationId":"conv_gone"}`)},
			[]string{"workflows.jsonl, line 1", "wfl_1", "conv_gone"}},
		{"a passage of an absent file", []part{entry("passages.jsonl", `{"id":"psg_1","fileId":"file_gone"}`)},
			[]string{"passages.jsonl, line 1", "psg_1", "file_gone"}},
		{"a message id twice", []part{entry("users.jsonl", user), entry("conversations.jsonl", conv), entry("messages.jsonl", msgOK, msgOK)},
			[]string{"messages.jsonl, line 2", "msg_1", "line 1"}},
		{"a user fid twice", []part{entry("users.jsonl", user, strings.Replace(user, "user_a", "user_b", 1))},
			[]string{"users.jsonl, line 2", "alice", "line 1"}},
	}
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, backend)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					body := buildArchive(t, append([]part{entry(BotEntry, botJSON)}, c.parts...)...)
					_, err := e.s.Import(context.Background(), e.act, bytes.NewReader(body), ImportOptions{})
					wantError(t, err, platform.TypeInvalidPayload, c.want...)
					noBots(t, e)
				})
			}
		})
	}
}

// TestImportAgain: an exported bot imports whole, and a second import adds
// nothing.
func TestImportAgain(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, backend)
			ctx := context.Background()
			now := time.Now().UTC()
			w := platform.Workspace{ID: e.act.Member.WorkspaceID}
			u, c := storetest.Conversation(t, e.st, w, "", now)
			for i := range 3 {
				if _, err := e.st.CreateMessage(ctx, platform.Message{ID: platform.NewID("msg_"), ConversationID: c.ID, UserID: u.ID,
					Payload: json.RawMessage(fmt.Sprintf(`{"type":"text","text":"%d"}`, i)), Tags: map[string]string{}, CreatedAt: now}); err != nil {
					t.Fatal(err)
				}
			}
			b, err := e.st.GetBot(ctx, w.ID, c.BotID)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := e.s.Export(ctx, b, false, &buf); err != nil {
				t.Fatal(err)
			}
			first, err := e.s.Import(ctx, e.act, bytes.NewReader(buf.Bytes()), ImportOptions{Name: "copy"})
			if err != nil {
				t.Fatal(err)
			}
			if !first.Created || first.Added[store.RowMessages] != 3 || first.Added[store.RowUsers] != 1 || first.Added[store.RowConversations] != 1 {
				t.Errorf("first import: %+v", first)
			}
			again, err := e.s.Import(ctx, e.act, bytes.NewReader(buf.Bytes()), ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range again.Added {
				if n != 0 || again.Created || again.BotID != first.BotID {
					t.Errorf("second import: %s %d, created %v, bot %s", k, n, again.Created, again.BotID)
				}
			}
		})
	}
}

// TestImportRecordBounds: past a bound on records, 413 naming the bound
// and the entry.
func TestImportRecordBounds(t *testing.T) {
	var lines []string
	for i := range 1024 {
		lines = append(lines, fmt.Sprintf(`{"id":"msg_%d","conversationId":"conv_a","payload":{},"createdAt":"2020-01-01T00:00:00Z"}`, i))
	}
	body := buildArchive(t, entry(BotEntry, botJSON),
		entry("conversations.jsonl", `{"id":"conv_a","fid":"conv_a","ownerId":"user_a","participants":[],"tags":{"note":"`+strings.Repeat("n", 200)+`"}}`),
		entry("messages.jsonl", lines...))
	for _, c := range []struct {
		name   string
		bounds Bounds
		want   []string
	}{
		{"records of an entry", Bounds{EntryRecords: 1000}, []string{"messages.jsonl", "more than 1000 records"}},
		{"records in all", Bounds{Records: 500}, []string{"messages.jsonl, line 500", "more than 500 records"}},
		{"a record's size", Bounds{RecordBytes: 200}, []string{"conversations.jsonl, line 1", "over 200 bytes"}},
		{"bot.json's size", Bounds{RecordBytes: 64}, []string{"bot.json", "64 bytes"}},
		{"JSON entries in all", Bounds{RowBytes: 50 << 10}, []string{"messages.jsonl", "51200 bytes"}},
		{"the archive", Bounds{ArchiveBytes: 50 << 10}, []string{"messages.jsonl", "51200 bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			e.s.bounds = c.bounds
			_, err := e.s.Import(context.Background(), e.act, bytes.NewReader(body), ImportOptions{})
			wantError(t, err, platform.TypePayloadTooLarge, c.want...)
			noBots(t, e)
		})
	}
}

// TestImportKeepsTheWebchat: a bot that installed the built-in webchat
// integration has it again once imported, with a webhook of its own, and
// its webchat conversations stay that channel's.
func TestImportKeepsTheWebchat(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, backend)
			ctx := context.Background()
			now := time.Now().UTC()
			w := platform.Workspace{ID: e.act.Member.WorkspaceID}
			u, c := storetest.Conversation(t, e.st, w, "", now)
			b, err := e.st.GetBot(ctx, w.ID, c.BotID)
			if err != nil {
				t.Fatal(err)
			}
			web := platform.NewWebchatIntegration(b.ID, now)
			b.Integrations = append(b.Integrations, web)
			if err := e.st.UpdateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			wc := platform.Conversation{ID: platform.NewID("conv_"), BotID: b.ID, OwnerID: u.ID, Tags: map[string]string{"webchat:userId": u.FID},
				Channel: "channel", Integration: platform.WebchatIntegrationID, CreatedAt: now, UpdatedAt: now}
			wc.FID = wc.ID
			if err := e.st.CreateConversation(ctx, wc); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := e.s.Export(ctx, b, false, &buf); err != nil {
				t.Fatal(err)
			}
			got, err := e.s.Import(ctx, e.act, bytes.NewReader(buf.Bytes()), ImportOptions{Name: "copy"})
			if err != nil {
				t.Fatal(err)
			}
			copied, err := e.st.GetBot(ctx, w.ID, got.BotID)
			if err != nil {
				t.Fatal(err)
			}
			var in *platform.BotIntegration
			for i := range copied.Integrations {
				if copied.Integrations[i].IntegrationID == platform.WebchatIntegrationID {
					in = &copied.Integrations[i]
				}
			}
			if in == nil || in.WebhookID == "" || in.WebhookID == web.WebhookID || in.Configuration["encryptionKey"] == "" {
				t.Fatalf("the imported bot's webchat: %+v", in)
			}
			cs, _, err := e.st.ListBotConversations(ctx, store.ConversationFilter{BotID: got.BotID, Integration: platform.WebchatIntegrationID, Page: store.Page{Limit: 10}})
			if err != nil {
				t.Fatal(err)
			}
			if got.BotID == b.ID || len(cs) != 1 || cs[0].Tags["webchat:userId"] != u.FID || cs[0].ID == wc.ID {
				t.Fatalf("the copy's webchat conversations: %+v", cs)
			}
		})
	}
}
