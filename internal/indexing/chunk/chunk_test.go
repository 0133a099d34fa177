package chunk

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

func h(level int, text string) doc.Block {
	return doc.Block{Kind: doc.Heading, Level: level, Text: text}
}
func p(text string) doc.Block         { return doc.Block{Kind: doc.Paragraph, Text: text} }
func blk(kind, text string) doc.Block { return doc.Block{Kind: kind, Text: text} }

func contents(ps []Passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Content
	}
	return out
}

func subtypes(ps []Passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Subtype
	}
	return out
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// sentence returns a sentence of about n characters ending with a period.
func sentence(r *rand.Rand, n int) string {
	words := []string{"alpha", "beta", "gamma", "delta", "payment", "invoice", "customer", "server", "index", "search", "ranking", "document", "é", "naïve", "日本語"}
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	b.WriteByte('.')
	return b.String()
}

func nonSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestLimitAndNoLoss: on random documents, for both stacks and several
// limits, no content exceeds the limit and no non-space character is lost,
// duplicated or reordered.
func TestLimitAndNoLoss(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{doc.Paragraph, doc.Paragraph, doc.Paragraph, doc.List, doc.Table, doc.Code, doc.Blockquote, doc.Heading}
	for iter := range 200 {
		var d doc.Document
		var all strings.Builder
		for range 1 + r.IntN(30) {
			k := kinds[r.IntN(len(kinds))]
			var text string
			switch k {
			case doc.Heading:
				text = sentence(r, 5+r.IntN(60))
			case doc.List, doc.Table, doc.Code:
				var lines []string
				for range 1 + r.IntN(20) {
					lines = append(lines, "- "+sentence(r, r.IntN(300)))
				}
				text = strings.Join(lines, "\n")
			default:
				var ss []string
				for range 1 + r.IntN(10) {
					ss = append(ss, sentence(r, r.IntN(400)))
				}
				text = strings.Join(ss, " ")
				if r.IntN(5) == 0 {
					text = strings.Repeat("x", r.IntN(3000)) // one long word
				}
			}
			all.WriteString(text)
			d.Blocks = append(d.Blocks, doc.Block{Kind: k, Level: 1 + r.IntN(3), Text: text, Page: r.IntN(4)})
		}
		for _, o := range []Options{
			{MaxChunk: 100 + r.IntN(400), Stack: StackRealtime, MinParagraph: r.IntN(300), ContextLevels: r.IntN(4), Breadcrumb: r.IntN(2) == 0},
			{MaxChunk: 100 + r.IntN(400), Stack: StackLegacy, MinParagraph: r.IntN(300)},
			{},
		} {
			ps := Chunk(d, o)
			limit := o.MaxChunk
			if limit == 0 {
				limit = DefaultMaxChunk
			}
			var got strings.Builder
			for i, p := range ps {
				if n := runes(p.Content); n > limit || n == 0 {
					t.Fatalf("iter %d %+v: passage %d has %d characters (limit %d)", iter, o, i, n, limit)
				}
				if p.Position != i {
					t.Fatalf("position %d at index %d", p.Position, i)
				}
				if strings.TrimSpace(p.Content) != p.Content {
					t.Fatalf("untrimmed content %q", p.Content)
				}
				if !strings.HasSuffix(p.Embed, p.Content) {
					t.Fatalf("embed %q does not end with content %q", p.Embed, p.Content)
				}
				got.WriteString(p.Content)
			}
			if nonSpace(got.String()) != nonSpace(all.String()) {
				t.Fatalf("iter %d %+v: text lost or reordered", iter, o)
			}
		}
	}
}

func TestSentenceBoundaries(t *testing.T) {
	text := "The first sentence is here. Does the second one ask something? Yes! " +
		"A quote ends this one.\" Then an ellipsis follows… And (a bracket ends it.) " +
		"Version 1.2 is not a sentence end. The last sentence has no end"
	for _, stack := range []string{StackRealtime, StackLegacy} {
		ps := Chunk(doc.Document{Blocks: []doc.Block{p(text)}}, Options{MaxChunk: 60, Stack: stack})
		want := []string{
			"The first sentence is here.",
			"Does the second one ask something? Yes!",
			"A quote ends this one.\" Then an ellipsis follows…",
			"And (a bracket ends it.) Version 1.2 is not a sentence end.",
			"The last sentence has no end",
		}
		if got := contents(ps); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %q", stack, got)
		}
	}
}

func TestClosersKeepSentenceEnd(t *testing.T) {
	for _, text := range []string{
		`He said "stop now." Then more words follow here.`,
		`He said (stop now!) Then more words follow here.`,
		`He said ’stop now?’ Then more words follow here.`,
	} {
		got := contents(Chunk(doc.Document{Blocks: []doc.Block{p(text)}}, Options{MaxChunk: 25}))
		if want := []string{text[:strings.Index(text, " Then")], "Then more words follow", "here."}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q", got)
		}
	}
}

func TestBlankLineIsSentenceEnd(t *testing.T) {
	text := "a short intro line\n\nwords and words and words and more words and words"
	ps := Chunk(doc.Document{Blocks: []doc.Block{p(text)}}, Options{MaxChunk: 40})
	want := []string{"a short intro line", "words and words and words and more words", "and words"}
	if got := contents(ps); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestWordBoundaries(t *testing.T) {
	var words []string
	for i := range 100 {
		words = append(words, fmt.Sprintf("word%d", i))
	}
	text := strings.Join(words, " ")
	ps := Chunk(doc.Document{Blocks: []doc.Block{p(text)}}, Options{MaxChunk: 100})
	if len(ps) < 7 {
		t.Fatalf("%d passages", len(ps))
	}
	var back []string
	for _, p := range ps {
		if runes(p.Content) > 100 {
			t.Fatalf("too long: %q", p.Content)
		}
		// Greedy: the next word would not have fitted.
		back = append(back, strings.Fields(p.Content)...)
	}
	if !reflect.DeepEqual(back, words) {
		t.Fatalf("words were cut: %q", contents(ps))
	}
	for i := 0; i+1 < len(ps); i++ {
		next := strings.Fields(ps[i+1].Content)[0]
		if runes(ps[i].Content)+1+runes(next) <= 100 {
			t.Fatalf("passage %d could have held %q", i, next)
		}
	}
}

func TestHardCutOnlyForLongWord(t *testing.T) {
	long := strings.Repeat("é", 250) // 500 bytes: the limit counts characters
	ps := Chunk(doc.Document{Blocks: []doc.Block{p("before " + long + " after")}}, Options{MaxChunk: 100})
	want := []string{"before", strings.Repeat("é", 100), strings.Repeat("é", 100), strings.Repeat("é", 50) + " after"}
	if got := contents(ps); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestListsAndTablesCutBetweenLines(t *testing.T) {
	lines := []string{
		"- one. Two sentences here.",
		"- three. Four and five.",
		"- six. Seven sentences here.",
		"- eight. Nine and ten are here too.",
	}
	text := strings.Join(lines, "\n")
	for _, kind := range []string{doc.List, doc.Table, doc.Code} {
		ps := Chunk(doc.Document{Blocks: []doc.Block{blk(kind, text)}}, Options{MaxChunk: 60})
		want := []string{lines[0] + "\n" + lines[1], lines[2], lines[3]}
		if got := contents(ps); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %q", kind, got)
		}
		for _, p := range ps {
			if p.Subtype != kind {
				t.Fatalf("subtype %q", p.Subtype)
			}
		}
	}
	// The same text as a paragraph is cut at the last sentence end instead.
	ps := Chunk(doc.Document{Blocks: []doc.Block{p(text)}}, Options{MaxChunk: 60})
	if got := ps[0].Content; got != lines[0]+"\n"+lines[1]+"\n- six." {
		t.Fatalf("paragraph: got %q", got)
	}
	// A single line longer than the limit falls back to sentences.
	long := "| " + strings.Repeat("cell text. ", 12) + "|"
	ps = Chunk(doc.Document{Blocks: []doc.Block{blk(doc.Table, "| a | b |\n"+long)}}, Options{MaxChunk: 100})
	if ps[0].Content != "| a | b |" || !strings.HasSuffix(ps[1].Content, "cell text.") {
		t.Fatalf("got %q", contents(ps))
	}
}

func sampleDoc() doc.Document {
	return doc.Document{Blocks: []doc.Block{
		h(1, "Guide"),
		p("Intro paragraph one."),
		p("Intro paragraph two."),
		h(2, "Setup"),
		{Kind: doc.List, Text: "- install\n- run", Page: 2},
		{Kind: doc.Paragraph, Text: "After the list.", Page: 3},
		h(3, "Linux"),
		p("Use the package."),
		h(2, "Usage"),
		p("Call it."),
	}}
}

func TestPackingAndHeadings(t *testing.T) {
	ps := Chunk(sampleDoc(), Options{MaxChunk: 200})
	want := []Passage{
		{Content: "Guide", Subtype: Title, Breadcrumb: []string{}},
		{Content: "Intro paragraph one.\n\nIntro paragraph two.", Subtype: doc.Paragraph, Breadcrumb: []string{"Guide"}},
		{Content: "Setup", Subtype: Subtitle, Breadcrumb: []string{"Guide"}},
		{Content: "- install\n- run\n\nAfter the list.", Subtype: doc.List, Page: 2, Breadcrumb: []string{"Guide", "Setup"}},
		{Content: "Linux", Subtype: Subtitle, Breadcrumb: []string{"Guide", "Setup"}},
		{Content: "Use the package.", Subtype: doc.Paragraph, Breadcrumb: []string{"Guide", "Setup", "Linux"}},
		{Content: "Usage", Subtype: Subtitle, Breadcrumb: []string{"Guide"}},
		{Content: "Call it.", Subtype: doc.Paragraph, Breadcrumb: []string{"Guide", "Usage"}},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %q", contents(ps))
	}
	for i := range want {
		want[i].Position = i
		want[i].Embed = want[i].Content // no context options
		if !reflect.DeepEqual(ps[i], want[i]) {
			t.Errorf("passage %d:\n got %#v\nwant %#v", i, ps[i], want[i])
		}
	}
}

func TestPackingRespectsLimit(t *testing.T) {
	a, b, c := strings.Repeat("a", 40)+".", strings.Repeat("b", 40)+".", strings.Repeat("c", 40)+"."
	d := doc.Document{Blocks: []doc.Block{p(a), p(b), p(c)}}
	// 41+2+41 = 84 fits in 85 but 84+2+41 does not.
	if got := contents(Chunk(d, Options{MaxChunk: 85})); !reflect.DeepEqual(got, []string{a + "\n\n" + b, c}) {
		t.Fatalf("got %q", got)
	}
	if got := contents(Chunk(d, Options{MaxChunk: 127})); !reflect.DeepEqual(got, []string{a + "\n\n" + b + "\n\n" + c}) {
		t.Fatalf("got %q", got)
	}
	// A block that does not fit is not cut to fill the open passage; the
	// pieces of a long block are followed by packing.
	long := strings.Repeat("word ", 30) // 149 characters trimmed
	d = doc.Document{Blocks: []doc.Block{p(a), p(long), p("tail.")}}
	got := contents(Chunk(d, Options{MaxChunk: 100}))
	if len(got) != 3 || got[0] != a || runes(got[1]) > 100 || !strings.HasSuffix(got[2], "word\n\ntail.") {
		t.Fatalf("got %q", got)
	}
}

func TestHeadingStartsNewChunk(t *testing.T) {
	d := doc.Document{Blocks: []doc.Block{p("one."), h(2, "Two"), p("three.")}}
	got := contents(Chunk(d, Options{MaxChunk: 1000}))
	if !reflect.DeepEqual(got, []string{"one.", "Two", "three."}) {
		t.Fatalf("got %q", got)
	}
}

func TestSubtypeOfPackedChunkIsFirstBlock(t *testing.T) {
	d := doc.Document{Blocks: []doc.Block{blk(doc.Table, "a | b"), p("text"), blk(doc.Code, "x := 1")}}
	ps := Chunk(d, Options{})
	if len(ps) != 1 || ps[0].Subtype != doc.Table {
		t.Fatalf("got %q %q", contents(ps), subtypes(ps))
	}
	d.Blocks[0], d.Blocks[1] = d.Blocks[1], d.Blocks[0]
	if ps := Chunk(d, Options{}); ps[0].Subtype != doc.Paragraph {
		t.Fatalf("got %q", subtypes(ps))
	}
	d = doc.Document{Blocks: []doc.Block{blk(doc.Blockquote, "said"), blk("unknown-kind", "x"), h(1, "T"), h(4, "S")}}
	if got := subtypes(Chunk(d, Options{Stack: StackLegacy})); !reflect.DeepEqual(got, []string{doc.Blockquote, doc.Paragraph, Title, Subtitle}) {
		t.Fatalf("got %q", got)
	}
}

func TestLegacy(t *testing.T) {
	o := Options{MaxChunk: 200, Stack: StackLegacy, ContextLevels: 3, Breadcrumb: true}
	ps := Chunk(sampleDoc(), o)
	want := []string{"Guide", "Intro paragraph one.", "Intro paragraph two.", "Setup", "- install\n- run", "After the list.", "Linux", "Use the package.", "Usage", "Call it."}
	if got := contents(ps); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	for _, p := range ps {
		if p.Embed != p.Content {
			t.Fatalf("legacy embeds context: %q", p.Embed)
		}
	}
	if !reflect.DeepEqual(ps[7].Breadcrumb, []string{"Guide", "Setup", "Linux"}) || ps[5].Page != 3 {
		t.Fatalf("got %#v", ps[7])
	}
	// Long blocks are still cut.
	ps = Chunk(doc.Document{Blocks: []doc.Block{p(strings.Repeat("Sentence here. ", 20))}}, Options{MaxChunk: 100, Stack: StackLegacy})
	if len(ps) != 4 || ps[0].Content != strings.TrimSpace(strings.Repeat("Sentence here. ", 6)) {
		t.Fatalf("got %q", contents(ps))
	}
}

func TestMinParagraph(t *testing.T) {
	long := strings.Repeat("Long text. ", 8) // 87 characters trimmed
	d := doc.Document{Blocks: []doc.Block{p("First paragraph is long enough."), p("Short."), p(long), p("Tiny."), h(2, "H"), p("Last short.")}}
	// legacy: the short paragraph joins the next one; one before a heading
	// stays alone.
	off := contents(Chunk(d, Options{MaxChunk: 1000, Stack: StackLegacy}))
	on := contents(Chunk(d, Options{MaxChunk: 1000, Stack: StackLegacy, MinParagraph: 10}))
	if len(off) != 6 {
		t.Fatalf("off: %q", off)
	}
	if want := []string{"First paragraph is long enough.", "Short.\n\n" + strings.TrimSpace(long), "Tiny.", "H", "Last short."}; !reflect.DeepEqual(on, want) {
		t.Fatalf("on: %q", on)
	}
	// Chained: still short after one merge.
	d2 := doc.Document{Blocks: []doc.Block{p("a"), p("b"), p("c"), blk(doc.List, "- d")}}
	if got := contents(Chunk(d2, Options{Stack: StackLegacy, MinParagraph: 5})); !reflect.DeepEqual(got, []string{"a\n\nb\n\nc", "- d"}) {
		t.Fatalf("chained: %q", got)
	}
	// realtime-v1: the short paragraph goes with the next paragraph rather
	// than being packed after the previous one.
	off = contents(Chunk(d, Options{MaxChunk: 100}))
	on = contents(Chunk(d, Options{MaxChunk: 100, MinParagraph: 10}))
	if off[0] != "First paragraph is long enough.\n\nShort." {
		t.Fatalf("off: %q", off)
	}
	if on[0] != "First paragraph is long enough." || !strings.HasPrefix(on[1], "Short.\n\nLong text.") {
		t.Fatalf("on: %q", on)
	}
}

func TestContextOptions(t *testing.T) {
	d := sampleDoc()
	base := Chunk(d, Options{})
	byOpt := map[string][]Passage{
		"levels1":    Chunk(d, Options{ContextLevels: 1}),
		"levels2":    Chunk(d, Options{ContextLevels: 2}),
		"levels3":    Chunk(d, Options{ContextLevels: 3}),
		"breadcrumb": Chunk(d, Options{Breadcrumb: true}),
		"both":       Chunk(d, Options{Breadcrumb: true, ContextLevels: 1}),
	}
	const linux = 5 // "Use the package." under Guide > Setup > Linux
	want := map[string]string{
		"levels1":    "Linux\nUse the package.",
		"levels2":    "Setup\nLinux\nUse the package.",
		"levels3":    "Guide\nSetup\nLinux\nUse the package.",
		"breadcrumb": "Guide > Setup > Linux\nUse the package.",
		"both":       "Guide > Setup > Linux\nLinux\nUse the package.",
	}
	if base[linux].Embed != "Use the package." {
		t.Fatalf("base embed %q", base[linux].Embed)
	}
	seen := map[string]bool{}
	for name, ps := range byOpt {
		if !reflect.DeepEqual(contents(ps), contents(base)) {
			t.Fatalf("%s changed content", name)
		}
		if ps[linux].Embed != want[name] {
			t.Errorf("%s: embed %q, want %q", name, ps[linux].Embed, want[name])
		}
		seen[ps[linux].Embed] = true
	}
	if len(seen) != len(byOpt) {
		t.Fatal("options give the same embedded text")
	}
	// Fewer headings than levels; a heading's context excludes itself;
	// nothing is added without headings.
	ps := byOpt["levels3"]
	if ps[1].Embed != "Guide\nIntro paragraph one.\n\nIntro paragraph two." || ps[2].Embed != "Guide\nSetup" || ps[0].Embed != "Guide" {
		t.Fatalf("got %q %q %q", ps[0].Embed, ps[1].Embed, ps[2].Embed)
	}
	ps = Chunk(doc.Document{Blocks: []doc.Block{p("no heading")}}, Options{Breadcrumb: true, ContextLevels: 3})
	if ps[0].Embed != "no heading" {
		t.Fatalf("got %q", ps[0].Embed)
	}
}

func TestHeadingLevels(t *testing.T) {
	d := doc.Document{Blocks: []doc.Block{
		h(1, "A"), h(3, "C"), p("x"), h(2, "  B\n  two "), p("y"), h(1, "D"), p("z"), h(0, "level 0 is 1"), p("w"),
	}}
	ps := Chunk(d, Options{})
	crumbs := map[string][]string{}
	for _, p := range ps {
		crumbs[p.Content] = p.Breadcrumb
	}
	want := map[string][]string{
		"A": {}, "C": {"A"}, "x": {"A", "C"}, "B two": {"A"}, "y": {"A", "B two"},
		"D": {}, "z": {"D"}, "level 0 is 1": {}, "w": {"level 0 is 1"},
	}
	if !reflect.DeepEqual(crumbs, want) {
		t.Fatalf("got %q", crumbs)
	}
	if ps[7].Subtype != Title {
		t.Fatalf("level 0 heading: %q", ps[7].Subtype)
	}
}

func TestEmptyBlocksDropped(t *testing.T) {
	d := doc.Document{Blocks: []doc.Block{
		p(""), p("  \n\t "), h(1, "   "), {Kind: doc.Paragraph, Text: "  real  ", Page: 4}, blk(doc.Table, "\n"), p("more"),
	}}
	ps := Chunk(d, Options{})
	if len(ps) != 1 || ps[0].Content != "real\n\nmore" || ps[0].Page != 4 || len(ps[0].Breadcrumb) != 0 {
		t.Fatalf("got %#v", ps)
	}
	if ps := Chunk(doc.Document{}, Options{}); len(ps) != 0 {
		t.Fatalf("got %#v", ps)
	}
	if ps := Chunk(d, Options{Stack: StackLegacy}); !reflect.DeepEqual(contents(ps), []string{"real", "more"}) {
		t.Fatalf("got %q", contents(ps))
	}
}

func TestPages(t *testing.T) {
	d := doc.Document{Blocks: []doc.Block{
		{Kind: doc.Paragraph, Text: "a.", Page: 1}, {Kind: doc.Paragraph, Text: "b.", Page: 2},
		{Kind: doc.Heading, Level: 1, Text: "H", Page: 2}, {Kind: doc.Paragraph, Text: "c.", Page: 3},
		{Kind: doc.Paragraph, Text: strings.Repeat("long sentence. ", 20), Page: 5},
	}}
	var pages []int
	for _, p := range Chunk(d, Options{MaxChunk: 100}) {
		pages = append(pages, p.Page)
	}
	if !reflect.DeepEqual(pages, []int{1, 2, 3, 5, 5, 5, 5}) {
		t.Fatalf("got %v", pages)
	}
}

func TestDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var d doc.Document
	for i := range 300 {
		if i%17 == 0 {
			d.Blocks = append(d.Blocks, h(1+i%3, sentence(r, 20)))
		}
		d.Blocks = append(d.Blocks, p(sentence(r, r.IntN(700))))
	}
	o := Options{MaxChunk: 300, MinParagraph: 60, ContextLevels: 2, Breadcrumb: true}
	a, b := Chunk(d, o), Chunk(d, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("not deterministic")
	}
}

// benchDoc is about 2 MB of paragraphs, with a heading every 20 and some
// paragraphs longer than the limit.
func benchDoc() (doc.Document, int) {
	r := rand.New(rand.NewPCG(3, 4))
	var d doc.Document
	size := 0
	for i := 0; size < 2<<20; i++ {
		if i%20 == 0 {
			d.Blocks = append(d.Blocks, h(1+i/20%3, "Section heading number "+fmt.Sprint(i)))
		}
		var ss []string
		for range 1 + r.IntN(12) {
			ss = append(ss, sentence(r, 40+r.IntN(120)))
		}
		text := strings.Join(ss, " ")
		size += len(text)
		d.Blocks = append(d.Blocks, p(text))
	}
	return d, size
}

func BenchmarkChunk(b *testing.B) {
	d, size := benchDoc()
	for _, o := range []Options{
		{Stack: StackRealtime, MaxChunk: 1000, MinParagraph: 100, ContextLevels: 2, Breadcrumb: true},
		{Stack: StackLegacy, MaxChunk: 1000},
	} {
		b.Run(o.Stack, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				Chunk(d, o)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	text := strings.Repeat("One sentence here. ", 30) + "Last."
	parts := Split(text, 100)
	if len(parts) < 6 {
		t.Fatalf("%d parts", len(parts))
	}
	for _, p := range parts {
		if n := utf8.RuneCountInString(p); n > 100 || n == 0 {
			t.Fatalf("part of %d characters: %q", n, p)
		}
		if !strings.HasSuffix(p, ".") {
			t.Fatalf("part not cut at a sentence end: %q", p)
		}
	}
	if got := strings.Join(parts, " "); got != strings.TrimSpace(text) {
		t.Fatalf("parts do not make the text back:\n%q", got)
	}
	if Split("  ", 10) != nil || len(Split("short", 0)) != 1 {
		t.Fatal("empty or short text")
	}
}
