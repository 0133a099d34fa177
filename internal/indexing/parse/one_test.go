package parse

import (
	"os"
	"testing"
	"time"
)

func TestOne(t *testing.T) {
	f := os.Getenv("ONE")
	if f == "" {
		t.Skip()
	}
	PDFTimeout = 5 * time.Second
	data, _ := os.ReadFile(f)
	start := time.Now()
	d, err := parsePDF(data)
	t.Logf("%v %d blocks %v", time.Since(start), len(d), err)
}
