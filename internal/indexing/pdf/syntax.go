package pdf

import (
	"strconv"
)

// scanBuf reads tokens and objects as the library's buffer does.
type scanBuf struct {
	data     []byte
	pos      int
	allowEOF bool
	ps       bool // PostScript (a CMap): no references, no streams
	eof      bool // the end was reached (allowEOF)
	atEnd    bool // the last byte read was past the end
	objptr   scanRef
	unread   []any
	depth    int
}

func (b *scanBuf) readByte() byte {
	if b.pos >= len(b.data) {
		if !b.allowEOF {
			panic(scanFailure{})
		}
		b.eof, b.atEnd = true, true
		return '\n'
	}
	b.atEnd = false
	c := b.data[b.pos]
	b.pos++
	return c
}

func (b *scanBuf) unreadByte() {
	if !b.atEnd && b.pos > 0 {
		b.pos--
	}
}

func (b *scanBuf) token() any {
	if n := len(b.unread); n > 0 {
		t := b.unread[n-1]
		b.unread = b.unread[:n-1]
		return t
	}
	c := b.readByte()
	for {
		if isPDFSpace(c) {
			if b.eof {
				return scanEOF{}
			}
			c = b.readByte()
		} else if c == '%' {
			for c != '\r' && c != '\n' {
				c = b.readByte()
			}
		} else {
			break
		}
	}
	switch c {
	case '<':
		if b.readByte() == '<' {
			return scanKeyword("<<")
		}
		b.unreadByte()
		return b.hexString()
	case '(':
		return b.literalString()
	case '[', ']', '{', '}':
		return scanKeyword(string(c))
	case '/':
		return b.name()
	case '>':
		if b.readByte() == '>' {
			return scanKeyword(">>")
		}
		panic(scanFailure{})
	}
	if isPDFDelim(c) {
		panic(scanFailure{})
	}
	b.unreadByte()
	return b.keyword()
}

func (b *scanBuf) hexString() any {
	var out []byte
	for {
		c := b.readByte()
		for isPDFSpace(c) {
			if b.eof {
				// The library reads on past the end for ever.
				panic(scanReject{"an object stream ends inside a hex string"})
			}
			c = b.readByte()
		}
		if c == '>' {
			return string(out)
		}
		c2 := b.readByte()
		for isPDFSpace(c2) {
			if b.eof {
				panic(scanReject{"an object stream ends inside a hex string"})
			}
			c2 = b.readByte()
		}
		h, l := unhexByte(c), unhexByte(c2)
		if h < 0 || l < 0 {
			panic(scanFailure{})
		}
		out = append(out, byte(h<<4|l))
	}
}

// literalString reads a literal string as the library does, which fails
// on a faulty escape, and at the end of the data fails or (allowEOF) ends
// the string with the newline its reader returns there.
func (b *scanBuf) literalString() any {
	s, end, closed, valid := readLiteral(b.data, b.pos)
	if !valid {
		panic(scanFailure{})
	}
	b.pos = end
	if !closed {
		if !b.allowEOF {
			panic(scanFailure{})
		}
		b.eof, b.atEnd = true, true
		return s + "\n"
	}
	b.atEnd = false
	return s
}

// readLiteral reads the literal string whose opening parenthesis is just
// before data[pos]: balanced parentheses, the escapes \n \r \t \b \f
// \( \) \\ and \ddd (octal), and a backslash before an end of line,
// which continues the line. It returns the string and the position after
// it; closed is false when the data ends first, and valid false for an
// escape the format does not have (a backslash before another byte, which
// is kept; an octal value over 255, whose low byte is kept).
func readLiteral(data []byte, pos int) (s string, end int, closed, valid bool) {
	var out []byte
	depth := 1
	valid = true
	for pos < len(data) {
		c := data[pos]
		pos++
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return string(out), pos, true, valid
			}
		case '\\':
			if pos >= len(data) {
				return string(out), pos, false, valid
			}
			c = data[pos]
			pos++
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '(', ')', '\\':
			case '\r':
				if pos < len(data) && data[pos] == '\n' {
					pos++
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				x := int(c - '0')
				for i := 0; i < 2 && pos < len(data) && data[pos] >= '0' && data[pos] <= '7'; i++ {
					x = x*8 + int(data[pos]-'0')
					pos++
				}
				if x > 255 {
					valid = false
				}
				c = byte(x)
			default:
				valid = false
			}
		}
		out = append(out, c)
	}
	return string(out), pos, false, valid
}

func (b *scanBuf) name() any {
	var out []byte
	for {
		c := b.readByte()
		if isPDFDelim(c) || isPDFSpace(c) {
			b.unreadByte()
			return scanName(out)
		}
		if c == '#' {
			h, l := unhexByte(b.readByte()), unhexByte(b.readByte())
			if h < 0 || l < 0 {
				panic(scanFailure{})
			}
			c = byte(h<<4 | l)
		}
		out = append(out, c)
	}
}

func (b *scanBuf) keyword() any {
	start := b.pos
	for {
		c := b.readByte()
		if isPDFDelim(c) || isPDFSpace(c) {
			b.unreadByte()
			break
		}
	}
	s := string(b.data[start:b.pos])
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case isScanInteger(s):
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			panic(scanFailure{})
		}
		return x
	case isScanReal(s):
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic(scanFailure{})
		}
		return x
	}
	return scanKeyword(s)
}

func isScanInteger(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isScanReal(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	dots := 0
	for _, c := range []byte(s) {
		if c == '.' {
			dots++
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return dots == 1
}

func (b *scanBuf) object() any {
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > 1000 {
		panic(scanFailure{})
	}
	tok := b.token()
	if kw, ok := tok.(scanKeyword); ok {
		switch kw {
		case "null", ">>", "]":
			return nil
		case "<<":
			return b.dict()
		case "[":
			return b.array()
		}
		panic(scanFailure{})
	}
	if t1, ok := tok.(int64); ok && !b.ps && int64(uint32(t1)) == t1 {
		tok2 := b.token()
		if t2, ok := tok2.(int64); ok && int64(uint16(t2)) == t2 {
			tok3 := b.token()
			switch tok3 {
			case scanKeyword("R"):
				return scanRef{uint32(t1), uint16(t2)}
			case scanKeyword("obj"):
				old := b.objptr
				b.objptr = scanRef{uint32(t1), uint16(t2)}
				obj := b.object()
				if _, ok := obj.(scanStream); !ok && b.token() != scanKeyword("endobj") {
					panic(scanFailure{})
				}
				b.objptr = old
				return scanObjdef{scanRef{uint32(t1), uint16(t2)}, obj}
			}
			b.unread = append(b.unread, tok3)
		}
		b.unread = append(b.unread, tok2)
	}
	return tok
}

func (b *scanBuf) array() any {
	var x scanArray
	for {
		tok := b.token()
		if tok == (scanEOF{}) || tok == scanKeyword("]") {
			return x
		}
		b.unread = append(b.unread, tok)
		x = append(x, b.object())
	}
}

func (b *scanBuf) dict() any {
	x := scanDict{}
	for {
		tok := b.token()
		if tok == (scanEOF{}) || tok == scanKeyword(">>") {
			break
		}
		n, ok := tok.(scanName)
		if !ok {
			panic(scanFailure{})
		}
		x[n] = b.object()
	}
	if b.ps {
		return x
	}
	tok := b.token()
	if tok != scanKeyword("stream") {
		b.unread = append(b.unread, tok)
		return x
	}
	switch b.readByte() {
	case '\r':
		if b.readByte() != '\n' {
			b.unreadByte()
		}
	case '\n':
	default:
		panic(scanFailure{})
	}
	return scanStream{x, b.objptr, int64(b.pos)}
}
