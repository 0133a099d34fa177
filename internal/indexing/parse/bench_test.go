package parse

import (
	"fmt"
	"strings"
	"testing"
)

// benchInput repeats a realistic section until it is about size bytes.
func benchInput(section func(i int) string, size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		b.WriteString(section(i))
	}
	return []byte(b.String())
}

func markdownSection(i int) string {
	return fmt.Sprintf(`## Section %d

Botplatform runs **many small bots** side by side on one server. Each bot keeps
its own storage, its own [schedule](https://example.com/s/%d) and its own
secrets, and the server makes sure that one misbehaving bot cannot slow the
others down. Use `+"`bot.run()`"+` to start one.

- First point about section %d
- Second point, with *emphasis*
  - A nested detail
1. Step one
2. Step two

`+"```go\nfunc main() {\n\tfmt.Println(%d)\n}\n```"+`

> A quoted remark about the platform.

| Setting | Default |
|---------|---------|
| port    | 80%02d    |

`, i, i, i, i, i%100)
}

func textSection(i int) string {
	return fmt.Sprintf(`Release %d

Botplatform runs many small bots side by side on one server. Each bot keeps
its own storage, its own schedule and its own secrets, and the server makes
sure that one misbehaving bot cannot slow the others down.

Highlights:
- Faster parsing of files
- New CSV support
  that spans two lines
1. First numbered item

`, i)
}

func htmlSection(i int) string {
	return fmt.Sprintf(`<section><h2>Section %d</h2><p>Botplatform runs <b>many small bots</b> side by side
on one server. Each bot keeps its own storage, its own <a href="/s">schedule</a> and its own secrets.</p>
<ul><li>First point</li><li>Second <em>point</em><ul><li>Nested</li></ul></li></ul>
<pre><code>func main() { fmt.Println(%d) }</code></pre>
<table><tr><th>Setting</th><th>Default</th></tr><tr><td>port</td><td>%d</td></tr></table></section>
`, i, i, i)
}

func benchParse(b *testing.B, contentType string, input []byte) {
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(contentType, "", input); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMarkdown(b *testing.B) {
	benchParse(b, "text/markdown", benchInput(markdownSection, 1<<20))
}

func BenchmarkParseText(b *testing.B) {
	benchParse(b, "text/plain", benchInput(textSection, 1<<20))
}

func BenchmarkParseHTML(b *testing.B) {
	benchParse(b, "text/html", append([]byte("<html><body>"), benchInput(htmlSection, 1<<20)...))
}

func BenchmarkParseCSV(b *testing.B) {
	benchParse(b, "text/csv", benchInput(func(i int) string {
		if i == 0 {
			return "id,name,city,score,notes\n"
		}
		return fmt.Sprintf("%d,Person %d,Berlin,%d.5,\"likes quotes, commas\"\n", i, i, i%100)
	}, 1<<20))
}

func BenchmarkParseJSON(b *testing.B) {
	in := benchInput(func(i int) string {
		if i == 0 {
			return "["
		}
		return fmt.Sprintf(`{"id": %d, "name": "Bot %d", "tags": ["a", "b"], "config": {"port": 8080, "enabled": true}},`, i, i)
	}, 1<<20)
	in = append(in, `{"id": 0}]`...)
	benchParse(b, "application/json", in)
}

func BenchmarkParsePDF(b *testing.B) {
	benchParse(b, "application/pdf", fixture(b, "libreoffice.pdf"))
}

func BenchmarkParseDOCX(b *testing.B) {
	benchParse(b, TypeDOCX, fixture(b, "libreoffice.docx"))
}

// deepList is a Markdown list nested depth deep, one item per level, each
// indented two spaces more than the one above (about depth² bytes).
func deepList(depth int) []byte {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat("  ", i))
		fmt.Fprintf(&b, "- item %d\n", i)
	}
	return []byte(b.String())
}

// BenchmarkParseMarkdownDeepList: a list nested 3,000 deep (9 MB) costs
// time and memory bounded by its size, not by the square of its depth.
func BenchmarkParseMarkdownDeepList(b *testing.B) {
	benchParse(b, "text/markdown", deepList(3000))
}
