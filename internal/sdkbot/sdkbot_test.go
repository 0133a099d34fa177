package sdkbot

import (
	"strings"
	"testing"
	"time"
)

func TestIsNodeBundle(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{`var a=1;module.exports=hI(f9);`, true},                 // what bp build emits (minified)
		{"module.exports = { handler }\n", true},                 // hand-written CommonJS
		{"x();\nmodule.exports\t=\n{}", true},                    // spacing
		{`bot.on.message(async () => {})`, false},                // the embedded model
		{`const m = { module: 1 }; m.module.exports = 2`, false}, // a property named module
		{`if (module.exports == null) {}`, false},                // a comparison, not an assignment
		{"exports.default = { handler }", true},                  // CommonJS through exports
		{"exports.=1; x.exports.a = 1; myexports.a = 1", false},
		{strings.Repeat("var a = 1; // module.exports\n", 50000) + "module.exports = a", true}, // megabytes
	} {
		if got := IsNodeBundle(tc.code); got != tc.want {
			t.Errorf("IsNodeBundle(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestSign(t *testing.T) {
	at := time.Unix(1700000000, 0)
	a := Sign("secret", at, []byte(`{"event":{}}`))
	if a != Sign("secret", at, []byte(`{"event":{}}`)) {
		t.Fatal("Sign is not deterministic")
	}
	if a[:13] != "t=1700000000," {
		t.Fatalf("Sign = %q, want it to start with the time", a)
	}
	for _, other := range []string{Sign("other", at, []byte(`{"event":{}}`)), Sign("secret", at.Add(time.Second), []byte(`{"event":{}}`)), Sign("secret", at, []byte(`{"event":{"x":1}}`))} {
		if other == a {
			t.Fatalf("a different secret, time or body gave the same signature %q", a)
		}
	}
}
