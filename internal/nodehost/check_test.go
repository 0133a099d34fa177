package nodehost

import (
	"context"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	h, _ := newHost(t, Config{})
	// Minified bundles have long lines: the error keeps a window around the caret, or leaves the line out
	// when node has no caret for it (past column ~1000).
	long := func(n int) string { return "var a=0;" + strings.Repeat("a=a+1;", n) + "var b = foo bar;" }
	tests := []struct {
		name, code string
		want       []string // "" for no error
	}{
		{"good", toolbox, nil},
		{"handler at the top", `exports.handler = async () => ({})`, nil},
		{"syntax error", "var a = 1;\nvar b = foo bar;\n", []string{"failed to load", "index.js:2", "SyntaxError: Unexpected identifier 'bar'"}},
		{"long line", long(100), []string{"index.js:1", "a=a+1;var b = foo bar;…\n", "^", "SyntaxError"}},
		{"very long line", long(10000), []string{"index.js:1\nSyntaxError: Unexpected identifier 'bar'"}},
		{"throws", `throw new TypeError('bad config')`, []string{"TypeError: bad config", "index.js:1"}},
		{"no handler", `module.exports = { default: { handler: 'nope' } }`, []string{"exports no handler"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Check(context.Background(), tt.code)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error of %d bytes: keep it short", len(err.Error()))
			}
		})
	}
	if n := h.Running(""); n != 0 {
		t.Fatalf("Check left %d processes", n)
	}
}

func TestCheckDefinition(t *testing.T) {
	h, _ := newHost(t, Config{})
	code := `module.exports = { default: { handler: async () => ({}), props: { tables: {
  plain: { schema: { type: 'object', properties: { note: { type: 'string' } } }, factor: 2, junk: 'dropped' },
  converted: { schema: { toJSONSchema: () => ({ type: 'object', properties: { n: { type: 'number' } } }) } },
} } } }`
	def, err := h.Check(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(def.Tables["plain"]); got != `{"factor":2,"schema":{"type":"object","properties":{"note":{"type":"string"}}}}` {
		t.Errorf("plain = %s", got)
	}
	if got := string(def.Tables["converted"]); got != `{"schema":{"type":"object","properties":{"n":{"type":"number"}}}}` {
		t.Errorf("converted (a schema that converts itself, as @botpress/sdk's do) = %s", got)
	}
	if def, err := h.Check(context.Background(), toolbox); err != nil || len(def.Tables) != 0 {
		t.Fatalf("a bundle without tables: %v, %v", def, err)
	}
}
