package botruntime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sandbox"
)

// The server's side of bot processes (process.go): one process per bot,
// running the bot's current code, kept while the bot has events. The server
// owns each invocation's deadline: a process that has not answered by the
// deadline and killGrace is killed, which stops code the VM's own interrupt
// cannot (a backtracking regular expression, JSON.stringify of a deep
// structure, a getter run after the handler).

// killGrace is how long past an invocation's deadline its process may take
// to answer before it is killed.
const killGrace = time.Second

// compileTimeout bounds the compilation of a bot's code (at deploy time and
// when a process starts).
const compileTimeout = 20 * time.Second

// errProcessLost is an invocation whose process was killed for another
// reason than it: another invocation's deadline, or the server stopping.
// The event is handed back and runs again.
var errProcessLost = errors.New("the bot's process was stopped while it ran the event; it will run again")

// CrashError is an invocation whose process died of something bot code did
// (it used too much memory, say). Alone tells that it was the only
// invocation running in the process, hence the one at fault.
type CrashError struct {
	Reason string
	Alone  bool
	// compile: it happened while the code was compiled; "memory" or
	// "time" when compiling it cost too much.
	compile string
}

func (e *CrashError) Error() string { return e.Reason }

// host is a bot process as the server sees it.
type host struct {
	r              *Runtime
	botID, version string
	ready          chan struct{} // closed once started; startErr set
	startErr       error
	exited         chan struct{} // closed when the process is gone

	cmd      *exec.Cmd
	out      *frameWriter
	stdin    io.Closer
	stderr   *tailBuffer
	closeIn  sync.Once
	lastUsed time.Time // guarded by Runtime.hostsMu

	mu      sync.Mutex
	calls   map[uint64]*hostCall
	next    uint64
	killed  bool   // by the server: a deadline, or the server stopping
	retired bool   // close the process when its invocations are done
	fault   string // why it died, when bot code is the cause
	memory  bool   // it died of memory
	atDeath int    // invocations running when the process died
}

// hostCall is an invocation running in a host.
type hostCall struct {
	frames chan *frame
	done   chan struct{}
	late   bool // killed at its deadline
}

func newHost(r *Runtime, botID, version string) *host {
	return &host{r: r, botID: botID, version: version, ready: make(chan struct{}), exited: make(chan struct{}),
		stderr: &tailBuffer{}, calls: map[uint64]*hostCall{}}
}

// start runs the process, sends it the code and waits (at most
// compileTimeout) until it has compiled it. check makes the process exit
// after compiling.
func (h *host) start(code string, check bool) error {
	args := append(append([]string{}, h.r.cfg.Command[1:]...), "--memory", strconv.FormatInt(h.r.cfg.Memory, 10))
	if check {
		args = append(args, "--check")
	}
	h.cmd = exec.Command(h.r.cfg.Command[0], args...)
	h.cmd.Env = []string{} // bot code sees nothing of the server's environment
	h.cmd.SysProcAttr = childAttr()
	h.cmd.Stderr = h.stderr
	stdin, err := h.cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var box *sandbox.Setup
	if h.r.cfg.Sandbox {
		if box, err = sandbox.Wrap(h.cmd, sandbox.Options{Dir: "/tmp"}); err != nil {
			return fmt.Errorf("starting a bot process: %w", err)
		}
		defer box.Close()
	}
	err = h.cmd.Start()
	if box != nil {
		box.Started()
	}
	if err != nil {
		return fmt.Errorf("starting a bot process: %w", err)
	}
	if box != nil {
		if _, err := box.Wait(compileTimeout); err != nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
			return fmt.Errorf("starting a bot process: %w", err)
		}
	}
	h.stdin, h.out = stdin, newFrameWriter(stdin)
	go func() { _ = h.out.writeRaw([]byte(code)) }() // the process may die before reading it all
	rd := bufio.NewReaderSize(stdout, 64<<10)
	readyc := make(chan frame, 1)
	go func() {
		if f, err := readFrame(rd); err == nil && f.Op == "ready" {
			readyc <- f
			h.read(rd)
			return
		}
		h.read(nil)
	}()
	t := time.NewTimer(compileTimeout)
	defer t.Stop()
	select {
	case f := <-readyc:
		if f.Err != nil {
			h.close()
			return platform.Errorf(platform.TypeInvalidPayload, "%s", f.Err.Message)
		}
		return nil
	case <-h.exited:
		if h.fault == "" {
			return fmt.Errorf("the bot's process ended before compiling its code: %s", h.stderr.String())
		}
		cause := ""
		if h.memory {
			cause = "memory"
		}
		return &CrashError{Reason: h.fault + " while compiling its code", Alone: true, compile: cause}
	case <-t.C:
		h.killAll()
		<-h.exited
		return &CrashError{Reason: fmt.Sprintf("stopped: the bot's code was not compiled within %s", compileTimeout), Alone: true, compile: "time"}
	}
}

// read delivers the process's frames to their invocations until it ends,
// then records why it ended. rd nil: it ended before it was ready.
func (h *host) read(rd *bufio.Reader) {
	for rd != nil {
		f, err := readFrame(rd)
		if err != nil {
			break
		}
		h.mu.Lock()
		hc := h.calls[f.ID]
		h.mu.Unlock()
		if hc != nil {
			select {
			case hc.frames <- &f:
			case <-hc.done:
			}
		}
	}
	_ = h.cmd.Process.Kill() // a protocol error leaves it unusable
	err := h.cmd.Wait()
	h.mu.Lock()
	h.atDeath = len(h.calls)
	if !h.killed {
		h.fault, h.memory = h.r.deathReason(err, h.stderr.String())
	}
	h.mu.Unlock()
	if h.fault != "" {
		h.r.log.Warn("bot runtime: a bot's process died", "bot", h.botID, "reason", h.fault, "running", h.atDeath, "stderr", h.stderr.String())
	}
	close(h.exited)
}

// deathReason tells why a process that the server did not kill ended, for
// the bot's logs ("" when it simply exited), and whether it was memory.
func (r *Runtime) deathReason(waitErr error, stderr string) (string, bool) {
	var ee *exec.ExitError
	memory := errors.As(waitErr, &ee) && ee.ExitCode() == exitMemory
	switch {
	case memory || strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		// Race-detector builds (tests) fail to map their shadow memory.
		strings.Contains(stderr, "ThreadSanitizer failed to allocate") || strings.Contains(stderr, "address space collisions"):
		return fmt.Sprintf("stopped: the bot used more than %d MiB of memory", r.cfg.Memory>>20), true
	case strings.Contains(stderr, "stack exceeds"):
		return "stopped: the bot's code nested too deeply (its stack used too much memory)", true
	case waitErr != nil:
		return "stopped: the bot's process ended unexpectedly (" + waitErr.Error() + ")", false
	}
	return "", false
}

func (h *host) dead() bool {
	select {
	case <-h.exited:
		return true
	default:
		return false
	}
}

// close ends the process once it has no invocation: its stdin ends.
func (h *host) close() {
	h.mu.Lock()
	h.retired = true
	idle := len(h.calls) == 0
	h.mu.Unlock()
	if idle {
		h.closeStdin()
	}
}

func (h *host) closeStdin() {
	h.closeIn.Do(func() {
		if h.stdin != nil {
			_ = h.stdin.Close()
		}
	})
}

// killAll kills the process; its invocations are handed back.
func (h *host) killAll() {
	h.mu.Lock()
	h.killed = true
	h.mu.Unlock()
	_ = h.cmd.Process.Kill()
}

// hostFor returns the process running the bot's current code, starting it
// if needed. A process of older code is closed once its invocations end.
func (r *Runtime) hostFor(b *dispatch.Bot) (*host, error) {
	r.hostsMu.Lock()
	h := r.hosts[b.ID]
	if h != nil && (h.version != b.Version || h.dead()) {
		h.close()
		h = nil
	}
	starting := h == nil
	if starting {
		h = newHost(r, b.ID, b.Version)
		r.hosts[b.ID] = h
	}
	h.lastUsed = time.Now()
	r.hostsMu.Unlock()
	if starting {
		h.startErr = h.start(b.Code, false)
		close(h.ready)
	}
	<-h.ready
	if h.startErr != nil {
		r.hostsMu.Lock()
		if r.hosts[b.ID] == h {
			delete(r.hosts, b.ID)
		}
		r.hostsMu.Unlock()
		var pe *platform.Error
		if errors.As(h.startErr, &pe) {
			return nil, &loadError{&ScriptError{Message: pe.Message}}
		}
		return nil, h.startErr
	}
	return h, nil
}

// invoke runs an invocation of kind ("handle" or "action") with args in the
// bot's process, serving its server functions and logs with c, under the
// bot's deadline. It returns the invocation's result as JSON.
func (r *Runtime) invoke(c *call, kind string, args ...string) (string, error) {
	h, err := r.hostFor(c.bot)
	if err != nil {
		return "", err
	}
	timeout := c.bot.Timeout
	hc := &hostCall{frames: make(chan *frame, 64), done: make(chan struct{})}
	h.mu.Lock()
	h.next++
	id := h.next
	h.calls[id] = hc
	h.mu.Unlock()
	defer func() {
		close(hc.done)
		h.mu.Lock()
		delete(h.calls, id)
		idle := h.retired && len(h.calls) == 0
		h.mu.Unlock()
		if idle {
			h.closeStdin()
		}
	}()
	// A failed write means the process is gone: exited says why.
	_ = h.out.write(frame{ID: id, Op: "invoke", Kind: kind, Args: args, Timeout: timeout.Milliseconds()})
	t := time.NewTimer(timeout + killGrace)
	defer t.Stop()
	serve := func(f *frame) (string, error, bool) {
		switch f.Op {
		case "native":
			_ = h.out.write(frame{ID: id, Op: "reply", Data: c.do(f.Name, f.Data)})
		case "log":
			c.log(f.Name, f.Data)
		case "result":
			c.dropped += f.Dropped
			return f.Data, frameErr(f.Err, timeout), true
		}
		return "", nil, false
	}
	for {
		select {
		case f := <-hc.frames:
			if out, err, done := serve(f); done {
				return out, err
			}
		case <-t.C:
			h.mu.Lock()
			hc.late = true
			h.mu.Unlock()
			h.killAll()
		case <-h.exited:
			for {
				select {
				case f := <-hc.frames:
					if out, err, done := serve(f); done {
						return out, err
					}
					continue
				default:
				}
				break
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			switch {
			case hc.late:
				return "", &DeadlineError{After: timeout}
			case h.fault != "":
				return "", &CrashError{Reason: h.fault, Alone: h.atDeath == 1}
			}
			return "", errProcessLost
		}
	}
}

// CheckCode compiles bot code in a bot process, with the memory limit of
// bot processes and within compileTimeout. A syntax error, or code too
// costly to compile, is an InvalidPayload error on `code`.
func (r *Runtime) CheckCode(ctx context.Context, code string) error {
	h := newHost(r, "", "")
	err := h.start(code, true)
	var pe *platform.Error
	var ce *CrashError
	switch {
	case errors.As(err, &pe):
		return err
	case errors.As(err, &ce) && ce.compile == "memory":
		return platform.Invalid("code", "too costly to compile: compiling it needs more than %d MiB of memory", r.cfg.Memory>>20)
	case errors.As(err, &ce) && ce.compile == "time":
		return platform.Invalid("code", "too costly to compile: it was not compiled within %s", compileTimeout)
	case err != nil:
		return err
	}
	<-h.exited
	return nil
}

// tailBuffer keeps the first and the last bytes written to it (a process's
// stderr: a fatal error's message comes first, then goroutine dumps).
type tailBuffer struct {
	mu         sync.Mutex
	head, tail []byte
}

const tailSize = 2048

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n0 := len(p)
	if room := tailSize - len(t.head); room > 0 {
		n := min(room, len(p))
		t.head = append(t.head, p[:n]...)
		p = p[n:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailSize {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailSize:]...)
	}
	return n0, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.tail) == 0 {
		return strings.TrimSpace(string(t.head))
	}
	return strings.TrimSpace(string(t.head) + "\n…\n" + string(t.tail))
}
