package platform

import (
	"encoding/json"
	"strconv"
	"strings"
)

// MaxJSONDepth is how deeply objects and arrays may nest in any JSON a user
// sends (a request body, bot code's arguments), the outermost value counting
// as level 1. Deeper documents cannot be read back by the official clients
// and cost every later reader; they are refused before any decoder,
// validator or database sees them.
const MaxJSONDepth = 64

// CheckJSONDepth refuses b with 400 InvalidPayload naming the path where it
// nests deeper than MaxJSONDepth (prefix, when set, names b itself). It is a
// single pass over the bytes that decodes nothing: it only has to be right
// for valid JSON, since whatever decodes b next rejects invalid JSON.
func CheckJSONDepth(b []byte, prefix string) error {
	var open [MaxJSONDepth]jsonFrame
	stack := open[:0]
	for i := 0; i < len(b); i++ {
		if !jsonSyntax[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			start := i
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			// A string followed by ':' is the key of the current object.
			if n := len(stack); n > 0 && b[stack[n-1].open] == '{' {
				k := i + 1
				for k < len(b) && isSpace(b[k]) {
					k++
				}
				if k < len(b) && b[k] == ':' {
					stack[n-1].key = [2]int{start, i + 1}
				}
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
		sb.WriteString(k)
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
