package parse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/indexing/doc"
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

// TestMarkdownDeepList: a list nested thousands deep by indentation (each
// item two columns right of the one above) is flattened past
// maxMarkdownIndent columns, so that parsing it allocates in proportion to
// its size (goldmark's cost grows with the cube of the nesting: 1.3 GB
// for 9 MB nested 3,000 deep); its items all come out, in order, and the
// plain-text reading of the same list shows a capped indentation too.
func TestMarkdownDeepList(t *testing.T) {
	const depth = 2000 // 4 MB
	in := deepList(depth)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Parse("text/markdown", "", in)
	runtime.ReadMemStats(&after)
	if err != nil || len(d.Blocks) != 1 || d.Blocks[0].Kind != doc.List {
		t.Fatalf("%v, %d blocks", err, len(d.Blocks))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("parsing %d bytes allocated %d MB", len(in), alloc>>20)
	if alloc > 24*uint64(len(in)) {
		t.Errorf("parsing %d bytes allocated %d MB", len(in), alloc>>20)
	}
	lines := strings.Split(d.Blocks[0].Text, "\n")
	if len(lines) != depth || lines[depth-1] != doc.ListIndent(doc.MaxListIndent)+fmt.Sprintf("- item %d", depth-1) {
		t.Errorf("%d lines, the last %q", len(lines), lines[len(lines)-1])
	}

	d, err = Parse("text/plain", "", in)
	if err != nil || len(d.Blocks) != 1 {
		t.Fatalf("text: %v, %d blocks", err, len(d.Blocks))
	}
	lines = strings.Split(d.Blocks[0].Text, "\n")
	if len(lines) != depth || lines[depth-1] != doc.ListIndent(doc.MaxListIndent)+fmt.Sprintf("- item %d", depth-1) {
		t.Errorf("text: %d lines, the last %q", len(lines), lines[len(lines)-1][:min(100, len(lines[len(lines)-1]))])
	}
}

// TestFlattenIndent: the white space of a line's container prefix (quote
// and list markers aside) is cut to maxMarkdownIndent columns in all; a
// list marker keeps a space after it; lines within the bound, and the
// text after the prefix, are left as they are.
func TestFlattenIndent(t *testing.T) {
	wide := strings.Repeat(" ", 300)
	cut := strings.Repeat(" ", maxMarkdownIndent)
	tests := []struct{ in, want string }{
		{"- a\n  - b\n", "- a\n  - b\n"},
		{wide + "- deep  text  " + wide + "x\n", cut + "- deep  text  " + wide + "x\n"},
		{"> " + wide + "- in a quote", ">" + cut + "- in a quote"},
		{"1." + wide + "2)" + wide + "- x", "1." + cut + "2) - x"},
		{"\t\t" + wide + "code\nnext", strings.Repeat(" ", maxMarkdownIndent) + "code\nnext"},
		{wide, cut},
	}
	for _, tt := range tests {
		if got := string(flattenIndent([]byte(tt.in))); got != tt.want {
			t.Errorf("flattenIndent(%.40q…) = %.200q, want %.200q", tt.in, got, tt.want)
		}
	}
}
