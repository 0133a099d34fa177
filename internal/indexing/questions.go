package indexing

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/platform"
)

// Generated questions (--ai-index-questions): as a file is indexed, the
// model writes for each of its text passages the questions a customer
// could ask that the passage answers ("How do I cancel my membership?" for
// the steps to end one). They are stored with the passage as a full-text
// field of their own, weighed below the content and the heading path
// (rank.QuestionWeight), and never returned by the API: they let a search
// in other words than the document's find the passage, without lifting it
// above one that holds the words itself. Each call is metered as AI Spend
// (purpose question_generation). A failing model, or a workspace out of
// AI Spend, never fails the indexing: the passages left are indexed
// without questions, and the server logs a warning.

// PurposeQuestionGeneration is the AI Spend purpose of a call writing a
// passage's questions.
const PurposeQuestionGeneration = "question_generation"

const (
	// maxQuestions bounds the questions kept for one passage, and
	// maxQuestionChars each question's length.
	maxQuestions     = 3
	maxQuestionChars = 200
	// minQuestionInput is the shortest passage (in characters) worth a
	// call: a line of a list or a caption says too little.
	minQuestionInput = 40
	// questionCalls is how many of a file's calls run at once.
	questionCalls = 4
)

const questionSystem = `You read one passage of a company's document (a policy, a help article, a product page) and write the questions a customer could ask that this passage answers.
Write them as customers type them, in everyday words rather than the passage's own terms.
Answer with at most 3 questions, one per line. No numbering, no answers, no explanations.`

// questions returns, for each passage of ps, the questions the model wrote
// for it (nil for passages without text, titles, and when the option is
// off).
func (s *Service) questions(ctx context.Context, m *meter, ps []chunk.Passage) [][]string {
	out := make([][]string, len(ps))
	if !s.cfg.IndexQuestions || s.cfg.Model == nil {
		return out
	}
	var (
		mu      sync.Mutex
		stopped bool // the model failed or the spend ran out: no more calls
		wg      sync.WaitGroup
		slots   = make(chan struct{}, questionCalls)
	)
	for i, p := range ps {
		if p.Image != nil || p.Subtype == chunk.Title || p.Subtype == chunk.Subtitle || utf8.RuneCountInString(p.Content) < minQuestionInput {
			continue
		}
		slots <- struct{}{}
		mu.Lock()
		stop := stopped
		mu.Unlock()
		if stop || ctx.Err() != nil {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			prompt := p.Content
			if len(p.Breadcrumb) > 0 {
				prompt = strings.Join(p.Breadcrumb, " > ") + "\n\n" + prompt
			}
			answer, err := m.complete(ctx, PurposeQuestionGeneration, ai.Request{ModelType: platform.ModelInexpensive,
				System: questionSystem, Prompt: prompt, MaxTokens: 120})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if !stopped && ctx.Err() == nil {
					s.log.WarnContext(ctx, "indexing: passages left without generated questions", "file", m.f.ID, "err", err)
				}
				stopped = true
				return
			}
			out[i] = parseQuestions(answer)
		})
	}
	wg.Wait()
	return out
}

// listMarker is a list item's marker at the start of a line ("- ", "2. ").
var listMarker = regexp.MustCompile(`^\s*(?:[-*•]|\d{1,2}[.)])\s+`)

// parseQuestions takes the questions of a model's answer: its non-empty
// lines, list markers trimmed, at most maxQuestions of maxQuestionChars.
func parseQuestions(answer string) []string {
	var out []string
	for line := range strings.SplitSeq(answer, "\n") {
		line = strings.TrimSpace(listMarker.ReplaceAllString(line, ""))
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxQuestionChars {
			line = string([]rune(line)[:maxQuestionChars])
		}
		out = append(out, line)
		if len(out) == maxQuestions {
			break
		}
	}
	return out
}
