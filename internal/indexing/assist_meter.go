package indexing

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/platform"
)

// meter makes the model calls of one file's indexing.
type meter struct {
	s *Service
	f platform.File
}

// errNoModel is returned by a meter when no model server is configured.
var errNoModel = errors.New("no model server is configured")

// complete makes one metered call.
func (m *meter) complete(ctx context.Context, purpose string, r ai.Request) (string, error) {
	if m.s.cfg.Model == nil {
		return "", errNoModel
	}
	if err := m.s.spendLeft(ctx, m.f.WorkspaceID); err != nil {
		return "", err
	}
	start := time.Now()
	resp, err := m.s.cfg.Model.Complete(ctx, r)
	took := time.Since(start)
	if err != nil {
		// Recorded for the bot's analytics (llm errors); it costs nothing.
		u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: m.f.WorkspaceID, BotID: m.f.BotID, FileID: m.f.ID,
			Purpose: purpose, Latency: took, Failed: true, CreatedAt: m.s.clock.Now()}
		if rerr := m.s.store.RecordAIUsage(ctx, u); rerr != nil && ctx.Err() == nil {
			m.s.log.Warn("indexing: recording a failed model call", "file", m.f.ID, "err", rerr)
		}
		return "", failf("%s: %v", purposeName(purpose), err)
	}
	u := platform.AIUsage{ID: platform.NewID("aiu_"), WorkspaceID: m.f.WorkspaceID, BotID: m.f.BotID, FileID: m.f.ID,
		Purpose: purpose, Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		Cost: m.s.cfg.AI.Cost(resp.Model, resp.InputTokens, resp.OutputTokens), Latency: took, CreatedAt: m.s.clock.Now()}
	if err := m.s.store.RecordAIUsage(ctx, u); err != nil {
		// The call was made and answered: use its answer rather than
		// make it again; the spend goes unrecorded.
		m.s.log.Error("indexing: recording AI Spend", "file", m.f.ID, "purpose", purpose, "cost_nanodollars", u.Cost, "err", err)
	}
	return strings.TrimSpace(resp.Text), nil
}

func purposeName(p string) string {
	switch p {
	case PurposeAgentParsing:
		return "agent parsing"
	case PurposeSmartCleanup:
		return "smart cleanup"
	case PurposeSummarization:
		return "summarization"
	case PurposeTranscription:
		return "page transcription"
	case PurposePageIndexing:
		return "page indexing"
	case PurposeQuestionGeneration:
		return "question generation"
	}
	return p
}

// spendLeft returns a failure when the workspace's AI Spend this month has
// reached its spending limit.
func (s *Service) spendLeft(ctx context.Context, workspaceID string) error {
	w, err := s.store.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	return s.spendLeftOf(ctx, w)
}

// spendLeftOf is spendLeft for a workspace already read.
func (s *Service) spendLeftOf(ctx context.Context, w platform.Workspace) error {
	left, limit, err := aispend.SpendLeftOf(ctx, s.store, w, s.clock.Now())
	if err != nil {
		return err
	}
	if left == 0 {
		spent, _, err := aispend.Spent(ctx, s.store, w.ID, aispend.MonthOf(s.clock.Now()))
		if err != nil {
			return err
		}
		return failf("AI Spend limit reached: this workspace spent $%.2f this month and its monthly spending limit is $%.0f; raise spendingLimit or index again next month",
			aispend.Dollars(spent), aispend.Dollars(limit))
	}
	return nil
}
