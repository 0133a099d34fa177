package harness

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Words are what the tools write their Markdown files and queries with.
var Words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu invoice refund shipping
warranty password account login payment delivery order return exchange support contact`)

// Markdown is a Markdown document of about size bytes to index: sections
// of paragraphs of random words.
func Markdown(rng *rand.Rand, size int) []byte {
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, "## %s %s\n\n", Words[rng.IntN(len(Words))], Words[rng.IntN(len(Words))])
		for range 3 + rng.IntN(6) {
			for range 8 + rng.IntN(20) {
				b.WriteString(Words[rng.IntN(len(Words))])
				b.WriteByte(' ')
			}
			b.WriteString(".\n")
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
