package botruntime

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// The protocol between the server and a bot process: frames of JSON, each
// preceded by its length (4 bytes, big endian), over the process's stdin
// (server to bot) and stdout (bot to server).
//
// Server to bot: first the bot's code (its length, then its bytes, not
// JSON), then "invoke" (run a handler or an action), "reply" (a server
// function's answer).
// Bot to server: "native" (call a server function), "log" (a log line),
// "result" (an invocation's outcome).
type frame struct {
	ID uint64 `json:"id,omitempty"` // the invocation
	Op string `json:"op"`
	// invoke: "handle" (args: event, message, conversation, ctx) or
	// "action" (args: name, input, ctx), and the deadline in ms.
	Kind    string   `json:"kind,omitempty"`
	Args    []string `json:"args,omitempty"`
	Timeout int64    `json:"timeout,omitempty"`
	// native: the function; log: the level.
	Name string `json:"name,omitempty"`
	// native, reply: JSON text; log: the line; result: the handler's
	// outcome as JSON.
	Data string `json:"data,omitempty"`
	// result: how the invocation failed, and log lines not sent.
	Err     *frameError `json:"err,omitempty"`
	Dropped int         `json:"dropped,omitempty"`
}

// frameError is a failed invocation: Kind "script" (thrown by the code),
// "deadline" (stopped at the deadline), "load" (the code failed while
// loading: Message wraps a script or deadline error).
type frameError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Deadline bool   `json:"deadline,omitempty"` // load: it was the deadline
}

// maxFrame bounds one frame; the code is sent as raw bytes, outside frames.
const maxFrame = 64 << 20

// frameWriter writes frames from several goroutines.
type frameWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newFrameWriter(w io.Writer) *frameWriter { return &frameWriter{w: bufio.NewWriter(w)} }

func (fw *frameWriter) write(f frame) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return err
	}
	return fw.writeRaw(buf.Bytes())
}

// writeRaw writes b preceded by its length.
func (fw *frameWriter) writeRaw(b []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := fw.w.Write(n[:]); err != nil {
		return err
	}
	if _, err := fw.w.Write(b); err != nil {
		return err
	}
	return fw.w.Flush()
}

// readRaw reads bytes written by writeRaw, at most limit of them.
func readRaw(r *bufio.Reader, limit uint32) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > limit {
		return nil, fmt.Errorf("bot process protocol: a frame of %d bytes", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readFrame reads the next frame.
func readFrame(r *bufio.Reader) (frame, error) {
	b, err := readRaw(r, maxFrame)
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		return frame{}, fmt.Errorf("bot process protocol: %w", err)
	}
	return f, nil
}
