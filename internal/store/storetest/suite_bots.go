package storetest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// fullBot returns an unsaved bot with every field set, the JSON ones
// included (in compact form, as the store must give them back).
func (e *env) fullBot(workspaceID, createdBy string) platform.Bot {
	b := e.newBot(workspaceID, "full")
	b.Type, b.Status, b.CreatedBy = "adk", "deploying", createdBy
	b.Code = "export default {}\n// ünïcødé, 'quotes' \"and\" \\ backslashes"
	b.Tags = map[string]string{"team": "core", "env": "prod", "blank": ""}
	deployed := e.now()
	b.DeployedAt = &deployed
	met := 120
	b.Spec = platform.BotSpec{
		Description:      "A bot that does everything",
		URL:              "https://bot.example.com/hook",
		Secrets:          map[string]string{"API_KEY": "s3cr3t", "OTHER": ""},
		MaxExecutionTime: &met,
		Medias:           []platform.Media{{URL: "https://example.com/a.png", Name: "a"}, {URL: "https://example.com/b.png", Name: "b"}},
		States:           json.RawMessage(`{"session":{"type":"conversation","schema":{"type":"object","properties":{"n":{"type":"number"}}}}}`),
		Events:           json.RawMessage(`{"ping":{"schema":{}}}`),
		RecurringEvents:  json.RawMessage(`{"tick":{"type":"ping","schedule":{"cron":"*/5 * * * *"},"payload":{"x":[1,2.5,null,true]}}}`),
		Subscriptions:    json.RawMessage(`{"events":{"ping":{}}}`),
		Actions:          json.RawMessage(`{"act":{"input":{"schema":{}},"output":{"schema":{}}}}`),
		Configuration:    json.RawMessage(`{"data":{"k":1.5,"s":"ünïcødé"},"schema":{"type":"object"}}`),
		UserTags:         json.RawMessage(`{"plan":{}}`),
		ConversationTags: json.RawMessage(`{"topic":{"title":"Topic"}}`),
		MessageTags:      json.RawMessage(`{"lang":{}}`),
		Authentication:   "iam",
		Blocked:          true,
		AlwaysAlive:      true,
		Layers:           []string{"l1", "l2"},
	}
	chat := b.Integrations[0]
	chat.Configuration = map[string]any{
		"encryptionKey": "k",
		"n":             float64(3),
		"nested":        map[string]any{"list": []any{"a", 2.5, true, nil}, "empty": map[string]any{}},
	}
	chat.DisabledChannels = []string{"sms", "email"}
	tg := e.newIntegration(b.ID, "telegram")
	tg.Enabled, tg.Version = false, "2.1.0"
	tg.Configuration = map[string]any{}
	tg.Status, tg.StatusReason, tg.ConfigurationType = platform.IntegrationRegistrationFailed, "Invalid bot token ünïcødé", "manual"
	b.Integrations = []platform.BotIntegration{chat, tg} // in integration id order, as GetBot returns them
	return b
}

func testBots(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)

	full := e.fullBot(w.ID, a.ID)
	must(t, e.s.CreateBot(e.ctx, full), "CreateBot full")
	minimal := e.newBot(w.ID, "minimal")
	minimal.Dev = true
	must(t, e.s.CreateBot(e.ctx, minimal), "CreateBot minimal")
	bare := e.newBot(w.ID, "no integrations")
	bare.Integrations = nil
	must(t, e.s.CreateBot(e.ctx, bare), "CreateBot without integrations")

	for _, want := range []platform.Bot{full, minimal, bare} {
		got, err := e.s.GetBot(e.ctx, w.ID, want.ID)
		must(t, err, "GetBot %s", want.Name)
		same(t, normBot(got), normBot(want), "GetBot %s round trip", want.Name)
	}
	// Stored times are the given times to the microsecond.
	got, err := e.s.GetBot(e.ctx, w.ID, full.ID)
	must(t, err, "GetBot")
	if !got.CreatedAt.Equal(mt(full.CreatedAt)) || !got.DeployedAt.Equal(mt(*full.DeployedAt)) {
		t.Fatalf("times: got created %v deployed %v, want %v and %v", got.CreatedAt, got.DeployedAt, mt(full.CreatedAt), mt(*full.DeployedAt))
	}

	_, err = e.s.GetBot(e.ctx, other.ID, full.ID)
	wantErr(t, err, platform.ErrNotFound, "GetBot through another workspace")
	_, err = e.s.GetBot(e.ctx, w.ID, "bot_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetBot unknown")

	t.Run("conflicts leave nothing behind", func(t *testing.T) {
		dupID := e.newBot(other.ID, "dup id")
		dupID.ID = full.ID
		wantErr(t, e.s.CreateBot(e.ctx, dupID), platform.ErrConflict, "CreateBot with a taken id")

		dupHook := e.newBot(other.ID, "dup webhook")
		dupHook.Tags = map[string]string{"team": "core"}
		dupHook.Integrations = append(dupHook.Integrations, e.newIntegration(dupHook.ID, "slack"))
		dupHook.Integrations[1].WebhookID = full.Integrations[1].WebhookID
		wantErr(t, e.s.CreateBot(e.ctx, dupHook), platform.ErrConflict, "CreateBot with a taken webhook id")
		_, err := e.s.GetBot(e.ctx, other.ID, dupHook.ID)
		wantErr(t, err, platform.ErrNotFound, "GetBot of the rejected bot")
		_, err = e.s.GetIntegrationByWebhook(e.ctx, dupHook.Integrations[0].WebhookID)
		wantErr(t, err, platform.ErrNotFound, "integration of the rejected bot")
		ow, err := e.s.GetWorkspace(e.ctx, other.ID)
		must(t, err, "GetWorkspace")
		if ow.BotCount != 0 {
			t.Fatalf("BotCount after rejected CreateBot = %d, want 0", ow.BotCount)
		}
		list, _, err := e.listBots(e.ctx, other.ID, store.BotFilter{Page: store.Page{Limit: 10}, Tags: map[string][]string{"team": {"core"}}})
		must(t, err, "ListBots")
		if len(list) != 0 {
			t.Fatalf("ListBots after rejected CreateBot = %s, want none", show(botIDs(list)))
		}
		got, err := e.s.GetBot(e.ctx, w.ID, full.ID)
		must(t, err, "GetBot")
		same(t, normBot(got), normBot(full), "bot after rejected duplicates")
	})
}

func testUpdateBot(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	b := e.fullBot(w.ID, a.ID)
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
	neighbour := e.newBot(w.ID, "neighbour")
	neighbour.Integrations = append(neighbour.Integrations, e.newIntegration(neighbour.ID, "slack"))
	must(t, e.s.CreateBot(e.ctx, neighbour), "CreateBot neighbour")

	get := func(t *testing.T) platform.Bot {
		t.Helper()
		got, err := e.s.GetBot(e.ctx, w.ID, b.ID)
		must(t, err, "GetBot")
		return normBot(got)
	}
	listed := func(t *testing.T, f store.BotFilter) []string {
		t.Helper()
		f.Limit = 100
		got, _, err := e.listBots(e.ctx, w.ID, f)
		must(t, err, "ListBots")
		return sorted(botIDs(got)...)
	}

	u := b
	u.Name, u.Type, u.Status, u.Code, u.SigningSecret = "renamed", "studio", "active", "v2", "rotated"
	u.Tags = map[string]string{"team": "growth", "region": "eu"} // env removed, team changed, region added
	deployed := e.now()
	u.DeployedAt = &deployed
	u.Spec = platform.BotSpec{Description: "changed", States: json.RawMessage(`{"other":{"type":"user","schema":{}}}`), Layers: []string{"l3"}}
	chat := b.Integrations[0]
	chat.Enabled = false
	chat.Configuration = map[string]any{"encryptionKey": "rotated"}
	chat.DisabledChannels = []string{}
	chat.UpdatedAt = e.now()
	slack := e.newIntegration(b.ID, "slack")
	u.Integrations = []platform.BotIntegration{chat, slack} // telegram removed, slack added
	u.UpdatedAt = e.now()
	must(t, e.s.UpdateBot(e.ctx, u), "UpdateBot")
	same(t, get(t), normBot(u), "bot after UpdateBot")

	t.Run("tags are replaced for filtering too", func(t *testing.T) {
		for _, tc := range []struct {
			tags map[string][]string
			want []string
		}{
			{map[string][]string{"team": {"core"}}, []string{}},
			{map[string][]string{"env": {"prod"}}, []string{}},
			{map[string][]string{"blank": {""}}, []string{}},
			{map[string][]string{"team": {"growth"}}, []string{b.ID}},
			{map[string][]string{"region": {"eu"}, "team": {"growth"}}, []string{b.ID}},
		} {
			same(t, listed(t, store.BotFilter{Tags: tc.tags}), tc.want, "ListBots tags %v", tc.tags)
		}
		page, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Limit: 10}, Tags: map[string][]string{"team": {"growth"}}})
		must(t, err, "ListBots")
		same(t, page[0].Tags, u.Tags, "tags in the listing")
	})
	t.Run("integrations are replaced", func(t *testing.T) {
		_, err := e.s.GetIntegrationByWebhook(e.ctx, b.Integrations[1].WebhookID)
		wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook of a removed integration")
		got, err := e.s.GetIntegrationByWebhook(e.ctx, slack.WebhookID)
		must(t, err, "GetIntegrationByWebhook of an added integration")
		same(t, normIntegration(got), normIntegration(slack), "added integration")
		same(t, listed(t, store.BotFilter{IntegrationNames: []string{"telegram"}}), []string{}, "ListBots by removed integration")
		same(t, listed(t, store.BotFilter{IntegrationNames: []string{"slack"}}), sorted(b.ID, neighbour.ID), "ListBots by added integration")
	})
	t.Run("a failed update changes nothing", func(t *testing.T) {
		bad := u
		bad.Name = "must not stick"
		bad.Tags = map[string]string{"team": "must-not-stick"}
		clash := e.newIntegration(b.ID, "clash")
		clash.WebhookID = neighbour.Integrations[1].WebhookID
		bad.Integrations = []platform.BotIntegration{chat, clash}
		wantErr(t, e.s.UpdateBot(e.ctx, bad), platform.ErrConflict, "UpdateBot with a taken webhook id")
		same(t, get(t), normBot(u), "bot after rejected UpdateBot")
		same(t, listed(t, store.BotFilter{Tags: map[string][]string{"team": {"must-not-stick"}}}), []string{}, "tags after rejected UpdateBot")
		got, err := e.s.GetIntegrationByWebhook(e.ctx, slack.WebhookID)
		must(t, err, "integration after rejected UpdateBot")
		same(t, normIntegration(got), normIntegration(slack), "integration after rejected UpdateBot")
	})
	t.Run("wrong workspace or unknown id", func(t *testing.T) {
		bad := u
		bad.WorkspaceID, bad.Name = other.ID, "must not stick"
		wantErr(t, e.s.UpdateBot(e.ctx, bad), platform.ErrNotFound, "UpdateBot through another workspace")
		same(t, get(t), normBot(u), "bot after UpdateBot through another workspace")
		bad = u
		bad.ID = "bot_unknown"
		bad.Integrations = nil
		wantErr(t, e.s.UpdateBot(e.ctx, bad), platform.ErrNotFound, "UpdateBot unknown")
	})
	t.Run("clearing", func(t *testing.T) {
		c := u
		c.Tags, c.DeployedAt, c.Spec, c.Integrations = map[string]string{}, nil, platform.BotSpec{}, nil
		c.UpdatedAt = e.now()
		must(t, e.s.UpdateBot(e.ctx, c), "UpdateBot clearing")
		same(t, get(t), normBot(c), "bot after clearing")
		_, err := e.s.GetIntegrationByWebhook(e.ctx, chat.WebhookID)
		wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook after clearing")
		same(t, listed(t, store.BotFilter{Tags: map[string][]string{"team": {"growth"}}}), []string{}, "ListBots by a cleared tag")
	})
	got, err := e.s.GetBot(e.ctx, w.ID, neighbour.ID)
	must(t, err, "GetBot neighbour")
	same(t, normBot(got), normBot(neighbour), "neighbour untouched")
}

func testDeleteBot(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	b := e.fullBot(w.ID, a.ID)
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
	keep := e.bot(t, w.ID, "keep")
	key := e.newToken(platform.PrefixBotKey, b.ID, "k")
	must(t, e.s.CreateBotKey(e.ctx, w.ID, key), "CreateBotKey")
	keepKey := e.newToken(platform.PrefixBotKey, keep.ID, "k")
	must(t, e.s.CreateBotKey(e.ctx, w.ID, keepKey), "CreateBotKey")
	at := e.now()
	must(t, e.s.AppendLogs(e.ctx, []platform.LogEntry{
		{ID: platform.NewID(platform.PrefixLog), BotID: b.ID, Timestamp: at, Level: "info", Message: "gone"},
		{ID: platform.NewID(platform.PrefixLog), BotID: keep.ID, Timestamp: at, Level: "info", Message: "kept"},
	}), "AppendLogs")

	wantErr(t, e.deleteBot(e.ctx, other.ID, b.ID), platform.ErrNotFound, "DeleteBot through another workspace")
	_, err := e.s.GetBot(e.ctx, w.ID, b.ID)
	must(t, err, "bot survives a delete through another workspace")

	must(t, e.deleteBot(e.ctx, w.ID, b.ID), "DeleteBot")
	_, err = e.s.GetBot(e.ctx, w.ID, b.ID)
	wantErr(t, err, platform.ErrNotFound, "GetBot after delete")
	for _, in := range b.Integrations {
		_, err = e.s.GetIntegrationByWebhook(e.ctx, in.WebhookID)
		wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook after DeleteBot")
	}
	_, _, err = e.s.GetBotKeyByHash(e.ctx, key.Hash)
	wantErr(t, err, platform.ErrNotFound, "GetBotKeyByHash after DeleteBot")
	keys, err := e.s.ListBotKeys(e.ctx, w.ID, b.ID)
	must(t, err, "ListBotKeys")
	if len(keys) != 0 {
		t.Fatalf("ListBotKeys of a deleted bot = %s, want none", show(keys))
	}
	logFilter := func(botID string) store.LogFilter {
		return store.LogFilter{Page: store.Page{Limit: 10}, BotID: botID, Start: at, End: at.Add(time.Second)}
	}
	logs, _, err := e.s.ListLogs(e.ctx, logFilter(b.ID))
	must(t, err, "ListLogs")
	if len(logs) != 0 {
		t.Fatalf("ListLogs of a deleted bot = %s, want none", show(logs))
	}
	list, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Limit: 10}})
	must(t, err, "ListBots")
	same(t, botIDs(list), []string{keep.ID}, "ListBots after delete")
	ws, err := e.s.GetWorkspace(e.ctx, w.ID)
	must(t, err, "GetWorkspace")
	if ws.BotCount != 1 {
		t.Fatalf("BotCount after DeleteBot = %d, want 1", ws.BotCount)
	}

	// The other bot keeps its key and logs.
	_, _, err = e.s.GetBotKeyByHash(e.ctx, keepKey.Hash)
	must(t, err, "GetBotKeyByHash of the kept bot")
	logs, _, err = e.s.ListLogs(e.ctx, logFilter(keep.ID))
	must(t, err, "ListLogs kept")
	if len(logs) != 1 || logs[0].Message != "kept" {
		t.Fatalf("logs of the kept bot = %s, want the one line", show(logs))
	}

	wantErr(t, e.deleteBot(e.ctx, w.ID, b.ID), platform.ErrNotFound, "DeleteBot twice")
	wantErr(t, e.deleteBot(e.ctx, w.ID, "bot_unknown"), platform.ErrNotFound, "DeleteBot unknown")
}

func testGetIntegrationByWebhook(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.fullBot(w.ID, a.ID)
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
	o := e.bot(t, w.ID, "other")
	for _, in := range append(append([]platform.BotIntegration{}, b.Integrations...), o.Integrations...) {
		got, err := e.s.GetIntegrationByWebhook(e.ctx, in.WebhookID)
		must(t, err, "GetIntegrationByWebhook %s", in.WebhookID)
		same(t, normIntegration(got), normIntegration(in), "GetIntegrationByWebhook %s", in.Name)
	}
	_, err := e.s.GetIntegrationByWebhook(e.ctx, "wh_unknown")
	wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook unknown")
	_, err = e.s.GetIntegrationByWebhook(e.ctx, b.Integrations[0].IntegrationID)
	wantErr(t, err, platform.ErrNotFound, "GetIntegrationByWebhook with an integration id")

	// GetWebhookUser: the same integration, and the bot's user of that
	// foreign id if there is one (not another bot's of the same id).
	u := e.chatUser(t, b.ID, "shared-fid")
	u.Tags = map[string]string{"plan": "pro"}
	must(t, e.s.UpdateChatUser(e.ctx, u), "UpdateChatUser")
	e.chatUser(t, o.ID, "only-other")
	for _, c := range []struct {
		in      platform.BotIntegration
		fid     string
		want    *platform.ChatUser
		comment string
	}{
		{b.Integrations[0], "shared-fid", &u, "the bot's user"},
		{b.Integrations[1], "shared-fid", &u, "through another integration of the bot"},
		{b.Integrations[0], "only-other", nil, "another bot's user"},
		{b.Integrations[0], "nobody", nil, "an unknown user"},
		{b.Integrations[0], u.ID, nil, "the internal id (not looked up)"},
	} {
		in, got, found, err := e.s.GetWebhookUser(e.ctx, c.in.WebhookID, c.fid)
		must(t, err, "GetWebhookUser: %s", c.comment)
		same(t, normIntegration(in), normIntegration(c.in), "GetWebhookUser's integration: %s", c.comment)
		if found != (c.want != nil) {
			t.Fatalf("GetWebhookUser: %s: found %v", c.comment, found)
		}
		if c.want != nil {
			same(t, got, normChatUser(*c.want), "GetWebhookUser's user: %s", c.comment)
		}
	}
	_, _, _, err = e.s.GetWebhookUser(e.ctx, "wh_unknown", "shared-fid")
	wantErr(t, err, platform.ErrNotFound, "GetWebhookUser of an unknown webhook")
}

// listItem keeps what a ListBots row must carry (the listing leaves out
// code, status, spec and integrations).
func listItem(b platform.Bot) platform.Bot {
	b = normBot(b)
	return platform.Bot{
		ID: b.ID, Name: b.Name, Type: b.Type,
		Tags: b.Tags, DeployedAt: b.DeployedAt, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
	}
}

// listBots calls ListBots and returns the rows as bots, their stored tags
// decoded, so listings compare with the bots that were written.
func (e *env) listBots(ctx context.Context, workspaceID string, f store.BotFilter) ([]platform.Bot, string, error) {
	rows, next, err := e.s.ListBots(ctx, workspaceID, f)
	if err != nil {
		return nil, next, err
	}
	out := make([]platform.Bot, len(rows))
	for i, r := range rows {
		out[i] = platform.Bot{ID: r.ID, Name: r.Name, Type: r.Type, DeployedAt: r.DeployedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		if err := json.Unmarshal(r.Tags, &out[i].Tags); err != nil {
			return nil, next, fmt.Errorf("listing of %s: tags %q are not a JSON object: %w", r.ID, r.Tags, err)
		}
	}
	return out, next, nil
}

func testListBotsFilters(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)

	mk := func(ws, name string, dev bool, tags map[string]string, integrations ...string) platform.Bot {
		b := e.newBot(ws, name)
		b.Dev, b.Tags = dev, tags
		b.Type = "type-" + name
		if name == "b2" {
			d := e.now()
			b.DeployedAt = &d
		}
		for _, n := range integrations {
			b.Integrations = append(b.Integrations, e.newIntegration(b.ID, n))
		}
		must(t, e.s.CreateBot(e.ctx, b), "CreateBot %s", name)
		return b
	}
	bots := map[string]platform.Bot{}
	for _, b := range []platform.Bot{
		mk(w.ID, "b1", false, map[string]string{"team": "core", "env": "prod"}, "slack"),
		mk(w.ID, "b2", false, map[string]string{"team": "core", "env": "staging"}),
		mk(w.ID, "b3", false, map[string]string{"team": "growth", "env": "prod"}, "telegram"),
		mk(w.ID, "b4", false, map[string]string{}, "slack", "telegram"),
		mk(w.ID, "b5", false, map[string]string{"team": "growth", "owner": "core"}),
		mk(w.ID, "d1", true, map[string]string{"team": "core", "env": "prod"}, "slack"),
		mk(w.ID, "d2", true, map[string]string{}),
		mk(other.ID, "o1", false, map[string]string{"team": "core", "env": "prod"}, "slack", "telegram"),
	} {
		bots[b.Name] = b
	}
	ids := func(names ...string) []string {
		out := []string{}
		for _, n := range names {
			out = append(out, bots[n].ID)
		}
		return out
	}
	tags := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	for _, tc := range []struct {
		name string
		f    store.BotFilter
		want []string // in createdAt order, which is creation order here
	}{
		{"production bots", store.BotFilter{}, ids("b1", "b2", "b3", "b4", "b5")},
		{"dev bots", store.BotFilter{Dev: true}, ids("d1", "d2")},
		{"empty tag map", store.BotFilter{Tags: map[string][]string{}}, ids("b1", "b2", "b3", "b4", "b5")},
		{"one tag value", store.BotFilter{Tags: tags("team", "core")}, ids("b1", "b2")},
		{"values of a key are ORed", store.BotFilter{Tags: tags("team", "core", "team", "growth")}, ids("b1", "b2", "b3", "b5")},
		{"keys are ANDed", store.BotFilter{Tags: tags("team", "core", "env", "prod")}, ids("b1")},
		{"AND of ORs", store.BotFilter{Tags: tags("team", "core", "team", "growth", "env", "prod")}, ids("b1", "b3")},
		{"AND of ORs, both sides", store.BotFilter{Tags: tags("team", "core", "team", "growth", "env", "prod", "env", "staging")}, ids("b1", "b2", "b3")},
		{"value matches under its own key only", store.BotFilter{Tags: tags("owner", "core")}, ids("b5")},
		{"unmatched value", store.BotFilter{Tags: tags("team", "nobody")}, ids()},
		{"unmatched key", store.BotFilter{Tags: tags("region", "eu")}, ids()},
		{"values are case-sensitive", store.BotFilter{Tags: tags("team", "Core")}, ids()},
		{"one matching key and one unmatched", store.BotFilter{Tags: tags("team", "core", "region", "eu")}, ids()},
		{"key with no values matches nothing", store.BotFilter{Tags: map[string][]string{"team": {}}}, ids()},
		{"tags on dev bots", store.BotFilter{Dev: true, Tags: tags("team", "core")}, ids("d1")},
		{"one integration", store.BotFilter{IntegrationNames: []string{"slack"}}, ids("b1", "b4")},
		{"integrations are ANDed", store.BotFilter{IntegrationNames: []string{"slack", "telegram"}}, ids("b4")},
		{"every bot has chat", store.BotFilter{IntegrationNames: []string{"chat"}}, ids("b1", "b2", "b3", "b4", "b5")},
		{"unknown integration", store.BotFilter{IntegrationNames: []string{"discord"}}, ids()},
		{"integration id is not its name", store.BotFilter{IntegrationNames: []string{"intg_slack"}}, ids()},
		{"integrations on dev bots", store.BotFilter{Dev: true, IntegrationNames: []string{"slack"}}, ids("d1")},
		{"tags and integrations", store.BotFilter{Tags: tags("team", "growth"), IntegrationNames: []string{"telegram"}}, ids("b3")},
		{"tags and integrations, none", store.BotFilter{Tags: tags("team", "core"), IntegrationNames: []string{"telegram"}}, ids()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 100} {
				f := tc.f
				f.Limit = limit
				got := collect(t, "ListBots", limit, func(token string) ([]platform.Bot, string, error) {
					f.Token = token
					return e.listBots(e.ctx, w.ID, f)
				})
				same(t, botIDs(got), tc.want, "ListBots limit %d", limit)
				for _, b := range got {
					same(t, listItem(b), listItem(bots[b.Name]), "listed bot %s", b.Name)
				}
			}
		})
	}
}

// botKey is a bot's position in a listing: sort value, then id.
type botKey struct {
	v  int64
	id string
}

func keyOf(b platform.Bot, field string) botKey {
	t := b.CreatedAt
	if field == "updatedAt" {
		t = b.UpdatedAt
	}
	return botKey{mt(t).UnixMicro(), b.ID}
}

// listedBefore reports whether x comes before y in a listing.
func listedBefore(x, y botKey, desc bool) bool {
	if desc {
		x, y = y, x
	}
	return x.v < y.v || x.v == y.v && x.id < y.id
}

func order(bs []platform.Bot, field string, desc bool) []string {
	bs = append([]platform.Bot{}, bs...)
	sort.Slice(bs, func(i, j int) bool { return listedBefore(keyOf(bs[i], field), keyOf(bs[j], field), desc) })
	return botIDs(bs)
}

func testListBotsSort(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	other, _ := e.workspace(t, a)
	base := e.now()
	s := time.Second
	// Ties in both columns, ids not in time order, and two times that differ
	// only below the microsecond (equal once stored).
	rows := []struct {
		id               string
		created, updated time.Duration
	}{
		{"bot_g", 3 * s, 5 * s},
		{"bot_c", s + 100, 5 * s},
		{"bot_a", 3 * s, 0},
		{"bot_h", 2 * s, s},
		{"bot_e", s + 900, 9 * s},
		{"bot_b", 3 * s, 2 * s},
		{"bot_f", 0, 2 * s},
		{"bot_d", 2 * s, 7 * s},
	}
	var bots []platform.Bot
	for _, r := range rows {
		b := e.newBot(w.ID, r.id)
		b.ID, b.Integrations = r.id, nil
		b.CreatedAt, b.UpdatedAt = base.Add(r.created), base.Add(r.updated)
		must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
		bots = append(bots, b)
	}
	// Same times elsewhere: a dev bot and another workspace's bot.
	dev := e.newBot(w.ID, "dev")
	dev.Dev, dev.CreatedAt, dev.UpdatedAt, dev.Integrations = true, base.Add(2*s), base.Add(2*s), nil
	must(t, e.s.CreateBot(e.ctx, dev), "CreateBot dev")
	o := e.newBot(other.ID, "other")
	o.CreatedAt, o.UpdatedAt, o.Integrations = base.Add(2*s), base.Add(2*s), nil
	must(t, e.s.CreateBot(e.ctx, o), "CreateBot other")

	// Spot-check the expected order itself so the test cannot agree with a
	// wrong store by computing the same wrong thing.
	same(t, order(bots, "createdAt", false), []string{"bot_f", "bot_c", "bot_e", "bot_d", "bot_h", "bot_a", "bot_b", "bot_g"}, "expected createdAt asc")

	for _, field := range []string{"", "createdAt", "updatedAt"} {
		for _, desc := range []bool{false, true} {
			want := order(bots, field, desc)
			for _, limit := range []int{1, 2, 3, 8, 50} {
				name := fmt.Sprintf("field=%q desc=%v limit=%d", field, desc, limit)
				t.Run(name, func(t *testing.T) {
					got := collect(t, "ListBots", limit, func(token string) ([]platform.Bot, string, error) {
						return e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Token: token, Limit: limit}, SortField: field, Descending: desc})
					})
					same(t, botIDs(got), want, "ListBots order")
				})
			}
		}
	}
}

// testListBotsKeysetUnderWrites pages through bots while others are inserted
// and deleted between pages: no row may repeat, rows that exist throughout
// may not be skipped, deleted rows not yet reached never show, and inserted
// rows show exactly when they sort after the last row already returned.
func testListBotsKeysetUnderWrites(t *testing.T, e *env) {
	a := e.account(t, "a")
	for _, field := range []string{"createdAt", "updatedAt"} {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s desc=%v", field, desc), func(t *testing.T) {
				w, _ := e.workspace(t, a)
				base := e.now()
				mk := func(id string, created, updated time.Time) platform.Bot {
					b := e.newBot(w.ID, "k")
					if id != "" {
						b.ID = id
					}
					b.Integrations = nil
					b.CreatedAt, b.UpdatedAt = created, updated
					must(t, e.s.CreateBot(e.ctx, b), "CreateBot")
					return b
				}
				var initial []platform.Bot
				for i := range 10 {
					// Pairs share a created time; updated times run the other way.
					initial = append(initial, mk("", base.Add(time.Duration(i/2)*time.Second), base.Add(time.Duration(10-i/2)*time.Second)))
				}
				keysetWalk[platform.Bot, botKey]{
					what:   "ListBots",
					id:     func(b platform.Bot) string { return b.ID },
					key:    func(b platform.Bot) botKey { return keyOf(b, field) },
					before: func(x, y botKey) bool { return listedBefore(x, y, desc) },
					order:  func(bs []platform.Bot) []string { return order(bs, field, desc) },
					list: func(token string) ([]platform.Bot, string, error) {
						return e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Token: token, Limit: 3}, SortField: field, Descending: desc})
					},
					like: func(b platform.Bot, dir int, id string) platform.Bot {
						at := fromKey(keyOf(b, field)).Add(time.Duration(dir) * time.Hour)
						return mk(id, at, at)
					},
					del: func(id string) { must(t, e.deleteBot(e.ctx, w.ID, id), "DeleteBot") },
				}.run(t, initial)
			})
		}
	}
}

func fromKey(k botKey) time.Time { return time.UnixMicro(k.v).UTC() }

func testInvalidNextToken(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	lists := map[string]func(token string) error{
		"ListWorkspaces": func(token string) error {
			_, _, err := e.s.ListWorkspaces(e.ctx, a.ID, store.WorkspaceFilter{Page: store.Page{Token: token, Limit: 10}})
			return err
		},
		"ListMembers": func(token string) error {
			_, _, err := e.s.ListMembers(e.ctx, w.ID, store.Page{Token: token, Limit: 10})
			return err
		},
		"ListBots": func(token string) error {
			_, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Token: token, Limit: 10}})
			return err
		},
		"ListBots updatedAt desc": func(token string) error {
			_, _, err := e.listBots(e.ctx, w.ID, store.BotFilter{Page: store.Page{Token: token, Limit: 10}, SortField: "updatedAt", Descending: true})
			return err
		},
		"ListLogs": func(token string) error {
			_, _, err := e.s.ListLogs(e.ctx, store.LogFilter{Page: store.Page{Token: token, Limit: 10}, BotID: b.ID, Start: t0, End: t0.Add(time.Hour)})
			return err
		},
	}
	wantInvalidTokens(t, lists)
}

// wantInvalidTokens requires each listing to accept no token and to refuse
// malformed ones as an invalid query.
func wantInvalidTokens(t *testing.T, lists map[string]func(token string) error) {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	tokens := map[string]string{
		"not base64":      "!!not a token!!",
		"not JSON":        enc([]byte("not json")),
		"JSON without id": enc([]byte(`{"v":12,"s":"k"}`)),
		"JSON array":      enc([]byte(`[1,2]`)),
	}
	for lname, list := range lists {
		must(t, list(""), "%s first page", lname)
		for tname, token := range tokens {
			wantInvalidQuery(t, list(token), "%s with nextToken %s", lname, tname)
		}
	}
}

func testBotKeys(t *testing.T, e *env) {
	a := e.account(t, "a")
	w1, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	bot1 := e.bot(t, w1.ID, "one")
	bot1b := e.bot(t, w1.ID, "one-b")
	bot2 := e.bot(t, w2.ID, "two")

	stray := e.newToken(platform.PrefixBotKey, bot1.ID, "stray")
	wantErr(t, e.s.CreateBotKey(e.ctx, w2.ID, stray), platform.ErrNotFound, "CreateBotKey for a bot of another workspace")
	_, _, err := e.s.GetBotKeyByHash(e.ctx, stray.Hash)
	wantErr(t, err, platform.ErrNotFound, "GetBotKeyByHash of the rejected key")
	unknownBot := e.newToken(platform.PrefixBotKey, "bot_unknown", "stray")
	wantErr(t, e.s.CreateBotKey(e.ctx, w1.ID, unknownBot), platform.ErrNotFound, "CreateBotKey for an unknown bot")

	k1 := e.newToken(platform.PrefixBotKey, bot1.ID, "first")
	k2 := e.newToken(platform.PrefixBotKey, bot1.ID, "")
	k3 := e.newToken(platform.PrefixBotKey, bot1b.ID, "sibling")
	k4 := e.newToken(platform.PrefixBotKey, bot2.ID, "other workspace")
	must(t, e.s.CreateBotKey(e.ctx, w1.ID, k2), "CreateBotKey k2")
	must(t, e.s.CreateBotKey(e.ctx, w1.ID, k1), "CreateBotKey k1")
	must(t, e.s.CreateBotKey(e.ctx, w1.ID, k3), "CreateBotKey k3")
	must(t, e.s.CreateBotKey(e.ctx, w2.ID, k4), "CreateBotKey k4")

	dup := e.newToken(platform.PrefixBotKey, bot1.ID, "dup")
	dup.Hash = k4.Hash
	wantErr(t, e.s.CreateBotKey(e.ctx, w1.ID, dup), platform.ErrConflict, "CreateBotKey with a taken hash")

	list := func(ws, bot string) []platform.Token {
		t.Helper()
		ts, err := e.s.ListBotKeys(e.ctx, ws, bot)
		must(t, err, "ListBotKeys")
		for i := range ts {
			ts[i].Hash = nil // listings need not carry the hash
		}
		return ts
	}
	listed := func(ts ...platform.Token) []platform.Token {
		out := mapSlice(ts, func(t platform.Token) platform.Token { t.Hash = nil; return normToken(t) })
		sortByID(out, func(t platform.Token) string { return t.ID })
		return out
	}
	same(t, list(w1.ID, bot1.ID), listed(k1, k2), "ListBotKeys bot1")
	same(t, list(w1.ID, bot1b.ID), listed(k3), "ListBotKeys bot1b")
	same(t, list(w2.ID, bot2.ID), listed(k4), "ListBotKeys bot2")
	if got := list(w2.ID, bot1.ID); len(got) != 0 {
		t.Fatalf("ListBotKeys of bot1 through w2 = %s, want none", show(tokenIDs(got)))
	}
	if got := list(w1.ID, "bot_unknown"); len(got) != 0 {
		t.Fatalf("ListBotKeys of an unknown bot = %s, want none", show(tokenIDs(got)))
	}

	for _, tc := range []struct {
		key platform.Token
		ws  string
	}{{k1, w1.ID}, {k2, w1.ID}, {k3, w1.ID}, {k4, w2.ID}} {
		got, ws, err := e.s.GetBotKeyByHash(e.ctx, tc.key.Hash)
		must(t, err, "GetBotKeyByHash %s", tc.key.ID)
		same(t, got, normToken(tc.key), "GetBotKeyByHash %s", tc.key.ID)
		if ws != tc.ws {
			t.Fatalf("GetBotKeyByHash %s workspace = %q, want %q", tc.key.ID, ws, tc.ws)
		}
	}
	unknown := []byte("0123456789abcdef0123456789abcdef")
	_, _, err = e.s.GetBotKeyByHash(e.ctx, unknown)
	wantErr(t, err, platform.ErrNotFound, "GetBotKeyByHash unknown")

	wantErr(t, e.s.DeleteBotKey(e.ctx, w2.ID, k1.ID), platform.ErrNotFound, "DeleteBotKey through another workspace")
	same(t, list(w1.ID, bot1.ID), listed(k1, k2), "ListBotKeys after a delete through another workspace")
	must(t, e.s.DeleteBotKey(e.ctx, w1.ID, k1.ID), "DeleteBotKey")
	same(t, list(w1.ID, bot1.ID), listed(k2), "ListBotKeys after delete")
	same(t, list(w1.ID, bot1b.ID), listed(k3), "sibling keys after delete")
	_, _, err = e.s.GetBotKeyByHash(e.ctx, k1.Hash)
	wantErr(t, err, platform.ErrNotFound, "GetBotKeyByHash of a deleted key")
	wantErr(t, e.s.DeleteBotKey(e.ctx, w1.ID, k1.ID), platform.ErrNotFound, "DeleteBotKey twice")
	wantErr(t, e.s.DeleteBotKey(e.ctx, w1.ID, "bak_unknown"), platform.ErrNotFound, "DeleteBotKey unknown")
}
