package platform

import (
	"encoding/json"
	"strings"
	"testing"
)

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
}

func TestCheckJSON(t *testing.T) {
	deep := func(n int) string { return `{"metadata":` + nested(`{"a":`, `}`, n) + `}` }
	for _, tc := range []struct {
		name, body, prefix, field string
	}{
		{"flat", `{"a":1,"b":[1,2,{"c":"{[{["}]}`, "", ""},
		{"at the limit", deep(MaxJSONDepth - 1), "", ""},
		{"one past", deep(MaxJSONDepth), "", "metadata.a.a."},
		{"5000 deep", deep(5000), "", "metadata.a.a."},
		{"arrays", `{"tags":[0,` + nested("[", "]", MaxJSONDepth) + `]}`, "", "tags.1.0.0"},
		{"escaped key", `{"k\"\u00e9":` + nested("[", "]", MaxJSONDepth) + `}`, "", `k"é.0.0`},
		{"brackets in strings", `{"s":"` + strings.Repeat("{[", 1000) + `"}`, "", ""},
		{"escaped quotes in strings", `{"s":"\"` + strings.Repeat("{", 100) + `\\"}`, "", ""},
		{"prefix", nested("[", "]", MaxJSONDepth+1), "args", "args.0.0"},
		{"top level array", nested("[", "]", MaxJSONDepth+1), "", "0.0"},
		{"unterminated string", `{"a":"` + strings.Repeat("{", 100), "", ""},
		{"NUL in a key", `{"key":"a\u0000b"}`, "", "key: contains a NUL character"},
		{"NUL in a tag", `{"key":"k","tags":{"t":["x","\u0000"]}}`, "", "tags.t.1: contains a NUL"},
		{"NUL in a top-level key", `{"a\u0000":1}`, "", `a\u0000: contains a NUL`},
		{"NUL in a tag name", `{"tags":{"a\u0000":"v"}}`, "", `tags.a\u0000: contains a NUL`},
		{"NUL in a filter", `{"k":"\u0000"}`, "tags", "tags.k: contains a NUL"},
		{"NUL in a payload", `{"payload":{"text":"a\u0000b","\u0000":["\u0000"]},"conversationId":"c"}`, "", ""},
		{"NUL in metadata", `{"key":"k","metadata":{"a":"\u0000"}}`, "", ""},
		{"NUL in bot arguments", `{"conversationId":"c","payload":{"text":"\u0000"}}`, "args", ""},
		{"escaped backslash", `{"name":"\\u0000"}`, "", ""},
		{"other escapes", `{"name":"\u0001\n\""}`, "", ""},
		{"invalid bytes", "{\"name\":\"\xff\xfe\"}", "", "name: is not valid UTF-8"},
		{"a surrogate encoded in UTF-8", "{\"pictureUrl\":\"\xed\xa0\x80\"}", "", "pictureUrl: is not valid UTF-8"},
		{"a truncated sequence", "{\"a\":[\"ok\",\"\xe2\x82\"]}", "", "a.1: is not valid UTF-8"},
		{"invalid bytes in a key", "{\"tags\":{\"\xc0\xaf\":\"v\"}}", "", "tags.\ufffd\ufffd: is not valid UTF-8"},
		{"invalid bytes in a payload", "{\"payload\":{\"text\":\"a\x80\"}}", "", "payload.text: is not valid UTF-8"},
		{"invalid bytes with a prefix", "{\"k\":\"\xff\"}", "args", "args.k: is not valid UTF-8"},
		{"a lone high surrogate", `{"name":"a\ud800b"}`, "", `name: holds a lone UTF-16 surrogate (\ud800)`},
		{"a lone low surrogate", `{"tags":{"t":["\uDC00"]}}`, "", `tags.t.0: holds a lone UTF-16 surrogate (\udc00)`},
		{"two high surrogates", `{"a":"\ud83d\ud83d"}`, "", `a: holds a lone UTF-16 surrogate (\ud83d)`},
		{"a high surrogate last", `{"a":"x\ud83d"}`, "", `a: holds a lone UTF-16 surrogate`},
		{"a lone surrogate in a payload", `{"payload":{"text":"\udfff"}}`, "", `payload.text: holds a lone UTF-16 surrogate`},
		{"a surrogate pair", `{"name":"\ud83d\ude00 \uD83D\uDE00"}`, "", ""},
		{"text in UTF-8", "{\"name\":\"é 日本 😀\"}", "", ""},
		{"an escaped backslash before u", `{"name":"\\ud800"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.body), tc.prefix)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Type != TypeInvalidPayload || !strings.HasPrefix(e.Message, tc.field) || !strings.Contains(e.Message, "nested deeper than 64 levels") && !strings.Contains(e.Message, "NUL") && !strings.Contains(e.Message, "valid") {
				t.Fatalf("got %v, want InvalidPayload naming %q", err, tc.field)
			}
			if len(e.Message) > 200 {
				t.Fatalf("message of %d bytes: %q", len(e.Message), e.Message)
			}
		})
	}
	// The limit agrees with a real decoder's idea of depth.
	var v any
	if err := json.Unmarshal([]byte(nested("[", "]", MaxJSONDepth)), &v); err != nil || CheckJSON([]byte(nested("[", "]", MaxJSONDepth)), "") != nil {
		t.Fatalf("a document exactly %d deep must pass", MaxJSONDepth)
	}
}

// BenchmarkCheckJSON measures the scan on a typical 1 KB body and a
// 1 MB one (the Files and Chat body limit), strings and nesting mixed.
func BenchmarkCheckJSON(b *testing.B) {
	item := `{"key":"docs/guide-0001.md","tags":{"lang":"en","kind":"guide"},"metadata":{"title":"A \"quoted\" title","pages":[1,2,3],"nested":{"a":{"b":[true,null,1.5e3]}}}},`
	for _, size := range []struct {
		name string
		n    int
	}{{"1KB", 1 << 10}, {"1MB", 1 << 20}} {
		var sb strings.Builder
		sb.WriteString(`{"items":[`)
		for sb.Len() < size.n-len(item) {
			sb.WriteString(item)
		}
		sb.WriteString(`{}]}`)
		body := []byte(sb.String())
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := CheckJSON(body, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		// For scale: the cheapest full pass of the standard library.
		b.Run(size.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !json.Valid(body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
