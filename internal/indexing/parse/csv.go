package parse

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/indexing/doc"
)

// csvRowsPerBlock is how many data rows go into one table block.
const csvRowsPerBlock = 20

// parseCSV renders every data row as "header: value; header2: value2" (empty
// cells left out), so that each passage says what its numbers are, and
// groups the rows into table blocks of csvRowsPerBlock. The delimiter is a
// comma unless the first line has none and has semicolons or tabs.
func parseCSV(s string) ([]doc.Block, error) {
	blocks, err := readCSV(s, false)
	var pe *csv.ParseError
	if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrBareQuote) {
		// A quote inside an unquoted field (5" screen) is common enough
		// to read leniently; an unbalanced quoted field is not.
		blocks, err = readCSV(s, true)
	}
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("the CSV is not valid: line %d: %v", pe.Line, pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("the CSV is not valid: %v", err)
	}
	return blocks, nil
}

func readCSV(s string, lazy bool) ([]doc.Block, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.Comma = csvDelimiter(s)
	r.FieldsPerRecord = -1
	r.LazyQuotes = lazy
	r.ReuseRecord = true

	var out doc.Blocks
	var header []string
	var b strings.Builder
	var row bytes.Buffer
	rows := 0
	flush := func() {
		if rows > 0 {
			out.Add(doc.Table, 0, b.String(), 0)
			b.Reset()
			rows = 0
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if header == nil {
			header = make([]string, len(rec))
			for i, h := range rec {
				header[i] = doc.CollapseSpace(h)
			}
			continue
		}
		row.Reset()
		for i, v := range rec {
			v = doc.CollapseSpace(v)
			if v == "" {
				continue
			}
			if row.Len() > 0 {
				row.WriteString("; ")
			}
			if i < len(header) && header[i] != "" {
				row.WriteString(header[i])
			} else {
				row.WriteString("column ")
				row.WriteString(strconv.Itoa(i + 1))
			}
			row.WriteString(": ")
			row.WriteString(v)
		}
		if row.Len() == 0 {
			continue
		}
		if rows > 0 {
			b.WriteByte('\n')
		}
		b.Write(row.Bytes())
		rows++
		if rows == csvRowsPerBlock {
			flush()
		}
	}
	flush()
	if len(out) == 0 && len(header) > 0 {
		// Only a header row.
		out.Add(doc.Table, 0, strings.Join(header, " | "), 0)
	}
	return out, nil
}

// csvDelimiter picks the field delimiter from the first line.
func csvDelimiter(s string) rune {
	first, _, _ := strings.Cut(s, "\n")
	if strings.ContainsRune(first, ',') {
		return ','
	}
	semi, tab := strings.Count(first, ";"), strings.Count(first, "\t")
	switch {
	case tab > semi:
		return '\t'
	case semi > 0:
		return ';'
	}
	return ','
}
