package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestDump(t *testing.T) {
	f := os.Getenv("PARSE_DUMP")
	if f == "" {
		t.Skip()
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(os.Getenv("PARSE_TYPE"), filepath.Base(f), b)
	if err != nil {
		fmt.Println("ERROR:", err)
		return
	}
	for _, bl := range d.Blocks {
		fmt.Printf("[%s L%d p%d] %q\n", bl.Kind, bl.Level, bl.Page, bl.Text)
	}
}
