package platform

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth is how deeply objects and arrays may nest in any JSON a user
// sends (a request body, bot code's arguments), the outermost value counting
// as level 1. Deeper documents cannot be read back by the official clients
// and cost every later reader; they are refused before any decoder,
// validator or database sees them.
const MaxJSONDepth = 64

// JSONDocumentFields are the top-level fields of bodies and of bot code's
// arguments whose values are kept as JSON documents (a message's payload, a
// file's metadata, a bot's configuration…). Strings there may hold NUL
// (U+0000): they are stored escaped and come back as sent. Everywhere else
// (ids, keys, names, tags, filters, and plain text such as a bot's code)
// NUL is refused, as PostgreSQL text cannot hold it.
var JSONDocumentFields = map[string]bool{
	"payload": true, "metadata": true, "input": true, "configuration": true, "states": true, "events": true,
	"recurringEvents": true, "actions": true, "subscriptions": true, "indexing": true,
}

// CheckJSON refuses, with 400 InvalidPayload naming the path (prefix, when
// set, names b itself), JSON that nests deeper than MaxJSONDepth, holds a
// NUL character outside JSONDocumentFields, or holds text that is not
// Unicode anywhere (invalid UTF-8 bytes, a lone surrogate escape). It is a
// single pass over the bytes that decodes nothing: it only has to be right
// for valid JSON, since whatever decodes b next rejects invalid JSON.
func CheckJSON(b []byte, prefix string) error {
	var open [MaxJSONDepth]jsonFrame
	stack := open[:0]
	for i := 0; i < len(b); i++ {
		if !jsonSyntax[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			start, nul, bad := i, false, ""
			for i++; i < len(b) && b[i] != '"'; i++ {
				switch {
				case b[i] == '\\':
					nul = nul || bytes.HasPrefix(b[i+1:], nulEscape)
					if n, why := surrogates(b[i+1:]); why != "" {
						bad = cmp.Or(bad, why)
					} else {
						i += n
					}
					i++
				case b[i] >= utf8.RuneSelf:
					r, n := utf8.DecodeRune(b[i:])
					if r == utf8.RuneError && n == 1 {
						bad = cmp.Or(bad, "is not valid UTF-8")
					}
					i += n - 1
				}
			}
			// A string followed by ':' is the key of the current object.
			key := false
			if n := len(stack); n > 0 && b[stack[n-1].open] == '{' {
				k := i + 1
				for k < len(b) && isSpace(b[k]) {
					k++
				}
				if key = k < len(b) && b[k] == ':'; key {
					stack[n-1].key = [2]int{start, i + 1}
				}
			}
			if nul && (key && len(stack) == 1 || !inDocument(b, stack)) {
				return Invalid(jsonPath(b, prefix, stack), "contains a NUL character (\\u0000), which is not allowed here")
			}
			if bad != "" {
				return Invalid(jsonPath(b, prefix, stack), "%s", bad)
			}
		case '{', '[':
			if len(stack) == MaxJSONDepth {
				return Invalid(jsonPath(b, prefix, stack), "nested deeper than %d levels of objects and arrays", MaxJSONDepth)
			}
			stack = append(stack, jsonFrame{open: i})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 && b[stack[n-1].open] == '[' {
				stack[n-1].index++
			}
		}
	}
	return nil
}

var nulEscape = []byte("u0000")

// surrogates reads the escape after a backslash: for a UTF-16 surrogate
// pair it returns the bytes to skip past the first escape's "u"; for a
// lone surrogate, why it is refused. A decoder would turn a lone one into
// U+FFFD without a word, storing what the caller never sent.
func surrogates(esc []byte) (skip int, why string) {
	r := hexEscape(esc)
	if !utf16.IsSurrogate(r) {
		return 0, ""
	}
	if r < 0xdc00 && len(esc) > 6 && esc[5] == '\\' {
		if low := hexEscape(esc[6:]); low >= 0xdc00 && low <= 0xdfff {
			return 10, ""
		}
	}
	return 0, fmt.Sprintf("holds a lone UTF-16 surrogate (\\u%04x), which is not valid Unicode", r)
}

// hexEscape reads "uXXXX" at the start of esc (-1 when it is not one).
func hexEscape(esc []byte) rune {
	if len(esc) < 5 || esc[0] != 'u' {
		return -1
	}
	var r rune
	for _, c := range esc[1:5] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			r = r<<4 | rune(c|0x20-'a'+10)
		default:
			return -1
		}
	}
	return r
}

// inDocument tells whether the member being read lies in one of the
// JSONDocumentFields of the outermost object.
func inDocument(b []byte, stack []jsonFrame) bool {
	if len(stack) == 0 || b[stack[0].open] != '{' {
		return false
	}
	k := stack[0].key
	return k[1] > k[0]+1 && JSONDocumentFields[string(b[k[0]+1:k[1]-1])]
}

// jsonFrame is an open object or array: where it starts, and the current
// member's key (offsets of the quoted key) or element's index.
type jsonFrame struct {
	open  int
	key   [2]int
	index int
}

// jsonSyntax marks the bytes the scan stops at.
var jsonSyntax = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true, ',': true}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// maxPathLen bounds the path named in the error: a path 64 levels deep
// names its top, which is what the caller needs to find the field.
const maxPathLen = 120

// jsonPath names the member being opened inside the open containers, in
// the dotted form of the schema errors (tags.color, states.0.value).
func jsonPath(b []byte, prefix string, stack []jsonFrame) string {
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, f := range stack {
		if sb.Len() > maxPathLen {
			break
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		if b[f.open] == '[' {
			sb.WriteString(strconv.Itoa(f.index))
			continue
		}
		var k string
		if json.Unmarshal(b[f.key[0]:f.key[1]], &k) != nil {
			k = string(b[f.key[0]:f.key[1]])
		}
		sb.WriteString(strings.ReplaceAll(k, "\x00", `\u0000`))
	}
	s := sb.String()
	if len(s) > maxPathLen {
		s = strings.ToValidUTF8(s[:maxPathLen], "") + "…"
	}
	if s == "" {
		s = "body"
	}
	return s
}
