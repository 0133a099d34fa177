package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (e *env) newIntegrationVersion(workspaceID, name, version string) platform.Integration {
	now := e.now()
	return platform.Integration{
		ID: platform.NewID("intver_"), WorkspaceID: workspaceID, Name: name, Version: version, Visibility: "private",
		CreatedBy: "acct_x", CreatedAt: now, UpdatedAt: now, Code: "module.exports = {}",
		Spec: platform.IntegrationSpec{Title: "T " + name, Secrets: map[string]string{"TOKEN": "s3cret"},
			Actions: json.RawMessage(`{"ping":{"input":{"schema":{"type":"object"}},"output":{"schema":{"type":"object"}}}}`)},
	}
}

func testIntegrations(t *testing.T, e *env) {
	a := e.account(t, "integrations")
	w1, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	create := func(i platform.Integration) platform.Integration {
		t.Helper()
		must(t, e.s.CreateIntegration(e.ctx, i), "CreateIntegration %s@%s", i.Name, i.Version)
		return i
	}
	v1 := create(e.newIntegrationVersion(w1.ID, "acme/echo", "0.1.0"))
	v2 := create(e.newIntegrationVersion(w1.ID, "acme/echo", "0.2.0"))
	other := create(e.newIntegrationVersion(w2.ID, "other/thing", "1.0.0"))
	dev := e.newIntegrationVersion(w1.ID, "acme/echo", "0.2.0")
	dev.Dev, dev.Spec.URL = true, "https://tunnel.example/1"
	create(dev) // a dev version may repeat a production name@version

	t.Run("read back, code and spec included", func(t *testing.T) {
		got, err := e.s.GetIntegration(e.ctx, v1.ID)
		must(t, err, "GetIntegration")
		if got.Name != v1.Name || got.Version != "0.1.0" || got.WorkspaceID != w1.ID || got.Code != v1.Code || got.Spec.Secrets["TOKEN"] != "s3cret" ||
			string(got.Spec.Actions) != string(v1.Spec.Actions) || got.Dev || got.Visibility != "private" {
			t.Fatalf("GetIntegration = %+v", got)
		}
		got, err = e.s.GetIntegrationByName(e.ctx, "acme/echo", "0.2.0")
		must(t, err, "GetIntegrationByName")
		if got.ID != v2.ID {
			t.Fatalf("GetIntegrationByName found %s, want the production version %s", got.ID, v2.ID)
		}
		for _, c := range [][2]string{{"acme/echo", "9.9.9"}, {"nope", "0.1.0"}} {
			if _, err := e.s.GetIntegrationByName(e.ctx, c[0], c[1]); !errors.Is(err, platform.ErrNotFound) {
				t.Fatalf("GetIntegrationByName %v: err = %v, want ErrNotFound", c, err)
			}
		}
		if _, err := e.s.GetIntegration(e.ctx, "intver_none"); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("GetIntegration of none: err = %v", err)
		}
	})
	t.Run("a production name@version is unique across workspaces", func(t *testing.T) {
		dup := e.newIntegrationVersion(w2.ID, "acme/echo", "0.1.0")
		if err := e.s.CreateIntegration(e.ctx, dup); !errors.Is(err, platform.ErrConflict) {
			t.Fatalf("CreateIntegration of a taken name@version: err = %v, want ErrConflict", err)
		}
		if _, err := e.s.GetIntegration(e.ctx, dup.ID); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("the refused version was stored: %v", err)
		}
		if err := e.s.CreateIntegration(e.ctx, e.newIntegrationVersion("wkspace_none", "x/y", "1.0.0")); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("CreateIntegration in no workspace: err = %v, want ErrNotFound", err)
		}
	})
	t.Run("list by workspace, name, version, dev and visibility, in pages", func(t *testing.T) {
		no := false
		list := func(f store.IntegrationFilter) []string {
			t.Helper()
			var ids []string
			f.Limit = 1
			for {
				page, next, err := e.s.ListIntegrations(e.ctx, f)
				must(t, err, "ListIntegrations %+v", f)
				for _, i := range page {
					if i.Code != "" {
						t.Fatalf("a listing carries code")
					}
					ids = append(ids, i.ID)
				}
				if next == "" {
					return ids
				}
				f.Token = next
			}
		}
		eq := func(what string, got []string, want ...string) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("%s = %v, want %v", what, got, want)
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("%s = %v, want %v", what, got, want)
				}
			}
		}
		eq("w1 production", list(store.IntegrationFilter{WorkspaceID: w1.ID, Dev: &no}), v1.ID, v2.ID)
		eq("w1 all", list(store.IntegrationFilter{WorkspaceID: w1.ID}), v1.ID, v2.ID, dev.ID)
		eq("name and version", list(store.IntegrationFilter{Name: "acme/echo", Version: "0.1.0"}), v1.ID)
		eq("w2", list(store.IntegrationFilter{WorkspaceID: w2.ID}), other.ID)
		eq("by ids", list(store.IntegrationFilter{IDs: []string{dev.ID, v1.ID, "intver_none"}}), v1.ID, dev.ID)
		eq("public", list(store.IntegrationFilter{Visibility: []string{"public", "unlisted"}}))
		pub := other
		pub.Visibility, pub.Spec.Title, pub.Code, pub.UpdatedAt = "public", "Shared", "module.exports = 2", e.now()
		must(t, e.s.UpdateIntegration(e.ctx, pub), "UpdateIntegration")
		eq("public", list(store.IntegrationFilter{Visibility: []string{"public", "unlisted"}}), other.ID)
		got, err := e.s.GetIntegration(e.ctx, other.ID)
		must(t, err, "GetIntegration")
		if got.Spec.Title != "Shared" || got.Code != "module.exports = 2" || !got.UpdatedAt.After(got.CreatedAt) {
			t.Fatalf("after UpdateIntegration: %+v", got)
		}
	})
	t.Run("update and delete only in the integration's workspace", func(t *testing.T) {
		moved := v1
		moved.WorkspaceID = w2.ID
		if err := e.s.UpdateIntegration(e.ctx, moved); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("UpdateIntegration from another workspace: err = %v", err)
		}
		if err := e.s.DeleteIntegration(e.ctx, w2.ID, v1.ID); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("DeleteIntegration from another workspace: err = %v", err)
		}
		must(t, e.s.DeleteIntegration(e.ctx, w1.ID, v1.ID), "DeleteIntegration")
		if _, err := e.s.GetIntegration(e.ctx, v1.ID); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("deleted integration still read: %v", err)
		}
		// The name@version is free again.
		create(e.newIntegrationVersion(w1.ID, "acme/echo", "0.1.0"))
	})
	t.Run("deleting the workspace deletes its integrations", func(t *testing.T) {
		w3, _ := e.workspace(t, a)
		gone := create(e.newIntegrationVersion(w3.ID, "gone/x", "1.0.0"))
		must(t, e.deleteWorkspace(e.ctx, w3.ID), "DeleteWorkspace")
		if _, err := e.s.GetIntegration(e.ctx, gone.ID); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("an integration outlived its workspace: %v", err)
		}
	})
}

// testInterfaces: interfaces are stored as integrations are, in a name
// space of their own.
func testInterfaces(t *testing.T, e *env) {
	a := e.account(t, "interfaces")
	w, _ := e.workspace(t, a)
	same := e.newIntegrationVersion(w.ID, "hitl", "0.2.0")
	must(t, e.s.CreateIntegration(e.ctx, same), "CreateIntegration hitl")
	i := e.newIntegrationVersion(w.ID, "hitl", "0.2.0")
	i.Code, i.Visibility = "", "public"
	must(t, e.s.CreateInterface(e.ctx, i), "CreateInterface hitl: an integration of the same name is no conflict")
	if err := e.s.CreateInterface(e.ctx, e.newIntegrationVersion(w.ID, "hitl", "0.2.0")); !errors.Is(err, platform.ErrConflict) {
		t.Fatalf("a second hitl@0.2.0: err = %v, want ErrConflict", err)
	}
	got, err := e.s.GetInterfaceByName(e.ctx, "hitl", "0.2.0")
	must(t, err, "GetInterfaceByName")
	if got.ID != i.ID || got.Visibility != "public" {
		t.Fatalf("GetInterfaceByName = %+v", got)
	}
	if _, err := e.s.GetInterface(e.ctx, same.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("an integration's id read as an interface's: %v", err)
	}
	i.Spec.Title, i.UpdatedAt = "Human in the loop", e.now()
	must(t, e.s.UpdateInterface(e.ctx, i), "UpdateInterface")
	list, _, err := e.s.ListInterfaces(e.ctx, store.IntegrationFilter{Page: store.Page{Limit: 10}, Visibility: []string{"public"}})
	must(t, err, "ListInterfaces")
	if len(list) != 1 || list[0].Spec.Title != "Human in the loop" {
		t.Fatalf("ListInterfaces = %+v", list)
	}
	must(t, e.s.DeleteInterface(e.ctx, w.ID, i.ID), "DeleteInterface")
	if _, err := e.s.GetIntegration(e.ctx, same.ID); err != nil {
		t.Fatalf("deleting the interface touched the integration: %v", err)
	}
}

// testPlugins: plugin versions are stored as integrations are, in a name
// space of their own; a bot's plugins are stored with it, counted by
// version, and go with it.
func testPlugins(t *testing.T, e *env) {
	a := e.account(t, "plugins")
	w, _ := e.workspace(t, a)
	p := e.newIntegrationVersion(w.ID, "personality", "0.1.0")
	p.Code = `{"node":"module.exports = {}","browser":"export default {}"}`
	p.Spec.Dependencies = json.RawMessage(`{"interfaces":{"llm":{"id":"intver_x","name":"llm","version":"4.0.0"}},"integrations":{}}`)
	must(t, e.s.CreatePlugin(e.ctx, p), "CreatePlugin")
	if err := e.s.CreatePlugin(e.ctx, e.newIntegrationVersion(w.ID, "personality", "0.1.0")); !errors.Is(err, platform.ErrConflict) {
		t.Fatalf("a second personality@0.1.0: err = %v, want ErrConflict", err)
	}
	got, err := e.s.GetPluginByName(e.ctx, "personality", "0.1.0")
	must(t, err, "GetPluginByName")
	if got.ID != p.ID || got.Code != p.Code || string(got.Spec.Dependencies) != string(p.Spec.Dependencies) {
		t.Fatalf("GetPluginByName = %+v", got)
	}
	if _, err := e.s.GetIntegration(e.ctx, p.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("a plugin's id read as an integration's: %v", err)
	}

	b := e.bot(t, w.ID, "with-plugin")
	b, err = e.s.GetBot(e.ctx, w.ID, b.ID)
	must(t, err, "GetBot")
	bp := platform.BotPlugin{Alias: "persona", PluginID: p.ID, Name: p.Name, Version: p.Version, Enabled: true,
		Configuration: map[string]any{"tone": "warm"}, Interfaces: json.RawMessage(`{"llm":{"integrationId":"intver_y","integrationAlias":"openai","interfaceId":"intver_x"}}`),
		Integrations: json.RawMessage(`{}`), CreatedAt: e.now(), UpdatedAt: e.now()}
	b.Plugins = []platform.BotPlugin{bp}
	must(t, e.s.UpdateBot(e.ctx, b), "UpdateBot with a plugin")
	again, err := e.s.GetBot(e.ctx, w.ID, b.ID)
	must(t, err, "GetBot")
	if len(again.Plugins) != 1 || again.Plugins[0].Alias != "persona" || again.Plugins[0].Configuration["tone"] != "warm" ||
		string(again.Plugins[0].Interfaces) != string(bp.Interfaces) || !again.Plugins[0].CreatedAt.Equal(bp.CreatedAt.Truncate(time.Microsecond)) {
		t.Fatalf("the bot's plugins = %+v", again.Plugins)
	}
	if n, err := e.s.CountPluginInstallations(e.ctx, p.ID); err != nil || n != 1 {
		t.Fatalf("CountPluginInstallations = %d, %v", n, err)
	}
	must(t, e.deleteBot(e.ctx, w.ID, b.ID), "DeleteBot")
	if n, err := e.s.CountPluginInstallations(e.ctx, p.ID); err != nil || n != 0 {
		t.Fatalf("CountPluginInstallations after the bot's deletion = %d, %v", n, err)
	}
	p.Spec.Title, p.UpdatedAt = "Personality", e.now()
	must(t, e.s.UpdatePlugin(e.ctx, p), "UpdatePlugin")
	list, _, err := e.s.ListPlugins(e.ctx, store.IntegrationFilter{Page: store.Page{Limit: 10}, WorkspaceID: w.ID})
	must(t, err, "ListPlugins")
	if len(list) != 1 || list[0].Spec.Title != "Personality" || list[0].Code != "" {
		t.Fatalf("ListPlugins = %+v", list)
	}
	must(t, e.s.DeletePlugin(e.ctx, w.ID, p.ID), "DeletePlugin")
	if _, err := e.s.GetPlugin(e.ctx, p.ID); !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("GetPlugin after DeletePlugin: %v", err)
	}
}
