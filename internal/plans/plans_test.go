package plans

import (
	"reflect"
	"testing"
)

func TestTable(t *testing.T) {
	if got := Names(); !reflect.DeepEqual(got, []string{"community", "team", "enterprise"}) {
		t.Fatalf("Names() = %v", got)
	}
	if _, ok := Get(Default); !ok {
		t.Fatalf("the default plan %q is not in the table", Default)
	}
	for _, c := range []struct {
		name       string
		want       string
		includesAI bool
	}{{"community", "community", false}, {"team", "team", true}, {"enterprise", "enterprise", true}, {"gold", Default, false}, {"", Default, false}} {
		if p := Of(c.name); p.Name != c.want || p.IncludesAI != c.includesAI {
			t.Errorf("Of(%q) = %+v, want %s (AI %v)", c.name, p, c.want, c.includesAI)
		}
	}
	if p := Of("enterprise"); p.MaxStorage != 1024<<30 || p.MaxFile != 10<<30 || p.MaxVector != 100<<30 {
		t.Errorf("enterprise limits %+v", p)
	}
}
