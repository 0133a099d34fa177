// Package parse turns an uploaded file into a doc.Document: the plain text of
// the file, cut into structural blocks (headings, paragraphs, lists, tables,
// code, quotes) in reading order, for the chunker.
//
// Parse picks a parser from the file's content type (or, when that says
// nothing, from the extension of its key). Every parser is written to be fed
// untrusted bytes: a file it cannot read yields an error whose message says
// what is wrong in words a user can act on, never a panic.
package parse

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/pdf"
)

// The content types Parse understands, in the order the unsupported error
// lists them.
const (
	TypeText     = "text/plain"
	TypeMarkdown = "text/markdown"
	TypeHTML     = "text/html"
	TypePDF      = "application/pdf"
	TypeDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	TypeCSV      = "text/csv"
	TypeJSON     = "application/json"
)

// Supported lists the content types that can be indexed.
var Supported = []string{TypeText, TypeMarkdown, TypeHTML, TypePDF, TypeDOCX, TypeCSV, TypeJSON}

// UnsupportedError is returned for a file whose type no parser reads.
type UnsupportedError struct {
	// Type is the content type the file was uploaded with, or its
	// extension when the content type said nothing.
	Type string
}

func (e *UnsupportedError) Error() string {
	t := e.Type
	if t == "" {
		t = "unknown"
	}
	return fmt.Sprintf("files of type %s cannot be indexed; supported: %s", t, strings.Join(Supported, ", "))
}

// aliases maps other names in use for the supported types to their
// canonical content type.
var aliases = map[string]string{
	TypeText:                TypeText,
	TypeMarkdown:            TypeMarkdown,
	"text/x-markdown":       TypeMarkdown,
	TypeHTML:                TypeHTML,
	"application/xhtml+xml": TypeHTML,
	TypePDF:                 TypePDF,
	"application/x-pdf":     TypePDF,
	TypeDOCX:                TypeDOCX,
	TypeCSV:                 TypeCSV,
	"text/x-csv":            TypeCSV,
	"application/csv":       TypeCSV,
	TypeJSON:                TypeJSON,
	"text/json":             TypeJSON,
}

// extensions maps a key's extension to the content type it implies.
var extensions = map[string]string{
	".txt":      TypeText,
	".text":     TypeText,
	".md":       TypeMarkdown,
	".markdown": TypeMarkdown,
	".html":     TypeHTML,
	".htm":      TypeHTML,
	".pdf":      TypePDF,
	".docx":     TypeDOCX,
	".csv":      TypeCSV,
	".json":     TypeJSON,
}

// Detect returns the canonical content type Parse would use for a file, or
// an *UnsupportedError.
func Detect(contentType, key string) (string, error) {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	ext := strings.ToLower(path.Ext(key))
	switch mt {
	case "", "application/octet-stream", "binary/octet-stream":
		if t, ok := extensions[ext]; ok {
			return t, nil
		}
		if mt == "" {
			if ext != "" {
				return "", &UnsupportedError{Type: ext}
			}
			return "", &UnsupportedError{}
		}
		return "", &UnsupportedError{Type: mt}
	case "application/vnd.ms-excel":
		// What browsers on Windows send for a .csv file.
		if ext == ".csv" {
			return TypeCSV, nil
		}
	}
	if t, ok := aliases[mt]; ok {
		return t, nil
	}
	return "", &UnsupportedError{Type: mt}
}

// Parse reads content as the given content type (parameters such as
// "; charset=utf-8" are allowed; a charset other than UTF-8 is honoured for
// the text formats). An empty or application/octet-stream content type falls
// back to the extension of key.
func Parse(contentType, key string, content []byte) (doc.Document, error) {
	t, err := Detect(contentType, key)
	if err != nil {
		return doc.Document{}, err
	}
	charset := charsetParam(contentType)
	var blocks []doc.Block
	switch t {
	case TypeText:
		var s string
		if s, err = decodeText(content, charset, "text file"); err == nil {
			blocks = parseText(s)
		}
	case TypeMarkdown:
		var s string
		if s, err = decodeText(content, charset, "Markdown file"); err == nil {
			blocks = parseMarkdown([]byte(s))
		}
	case TypeHTML:
		blocks, err = parseHTML(content, contentType)
	case TypePDF:
		blocks, err = pdf.Parse(content)
	case TypeDOCX:
		blocks, err = parseDOCX(content)
	case TypeCSV:
		var s string
		if s, err = decodeText(content, charset, "CSV file"); err == nil {
			blocks, err = parseCSV(s)
		}
	case TypeJSON:
		var s string
		if s, err = decodeText(content, charset, "JSON file"); err == nil {
			blocks, err = parseJSON(s)
		}
	}
	if err != nil {
		return doc.Document{}, err
	}
	return doc.Document{Blocks: blocks}, nil
}

// charsetParam returns the lower-cased charset parameter of a content type,
// or "".
func charsetParam(contentType string) string {
	_, params, ok := strings.Cut(contentType, ";")
	if !ok {
		return ""
	}
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "charset") {
			return strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	return ""
}

// decodeText returns content as a UTF-8 string: a byte-order mark is
// dropped, UTF-16 (with a byte-order mark) is converted, and so is a
// declared charset other than UTF-8. Anything else must be valid UTF-8.
func decodeText(content []byte, charset, what string) (string, error) {
	switch {
	case bytes.HasPrefix(content, []byte{0xEF, 0xBB, 0xBF}):
		content = content[3:]
		charset = ""
	case bytes.HasPrefix(content, []byte{0xFF, 0xFE}):
		return decodeUTF16(content[2:], false), nil
	case bytes.HasPrefix(content, []byte{0xFE, 0xFF}):
		return decodeUTF16(content[2:], true), nil
	}
	switch charset {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
	default:
		enc, err := htmlindex.Get(charset)
		if err != nil {
			return "", fmt.Errorf("the %s declares the unknown character set %q; save it as UTF-8 and upload it again", what, charset)
		}
		out, _, err := transform.Bytes(enc.NewDecoder(), content)
		if err != nil {
			return "", fmt.Errorf("the %s could not be decoded as %s: %v", what, charset, err)
		}
		content = out
	}
	if !utf8.Valid(content) {
		line := 1 + bytes.Count(content[:invalidUTF8Offset(content)], []byte{'\n'})
		return "", fmt.Errorf("the %s is not valid UTF-8 text (first invalid byte on line %d); save it as UTF-8 and upload it again", what, line)
	}
	return string(content), nil
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// ErrNoText is returned for a PDF that is read without error but holds no
// text (see pdf.ErrNoText).
var ErrNoText = pdf.ErrNoText

// errTooLarge is returned when a file expands past what a parser is willing
// to hold.
var errTooLarge = errors.New("the file expands to too much text to index")
