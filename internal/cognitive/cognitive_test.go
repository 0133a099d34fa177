package cognitive

import (
	"slices"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/platform"
)

// The ids a bot asks for map to the operator's models; the first that maps
// wins, and a warning names those that did not.
func TestResolve(t *testing.T) {
	s := New(nil, platform.SystemClock{}, Config{AI: ai.Config{Models: map[string]string{ai.Inexpensive: "small", ai.Balanced: "mid", ai.Accurate: "big"}}})
	for _, tc := range []struct {
		ids      []string
		want     string
		warnings int
	}{
		{nil, "mid", 0},
		{[]string{"best"}, "big", 0},
		{[]string{"fast"}, "small", 0},
		{[]string{"auto"}, "mid", 0},
		{[]string{"big"}, "big", 0},
		{[]string{"ollama:small"}, "small", 0},
		{[]string{"openai:gpt-4o", "fast"}, "small", 1},
		{[]string{"openai:gpt-4o", "anthropic:claude"}, "mid", 1},
	} {
		got, warnings := s.resolve(tc.ids)
		if got != tc.want || len(warnings) != tc.warnings {
			t.Errorf("resolve(%q) = %s, %v; want %s with %d warnings", tc.ids, got, warnings, tc.want, tc.warnings)
		}
		for _, w := range warnings {
			if w.Type != "fallback_used" || !strings.Contains(w.Message, tc.ids[0]) {
				t.Errorf("resolve(%q): warning %+v", tc.ids, w)
			}
		}
	}
}

// The operator's model map comes first, then best, auto and fast; a
// mapped model is also reached by its own name; the models list names the
// map's ids as aliases.
func TestResolveWithTheModelMap(t *testing.T) {
	s := New(nil, platform.SystemClock{}, Config{AI: ai.Config{Models: map[string]string{ai.Inexpensive: "small", ai.Balanced: "mid", ai.Accurate: "big@gpu"},
		Aliases: map[string]string{"openai:gpt-4o": "big@gpu", "best": "mid", "cerebras:gpt-oss-120b": "oss@cpu"}}})
	for _, tc := range []struct {
		ids      []string
		want     string
		warnings int
	}{
		{[]string{"openai:gpt-4o"}, "big@gpu", 0},
		{[]string{"best"}, "mid", 0}, // the map before the types
		{[]string{"cerebras:gpt-oss-120b"}, "oss@cpu", 0},
		{[]string{"oss@cpu"}, "oss@cpu", 0},
		{[]string{"anthropic:claude", "openai:gpt-4o"}, "big@gpu", 1},
	} {
		got, warnings := s.resolve(tc.ids)
		if got != tc.want || len(warnings) != tc.warnings {
			t.Errorf("resolve(%q) = %s, %v; want %s with %d warnings", tc.ids, got, warnings, tc.want, tc.warnings)
		}
	}
	s.cfg.Model = &ai.OpenAI{}
	aliases := map[string][]string{}
	for _, m := range s.Models() {
		aliases[m.ID] = m.Aliases
	}
	if got := aliases["big@gpu"]; !slices.Equal(got, []string{"openai:gpt-4o"}) {
		t.Errorf("big@gpu's aliases: %v (models %v)", got, aliases)
	}
	if got := aliases["mid"]; !slices.Equal(got, []string{"auto", "best"}) {
		t.Errorf("mid's aliases: %v", got)
	}
	if got := aliases["oss@cpu"]; !slices.Equal(got, []string{"cerebras:gpt-oss-120b"}) {
		t.Errorf("oss@cpu's aliases: %v", got)
	}
}

func TestStopReason(t *testing.T) {
	for finish, want := range map[string]string{"stop": "stop", "": "stop", "length": "max_tokens", "tool_calls": "tool_calls",
		"function_call": "tool_calls", "content_filter": "content_filter", "eos": "other"} {
		if got := stopReason(finish); got != want {
			t.Errorf("stopReason(%q) = %s, want %s", finish, got, want)
		}
	}
}

// A long prompt or answer is cut at a rune boundary, and says so.
func TestCut(t *testing.T) {
	if got := cut("short", 10); got != "short" {
		t.Errorf("cut(short) = %q", got)
	}
	got := cut("ééé", 3) // 6 bytes; byte 3 is inside the second é
	if !strings.HasPrefix(got, "é…") || !strings.Contains(got, "(4 bytes more)") {
		t.Errorf("cut = %q", got)
	}
}
