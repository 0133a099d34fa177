package indexing

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQuestions(t *testing.T) {
	long := strings.Repeat("x", 250) + "?"
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"How do I cancel?\nCan I stop paying?", []string{"How do I cancel?", "Can I stop paying?"}},
		{"1. How do I cancel?\n\n2) Can I stop?\n- Is it free?\n* Why?", []string{"How do I cancel?", "Can I stop?", "Is it free?"}},
		{"30 days to return?", []string{"30 days to return?"}},
		{"  \n\n", nil},
		{long, []string{long[:200]}},
	} {
		if got := parseQuestions(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseQuestions(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
