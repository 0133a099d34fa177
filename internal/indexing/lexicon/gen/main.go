// Command gen writes the lexicon table from a WordNet 3.0 database
// directory: go run ./internal/indexing/lexicon/gen -dict DIR -out FILE
// (scripts/gen-lexicon fetches Debian's wordnet-base and runs it). The
// output is gzip-compressed and the same for the same input.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"

	"github.com/botplatform/botplatform/internal/indexing/lexicon"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet database directory")
	out := flag.String("out", "internal/indexing/lexicon/wordnet.txt.gz", "table to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dict, out string) error {
	t, err := lexicon.FromWordNet(dict)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression) // no name, no time: reproducible
	if err != nil {
		return err
	}
	if _, err := zw.Write(t.Encode()); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Printf("%d lemmas, %d bytes compressed\n", len(t.Entries), b.Len())
	return os.WriteFile(out, b.Bytes(), 0o644)
}
