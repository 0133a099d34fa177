package parse

import (
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/doc"
	"github.com/botplatform/botplatform/internal/indexing/parse/parsetest"
)

// Fuzz targets of the document parsers, one per format (FuzzParseDOCX
// sits with its parser's tests; FuzzParsePDF and FuzzRenderPDF with the
// PDF package's). Seeds
// are in testdata/fuzz/<FuzzName>/.

// fuzzParse parses data as contentType and checks it as parsetest.Fuzz
// does.
func fuzzParse(t *testing.T, contentType string, data []byte) {
	t.Helper()
	parsetest.Fuzz(t, contentType, func(data []byte) ([]doc.Block, error) {
		d, err := Parse(contentType, "", data)
		return d.Blocks, err
	}, data)
}

func FuzzParseText(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeText, data) })
}

func FuzzParseMarkdown(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeMarkdown, data) })
}

func FuzzParseHTML(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeHTML, data) })
}

func FuzzParseCSV(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeCSV, data) })
}

func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TypeJSON, data) })
}
