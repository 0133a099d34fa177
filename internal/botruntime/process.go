package botruntime

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/botplatform/botplatform/internal/platform"
)

// The bot process: `botplatform bot-vm`, started by the server for each bot
// (see host.go). It runs the bot's code in warm VMs, several invocations at
// once, and reaches the server only through the protocol of frame.go. Its
// memory is bounded: past the limit it exits (exitMemory) and the server
// fails the event at fault.

// exitMemory is the exit status of a bot process that passed its memory
// limit.
const exitMemory = 3

// Process runs a bot process on stdin and stdout: args are its flags
// (--memory BYTES, --check). With --check it compiles the code, answers
// whether it compiles and exits. It returns when stdin ends.
func Process(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bot-vm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	memory := fs.Int64("memory", DefaultMemory(), "memory limit in bytes")
	check := fs.Bool("check", false, "compile the code, answer and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	limitMemory(*memory, stderr)
	if f, ok := stdin.(*os.File); ok {
		stdin = pollable(f)
	}
	if f, ok := stdout.(*os.File); ok {
		stdout = pollable(f)
	}
	in := bufio.NewReaderSize(stdin, 64<<10)
	code, err := readRaw(in, maxCode)
	if err != nil {
		return fmt.Errorf("bot process: reading the code: %w", err)
	}
	p := &botProcess{out: newFrameWriter(stdout), idle: make(chan *vm, 256), running: map[uint64]*invocation{}}
	p.prog, err = compile(string(code))
	code = nil
	ready := frame{Op: "ready"}
	if e, ok := platform.AsError(err); ok {
		ready.Err = &frameError{Kind: "compile", Message: e.Message}
	}
	if err := p.out.write(ready); err != nil || *check || p.prog == nil {
		return err
	}
	for {
		f, err := readFrame(in)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the server closed the process: it has no more work
			}
			return err
		}
		switch f.Op {
		case "invoke":
			go p.invoke(f)
		case "reply":
			p.mu.Lock()
			inv := p.running[f.ID]
			p.mu.Unlock()
			if inv != nil {
				inv.replies <- f.Data
			}
		}
	}
}

// pollable puts a pipe the process was given (its stdin, its stdout) in
// non-blocking mode, so that a goroutine waiting on it parks in the
// runtime's poller and leaves its P to the goroutines it has woken. A
// blocking read keeps the P while it waits: an invocation the reader has
// just woken (a new one, or one given its server function's reply) then
// waits until another thread steals it or the runtime's monitor takes the
// P back, up to milliseconds.
func pollable(f *os.File) *os.File {
	if err := setNonblock(f.Fd()); err != nil {
		return f
	}
	return os.NewFile(f.Fd(), f.Name())
}

// maxCode bounds the code a bot process reads (the API allows 50 MB).
const maxCode = 64 << 20

// limitMemory bounds the process's memory: the Go runtime collects harder
// near the limit, a watchdog exits the process past it, one goroutine's
// stack is bounded by it, and the address space by twice the limit over
// what the process maps at start, so that a single huge allocation fails at
// once instead of taking the machine's memory.
func limitMemory(limit int64, stderr io.Writer) {
	debug.SetMemoryLimit(limit)
	debug.SetMaxStack(int(max(limit/4, 16<<20)))
	if vsz := mappedBytes(); vsz > 0 {
		as := uint64(vsz) + 2*uint64(limit) + 256<<20
		limitAddressSpace(as)
	}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			metrics.Read(samples)
			used := int64(samples[0].Value.Uint64() - samples[1].Value.Uint64())
			if used > limit {
				fmt.Fprintf(stderr, "bot process: memory limit of %d bytes passed (%d bytes)\n", limit, used)
				os.Exit(exitMemory)
			}
		}
	}()
}

// mappedBytes is the process's virtual memory size (VmSize), 0 if unknown.
func mappedBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// botProcess is the state of a bot process: its compiled code, its warm
// VMs and the invocations running.
type botProcess struct {
	out  *frameWriter
	prog *goja.Program
	idle chan *vm

	mu      sync.Mutex
	running map[uint64]*invocation
}

// invocation is one invocation in a bot process; its VM reaches the server
// through it.
type invocation struct {
	p       *botProcess
	id      uint64
	replies chan string
	lines   int
	dropped int
}

func (in *invocation) native(name, data string) string {
	if err := in.p.out.write(frame{ID: in.id, Op: "native", Name: name, Data: data}); err != nil {
		os.Exit(1) // the server is gone
	}
	return <-in.replies
}

// log sends a log line to the server, cut to maxLogLine; past maxLogLines
// lines it only counts them.
func (in *invocation) log(level, line string) {
	if in.lines >= maxLogLines {
		in.dropped++
		return
	}
	in.lines++
	if err := in.p.out.write(frame{ID: in.id, Op: "log", Name: level, Data: cutLine(line)}); err != nil {
		os.Exit(1)
	}
}

// invoke runs one invocation on a warm VM (or a new one) and sends its
// result. A VM stopped at its deadline or broken is dropped.
func (p *botProcess) invoke(f frame) {
	inv := &invocation{p: p, id: f.ID, replies: make(chan string, 1)}
	p.mu.Lock()
	p.running[f.ID] = inv
	p.mu.Unlock()
	timeout := time.Duration(f.Timeout) * time.Millisecond
	out, err := p.run(inv, f, timeout)
	p.mu.Lock()
	delete(p.running, f.ID)
	p.mu.Unlock()
	res := frame{ID: f.ID, Op: "result", Data: out, Dropped: inv.dropped}
	if err != nil {
		res.Err = errorFrame(err)
	}
	if err := p.out.write(res); err != nil {
		os.Exit(1)
	}
}

// run runs the invocation; loading the code in a new VM counts in its
// deadline.
func (p *botProcess) run(inv *invocation, f frame, timeout time.Duration) (string, error) {
	start := time.Now()
	var v *vm
	select {
	case v = <-p.idle:
		v.cur = inv
	default:
		var err error
		if v, err = newVM(p.prog, timeout, inv); err != nil {
			return "", err
		}
	}
	left := timeout - time.Since(start)
	if left <= 0 {
		return "", &DeadlineError{After: timeout}
	}
	if len(f.Args) != 4 && len(f.Args) != 3 {
		return "", fmt.Errorf("bot process protocol: %d arguments", len(f.Args))
	}
	out, err := v.run(left, func() (goja.Value, error) {
		args := make([]goja.Value, len(f.Args))
		for i, a := range f.Args {
			args[i] = v.rt.ToValue(a)
		}
		if f.Kind == "action" {
			return v.action(goja.Undefined(), args...)
		}
		return v.handle(goja.Undefined(), args...)
	})
	var de *DeadlineError
	if errors.As(err, &de) {
		return "", &DeadlineError{After: timeout}
	}
	if !v.broken {
		v.cur = nil
		select {
		case p.idle <- v:
		default:
		}
	}
	return out, err
}

// errorFrame and frameErr carry an invocation's error across the protocol.
func errorFrame(err error) *frameError {
	var de *DeadlineError
	var le *loadError
	switch {
	case errors.As(err, &le):
		return &frameError{Kind: "load", Message: le.err.Error(), Deadline: errors.As(le.err, &de)}
	case errors.As(err, &de):
		return &frameError{Kind: "deadline", Message: err.Error()}
	}
	return &frameError{Kind: "script", Message: err.Error()}
}

func frameErr(fe *frameError, timeout time.Duration) error {
	if fe == nil {
		return nil
	}
	var err error = &ScriptError{Message: fe.Message}
	if fe.Kind == "deadline" || fe.Deadline {
		err = &DeadlineError{After: timeout}
	}
	if fe.Kind == "load" {
		err = &loadError{err}
	}
	return err
}
