package parse

import (
	"bytes"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
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
func readStream(v pdf.Value, limit int) (data []byte, tooBig bool) {
	var buf bytes.Buffer
	add := func(s pdf.Value) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(pdfAbort); ok {
					panic(r)
				}
			}
		}()
		if s.Kind() != pdf.Stream || !libraryDecodes(s) {
			return
		}
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(&buf, io.LimitReader(rc, int64(limit-buf.Len()+1)))
		_ = n
		buf.WriteByte('\n')
	}
	if v.Kind() == pdf.Array {
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
func libraryDecodes(s pdf.Value) bool {
	filter, parms := s.Key("Filter"), s.Key("DecodeParms")
	for i := 0; i < max(1, filter.Len()) && i < 100; i++ {
		f, p := filter, parms
		if filter.Kind() == pdf.Array {
			f, p = filter.Index(i), parms.Index(i)
		}
		c := p.Key("Columns").Int64()
		if f.Name() == "FlateDecode" && p.Key("Predictor").Kind() != pdf.Null && (c < 0 || c > maxPNGColumns) {
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

func (l *contentLexer) literal() string {
	d := l.data
	var out []byte
	depth := 1
	for l.pos < len(d) {
		c := d[l.pos]
		l.pos++
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return string(out)
			}
		case '\\':
			if l.pos >= len(d) {
				return string(out)
			}
			c = d[l.pos]
			l.pos++
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
			case '\r':
				if l.pos < len(d) && d[l.pos] == '\n' {
					l.pos++
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				x := int(c - '0')
				for i := 0; i < 2 && l.pos < len(d) && d[l.pos] >= '0' && d[l.pos] <= '7'; i++ {
					x = x*8 + int(d[l.pos]-'0')
					l.pos++
				}
				c = byte(x)
			}
		}
		out = append(out, c)
	}
	return string(out)
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

// The PDF library trusts a file's cross-reference data and object streams,
// and on crafted ones it stalls, loops or crashes the process: it follows
// /Prev links without noticing a loop (until the time limit), allocates a
// table as large as any object number or /Size it reads (a fatal
// out-of-memory error for /Size 1000000000000), reads entries of zero
// bytes until it has as many as an /Index says, resolves an object stream
// held in an object stream by recursing until the stack overflows (fatal),
// follows /Extends links in a loop, and loops forever, without reading the
// file, on an object stream that ends in an unterminated hex string or
// that declares many more objects (/N) than it holds. It also decodes an
// object stream again for each object it reads from it.
//
// scanPDF reads these structures first, as the library does, and refuses
// a file that has one of these faults; where the library would merely fail
// (a damaged file), the scan stops without a verdict and lets the library
// report the damage. It also measures the object streams, for the work
// budget (see pdfSource).

// Limits on a file's structure.
const (
	maxPDFObjects   = 1 << 23 // object numbers (8,388,607 is PDF 1.7's implementation limit)
	maxXrefEntry    = 1024    // bytes of one cross-reference stream entry
	maxPNGColumns   = 1 << 24 // Columns of a PNG predictor (the library allocates a row)
	maxScanDepth    = 8       // objects read from object streams to read another one
	maxObjStmExtend = 1000    // object streams in an /Extends chain
)

type (
	scanRef struct {
		id  uint32
		gen uint16
	}
	scanName    string
	scanKeyword string
	scanDict    map[scanName]any
	scanArray   []any
	scanStream  struct {
		hdr    scanDict
		ptr    scanRef
		offset int64
	}
	scanObjdef struct {
		ptr scanRef
		obj any
	}
	scanEOF struct{}
	// scanFailure is the panic value where the library would fail: the
	// scan ends (or skips an object stream) without a verdict.
	scanFailure struct{}
	// scanReject is the panic value of a fault that must not reach the
	// library.
	scanReject struct{ what string }
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

func (b *scanBuf) literalString() any {
	var out []byte
	depth := 1
	for !b.eof {
		c := b.readByte()
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return string(out)
			}
		case '\\':
			switch c = b.readByte(); c {
			case 'n', 'r', 'b', 't', 'f', '(', ')', '\\':
			case '\r':
				if b.readByte() != '\n' {
					b.unreadByte()
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				x := int(c - '0')
				for range 2 {
					c = b.readByte()
					if c < '0' || c > '7' {
						b.unreadByte()
						break
					}
					x = x*8 + int(c-'0')
				}
				if x > 255 {
					panic(scanFailure{})
				}
				c = byte(x)
			default:
				panic(scanFailure{})
			}
		}
		out = append(out, c)
	}
	return string(out)
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

// xrefEntry is an entry of the library's cross-reference table.
type xrefEntry struct {
	ptr      scanRef
	inStream bool
	stream   scanRef
	offset   int64
}

type pdfScan struct {
	data   []byte
	limit  int // highest object number
	table  []xrefEntry
	ready  bool // the table is read: references resolve
	key    []byte
	aes    bool
	objs   map[scanRef]any
	stms   map[uint32]*scanObjStm
	work   int64 // bytes decoded and entries read
	budget int64
	depth  int
}

// scanObjStm is an object stream, decoded.
type scanObjStm struct {
	data  []byte
	n     int64
	first int64
	bad   bool // the library cannot read it
	busy  bool // being read
}

func (s *pdfScan) spend(n int64) {
	if s.work += n; s.work > s.budget {
		panic(scanReject{"its cross-reference data or object streams take too much work to read"})
	}
}

// scanPDF checks the structure of the file src reads (see above). It
// returns the decoded size of the object streams, by the offset of their
// object, or an error for a file the library must not read.
func scanPDF(src *pdfSource) (costs map[int64]int64, err error) {
	s := &pdfScan{
		data:   src.data[:src.size],
		limit:  min(maxPDFObjects, max(1<<20, int(src.size))),
		objs:   map[scanRef]any{},
		stms:   map[uint32]*scanObjStm{},
		budget: src.budget,
	}
	defer func() {
		if r := recover(); r != nil {
			costs = nil
			if rej, ok := r.(scanReject); ok {
				err = fmt.Errorf("the PDF could not be read: it is damaged (%s)", rej.what)
			}
			// Anything else: no verdict; the library reports the damage.
		}
	}()
	trailer := s.readXref()
	if trailer == nil {
		return nil, nil
	}
	s.ready = true
	if enc := trailer["Encrypt"]; enc != nil {
		if ref, ok := enc.(scanRef); ok && int(ref.id) < len(s.table) && s.table[ref.id].inStream {
			// Not allowed, and the library would read that object stream
			// before it knows how to decrypt it.
			panic(scanReject{"the encryption dictionary is in an object stream"})
		}
		if !s.initEncrypt(trailer) {
			return nil, nil // the library cannot open it
		}
	}
	costs = map[int64]int64{}
	checked := map[uint32]bool{}
	for _, e := range s.table {
		if e.inStream && !checked[e.stream.id] {
			s.checkObjStm(e.stream.id, costs, checked)
		}
	}
	return costs, nil
}

// readXref reads the cross-reference sections as the library does, and
// returns the trailer dictionary, or nil where the library fails.
func (s *pdfScan) readXref() scanDict {
	size := len(s.data)
	if size < 100 {
		return nil
	}
	tail := bytes.TrimRight(s.data[size-100:], "\r\n\t ")
	if !bytes.HasSuffix(tail, []byte("%%EOF")) {
		return nil
	}
	i := findLastLine(tail, "startxref")
	if i < 0 {
		return nil
	}
	b := s.buf(int64(size - 100 + i))
	if b.token() != scanKeyword("startxref") {
		return nil
	}
	start, ok := b.token().(int64)
	if !ok {
		return nil
	}
	b = s.buf(start)
	tok := b.token()
	if tok == scanKeyword("xref") {
		return s.readXrefTables(b, start)
	}
	if _, ok := tok.(int64); ok {
		b.unread = append(b.unread, tok)
		return s.readXrefStreams(b, start)
	}
	return nil
}

func findLastLine(buf []byte, s string) int {
	end := len(buf)
	for {
		i := bytes.LastIndex(buf[:end], []byte(s))
		if i <= 0 || i+len(s) >= len(buf) {
			return -1
		}
		if (buf[i-1] == '\n' || buf[i-1] == '\r') && (buf[i+len(s)] == '\n' || buf[i+len(s)] == '\r') {
			return i
		}
		end = i
	}
}

// buf returns a buffer reading the file from off.
func (s *pdfScan) buf(off int64) *scanBuf {
	if off < 0 || off > int64(len(s.data)) {
		panic(scanFailure{})
	}
	return &scanBuf{data: s.data, pos: int(off)}
}

// prevChain follows the /Prev links from first, calling read for each
// section, and refuses a loop.
func prevChain(start int64, first any, read func(off int64) any) {
	seen := map[int64]bool{start: true}
	for prev := first; prev != nil; {
		off, ok := prev.(int64)
		if !ok {
			panic(scanFailure{})
		}
		if seen[off] {
			panic(scanReject{"its cross-reference sections form a loop"})
		}
		seen[off] = true
		prev = read(off)
	}
}

func (s *pdfScan) entry(x int) {
	if x > s.limit {
		panic(scanReject{fmt.Sprintf("it numbers objects beyond %d", s.limit)})
	}
	if x < 0 {
		panic(scanFailure{})
	}
	if x >= len(s.table) {
		s.table = append(s.table, make([]xrefEntry, x-len(s.table)+1)...)
	}
}

func (s *pdfScan) readXrefTables(b *scanBuf, start int64) scanDict {
	s.readXrefTable(b)
	trailer, ok := b.object().(scanDict)
	if !ok {
		return nil
	}
	prevChain(start, trailer["Prev"], func(off int64) any {
		b := s.buf(off)
		if b.token() != scanKeyword("xref") {
			panic(scanFailure{})
		}
		s.readXrefTable(b)
		t, ok := b.object().(scanDict)
		if !ok {
			panic(scanFailure{})
		}
		return t["Prev"]
	})
	size, ok := trailer["Size"].(int64)
	if !ok {
		return nil
	}
	if size < int64(len(s.table)) {
		if size < 0 {
			return nil
		}
		s.table = s.table[:size]
	}
	return trailer
}

func (s *pdfScan) readXrefTable(b *scanBuf) {
	for {
		tok := b.token()
		if tok == scanKeyword("trailer") {
			return
		}
		start, ok1 := tok.(int64)
		n, ok2 := b.token().(int64)
		if !ok1 || !ok2 {
			panic(scanFailure{})
		}
		for i := 0; i < int(n); i++ {
			off, ok1 := b.token().(int64)
			gen, ok2 := b.token().(int64)
			alloc, ok3 := b.token().(scanKeyword)
			if !ok1 || !ok2 || !ok3 || alloc != "f" && alloc != "n" {
				panic(scanFailure{})
			}
			x := int(start) + i
			s.entry(x)
			s.spend(20)
			if alloc == "n" && s.table[x].offset == 0 {
				s.table[x] = xrefEntry{ptr: scanRef{uint32(x), uint16(gen)}, offset: off}
			}
		}
	}
}

func (s *pdfScan) readXrefStreams(b *scanBuf, start int64) scanDict {
	def, ok := b.object().(scanObjdef)
	if !ok {
		return nil
	}
	strm, ok := def.obj.(scanStream)
	if !ok || strm.hdr["Type"] != scanName("XRef") {
		return nil
	}
	size, ok := strm.hdr["Size"].(int64)
	if !ok || size < 0 {
		return nil
	}
	if size > int64(s.limit)+1 {
		panic(scanReject{fmt.Sprintf("its cross-reference stream declares %d objects", size)})
	}
	s.table = make([]xrefEntry, size)
	s.readXrefStream(strm, size)
	prevChain(start, strm.hdr["Prev"], func(off int64) any {
		def, ok := s.buf(off).object().(scanObjdef)
		if !ok {
			panic(scanFailure{})
		}
		prev, ok := def.obj.(scanStream)
		if !ok || s.value(prev.hdr["Type"]) != scanName("XRef") {
			panic(scanFailure{})
		}
		psize := scanInt(s.value(prev.hdr["Size"]))
		if psize > size {
			panic(scanFailure{})
		}
		s.readXrefStream(prev, psize)
		return prev.hdr["Prev"]
	})
	return strm.hdr
}

func (s *pdfScan) readXrefStream(strm scanStream, size int64) {
	index, _ := strm.hdr["Index"].(scanArray)
	if index == nil {
		index = scanArray{int64(0), size}
	}
	ww, ok := strm.hdr["W"].(scanArray)
	if len(index)%2 != 0 || !ok || len(ww) < 3 {
		panic(scanFailure{})
	}
	var w []int
	total := 0
	for _, x := range ww {
		i, ok := x.(int64)
		if !ok || i < 0 {
			panic(scanFailure{})
		}
		if i > maxXrefEntry || total+int(i) > maxXrefEntry {
			panic(scanReject{"its cross-reference stream has entries of more than 1 KB"})
		}
		w = append(w, int(i))
		total += int(i)
	}
	// The library reads the entries it needs.
	need := int64(0)
	for i := 1; i < len(index); i += 2 {
		n, _ := index[i].(int64)
		need += min(max(n, 0), int64(s.limit)+1)
	}
	data, _ := s.streamData(strm, int(min(need*int64(total), int64(maxContentStream))), true)
	for len(index) > 0 {
		start, ok1 := index[0].(int64)
		n, ok2 := index[1].(int64)
		if !ok1 || !ok2 {
			panic(scanFailure{})
		}
		index = index[2:]
		reach := n
		if total > 0 {
			reach = min(n, int64(len(data)/total))
		}
		// Refuse at once the entries the library would make.
		if reach = min(reach, int64(s.limit)+1); reach > 0 {
			s.entry(int(min(start, int64(s.limit)+1)))
			s.entry(int(min(start+reach-1, int64(s.limit)+1)))
		}
		for i := 0; i < int(n); i++ {
			if len(data) < total {
				panic(scanFailure{})
			}
			e := data[:total]
			data = data[total:]
			v1 := decodeBigEndian(e[:w[0]])
			if w[0] == 0 {
				v1 = 1
			}
			v2 := decodeBigEndian(e[w[0] : w[0]+w[1]])
			v3 := decodeBigEndian(e[w[0]+w[1] : w[0]+w[1]+w[2]])
			x := int(start) + i
			s.entry(x)
			s.spend(int64(total) + 1)
			if s.table[x].ptr != (scanRef{}) {
				continue
			}
			switch v1 {
			case 0:
				s.table[x] = xrefEntry{ptr: scanRef{0, 65535}}
			case 1:
				s.table[x] = xrefEntry{ptr: scanRef{uint32(x), uint16(v3)}, offset: int64(v2)}
			case 2:
				s.table[x] = xrefEntry{ptr: scanRef{uint32(x), 0}, inStream: true, stream: scanRef{uint32(v2), 0}, offset: int64(v3)}
			}
		}
	}
}

func decodeBigEndian(b []byte) int {
	x := 0
	for _, c := range b {
		x = x<<8 | int(c)
	}
	return x
}

func scanInt(v any) int64 {
	i, _ := v.(int64)
	return i
}

// value resolves a reference as the library does, reading an object from
// an object stream when it must.
func (s *pdfScan) value(v any) any {
	ref, ok := v.(scanRef)
	if !ok {
		return v
	}
	if !s.ready || int(ref.id) >= len(s.table) {
		return nil
	}
	if obj, ok := s.objs[ref]; ok {
		return obj
	}
	e := s.table[ref.id]
	if e.ptr != ref || !e.inStream && e.offset == 0 {
		return nil
	}
	var obj any
	if e.inStream {
		if s.depth >= maxScanDepth {
			// The library, which has no cache, would recurse without
			// end when object streams need each other to be read.
			panic(scanReject{"its object streams refer to each other in a loop"})
		}
		s.depth++
		defer func() { s.depth-- }()
		obj = s.fromObjStm(e.stream.id, ref.id)
	} else {
		def, ok := s.buf(e.offset).object().(scanObjdef)
		if !ok || def.ptr != ref {
			panic(scanFailure{})
		}
		obj = def.obj
	}
	s.objs[ref] = obj
	return obj
}

// fromObjStm reads object id from object stream c (or those it extends).
func (s *pdfScan) fromObjStm(c, id uint32) any {
	seen := map[uint32]bool{}
	for {
		if seen[c] {
			panic(scanReject{"its object streams extend each other in a loop"})
		}
		seen[c] = true
		o := s.objStm(c)
		if o == nil {
			panic(scanFailure{})
		}
		b := &scanBuf{data: o.data, allowEOF: true}
		for range o.n {
			oid, _ := b.token().(int64)
			off, _ := b.token().(int64)
			if uint32(oid) == id {
				at := o.first + off
				if at < 0 {
					panic(scanFailure{})
				}
				b.pos = int(min(at, int64(len(o.data))))
				b.unread, b.eof, b.atEnd = nil, false, false
				obj := b.object()
				if obj == (scanEOF{}) {
					panic(scanFailure{})
				}
				return obj
			}
		}
		ext, ok := s.stmExtends(c)
		if !ok {
			panic(scanFailure{})
		}
		c = ext
	}
}

// stmExtends returns the object number of the object stream that object
// stream c extends, if any.
func (s *pdfScan) stmExtends(c uint32) (uint32, bool) {
	strm, ok := s.value(scanRef{c, 0}).(scanStream)
	if !ok {
		return 0, false
	}
	ext := strm.hdr["Extends"]
	if _, ok := s.value(ext).(scanStream); !ok {
		return 0, false // the library stops there
	}
	// The library reads on in any stream; one that is not an object of
	// its own (written in the dictionary, or read from an object stream)
	// would escape these checks.
	ref, ok := ext.(scanRef)
	if !ok || ref.gen != 0 || s.table[ref.id].inStream {
		panic(scanReject{"an object stream extends a stream that is not an object stream"})
	}
	return ref.id, true
}

// checkObjStm checks the object streams that object stream c is and
// extends, up to one already checked, and records their decoded sizes in
// costs.
func (s *pdfScan) checkObjStm(c uint32, costs map[int64]int64, checked map[uint32]bool) {
	seen := map[uint32]bool{}
	defer func() {
		for c := range seen {
			checked[c] = true
		}
	}()
	for range maxObjStmExtend {
		if checked[c] {
			return
		}
		if seen[c] {
			panic(scanReject{"its object streams extend each other in a loop"})
		}
		seen[c] = true
		if int(c) < len(s.table) && s.table[c].inStream {
			panic(scanReject{"an object stream is inside an object stream"})
		}
		ok := func() (ok bool) {
			defer func() {
				if r := recover(); r != nil {
					if _, fail := r.(scanFailure); !fail {
						panic(r)
					}
				}
			}()
			o := s.objStm(c)
			if o == nil {
				return false
			}
			costs[s.table[c].offset] = int64(len(o.data))
			var ext uint32
			ext, ok = s.stmExtends(c)
			c = ext
			return ok
		}()
		if !ok {
			return
		}
	}
	panic(scanReject{"its object streams extend each other in a loop"})
}

// objStm decodes object stream c, once, and checks it.
func (s *pdfScan) objStm(c uint32) *scanObjStm {
	if o := s.stms[c]; o != nil {
		if o.busy {
			// Reading its dictionary needs itself: the library would
			// recurse without end.
			panic(scanReject{"its object streams refer to each other in a loop"})
		}
		if o.bad {
			return nil
		}
		return o
	}
	s.stms[c] = &scanObjStm{bad: true, busy: true}
	defer func() { s.stms[c].busy = false }()
	strm, ok := s.value(scanRef{c, 0}).(scanStream)
	if !ok || s.value(strm.hdr["Type"]) != scanName("ObjStm") {
		return nil
	}
	o := &scanObjStm{n: scanInt(s.value(strm.hdr["N"])), first: scanInt(s.value(strm.hdr["First"]))}
	if o.first == 0 {
		return nil
	}
	o.data, _ = s.streamData(strm, maxContentStream, false)
	// The library reads n pairs of numbers, on past the end if need be;
	// they take 4n-1 bytes.
	if o.n > (int64(len(o.data))+1)/4 {
		panic(scanReject{fmt.Sprintf("an object stream of %d bytes declares %d objects", len(o.data), o.n)})
	}
	// Wherever the library starts reading (the offsets are the file's),
	// an unterminated hex string at the end makes it read on for ever.
	if i := bytes.LastIndexByte(o.data, '<'); i >= 0 && bytes.IndexFunc(o.data[i+1:], func(r rune) bool {
		return r > 0x7f || !isPDFSpace(byte(r)) && unhexByte(byte(r)) < 0
	}) < 0 {
		panic(scanReject{"an object stream ends inside a hex string"})
	}
	s.stms[c] = o
	return o
}

// streamData decodes a stream as the library does, up to limit bytes: the
// rest is cut off, or the stream refused.
func (s *pdfScan) streamData(strm scanStream, limit int, cut bool) ([]byte, error) {
	length := scanInt(s.value(strm.hdr["Length"]))
	if length == 0 {
		return nil, nil
	}
	lo := min(strm.offset, int64(len(s.data)))
	hi := min(strm.offset+min(max(length, 0), int64(len(s.data))), int64(len(s.data)))
	var rd io.Reader = bytes.NewReader(s.data[lo:hi])
	if s.key != nil {
		rd = s.decrypt(strm.ptr, rd)
	}
	filter := s.value(strm.hdr["Filter"])
	param := s.value(strm.hdr["DecodeParms"])
	switch f := filter.(type) {
	case nil:
	case scanName:
		rd = s.filter(rd, f, param)
	case scanArray:
		for i, name := range f {
			var p any
			if a, ok := param.(scanArray); ok && i < len(a) {
				p = s.value(a[i])
			}
			n, _ := s.value(name).(scanName)
			rd = s.filter(rd, n, p)
		}
	default:
		panic(scanFailure{})
	}
	var buf bytes.Buffer
	_, err := io.Copy(&buf, io.LimitReader(rd, int64(limit)+1))
	s.spend(int64(buf.Len()))
	if buf.Len() > limit {
		if cut {
			return buf.Bytes()[:limit], err
		}
		panic(scanReject{fmt.Sprintf("a stream the library must read decodes to more than %d MB", limit>>20)})
	}
	return buf.Bytes(), err
}

func (s *pdfScan) dictKey(d any, k scanName) any {
	switch d := d.(type) {
	case scanDict:
		return s.value(d[k])
	case scanStream:
		return s.value(d.hdr[k])
	}
	return nil
}

func (s *pdfScan) filter(rd io.Reader, name scanName, param any) io.Reader {
	switch name {
	case "FlateDecode":
		zr, err := zlib.NewReader(rd)
		if err != nil {
			panic(scanFailure{})
		}
		pred := s.dictKey(param, "Predictor")
		if pred == nil {
			return zr
		}
		columns := scanInt(s.dictKey(param, "Columns"))
		if scanInt(pred) != 12 || columns < 0 {
			panic(scanFailure{})
		}
		if columns > maxPNGColumns {
			panic(scanReject{fmt.Sprintf("a stream the library must read has a predictor of %d columns", columns)})
		}
		return &pngUp{r: zr, hist: make([]byte, 1+columns), tmp: make([]byte, 1+columns)}
	case "ASCII85Decode":
		switch param.(type) {
		case scanDict, scanStream:
			panic(scanFailure{})
		}
		return ascii85.NewDecoder(&ascii85Alpha{r: rd})
	}
	panic(scanFailure{})
}

// pngUp and ascii85Alpha read as the library's pngUpReader and
// alphaReader do.
type pngUp struct {
	r         io.Reader
	hist, tmp []byte
	pend      []byte
}

func (p *pngUp) Read(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if len(p.pend) > 0 {
			m := copy(b, p.pend)
			n += m
			b = b[m:]
			p.pend = p.pend[m:]
			continue
		}
		if _, err := io.ReadFull(p.r, p.tmp); err != nil {
			return n, err
		}
		if p.tmp[0] != 2 {
			return n, errors.New("malformed PNG-Up encoding")
		}
		for i, c := range p.tmp {
			p.hist[i] += c
		}
		p.pend = p.hist[1:]
	}
	return n, nil
}

type ascii85Alpha struct {
	r   io.Reader
	eod bool
}

func (a *ascii85Alpha) Read(p []byte) (int, error) {
	if a.eod {
		return 0, io.EOF
	}
	n, err := a.r.Read(p)
	out := 0
	for _, c := range p[:n] {
		if c == '~' {
			a.eod = true
			return out, io.EOF
		}
		if c >= '!' && c <= 'u' || c == 'z' {
			p[out] = c
			out++
		}
	}
	return out, err
}

var pdfPasswordPad = []byte{
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
}

// initEncrypt derives the file key as the library does (with the empty
// password), and reports whether the library can open the file.
func (s *pdfScan) initEncrypt(trailer scanDict) bool {
	enc, _ := s.value(trailer["Encrypt"]).(scanDict)
	if enc["Filter"] != scanName("Standard") {
		return false
	}
	n, _ := enc["Length"].(int64)
	if n == 0 {
		n = 40
	}
	v, _ := enc["V"].(int64)
	if n%8 != 0 || n > 128 || n < 40 || v != 1 && v != 2 && (v != 4 || !scanOkayV4(enc)) {
		return false
	}
	ids, _ := trailer["ID"].(scanArray)
	if len(ids) < 1 {
		return false
	}
	id, ok := ids[0].(string)
	r, _ := enc["R"].(int64)
	o, _ := enc["O"].(string)
	u, _ := enc["U"].(string)
	p, _ := enc["P"].(int64)
	if !ok || r < 2 || r > 4 || len(o) != 32 || len(u) != 32 {
		return false
	}
	h := md5.New()
	h.Write(pdfPasswordPad)
	h.Write([]byte(o))
	h.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
	h.Write([]byte(id))
	key := h.Sum(nil)
	keyLen := int(n / 8)
	if r >= 3 {
		for range 50 {
			h.Reset()
			h.Write(key[:keyLen])
			key = h.Sum(key[:0])
		}
		key = key[:keyLen]
	} else {
		key = key[:5]
	}
	c, err := rc4.NewCipher(key)
	if err != nil {
		return false
	}
	var want []byte
	if r == 2 {
		want = slices.Clone(pdfPasswordPad)
		c.XORKeyStream(want, want)
	} else {
		h.Reset()
		h.Write(pdfPasswordPad)
		h.Write([]byte(id))
		want = h.Sum(nil)
		c.XORKeyStream(want, want)
		for i := 1; i <= 19; i++ {
			k := slices.Clone(key)
			for j := range k {
				k[j] ^= byte(i)
			}
			c, _ = rc4.NewCipher(k)
			c.XORKeyStream(want, want)
		}
	}
	if !strings.HasPrefix(u, string(want)) {
		return false
	}
	s.key, s.aes = key, v == 4
	return true
}

func scanOkayV4(enc scanDict) bool {
	cf, _ := enc["CF"].(scanDict)
	stmf, _ := enc["StmF"].(scanName)
	strf, _ := enc["StrF"].(scanName)
	if cf == nil || stmf == "" || stmf != strf {
		return false
	}
	p, _ := cf[stmf].(scanDict)
	return p != nil && (p["AuthEvent"] == nil || p["AuthEvent"] == scanName("DocOpen")) &&
		(p["Length"] == nil || p["Length"] == int64(16)) && p["CFM"] == scanName("AESV2")
}

// decrypt decrypts the data of the stream of object ptr as the library
// does.
func (s *pdfScan) decrypt(ptr scanRef, rd io.Reader) io.Reader {
	h := md5.New()
	h.Write(s.key)
	h.Write([]byte{byte(ptr.id), byte(ptr.id >> 8), byte(ptr.id >> 16), byte(ptr.gen), byte(ptr.gen >> 8)})
	if s.aes {
		h.Write([]byte("sAlT"))
	}
	key := h.Sum(nil)
	if !s.aes {
		c, _ := rc4.NewCipher(key)
		return &cipher.StreamReader{S: c, R: rd}
	}
	block, _ := aes.NewCipher(key)
	iv := make([]byte, 16)
	_, _ = io.ReadFull(rd, iv)
	return &cbcDecrypter{mode: cipher.NewCBCDecrypter(block, iv), r: rd, buf: make([]byte, 16)}
}

type cbcDecrypter struct {
	mode cipher.BlockMode
	r    io.Reader
	buf  []byte
	pend []byte
}

func (c *cbcDecrypter) Read(b []byte) (int, error) {
	if len(c.pend) == 0 {
		if _, err := io.ReadFull(c.r, c.buf); err != nil {
			return 0, err
		}
		c.mode.CryptBlocks(c.buf, c.buf)
		c.pend = c.buf
	}
	n := copy(b, c.pend)
	c.pend = c.pend[n:]
	return n, nil
}

// cmapSafe reports whether the library's CMap reader can be let read a
// ToUnicode CMap: it runs it as the reader does (a small PostScript
// interpreter) and counts the entries each end of a block reads, the
// count of the last begin of a block, a number from the file, again at
// each end. It also refuses an unterminated hex string at the end, which
// the reader reads for ever.
func cmapSafe(data []byte) (safe bool) {
	const maxEntries = 1 << 20
	defer func() {
		if r := recover(); r != nil {
			// The reader stops at a panic; a hex string at the end is a
			// hang.
			_, hang := r.(scanReject)
			safe = !hang
		}
	}()
	b := &scanBuf{data: data, allowEOF: true, ps: true}
	var stk []any
	var dicts []scanDict
	pop := func() any {
		if len(stk) == 0 {
			return nil
		}
		v := stk[len(stk)-1]
		stk = stk[:len(stk)-1]
		return v
	}
	n, entries := int64(-1), int64(0)
	ok := true
	// op runs readCmap's operators; false once it panics (and the reader
	// with it).
	op := func(name string) bool {
		if !ok {
			return true
		}
		switch name {
		case "findresource":
			pop()
			pop()
			stk = append(stk, scanDict{})
		case "begincmap":
			stk = append(stk, scanDict{})
		case "endcmap":
			pop()
		case "begincodespacerange", "beginbfchar", "beginbfrange":
			n = scanInt(pop())
		case "endcodespacerange":
			if n < 0 {
				ok = false
				return true
			}
			entries += n
			for range min(n, maxEntries+1) {
				hi, _ := pop().(string)
				lo, _ := pop().(string)
				if len(lo) == 0 || len(lo) != len(hi) {
					ok = false
					return true
				}
				if len(lo) > 4 {
					return false // an index out of range
				}
			}
			n = -1
		case "endbfchar", "endbfrange":
			if n < 0 {
				return false
			}
			entries += n
			k := 2
			if name == "endbfrange" {
				k = 3
			}
			for range min(n, maxEntries+1) * int64(k) {
				pop()
			}
		case "defineresource":
			pop()
			v := pop()
			pop()
			stk = append(stk, v)
		}
		return true
	}
	for {
		if entries > maxEntries || len(stk) > 1<<20 {
			return false
		}
		tok := b.token()
		if tok == (scanEOF{}) {
			return true
		}
		if kw, isKw := tok.(scanKeyword); isKw {
			switch kw {
			case "null", "[", "]", "<<", ">>":
			case "dict":
				pop()
				stk = append(stk, scanDict{})
				continue
			case "currentdict":
				if len(dicts) == 0 {
					return true
				}
				stk = append(stk, dicts[len(dicts)-1])
				continue
			case "begin":
				d, isDict := pop().(scanDict)
				if !isDict {
					return true
				}
				dicts = append(dicts, d)
				continue
			case "end":
				if len(dicts) == 0 {
					return true
				}
				dicts = dicts[:len(dicts)-1]
				continue
			case "def":
				v := pop()
				if len(dicts) == 0 {
					continue
				}
				if k, isName := pop().(scanName); isName {
					dicts[len(dicts)-1][k] = v
				}
				continue
			case "pop":
				pop()
				continue
			default:
				found := false
				for i := len(dicts) - 1; i >= 0 && !found; i-- {
					if v, def := dicts[i][scanName(kw)]; def {
						stk = append(stk, v)
						found = true
					}
				}
				if !found && !op(string(kw)) {
					return true
				}
				continue
			}
		}
		b.unread = append(b.unread, tok)
		if obj, parsed := cmapObject(b); parsed {
			stk = append(stk, obj)
		}
	}
}

// cmapObject reads an object as the CMap reader does, which skips one it
// cannot parse.
func cmapObject(b *scanBuf) (obj any, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, fail := r.(scanFailure); !fail {
				panic(r)
			}
			obj, ok = nil, false
		}
	}()
	b.depth = 0
	return b.object(), true
}
