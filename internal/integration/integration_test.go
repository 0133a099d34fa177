package integration

import (
	"context"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// reads counts the runner's full reads of bots.
type reads struct {
	store.Store
	bots int
}

func (r *reads) GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error) {
	r.bots++
	return r.Store.GetBot(ctx, workspaceID, id)
}

// TestRunnerReadsABotOncePerVersion: a webhook or an outgoing message reads
// its bot whole only when the bot changed since the last read, and a change
// (here, the installation's configuration) is seen by the next one.
func TestRunnerReadsABotOncePerVersion(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := &reads{Store: storetest.Open(t, backend)}
			now := time.Now().UTC().Truncate(time.Millisecond)
			w := storetest.Workspace(t, st, now)
			b := storetest.Bot(w, "", now)
			in := platform.BotIntegration{BotID: b.ID, IntegrationID: "intver_relay", Name: "relay", Version: "1.0.0", WebhookID: "hook1",
				Enabled: true, Configuration: map[string]any{"provider": "a"}, DisabledChannels: []string{}, Status: platform.IntegrationRegistered,
				CreatedAt: now, UpdatedAt: now}
			b.Integrations = []platform.BotIntegration{in}
			if err := st.CreateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			r := New(st, Config{})
			provider := func() any {
				t.Helper()
				got, _, err := r.Installation(ctx, "hook1")
				if err != nil {
					t.Fatal(err)
				}
				return got.Integrations[0].Configuration["provider"]
			}
			for range 3 {
				if p := provider(); p != "a" {
					t.Fatalf("provider %v, want a", p)
				}
			}
			if st.bots != 1 {
				t.Fatalf("three webhooks read the unchanged bot %d times, want once", st.bots)
			}
			b.Integrations[0].Configuration = map[string]any{"provider": "b"}
			b.UpdatedAt = now.Add(time.Second)
			if err := st.UpdateBot(ctx, b); err != nil {
				t.Fatal(err)
			}
			if p := provider(); p != "b" {
				t.Fatalf("after the change: provider %v, want b", p)
			}
			if st.bots != 2 {
				t.Fatalf("the changed bot was read %d times in all, want twice", st.bots)
			}
			if _, err := st.DeleteBot(ctx, w.ID, b.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.Installation(ctx, "hook1"); err == nil {
				t.Fatal("a deleted bot's webhook still finds its installation")
			}
		})
	}
}
