package parse

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestSlowHunt(t *testing.T) {
	if os.Getenv("SLOW_HUNT") == "" {
		t.Skip()
	}
	PDFTimeout = 3 * time.Second
	seeds := [][]byte{fixture(t, "handmade.pdf"), fixture(t, "libreoffice.pdf"), fixture(t, "owner_only_aes128.pdf")}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for i := range 20000 {
		data := mutate(rng, seeds[i%len(seeds)], i)
		if rng.IntN(2) == 0 {
			data = mutate(rng, data, rng.IntN(5))
		}
		start := time.Now()
		_, err := parsePDF(data)
		if d := time.Since(start); d > 500*time.Millisecond {
			os.WriteFile("/tmp/slow_"+time.Now().Format("150405.000")+".pdf", data, 0o644)
			t.Logf("input %d took %v: %v", i, d, err)
		}
	}
}

func FuzzSlow(f *testing.F) {
	f.Add(fixture(f, "handmade.pdf"))
	f.Add(fixture(f, "owner_only_rc4.pdf"))
	f.Fuzz(func(t *testing.T, data []byte) {
		os.WriteFile("/tmp/cur_"+itoa(os.Getpid())+".pdf", data, 0o644)
		_, _ = parsePDF(data)
	})
}

func itoa(i int) string {
	s := ""
	for i > 0 {
		s = string(rune('0'+i%10)) + s
		i /= 10
	}
	return s
}
