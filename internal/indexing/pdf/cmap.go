package pdf

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
