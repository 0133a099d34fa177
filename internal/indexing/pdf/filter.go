package pdf

import (
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
	"strings"
)

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
