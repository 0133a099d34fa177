package pdf

import (
	"bytes"
	"fmt"
	"io"
)

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
