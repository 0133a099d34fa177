package indexing

import (
	"context"
	"slices"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/rank"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/words"
)

// Query rewriting (--ai-search-rewrite): before a hybrid search, the model
// server turns the question into the words the documents would use ("my
// parcel never turned up" → lost, delivery, shipment…). Those words join
// the full-text ranking as terms of their own at rewriteWeight: a passage
// holding the question's own words still ranks first, one holding only
// the model's words is found at all. Each call is metered as AI Spend
// (purpose search_rewriting); when it cannot be made (no spend left, the
// model failing) the search runs on the question alone.

// PurposeSearchRewriting is the AI Spend purpose of a query rewriting call.
const PurposeSearchRewriting = "search_rewriting"

// rewriteWeight is the weight of a word the model added, the question's
// own words weighing 1.
const rewriteWeight = 0.6

// maxRewriteWords bounds the words taken from the model's answer.
const maxRewriteWords = 12

const rewriteSystem = `You turn a customer's question into search terms for a keyword search over a company's documents (policies, help articles, product pages).
Answer with at most 8 words or short phrases, one per line, in the wording such documents would use: the formal or usual terms for what the question describes, and their synonyms.
No numbering, no explanations.`

// rewrite asks the model for the search terms of q's question and returns
// the words of its answer that are not already the question's (ws).
func (s *Service) rewrite(ctx context.Context, q Query, ws []string) []string {
	if !s.cfg.RewriteQueries || s.cfg.Model == nil || q.Visibility.BotID == "" {
		return nil
	}
	workspaceID, err := s.store.GetBotWorkspace(ctx, q.Visibility.BotID)
	if err != nil {
		return nil
	}
	// The meter charges the bot's workspace; no file is being indexed.
	m := &meter{s: s, f: platform.File{WorkspaceID: workspaceID, BotID: q.Visibility.BotID}}
	answer, err := m.complete(ctx, PurposeSearchRewriting, ai.Request{ModelType: platform.ModelInexpensive,
		System: rewriteSystem, Prompt: q.Text, MaxTokens: 100})
	if err != nil {
		s.log.WarnContext(ctx, "search: the question was not rewritten", "bot", q.Visibility.BotID, "err", err)
		return nil
	}
	var out []string
	for _, w := range words.Distinct(words.Query(answer)) {
		if len(out) == maxRewriteWords {
			break
		}
		if !slices.Contains(ws, w) {
			out = append(out, w)
		}
	}
	return out
}

// rewriteTerms are the ranking's terms of the model's words.
func rewriteTerms(extra []string) []rank.Term {
	out := make([]rank.Term, len(extra))
	for i, w := range extra {
		out[i] = rank.Term{Word: w, Weight: rewriteWeight}
	}
	return out
}
