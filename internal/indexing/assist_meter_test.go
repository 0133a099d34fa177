package indexing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/ai/aitest"
	"github.com/botplatform/botplatform/internal/platform"
)

// TestAISpendLimit: once the month's spend reaches the workspace's limit,
// indexing that needs the model fails with the reason, and nothing more is
// sent; a model server that keeps failing fails the file with its error.
func TestAISpendLimit(t *testing.T) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, 1)
			setPlan(t, f, "team", 1)
			srv := aitest.New(t)
			// $0.01 per token: a call of 100+ tokens costs over $1.
			f.withModel(t, srv, map[string]ai.Price{"medium-1": {Input: 10000, Output: 10000}})
			agent := conf(map[string]any{"parsing": map[string]any{"mode": "agent"}})
			f.uploadConf(t, "first.txt", "text/plain", []byte(strings.Repeat("text ", 100)), agent)
			if got := f.settle(t)["first.txt"]; got.Status != platform.FileIndexCompleted {
				t.Fatalf("first file: %s %s", got.Status, got.FailedReason)
			}
			f.uploadConf(t, "second.txt", "text/plain", []byte("more"), agent)
			got := f.settle(t)["second.txt"]
			spent, _, err := f.st.AISpend(f.ctx, f.bot.WorkspaceID, time.Now().Add(-time.Hour))
			must(t, err)
			want := fmt.Sprintf("AI Spend limit reached: this workspace spent $%.2f this month and its monthly spending limit is $1;", float64(spent)/1e9)
			if got.Status != platform.FileIndexFailed || !strings.Contains(got.FailedReason, want) || spent <= 1e9 {
				t.Errorf("over the limit (spent %d nanodollars): %s %q, want it to contain %q", spent, got.Status, got.FailedReason, want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model calls, want 1", n)
			}
			err = f.svc.CheckUpsert(f.ctx, f.bot.WorkspaceID, "text/plain", "x.txt", []byte(`{"configuration":{"parsing":{"mode":"agent"}}}`))
			if e, ok := err.(*platform.Error); !ok || e.Type != platform.TypeQuotaExceeded {
				t.Errorf("CheckUpsert over the limit: %v", err)
			}

			// A higher limit lets indexing go on; a failing server fails
			// the file with its error after the retries.
			setPlan(t, f, "team", 1000)
			srv.Fail(10, 503)
			f.uploadConf(t, "third.txt", "text/plain", []byte("text"), agent)
			got = f.settle(t)["third.txt"]
			if got.Status != platform.FileIndexFailed || !strings.Contains(got.FailedReason, "agent parsing") || !strings.Contains(got.FailedReason, "503") {
				t.Errorf("failing server: %s %q", got.Status, got.FailedReason)
			}
		})
	}
}
