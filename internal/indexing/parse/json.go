package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

const maxJSONDepth = 1000

// parseJSON flattens a JSON document into "path.to.key: value" lines (array
// elements as [i]), in the order of the file, one paragraph block per
// top-level key (or per element of a top-level array).
func parseJSON(s string) ([]doc.Block, error) {
	f := jsonFlattener{dec: json.NewDecoder(strings.NewReader(s)), src: s}
	f.dec.UseNumber()
	blocks, err := f.document()
	if err != nil {
		return nil, f.describe(err)
	}
	return blocks, nil
}

type jsonFlattener struct {
	dec *json.Decoder
	src string
	b   strings.Builder
	out doc.Blocks
}

var errJSONDepth = errors.New("it is nested too deeply")

func (f *jsonFlattener) document() ([]doc.Block, error) {
	tok, err := f.dec.Token()
	if err == io.EOF {
		return nil, errors.New("the JSON is not valid: the file is empty")
	}
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		for f.dec.More() {
			key, err := f.key()
			if err != nil {
				return nil, err
			}
			if err := f.value(key, 1); err != nil {
				return nil, err
			}
			f.flush()
		}
	case json.Delim('['):
		for i := 0; f.dec.More(); i++ {
			if err := f.value("["+strconv.Itoa(i)+"]", 1); err != nil {
				return nil, err
			}
			f.flush()
		}
	default:
		f.scalar("", tok)
		f.flush()
	}
	if _, ok := tok.(json.Delim); ok {
		if _, err := f.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	end := f.dec.InputOffset()
	if _, err := f.dec.Token(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		for end < int64(len(f.src)) && strings.IndexByte(" \t\r\n", f.src[end]) >= 0 {
			end++
		}
		return nil, &json.SyntaxError{Offset: end}
	}
	return f.out, nil
}

func (f *jsonFlattener) flush() {
	f.out.Add(doc.Paragraph, 0, f.b.String(), 0)
	f.b.Reset()
}

func (f *jsonFlattener) key() (string, error) {
	tok, err := f.dec.Token()
	if err != nil {
		return "", err
	}
	k, _ := tok.(string)
	return k, nil
}

// value reads one value and writes its lines under path.
func (f *jsonFlattener) value(path string, depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	tok, err := f.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		if !f.dec.More() {
			f.line(path, "{}")
		}
		for f.dec.More() {
			key, err := f.key()
			if err != nil {
				return err
			}
			if err := f.value(path+"."+key, depth+1); err != nil {
				return err
			}
		}
		_, err = f.dec.Token()
		return err
	case json.Delim('['):
		if !f.dec.More() {
			f.line(path, "[]")
		}
		for i := 0; f.dec.More(); i++ {
			if err := f.value(path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err = f.dec.Token()
		return err
	}
	f.scalar(path, tok)
	return nil
}

func (f *jsonFlattener) scalar(path string, tok json.Token) {
	switch v := tok.(type) {
	case string:
		f.line(path, doc.CollapseSpace(v))
	case json.Number:
		f.line(path, v.String())
	case bool:
		f.line(path, strconv.FormatBool(v))
	case nil:
		f.line(path, "null")
	}
}

func (f *jsonFlattener) line(path, value string) {
	if f.b.Len() > 0 {
		f.b.WriteByte('\n')
	}
	if path != "" {
		f.b.WriteString(path)
		f.b.WriteString(": ")
	}
	f.b.WriteString(value)
}

// describe turns a decoding error into one that names the line.
func (f *jsonFlattener) describe(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(f.src, se.Offset)
		msg := se.Error()
		if msg == "" {
			msg = "unexpected data after the end of the JSON value"
		}
		return fmt.Errorf("the JSON is not valid: line %d, column %d: %s", line, col, msg)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("the JSON is not valid: the file ends before the JSON value does (is it cut short?)")
	case errors.Is(err, errJSONDepth):
		line, col := lineCol(f.src, f.dec.InputOffset())
		return fmt.Errorf("the JSON is not valid: line %d, column %d: it is nested more than %d levels deep", line, col, maxJSONDepth)
	case strings.HasPrefix(err.Error(), "the JSON"):
		return err
	}
	return fmt.Errorf("the JSON is not valid: %v", err)
}

// lineCol returns the 1-based line and column of byte offset off in s.
func lineCol(s string, off int64) (int, int) {
	if off > int64(len(s)) {
		off = int64(len(s))
	}
	if off < 0 {
		off = 0
	}
	before := s[:off]
	line := 1 + strings.Count(before, "\n")
	col := int(off) - strings.LastIndexByte(before, '\n')
	return line, col
}
