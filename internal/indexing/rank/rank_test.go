package rank

import (
	"math"
	"strings"
	"testing"
)

func scoresOf(t *testing.T, terms []Term, st Stats, docs ...Doc) []float64 {
	t.Helper()
	s := Scores(terms, st, docs)
	if len(s) != len(docs) {
		t.Fatalf("%d scores for %d docs", len(s), len(docs))
	}
	return s
}

func TestScoresAreBM25(t *testing.T) {
	st := Stats{N: 1000, DF: map[string]int64{"refund": 10, "shipping": 500}}
	terms := []Term{{Word: "refund"}, {Word: "shipping"}}
	s := scoresOf(t, terms, st,
		Doc{Content: "Refunds take five days."},                                                      // 0: the rare word
		Doc{Content: "Shipping takes five days."},                                                    // 1: the common word
		Doc{Content: "A refund, and another refund, in five days."},                                  // 2: the rare word twice
		Doc{Content: "Nothing to see here at all."},                                                  // 3: none
		Doc{Content: "Five days.", Heading: []string{"Refunds"}},                                     // 4: in its heading only
		Doc{Content: "Refunds take five days, or six, or seven, and sometimes many more than that."}, // 5: longer
	)
	if s[3] != 0 {
		t.Errorf("a passage without the words scores %v", s[3])
	}
	if !(s[0] > s[1]) {
		t.Errorf("rare word %v, common word %v: the rarer must weigh more", s[0], s[1])
	}
	if !(s[2] > s[0]) {
		t.Errorf("twice %v, once %v", s[2], s[0])
	}
	if !(s[0] > s[5]) {
		t.Errorf("short %v, long %v: at equal counts the shorter passage ranks first", s[0], s[5])
	}
	if !(s[4] > 0 && s[4] < s[0]) {
		t.Errorf("heading only %v, content %v: a heading counts, at less than the content", s[4], s[0])
	}
	// The order of the docs changes nothing.
	docs := []Doc{{Content: "Shipping takes five days."}, {Content: "Refunds take five days."}}
	ab := Scores(terms, st, docs)
	ba := Scores(terms, st, []Doc{docs[1], docs[0]})
	if ab[0] != ba[1] || ab[1] != ba[0] {
		t.Errorf("scores depend on the order of the docs: %v, %v", ab, ba)
	}
}

func TestStandInsScoreTheBetterNotTheSum(t *testing.T) {
	st := Stats{N: 100, DF: map[string]int64{"parcel": 5, "package": 5}}
	terms := []Term{{Word: "parcel", Alts: []Alt{{Word: "package", Weight: 0.5}}}}
	s := scoresOf(t, terms, st,
		Doc{Content: "my parcel is late"},
		Doc{Content: "my package is late"},
		Doc{Content: "my parcel package late"},
		Doc{Content: "my Parcels are late"},
	)
	if math.Abs(s[1]-0.5*s[0]) > 1e-9 {
		t.Errorf("stand-in %v, word %v: want half", s[1], s[0])
	}
	if !(s[2] < s[0]+1e-9) {
		t.Errorf("word and stand-in %v, word alone %v: the better counts, not both", s[2], s[0])
	}
	if !(s[3] > 0) {
		t.Errorf("another form of the word (Parcels) scores %v", s[3])
	}
	// Without stand-ins, a passage holding only the related word is not found.
	if s := Scores([]Term{{Word: "parcel"}}, st, []Doc{{Content: "my package is late"}}); s[0] != 0 {
		t.Errorf("no stand-ins: %v", s[0])
	}
}

func TestWordsOfOtherScripts(t *testing.T) {
	st := Stats{N: 10, DF: map[string]int64{"café": 1}}
	s := Scores([]Term{{Word: "café"}}, st, []Doc{{Content: "Le CAFÉ est fermé."}, {Content: "cafe"}})
	if !(s[0] > 0) || s[1] != 0 {
		t.Errorf("café: %v", s)
	}
}

// TestQuestionsField: a word only in a passage's questions scores, below
// the same word in another passage's content.
func TestQuestionsField(t *testing.T) {
	docs := []Doc{
		{Content: "To end your membership, open the account settings.", Questions: []string{"How do I cancel my subscription?"}},
		{Content: "A subscription renews every year."},
		{Content: "Orders ship within two days."},
	}
	st := Stats{N: 3, DF: map[string]int64{"subscription": 2}}
	got := Scores([]Term{{Word: "subscription"}}, st, docs)
	if !(got[1] > got[0] && got[0] > 0 && got[2] == 0) {
		t.Errorf("scores %v: want content > questions > none", got)
	}
}

func TestExplainNamesTheWordsThatScored(t *testing.T) {
	st := Stats{N: 100, DF: map[string]int64{"parcel": 5, "package": 5, "late": 20}}
	terms := []Term{{Word: "parcel", Alts: []Alt{{Word: "package", Weight: 0.5}}}, {Word: "late"}}
	docs := []Doc{
		{Content: "my parcel is late"},
		{Content: "my packages are late"},
		{Content: "nothing here"},
		{Content: "a parcel, a package"},
	}
	scores, why := Explain(terms, st, docs)
	if want := Scores(terms, st, docs); len(scores) != len(want) {
		t.Fatalf("Explain gives %d scores, Scores %d", len(scores), len(want))
	} else {
		for i := range want {
			if scores[i] != want[i] {
				t.Errorf("doc %d: Explain scores %v, Scores %v", i, scores[i], want[i])
			}
		}
	}
	words := func(ms []Match) (out []string) {
		for _, m := range ms {
			out = append(out, m.Word)
		}
		return out
	}
	for i, want := range [][]string{{"parcel", "late"}, {"package", "late"}, nil, {"parcel"}} {
		if got := words(why[i]); len(got) != len(want) || (len(want) > 0 && strings.Join(got, " ") != strings.Join(want, " ")) {
			t.Errorf("doc %d: matched %v; want %v", i, got, want)
		}
		var sum float64
		for _, m := range why[i] {
			sum += m.Score
		}
		if math.Abs(sum-scores[i]) > 1e-12 {
			t.Errorf("doc %d: the matches add up to %v; its score is %v", i, sum, scores[i])
		}
	}
	if m := why[1][0]; m.Term != 0 || m.Weight != 0.5 {
		t.Errorf("the stand-in's match: %+v; want term 0 at weight 0.5", m)
	}
}
