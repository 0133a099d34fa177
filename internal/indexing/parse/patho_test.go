package parse

import (
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputs checks that inputs known to make parsers
// quadratic or deeply recursive parse in reasonable time.
func TestPathologicalInputs(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	tests := []struct {
		name, contentType, in string
	}{
		{"nested quotes", "text/markdown", strings.Repeat(">", n) + " deep"},
		{"many links", "text/markdown", strings.Repeat("See [the docs](https://example.com/a) and [more](b).\n\n", n)},
		{"nested lists", "text/markdown", func() string {
			var b strings.Builder
			for i := range 200 {
				b.WriteString(strings.Repeat("  ", i) + "- item\n")
			}
			return b.String()
		}()},
		{"brackets", "text/markdown", strings.Repeat("[", n) + "a" + strings.Repeat("]", n)},
		{"emphasis", "text/markdown", strings.Repeat("*a **a ", n)},
		{"backticks", "text/markdown", strings.Repeat("`a``", n)},
		{"links", "text/markdown", strings.Repeat("[a](", n)},
		{"links image", "text/markdown", strings.Repeat("![a](", 4*n)},
		{"nested list items on a line", "text/markdown", strings.Repeat("- ", 4*n) + "x"},
		{"nested numbers on a line", "text/markdown", strings.Repeat("1. ", 4*n) + "x"},
		{"quote lists on a line", "text/markdown", strings.Repeat("> - ", 4*n) + "x"},
		{"quotes on a line", "text/markdown", strings.Repeat(">", 4*n) + "x"},
		{"table columns", "text/markdown", "|" + strings.Repeat("a|", 2000) + "\n|" + strings.Repeat("-|", 2000) + "\n" + strings.Repeat("|"+strings.Repeat("b|", 2000)+"\n", 50)},
		{"nested divs", "text/html", strings.Repeat("<div>", n) + "deep" + strings.Repeat("</div>", n)},
		{"nested lists html", "text/html", strings.Repeat("<ul><li>", 5000) + "deep"},
		{"nested tables html", "text/html", strings.Repeat("<table><tr><td>", 2000) + "deep"},
		{"long line", "text/plain", strings.Repeat("word ", 400000)},
		{"many blank lines", "text/plain", strings.Repeat("a\n\n", 200000)},
		{"json nesting", "application/json", strings.Repeat(`{"a":`, 900) + "1" + strings.Repeat("}", 900)},
		{"csv wide", "text/csv", strings.Repeat("h,", 10000) + "\n" + strings.Repeat("v,", 10000)},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Parse(tt.contentType, "", []byte(tt.in))
		// A generous bound (the race detector and a busy CI machine slow
		// linear work several times): what it catches is the quadratic
		// blow-up, which took over a minute on inputs of this size.
		if d := time.Since(start); d > 45*time.Second {
			t.Errorf("%s: took %v (%v)", tt.name, d, err)
		}
	}
}
