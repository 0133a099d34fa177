package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (e *env) logBot(t *testing.T) (platform.Bot, platform.Bot) {
	t.Helper()
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	return e.bot(t, w.ID, "logger"), e.bot(t, w.ID, "other")
}

func (e *env) allLogs(t *testing.T, f store.LogFilter) []platform.LogEntry {
	t.Helper()
	f.Limit = 1000
	got, next, err := e.s.ListLogs(e.ctx, f)
	must(t, err, "ListLogs")
	if next != "" {
		t.Fatalf("ListLogs: unexpected nextToken")
	}
	return got
}

func testAppendLogs(t *testing.T, e *env) {
	b, o := e.logBot(t)
	must(t, e.s.AppendLogs(e.ctx, nil), "AppendLogs nil")
	must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{}), "AppendLogs empty")

	start := e.now()
	entries := []platform.LogEntry{
		{ID: "log_01", BotID: b.ID, Timestamp: start, Level: "info", Message: "first", UserID: "user_1", ConversationID: "conv_1", WorkflowID: "wf_1"},
		{ID: "log_02", BotID: b.ID, Timestamp: start.Add(time.Millisecond), Level: "error", Message: "second\nline two ünïcødé"},
		{ID: "log_03", BotID: o.ID, Timestamp: start, Level: "debug", Message: "other bot"},
	}
	must(t, e.s.AppendLogs(e.ctx, entries), "AppendLogs")
	window := store.LogFilter{Start: start, End: start.Add(time.Second)}
	f := window
	f.BotID = b.ID
	same(t, e.allLogs(t, f), mapSlice(entries[:2], normLog), "logs of b")
	f.BotID = o.ID
	same(t, e.allLogs(t, f), mapSlice(entries[2:], normLog), "logs of o")

	t.Run("a batch is atomic", func(t *testing.T) {
		fresh := platform.LogEntry{ID: "log_04", BotID: b.ID, Timestamp: start.Add(2 * time.Millisecond), Level: "info", Message: "must not stay"}
		dup := entries[0]
		wantErr(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{fresh, dup}), platform.ErrConflict, "AppendLogs with a taken id")
		orphan := platform.LogEntry{ID: "log_05", BotID: "bot_unknown", Timestamp: start, Level: "info", Message: "orphan"}
		if err := e.s.AppendLogs(e.ctx, []platform.LogEntry{fresh, orphan}); err == nil {
			t.Fatalf("AppendLogs for an unknown bot: got nil error, want one")
		}
		f := window
		f.BotID = b.ID
		same(t, e.allLogs(t, f), mapSlice(entries[:2], normLog), "logs of b after rejected batches")
	})
	t.Run("NUL and invalid UTF-8 are replaced", func(t *testing.T) {
		_, o := e.logBot(t)
		at := start.Add(3 * time.Millisecond)
		must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{{ID: "log_06", BotID: o.ID, Timestamp: at, Level: "info", Message: "a\x00b\xffc"}}), "AppendLogs with NUL")
		got := e.allLogs(t, store.LogFilter{BotID: o.ID, Start: at, End: at.Add(time.Second)})
		if len(got) != 1 || got[0].Message != "a\uFFFDb\uFFFDc" {
			t.Fatalf("logs %+v, want one line a\uFFFDb\uFFFDc", got)
		}
	})
}

func testListLogsFilters(t *testing.T, e *env) {
	b, o := e.logBot(t)
	start := e.now()
	end := start.Add(10 * time.Second)
	us, s := time.Microsecond, time.Second
	type L = platform.LogEntry
	entries := []L{
		{ID: "log_01", Timestamp: start.Add(-us), Level: "info", Message: "just before the window"},
		{ID: "log_02", Timestamp: start, Level: "info", UserID: "u1", ConversationID: "c1", WorkflowID: "w1", Message: "deploy 100% done"},
		{ID: "log_03", Timestamp: start.Add(s), Level: "error", UserID: "u1", ConversationID: "c2", Message: "1000 items"},
		{ID: "log_05", Timestamp: start.Add(2 * s), Level: "info", UserID: "u2", ConversationID: "c1", WorkflowID: "w1", Message: "file_name saved"},
		{ID: "log_04", Timestamp: start.Add(2 * s), Level: "debug", UserID: "u2", Message: "fileXname saved"},
		{ID: "log_06", Timestamp: start.Add(3 * s), Level: "warn", Message: `path a\b`},
		{ID: "log_07", Timestamp: start.Add(4 * s), Level: "info", WorkflowID: "w2", Message: "path ab"},
		{ID: "log_08", Timestamp: start.Add(5 * s), Level: "info", UserID: "u1", Message: "Hello World"},
		{ID: "log_09", Timestamp: start.Add(6 * s), Level: "error", ConversationID: "c1", Message: "hello again"},
		{ID: "log_10", Timestamp: start.Add(7 * s), Level: "info", Message: "50%_off"},
		{ID: "log_11", Timestamp: end.Add(-us), Level: "info", Message: "last in the window"},
		{ID: "log_12", Timestamp: end, Level: "info", Message: "at the end, outside"},
	}
	for i := range entries {
		entries[i].BotID = b.ID
	}
	foreign := L{ID: "log_99", BotID: o.ID, Timestamp: start.Add(s), Level: "info", UserID: "u1", ConversationID: "c1", WorkflowID: "w1", Message: "deploy 100% done"}
	must(t, e.s.AppendLogs(e.ctx, append(entries, foreign)), "AppendLogs")
	byID := map[string]L{}
	for _, l := range entries {
		byID[l.ID] = normLog(l)
	}
	want := func(ids ...string) []L {
		out := []L{}
		for _, id := range ids {
			out = append(out, byID["log_"+id])
		}
		return out
	}
	win := func(f store.LogFilter) store.LogFilter {
		f.BotID, f.Start, f.End = b.ID, start, end
		return f
	}
	for _, tc := range []struct {
		name string
		f    store.LogFilter
		want []L
	}{
		{"window is [start, end)", win(store.LogFilter{}), want("02", "03", "04", "05", "06", "07", "08", "09", "10", "11")},
		{"inner window", store.LogFilter{BotID: b.ID, Start: start.Add(2 * s), End: start.Add(4 * s)}, want("04", "05", "06")},
		{"empty window", store.LogFilter{BotID: b.ID, Start: start.Add(2 * s), End: start.Add(2 * s)}, want()},
		{"other bot", store.LogFilter{BotID: o.ID, Start: start, End: end}, []L{normLog(foreign)}},
		{"unknown bot", store.LogFilter{BotID: "bot_unknown", Start: start, End: end}, want()},
		{"level info", win(store.LogFilter{Level: "info"}), want("02", "05", "07", "08", "10", "11")},
		{"level error", win(store.LogFilter{Level: "error"}), want("03", "09")},
		{"level unknown", win(store.LogFilter{Level: "fatal"}), want()},
		{"user", win(store.LogFilter{UserID: "u1"}), want("02", "03", "08")},
		{"conversation", win(store.LogFilter{ConversationID: "c1"}), want("02", "05", "09")},
		{"workflow", win(store.LogFilter{WorkflowID: "w1"}), want("02", "05")},
		{"level and user", win(store.LogFilter{Level: "info", UserID: "u1"}), want("02", "08")},
		{"all four", win(store.LogFilter{Level: "info", UserID: "u2", ConversationID: "c1", WorkflowID: "w1"}), want("05")},
		{"all four, no match", win(store.LogFilter{Level: "debug", UserID: "u2", ConversationID: "c1", WorkflowID: "w1"}), want()},
		{"contains plain text", win(store.LogFilter{MessageContains: "saved"}), want("04", "05")},
		{"contains literal percent", win(store.LogFilter{MessageContains: "100%"}), want("02")},
		{"contains only percent", win(store.LogFilter{MessageContains: "%"}), want("02", "10")},
		{"contains only underscore", win(store.LogFilter{MessageContains: "_"}), want("05", "10")},
		{"contains literal underscore", win(store.LogFilter{MessageContains: "file_name"}), want("05")},
		{"contains percent underscore", win(store.LogFilter{MessageContains: "%_"}), want("10")},
		{"contains backslash sequence", win(store.LogFilter{MessageContains: `a\b`}), want("06")},
		{"contains only backslash", win(store.LogFilter{MessageContains: `\`}), want("06")},
		{"contains is case-sensitive (upper)", win(store.LogFilter{MessageContains: "Hello"}), want("08")},
		{"contains is case-sensitive (lower)", win(store.LogFilter{MessageContains: "hello"}), want("09")},
		{"contains across a space", win(store.LogFilter{MessageContains: "o W"}), want("08")},
		{"contains, no match", win(store.LogFilter{MessageContains: "zzz"}), want()},
		{"contains and level", win(store.LogFilter{MessageContains: "path", Level: "warn"}), want("06")},
		{"contains outside the window", win(store.LogFilter{MessageContains: "outside"}), want()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same(t, e.allLogs(t, tc.f), tc.want, "ListLogs")
			f := tc.f
			got := collect(t, "ListLogs", 1, func(token string) ([]L, string, error) {
				f.Page = store.Page{Token: token, Limit: 1}
				return e.s.ListLogs(e.ctx, f)
			})
			same(t, got, tc.want, "ListLogs one row per page")
		})
	}
}

func testListLogsPagination(t *testing.T, e *env) {
	b, _ := e.logBot(t)
	start := e.now()
	var entries []platform.LogEntry
	// Three lines per timestamp, appended out of id order.
	for i := range 9 {
		entries = append(entries, platform.LogEntry{
			ID: fmt.Sprintf("log_%02d_%d", i/3, 2-i%3), BotID: b.ID, Timestamp: start.Add(time.Duration(i/3) * time.Second),
			Level: []string{"info", "error"}[i%2], Message: fmt.Sprintf("line %d", i),
		})
	}
	must(t, e.s.AppendLogs(e.ctx, entries), "AppendLogs")
	wantIDs := []string{"log_00_0", "log_00_1", "log_00_2", "log_01_0", "log_01_1", "log_01_2", "log_02_0", "log_02_1", "log_02_2"}
	f := store.LogFilter{BotID: b.ID, Start: start, End: start.Add(time.Hour)}
	for _, limit := range []int{1, 2, 3, 4, 9, 100} {
		got := collect(t, "ListLogs", limit, func(token string) ([]platform.LogEntry, string, error) {
			g := f
			g.Page = store.Page{Token: token, Limit: limit}
			return e.s.ListLogs(e.ctx, g)
		})
		same(t, logIDs(got), wantIDs, "ListLogs limit %d", limit)
	}
	t.Run("filters hold across pages", func(t *testing.T) {
		g := f
		g.Level = "error"
		got := collect(t, "ListLogs", 1, func(token string) ([]platform.LogEntry, string, error) {
			g.Page = store.Page{Token: token, Limit: 1}
			return e.s.ListLogs(e.ctx, g)
		})
		same(t, logIDs(got), []string{"log_00_1", "log_01_0", "log_01_2", "log_02_1"}, "error lines")
	})
	t.Run("lines appended between pages", func(t *testing.T) {
		g := f
		g.Page = store.Page{Limit: 4}
		page1, next, err := e.s.ListLogs(e.ctx, g)
		must(t, err, "ListLogs page 1")
		same(t, logIDs(page1), wantIDs[:4], "page 1")
		lastTS := start.Add(time.Second) // page 1 ends with log_01_0
		must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{
			{ID: "log_01_00", BotID: b.ID, Timestamp: lastTS, Level: "info", Message: "same time, id after the cursor"},
			{ID: "log_01_", BotID: b.ID, Timestamp: lastTS, Level: "info", Message: "same time, id before the cursor"},
			{ID: "log_00_9", BotID: b.ID, Timestamp: start, Level: "info", Message: "earlier"},
			{ID: "log_09_0", BotID: b.ID, Timestamp: start.Add(9 * time.Second), Level: "info", Message: "later"},
		}), "AppendLogs between pages")
		g.Token, g.Limit = next, 100
		rest, next, err := e.s.ListLogs(e.ctx, g)
		must(t, err, "ListLogs page 2")
		if next != "" {
			t.Fatalf("page 2: unexpected nextToken")
		}
		same(t, logIDs(rest), []string{"log_01_00", "log_01_1", "log_01_2", "log_02_0", "log_02_1", "log_02_2", "log_09_0"}, "page 2")
	})
}

// testIntegrationLogs: an integration version's lines are those starting
// with its alias in the bots of the workspace that installed it, alias by
// alias, paged in time order; no other bot's, no other line.
func testIntegrationLogs(t *testing.T, e *env) {
	a := e.account(t, "integration-logs")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	install := func(ws, name, alias string) platform.Bot {
		b := e.newBot(ws, name)
		in := e.newIntegration(b.ID, alias)
		in.IntegrationID = "intver_relay"
		b.Integrations = append(b.Integrations, in)
		must(t, e.s.CreateBot(e.ctx, b), "CreateBot %s", name)
		return b
	}
	b1, b2, elsewhere := install(w.ID, "one", "relay"), install(w.ID, "two", "backup"), install(other.ID, "three", "relay")
	plain := e.bot(t, w.ID, "plain")
	start := e.now()
	at := func(n int) time.Time { return start.Add(time.Duration(n) * time.Millisecond) }
	must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{
		{ID: "log_i1", BotID: b1.ID, Timestamp: at(1), Level: "info", Message: "[relay] sent"},
		{ID: "log_i2", BotID: b1.ID, Timestamp: at(2), Level: "info", Message: "the bot's own line"},
		{ID: "log_i3", BotID: b2.ID, Timestamp: at(3), Level: "error", Message: "[backup] failed"},
		{ID: "log_i4", BotID: b2.ID, Timestamp: at(4), Level: "info", Message: "[relay] not this installation"},
		{ID: "log_i5", BotID: elsewhere.ID, Timestamp: at(5), Level: "info", Message: "[relay] another workspace's"},
		{ID: "log_i6", BotID: plain.ID, Timestamp: at(6), Level: "info", Message: "[relay] a bot without it"},
		{ID: "log_i7", BotID: b1.ID, Timestamp: at(7), Level: "info", Message: "[relayed] a longer alias"},
	}), "AppendLogs")
	scope := &store.IntegrationLogs{IntegrationID: "intver_relay", WorkspaceID: w.ID}
	f := store.LogFilter{Integration: scope, Start: start, End: at(100)}
	ids := func(l []platform.LogEntry) string {
		var out []string
		for _, x := range l {
			out = append(out, x.ID)
		}
		return fmt.Sprint(out)
	}
	if got := ids(e.allLogs(t, f)); got != "[log_i1 log_i3]" {
		t.Fatalf("the integration's lines = %s", got)
	}
	f.Level = "error"
	if got := ids(e.allLogs(t, f)); got != "[log_i3]" {
		t.Fatalf("its error lines = %s", got)
	}
	f.Level, f.Limit = "", 1
	page, next, err := e.s.ListLogs(e.ctx, f)
	must(t, err, "ListLogs page 1")
	f.Token = next
	page2, _, err := e.s.ListLogs(e.ctx, f)
	must(t, err, "ListLogs page 2")
	if ids(page)+ids(page2) != "[log_i1][log_i3]" {
		t.Fatalf("pages = %s %s", ids(page), ids(page2))
	}
}
