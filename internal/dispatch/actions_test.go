package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// calls records the installations whose actions the dispatcher runs.
type calls struct{ aliases []string }

func (c *calls) Action(_ context.Context, _ *dispatch.Bot, in platform.BotIntegration, action string, _ json.RawMessage) (json.RawMessage, error) {
	c.aliases = append(c.aliases, in.Name+" "+action)
	return json.RawMessage(`{}`), nil
}

// TestCallActionByIntegrationName: an integration a workspace deployed
// ("acme/llm-provider") and a bot installed by its id goes by its bare
// name, and its actions are called by that name or by the integration's
// whole name, which getBot shows (@botpress/cognitive calls the llm
// interface's actions so); the same bare name of another workspace's
// integration is not it.
func TestCallActionByIntegrationName(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			st := storetest.Open(t, backend)
			ctx := context.Background()
			now := time.Now().UTC().Truncate(time.Millisecond)
			w := storetest.Workspace(t, st, now)
			i := platform.Integration{ID: platform.NewID("intver_"), WorkspaceID: w.ID, Name: "acme/llm-provider", Version: "0.1.0",
				Visibility: "private", CreatedAt: now, UpdatedAt: now}
			if err := st.CreateIntegration(ctx, i); err != nil {
				t.Fatal(err)
			}
			b := storetest.Bot(w, "", now)
			b.Integrations = []platform.BotIntegration{{BotID: b.ID, IntegrationID: i.ID, Name: "llm-provider", Version: i.Version,
				WebhookID: "wh1", Enabled: true, Configuration: map[string]any{}, Status: platform.IntegrationRegistered, CreatedAt: now, UpdatedAt: now}}
			if err := st.CreateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			ran := &calls{}
			d := dispatch.New(st, platform.SystemClock{}, dispatch.Config{Poll: time.Hour, Deployed: ran})
			for _, name := range []string{"llm-provider:listLanguageModels", "acme/llm-provider:generateContent"} {
				if _, err := d.CallAction(ctx, b.ID, name, nil); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			want := []string{"llm-provider listLanguageModels", "llm-provider generateContent"}
			if len(ran.aliases) != 2 || ran.aliases[0] != want[0] || ran.aliases[1] != want[1] {
				t.Fatalf("ran %q, want %q", ran.aliases, want)
			}
			for _, name := range []string{"other/llm-provider:generateContent", "acme/llm:generateContent"} {
				_, err := d.CallAction(ctx, b.ID, name, nil)
				var e *platform.Error
				if !errors.As(err, &e) || e.Type != platform.TypeResourceNotFound {
					t.Fatalf("%s: %v, want ResourceNotFound", name, err)
				}
			}
			if len(ran.aliases) != 2 {
				t.Fatalf("ran %q", ran.aliases)
			}
		})
	}
}
