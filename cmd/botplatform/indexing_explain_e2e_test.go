package main

// searchFiles' explain=true (this server's extension, docs/indexing.md): the
// parts of each passage's fused score, the ranks and scores the search
// ranked by, and the words that scored it.

import (
	"math"
	"strings"
	"testing"
)

// explainHit is a passage of searchFiles with explain=true.
type explainHit struct {
	Content string  `json:"content"`
	Score   float64 `json:"score"`
	Explain *struct {
		Score    float64 `json:"score"`
		FullText *struct {
			Rank        int     `json:"rank"`
			Score       float64 `json:"score"`
			AnswerBoost bool    `json:"answerBoost"`
			Fused       float64 `json:"fused"`
		} `json:"fullText"`
		Vector *struct {
			Rank       int     `json:"rank"`
			Similarity float64 `json:"similarity"`
			Fused      float64 `json:"fused"`
		} `json:"vector"`
		VectorWeight float64       `json:"vectorWeight"`
		Words        []explainWord `json:"words"`
		RelatedWords []explainWord `json:"relatedWords"`
		MissingWords []string      `json:"missingWords"`
	} `json:"explain"`
}

type explainWord struct {
	Word   string  `json:"word"`
	For    string  `json:"for"`
	Source string  `json:"source"`
	Weight float64 `json:"weight"`
	Score  float64 `json:"score"`
}

func testSearchExplain(t *testing.T, s *testServer) {
	e := newFilesEnv(t, s, "explain")
	f := e.f
	f.index(s, "handbook.md", handbookMarkdown(), indexConf(map[string]any{"stack": "legacy"}))
	f.index(s, "travel.md", []byte("# Travel Policy\n\nTravel expense claims need receipts.\n\nHotel expense limits depend on the city.\n\n"+
		"Meals are an expense the company covers on trips.\n"), indexConf(map[string]any{"stack": "legacy"}))

	for _, q := range []string{"expense reports reimbursed", "when are salaries paid", "how is overtime compensated"} {
		plain := f.search(q, "limit", "20") // checkHit: no explain without the flag
		var out struct {
			Passages []explainHit `json:"passages"`
		}
		r := f.searchRaw("query", q, "limit", "20", "explain", "true")
		r.decode(&out)
		hits := out.Passages
		if len(hits) != len(plain) {
			t.Fatalf("%q: %d passages with explain, %d without", q, len(hits), len(plain))
		}
		for i, h := range hits {
			x := h.Explain
			if h.Content != plain[i].Content || h.Score != plain[i].Score {
				t.Errorf("%q #%d: with explain %q (%v), without %q (%v): the flag changed the ranking", q, i, h.Content, h.Score, plain[i].Content, plain[i].Score)
			}
			if x == nil {
				t.Fatalf("%q #%d: no explain", q, i)
			}
			var fused float64
			if x.FullText != nil {
				fused += x.FullText.Fused
				if want := 1 / float64(60+x.FullText.Rank); x.FullText.Rank < 1 || math.Abs(x.FullText.Fused-want) > 1e-12 {
					t.Errorf("%q #%d: full-text rank %d fused %v; want 1/(60+rank) = %v", q, i, x.FullText.Rank, x.FullText.Fused, want)
				}
				var sum float64
				for _, w := range append(append([]explainWord{}, x.Words...), x.RelatedWords...) {
					sum += w.Score
				}
				if x.FullText.AnswerBoost {
					sum *= 1.5
				}
				if math.Abs(sum-x.FullText.Score) > 1e-9 {
					t.Errorf("%q #%d: the words add up to %v; the full-text score is %v", q, i, sum, x.FullText.Score)
				}
			}
			if x.Vector != nil {
				fused += x.Vector.Fused
				if want := x.VectorWeight / float64(60+x.Vector.Rank); x.Vector.Rank < 1 || math.Abs(x.Vector.Fused-want) > 1e-12 {
					t.Errorf("%q #%d: vector rank %d fused %v; want weight/(60+rank) = %v", q, i, x.Vector.Rank, x.Vector.Fused, want)
				}
			}
			if x.Score != h.Score || math.Abs(fused-h.Score) > 1e-12 {
				t.Errorf("%q #%d: score %v, explain.score %v, parts add up to %v", q, i, h.Score, x.Score, fused)
			}
			for _, w := range x.Words {
				if w.Source != "query" || w.Weight != 1 || w.Score <= 0 || w.For != "" {
					t.Errorf("%q #%d: a query word %+v", q, i, w)
				}
			}
			for _, w := range x.RelatedWords {
				if (w.Source != "lexicon" && w.Source != "rewrite") || w.Weight <= 0 || w.Weight > 1 || w.Score <= 0 {
					t.Errorf("%q #%d: a related word %+v", q, i, w)
				}
			}
			// Each ranking's order is that of its own scores.
			for _, o := range hits[:i] {
				y := o.Explain
				if x.FullText != nil && y.FullText != nil && (y.FullText.Rank < x.FullText.Rank) != (y.FullText.Score >= x.FullText.Score) {
					t.Errorf("%q: full-text rank %d (score %v) and rank %d (score %v) disagree", q, y.FullText.Rank, y.FullText.Score, x.FullText.Rank, x.FullText.Score)
				}
				if x.Vector != nil && y.Vector != nil && (y.Vector.Rank < x.Vector.Rank) != (y.Vector.Similarity >= x.Vector.Similarity) {
					t.Errorf("%q: vector rank %d (similarity %v) and rank %d (similarity %v) disagree", q, y.Vector.Rank, y.Vector.Similarity, x.Vector.Rank, x.Vector.Similarity)
				}
			}
		}
	}
	// The words: all three in the passage that answers; one in another,
	// the two missing named; a word found by a stand-in names the word it
	// stood for.
	explained := func(q string) []explainHit {
		var out struct {
			Passages []explainHit `json:"passages"`
		}
		f.searchRaw("query", q, "explain", "true").decode(&out)
		return out.Passages
	}
	words := func(ws []explainWord) (out []string) {
		for _, w := range ws {
			out = append(out, w.Word+"/"+w.For)
		}
		return out
	}
	hits := explained("expense reports reimbursed")
	if got := words(hits[0].Explain.Words); strings.Join(got, " ") != "expense/ reports/ reimbursed/" || len(hits[0].Explain.MissingWords) != 0 {
		t.Errorf("the answer's words %v, missing %v; want all three and none missing", got, hits[0].Explain.MissingWords)
	}
	if x := hits[1].Explain; hits[1].Content != "Travel expense claims need receipts." || strings.Join(words(x.Words), " ") != "expense/" ||
		strings.Join(x.MissingWords, " ") != "reports reimbursed" {
		t.Errorf("second %q: words %v, missing %v; want expense, and reports and reimbursed missing", hits[1].Content, words(x.Words), x.MissingWords)
	}
	related := false
	for _, h := range explained("how is overtime compensated") {
		for _, w := range h.Explain.RelatedWords {
			related = related || (w.Source == "lexicon" && w.For == "compensated")
		}
	}
	if !related {
		t.Errorf("no passage of %q was found by a word standing in for compensated", "how is overtime compensated")
	}
	for _, bad := range []string{"yes", "1", "TRUE"} {
		f.searchRaw("query", "expense", "explain", bad).fail(400, "InvalidQuery", "explain")
	}
}
