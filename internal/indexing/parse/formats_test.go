package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
)

func TestText(t *testing.T) {
	got := mustParse(t, "text/plain", "sample.txt", fixture(t, "sample.txt"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Heading, 1, "Botplatform release notes"),
		b(doc.Paragraph, 0, "This release makes indexing faster and fixes several bugs that users reported."),
		b(doc.Paragraph, 0, "Highlights:"),
		b(doc.List, 0, "- Faster parsing of PDF files\n- New CSV support that spans two lines\n- Starred item\n1. First numbered\n2) Second numbered"),
		b(doc.Paragraph, 0, "Windows line endings follow. Second line of the same paragraph."),
		b(doc.Paragraph, 0, "Last paragraph."),
	})
	got = mustParse(t, "text/plain", "crlf.txt", fixture(t, "crlf.txt"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Paragraph, 0, "Windows paragraph here."),
		b(doc.Paragraph, 0, "Another one."),
	})
}

func TestTextDetails(t *testing.T) {
	tests := []struct {
		in   string
		want []doc.Block
	}{
		{"a\n  b  \tc\n\n\n\nd", []doc.Block{b(doc.Paragraph, 0, "a b c"), b(doc.Paragraph, 0, "d")}},
		{"old\rmac\r\rline", []doc.Block{b(doc.Paragraph, 0, "old mac"), b(doc.Paragraph, 0, "line")}},
		{"- a\n  - nested\n\t- tab", []doc.Block{b(doc.List, 0, "- a\n  - nested\n    - tab")}},
		{"Mr. Smith went home.\nHe slept.", []doc.Block{b(doc.Paragraph, 0, "Mr. Smith went home. He slept.")}},
		{"a) first\nb) second", []doc.Block{b(doc.List, 0, "a) first\nb) second")}},
		{"Sub title\n---------\ntext", []doc.Block{b(doc.Heading, 2, "Sub title"), b(doc.Paragraph, 0, "text")}},
		{"one\ntwo\n***\nthree", []doc.Block{b(doc.Paragraph, 0, "one two"), b(doc.Paragraph, 0, "three")}},
		{"-\n- \n-x", []doc.Block{b(doc.Paragraph, 0, "- - -x")}},
		{"   \n\t\n", nil},
	}
	for _, tt := range tests {
		got := parseText(tt.in)
		if fmt.Sprint(got) != fmt.Sprint(doc.Blocks(tt.want)) {
			t.Errorf("parseText(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	got := mustParse(t, "text/markdown", "sample.md", fixture(t, "sample.md"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Heading, 1, "Botplatform Guide"),
		b(doc.Paragraph, 0, "Botplatform is a self-hosted platform for chat bots. See the documentation or the logo for details; use bot.run() to start. Escaped *stars* & entities © stay."),
		b(doc.Heading, 2, "Installation"),
		b(doc.List, 0, "1. Download the binary.\n2. Run botplatform serve:\n  - on Linux, as a service;\n  - on macOS, with launchd.\n3. Open the dashboard."),
		b(doc.List, 0, "- [x] Done item\n- [ ] Open item"),
		b(doc.Code, 0, "func main() {\n\tfmt.Println(\"hello\")\n}"),
		b(doc.Code, 0, "indented code line 1\nindented code line 2"),
		b(doc.Blockquote, 0, "Quoted wisdom, first paragraph.\nSecond quoted paragraph."),
		b(doc.Table, 0, "Setting | Default | Notes\nport | 8080 | HTTP port\nworkers | 4 |"),
		b(doc.Heading, 2, "Setext Heading"),
		b(doc.Paragraph, 0, "Raw HTML block text."),
		b(doc.Paragraph, 0, "Final paragraph with a break and a footnote-like ref."),
	})
}

func TestMarkdownDetails(t *testing.T) {
	tests := []struct {
		in   string
		want []doc.Block
	}{
		{"###### Six\n\n####### seven", []doc.Block{b(doc.Heading, 6, "Six"), b(doc.Paragraph, 0, "####### seven")}},
		{"5. five\n6. six", []doc.Block{b(doc.List, 0, "5. five\n6. six")}},
		{"- a\n\n  more a\n- b\n  ```\n  code in item\n  ```", []doc.Block{b(doc.List, 0, "- a more a\n- b code in item")}},
		{"> # Quoted heading\n> - item", []doc.Block{b(doc.Blockquote, 0, "Quoted heading\n- item")}},
		{"`code *not emphasis*` and <span>inline</span> html", []doc.Block{b(doc.Paragraph, 0, "code *not emphasis* and inline html")}},
		{"<https://example.com> autolink", []doc.Block{b(doc.Paragraph, 0, "https://example.com autolink")}},
		{"~~gone~~ kept", []doc.Block{b(doc.Paragraph, 0, "gone kept")}},
		{"```\n\n```", nil},
		{"<script>alert(1)</script>", nil},
		{"```\n    indented first\nx\n```", []doc.Block{b(doc.Code, 0, "    indented first\nx")}},
		{"---\ntitle: Front matter\ntags: [a, b]\n---\n# Body", []doc.Block{b(doc.Paragraph, 0, "title: Front matter\ntags: [a, b]"), b(doc.Heading, 1, "Body")}},
		{"+++\r\ntitle = \"toml\"\r\n+++\r\ntext", []doc.Block{b(doc.Paragraph, 0, "title = \"toml\""), b(doc.Paragraph, 0, "text")}},
		{"---\nnot closed\n", []doc.Block{b(doc.Paragraph, 0, "not closed")}},
	}
	for _, tt := range tests {
		got := parseMarkdown([]byte(tt.in))
		if fmt.Sprint(got) != fmt.Sprint(doc.Blocks(tt.want)) {
			t.Errorf("parseMarkdown(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestHTML(t *testing.T) {
	got := mustParse(t, "text/html", "sample.html", fixture(t, "sample.html"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Heading, 1, "Botplatform & Friends"),
		b(doc.Heading, 2, "Getting started"),
		b(doc.Paragraph, 0, "Install the server, then open the dashboard. It’s easy."),
		b(doc.Paragraph, 0, "Loose text in a div. Inline span."),
		b(doc.Paragraph, 0, "Section text"),
		b(doc.Paragraph, 0, "Paragraph inside section."),
		b(doc.Paragraph, 0, "Trailing text."),
		b(doc.List, 0, "- First item\n- Second item\n  3. Nested three\n  4. Nested four\n- Item with paragraph"),
		b(doc.Code, 0, "line one\n  line two indented"),
		b(doc.Blockquote, 0, "Quoted text.\nMore quoted."),
		b(doc.Paragraph, 0, "Plans"),
		b(doc.Table, 0, "Plan | Price\nFree | $0\nPro | $10 <monthly>"),
		b(doc.Heading, 3, "Details"),
		b(doc.Paragraph, 0, "Text with a line break."),
		b(doc.Paragraph, 0, "Footer text"),
	})
	for _, bl := range got {
		for _, bad := range []string{"secret", "Page title", "Home", "Enable JavaScript", "Template text", "Hidden text", "color: red"} {
			if strings.Contains(bl.Text, bad) {
				t.Errorf("block %q holds skipped text %q", bl.Text, bad)
			}
		}
	}
}

func TestHTMLCharset(t *testing.T) {
	latin1 := []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9</p></body></html>")
	got := mustParse(t, "text/html", "", latin1)
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "café")})
	got = mustParse(t, "text/html; charset=windows-1252", "", []byte("<p>\x93hi\x94</p>"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "“hi”")})
	got = mustParse(t, "text/html; charset=utf-8", "", []byte("<p>日本語</p>"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "日本語")})
	// Broken markup is still read.
	got = mustParse(t, "text/html", "", []byte("<p>unclosed <b>bold<td>cell</p></div></table><h2>end"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "unclosed boldcell"), b(doc.Heading, 2, "end")})
}

func TestCSV(t *testing.T) {
	got := mustParse(t, "text/csv", "sample.csv", fixture(t, "sample.csv"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Table, 0, "name: Alice; city: Berlin; age: 34; notes: likes \"quotes\", commas\n"+
			"name: Bob; city: Paris\n"+
			"name: Carol; city: New York; age: 29; notes: multi-line cell; column 5: extra"),
	})
	got = mustParse(t, "text/csv", "semicolon.csv", fixture(t, "semicolon.csv"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Table, 0, "name: Alice; city: Berlin; score: 1,5\nname: Bob; city: Paris; score: 2,0")})
	got = mustParse(t, "text/csv", "tab.csv", fixture(t, "tab.csv"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Table, 0, "name: Alice; city: Berlin")})

	got = mustParse(t, "", "many_rows.csv", fixture(t, "many_rows.csv"))
	if len(got) != 3 {
		t.Fatalf("45 rows gave %d blocks, want 3", len(got))
	}
	for i, n := range []int{20, 20, 5} {
		lines := strings.Split(got[i].Text, "\n")
		if got[i].Kind != doc.Table || len(lines) != n {
			t.Errorf("block %d: %s with %d rows, want table with %d", i, got[i].Kind, len(lines), n)
		}
	}
	if first := strings.Split(got[0].Text, "\n")[0]; first != "id: 1; product: Item 1; price: 1.99" {
		t.Errorf("first row %q", first)
	}
	if last := got[2].Text[strings.LastIndex(got[2].Text, "\n")+1:]; last != "id: 45; product: Item 45; price: 45.99" {
		t.Errorf("last row %q", last)
	}

	got = mustParse(t, "text/csv", "", []byte("only,a,header\n"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Table, 0, "only | a | header")})

	_, err := Parse("text/csv", "", []byte("a,b\n1,\"unterminated\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "the CSV is not valid: line ") {
		t.Errorf("bad CSV: error = %v", err)
	}
}

func TestJSON(t *testing.T) {
	got := mustParse(t, "application/json", "sample.json", fixture(t, "sample.json"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Paragraph, 0, "name: botplatform"),
		b(doc.Paragraph, 0, "version: 2"),
		b(doc.Paragraph, 0, "enabled: true"),
		b(doc.Paragraph, 0, "owner: null"),
		b(doc.Paragraph, 0, "server.port: 8080\nserver.hosts[0]: a.example\nserver.hosts[1]: b.example\nserver.tls.enabled: false\nserver.empty: {}\nserver.none: []"),
		b(doc.Paragraph, 0, "bots[0].id: b1\nbots[0].tags[0]: x\nbots[0].tags[1]: y\nbots[1].id: b2\nbots[1].note: multi line"),
	})
	got = mustParse(t, "", "array.json", fixture(t, "array.json"))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Paragraph, 0, "[0].title: First\n[0].score: 1.5"),
		b(doc.Paragraph, 0, "[1].title: Second\n[1].nested.deep[0]: 1\n[1].nested.deep[1]: 2"),
		b(doc.Paragraph, 0, "[2]: plain string"),
	})
	got = mustParse(t, "application/json", "", []byte(` "just a string" `))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "just a string")})
	got = mustParse(t, "application/json", "", []byte(`12345678901234567890.5e3`))
	parsetest.Assert(t, got, []doc.Block{b(doc.Paragraph, 0, "12345678901234567890.5e3")})
}

func TestJSONErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{string(fixture(t, "invalid.json")), "the JSON is not valid: line 3, column 14: invalid character ',' looking for beginning of value"},
		{"{\"a\": 1}\n{\"b\": 2}", "the JSON is not valid: line 2, column 1: unexpected data after the end of the JSON value"},
		{"{\"a\": [1, 2", "the JSON is not valid: the file ends before the JSON value does (is it cut short?)"},
		{"", "the JSON is not valid: the file is empty"},
		{"  \n", "the JSON is not valid: the file is empty"},
		{strings.Repeat("[", 2000) + strings.Repeat("]", 2000), "the JSON is not valid: line 1, column 1002: it is nested more than 1000 levels deep"},
		{"{'a': 1}", "the JSON is not valid: line 1, column 2: invalid character '\\''"},
		{"[1,\n 2,\n 3 4]", "the JSON is not valid: line 3, column 4: invalid character '4' after array element"},
	}
	for _, tt := range tests {
		_, err := Parse("application/json", "", []byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%.30q) error\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestCSVQuotes(t *testing.T) {
	got := mustParse(t, "text/csv", "", []byte("item,size\nTV,55\" screen\n"))
	parsetest.Assert(t, got, []doc.Block{b(doc.Table, 0, "item: TV; size: 55\" screen")})
	_, err := Parse("text/csv", "", []byte("a,b\n1,2\n3,\"x\"y\n"))
	if err == nil || err.Error() != "the CSV is not valid: line 3: extraneous or missing \" in quoted-field" {
		t.Errorf("error = %v", err)
	}
}

func TestMarkdownTooHardFallsBackToText(t *testing.T) {
	in := "# Title\n\n" + strings.Repeat("- ", 40) + "deep item\n\nafter"
	got := parseMarkdown([]byte(in))
	parsetest.Assert(t, got, []doc.Block{
		b(doc.Paragraph, 0, "# Title"),
		b(doc.List, 0, "- "+strings.TrimSpace(strings.Repeat("- ", 39))+" deep item"),
		b(doc.Paragraph, 0, "after"),
	})
	// Nesting that is deep but not absurd is still Markdown, its
	// indentation capped.
	var nested strings.Builder
	for i := range 12 {
		nested.WriteString(strings.Repeat("  ", i) + "- level\n")
	}
	got = parseMarkdown([]byte(nested.String()))
	lines := strings.Split(got[0].Text, "\n")
	if got[0].Kind != doc.List || len(lines) != 12 || lines[11] != strings.Repeat("  ", doc.MaxListIndent)+"- level" {
		t.Errorf("nested list: %q", got[0].Text)
	}
}
