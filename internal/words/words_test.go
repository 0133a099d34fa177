package words

import (
	"slices"
	"testing"
)

func TestQuery(t *testing.T) {
	for q, want := range map[string][]string{
		"The Parcels, of my café!":     {"parcels", "café"},
		"how much is a 2-person tent?": {"much", "2", "person", "tent"},
		"  !!! ":                       nil,
		"the and of":                   nil,
	} {
		if got := Query(q); !slices.Equal(got, want) {
			t.Errorf("Query(%q) = %q, want %q", q, got, want)
		}
	}
	if !Stop("the") || Stop("tent") {
		t.Error("Stop")
	}
	if !Filler("stuff") || !Filler("really") || Filler("tent") || Filler("the") {
		t.Error("Filler")
	}
}

func TestDistinct(t *testing.T) {
	if got := Distinct([]string{"a", "b", "a", "c", "b"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Distinct: %q", got)
	}
}
