// Package syncbuf is a bytes.Buffer safe for concurrent use: a log sink
// that a server's goroutines write to while a test reads it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer whose content can be read at any time.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
