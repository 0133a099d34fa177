package pdf

import (
	"bytes"
	"io"
	"strconv"

	lpdf "github.com/ledongthuc/pdf"
)

// The PDF library's own content-stream interpreter loops forever on an
// unterminated hex string and holds whole operands of any size in memory,
// so content streams are read here: decoded by the library (bounded in
// size), tokenized by this small lexer.

// Limits on one content stream.
var (
	maxContentStream = 64 << 20 // decoded bytes
)

const (
	maxOperands   = 64     // operands kept before an operator
	maxArrayItems = 100000 // items in one array operand
	maxNesting    = 32     // arrays and dictionaries inside each other
)

// operand is a content-stream operand.
type operand struct {
	kind byte // 'n' number, 's' string, '/' name, '[' array, 'o' other
	num  float64
	str  string
	arr  []operand
}

// readStream returns the decoded data of a stream (or of an array of
// streams, joined by newlines), at most limit bytes. A stream that fails to
// decode midway yields what was decoded before the failure.
func readStream(v lpdf.Value, limit int) (data []byte, tooBig bool) {
	var buf bytes.Buffer
	add := func(s lpdf.Value) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(pdfAbort); ok {
					panic(r)
				}
			}
		}()
		if s.Kind() != lpdf.Stream || !libraryDecodes(s) {
			return
		}
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(&buf, io.LimitReader(rc, int64(limit-buf.Len()+1)))
		_ = n
		buf.WriteByte('\n')
	}
	if v.Kind() == lpdf.Array {
		for i := 0; i < v.Len() && buf.Len() <= limit; i++ {
			add(v.Index(i))
		}
	} else {
		add(v)
	}
	if buf.Len() > limit {
		return nil, true
	}
	return buf.Bytes(), false
}

// libraryDecodes reports whether the library can be let decode a stream:
// for the PNG Up predictor of FlateDecode it allocates a row of any number
// of Columns.
func libraryDecodes(s lpdf.Value) bool {
	filter, parms := s.Key("Filter"), s.Key("DecodeParms")
	for i := 0; i < max(1, filter.Len()) && i < 100; i++ {
		f, p := filter, parms
		if filter.Kind() == lpdf.Array {
			f, p = filter.Index(i), parms.Index(i)
		}
		c := p.Key("Columns").Int64()
		if f.Name() == "FlateDecode" && p.Key("Predictor").Kind() != lpdf.Null && (c < 0 || c > maxPNGColumns) {
			return false
		}
	}
	return true
}

// contentLexer splits a content stream into operands and operators.
type contentLexer struct {
	data []byte
	pos  int
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// run calls op for every operator with the operands before it.
func (l *contentLexer) run(op func(name string, args []operand)) {
	var args []operand
	for {
		t, ok := l.next(0)
		if !ok {
			return
		}
		if t.kind != 'k' {
			if len(args) < maxOperands {
				args = append(args, t)
			}
			continue
		}
		switch t.str {
		case "true", "false", "null":
			if len(args) < maxOperands {
				args = append(args, operand{kind: 'o'})
			}
			continue
		case "BI":
			l.skipInlineImage()
		default:
			op(t.str, args)
		}
		args = args[:0]
	}
}

// next returns the next token; kind 'k' is a keyword (operator).
func (l *contentLexer) next(depth int) (operand, bool) {
	d := l.data
	for l.pos < len(d) {
		c := d[l.pos]
		if isPDFSpace(c) {
			l.pos++
			continue
		}
		if c == '%' {
			for l.pos < len(d) && d[l.pos] != '\n' && d[l.pos] != '\r' {
				l.pos++
			}
			continue
		}
		break
	}
	if l.pos >= len(d) {
		return operand{}, false
	}
	c := d[l.pos]
	switch {
	case c == '(':
		l.pos++
		return operand{kind: 's', str: l.literal()}, true
	case c == '<' && l.pos+1 < len(d) && d[l.pos+1] == '<':
		l.pos += 2
		l.skipDict(depth + 1)
		return operand{kind: 'o'}, true
	case c == '<':
		l.pos++
		return operand{kind: 's', str: l.hex()}, true
	case c == '[':
		l.pos++
		return operand{kind: '[', arr: l.array(depth + 1)}, true
	case c == '/':
		l.pos++
		start := l.pos
		for l.pos < len(d) && !isPDFSpace(d[l.pos]) && !isPDFDelim(d[l.pos]) {
			l.pos++
		}
		return operand{kind: '/', str: unescapeName(d[start:l.pos])}, true
	case c == ']' || c == '>' || c == ')' || c == '{' || c == '}':
		l.pos++
		return operand{kind: 'o'}, true
	}
	start := l.pos
	for l.pos < len(d) && !isPDFSpace(d[l.pos]) && !isPDFDelim(d[l.pos]) {
		l.pos++
	}
	word := d[start:l.pos]
	if c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9' {
		if f, err := strconv.ParseFloat(string(word), 64); err == nil {
			return operand{kind: 'n', num: f}, true
		}
		return operand{kind: 'n', num: lenientNumber(word)}, true
	}
	return operand{kind: 'k', str: string(word)}, true
}

// lenientNumber reads numbers such as "--5" or "1.2.3" as readers do.
func lenientNumber(b []byte) float64 {
	neg := false
	i := 0
	for i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = neg || b[i] == '-'
		i++
	}
	j := i
	dot := false
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' && !dot) {
		dot = dot || b[j] == '.'
		j++
	}
	f, _ := strconv.ParseFloat(string(b[i:j]), 64)
	if neg {
		f = -f
	}
	return f
}

func unescapeName(b []byte) string {
	if bytes.IndexByte(b, '#') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			if h, l := unhexByte(b[i+1]), unhexByte(b[i+2]); h >= 0 && l >= 0 {
				out = append(out, byte(h<<4|l))
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

func unhexByte(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// literal reads a literal string; a faulty escape is taken leniently.
func (l *contentLexer) literal() string {
	s, end, _, _ := readLiteral(l.data, l.pos)
	l.pos = end
	return s
}

func (l *contentLexer) hex() string {
	d := l.data
	var out []byte
	hi := -1
	for l.pos < len(d) {
		c := d[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v := unhexByte(c)
		if v < 0 {
			continue
		}
		if hi < 0 {
			hi = v
		} else {
			out = append(out, byte(hi<<4|v))
			hi = -1
		}
	}
	if hi >= 0 {
		out = append(out, byte(hi<<4))
	}
	return string(out)
}

func (l *contentLexer) array(depth int) []operand {
	var items []operand
	for {
		if depth > maxNesting {
			l.skipTo(']')
			return items
		}
		t, ok := l.next(depth)
		if !ok {
			return items
		}
		if t.kind == 'o' && l.pos > 0 && l.data[l.pos-1] == ']' {
			return items
		}
		if t.kind == 'k' {
			continue
		}
		if len(items) < maxArrayItems {
			items = append(items, t)
		}
	}
}

func (l *contentLexer) skipDict(depth int) {
	for {
		if depth > maxNesting {
			l.skipTo('>')
			return
		}
		t, ok := l.next(depth)
		if !ok {
			return
		}
		if t.kind == 'o' && l.pos > 0 && l.data[l.pos-1] == '>' {
			if l.pos < len(l.data) && l.data[l.pos] == '>' {
				l.pos++
			}
			return
		}
	}
}

func (l *contentLexer) skipTo(c byte) {
	if i := bytes.IndexByte(l.data[l.pos:], c); i >= 0 {
		l.pos += i + 1
	} else {
		l.pos = len(l.data)
	}
}

// skipInlineImage skips "BI <dict> ID <binary> EI".
func (l *contentLexer) skipInlineImage() {
	d := l.data
	for {
		t, ok := l.next(0)
		if !ok {
			return
		}
		if t.kind == 'k' && t.str == "ID" {
			break
		}
	}
	l.pos++ // the single white-space byte after ID
	for l.pos < len(d) {
		i := bytes.Index(d[l.pos:], []byte("EI"))
		if i < 0 {
			l.pos = len(d)
			return
		}
		at := l.pos + i
		l.pos = at + 2
		before := at == 0 || isPDFSpace(d[at-1])
		after := l.pos >= len(d) || isPDFSpace(d[l.pos]) || isPDFDelim(d[l.pos])
		if before && after {
			return
		}
	}
}
