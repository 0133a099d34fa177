package nodehost

import (
	"bufio"
	"io"
	"regexp"
	"strings"
)

const (
	maxRawLine   = 16 << 10 // longer raw output lines are cut
	maxTailBytes = 2 << 10  // stderr kept for the error of a crash
)

// readLines calls fn for each line of r, without its line ending and cut to max bytes, until r ends. fn must
// not keep the slice.
func readLines(r io.Reader, max int, fn func([]byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			fn([]byte(strings.TrimRight(strings.ToValidUTF8(string(line), "\uFFFD"), "\r\n")))
		}
		if cap(line) > 1<<20 {
			line = nil // do not hold on to the buffer of one large answer
		} else {
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}

var (
	// What node and V8 print when memory runs out: V8's heap limit, or a failed allocation under RLIMIT_DATA.
	oomText = regexp.MustCompile(`JavaScript heap out of memory|process out of memory|std::bad_alloc|Allocation failed`)
	// V8's native stack frames and banners after a fatal error say nothing to a bot developer.
	noiseText = regexp.MustCompile(`^\s*\d+: 0x[0-9a-f]+|^\s*<--- .* --->\s*$|^----- .* -----$|^\[\d+:0x[0-9a-f]+\]`)
)

// stderrTail keeps the last lines of stderr and whether they reported running out of memory.
type stderrTail struct {
	lines []string
	size  int
	oom   bool
}

func (t *stderrTail) add(line string) {
	if oomText.MatchString(line) {
		t.oom = true
	}
	if strings.TrimSpace(line) == "" || noiseText.MatchString(line) {
		return
	}
	if len(line) > 512 {
		line = strings.ToValidUTF8(line[:512], "") + "…"
	}
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > maxTailBytes {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *stderrTail) String() string { return strings.Join(t.lines, "\n") }
