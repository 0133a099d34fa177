package pdf

import "testing"

// TestReadLiteral: the one reader of literal strings, used by the
// content-stream lexer and the object scan.
func TestReadLiteral(t *testing.T) {
	for _, tt := range []struct {
		in, want      string
		closed, valid bool
	}{
		{`plain) rest`, "plain", true, true},
		{`a (nested) one) rest`, "a (nested) one", true, true},
		{`\n\r\t\b\f\(\)\\)`, "\n\r\t\b\f()\\", true, true},
		{`\101\60\0619)`, "A0\x319", true, true},
		{"line \\\r\ncontinued \\\nhere)", "line continued here", true, true},
		{`\q)`, "q", true, false},
		{`\777)`, "\xff", true, false},
		{`open (ended`, "open (ended", false, true},
		{`ends \`, "ends ", false, true},
	} {
		s, end, closed, valid := readLiteral([]byte(tt.in), 0)
		if s != tt.want || closed != tt.closed || valid != tt.valid {
			t.Errorf("%q: %q closed %v valid %v, want %q %v %v", tt.in, s, closed, valid, tt.want, tt.closed, tt.valid)
		}
		if closed && tt.in[end-1] != ')' {
			t.Errorf("%q: ends at %d", tt.in, end)
		}
	}
	// Both readers give the same string.
	in := `(a\nb \101) x`
	l := &contentLexer{data: []byte(in), pos: 1}
	b := &scanBuf{data: []byte(in), pos: 1}
	if got, want := b.literalString(), l.literal(); got != want || want != "a\nb A" {
		t.Errorf("scan %q, content lexer %q", got, want)
	}
}
