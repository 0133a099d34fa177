package nodehost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/sandbox"
)

const (
	// stuckAfter: the wrapper sends a heartbeat every 500 ms, so this much silence means a blocked event loop.
	stuckAfter = 2 * time.Second
	// stopGrace is how long a stopped process may take to exit before it is killed.
	stopGrace = 2 * time.Second
	// memoryHeadroomMB is added to MemoryMB for RLIMIT_DATA. Measured with node 20.20: the real SDK echobot
	// bundle loaded and answering a ping uses 67 MiB of VmData (node alone 47; a 64 MiB limit fails at start,
	// 80 MiB runs); filling the heap to --max-old-space-size=256 peaks near 330 MiB, so with 256+128 V8 still
	// reports its own heap OOM first, and Buffers get what the heap leaves of the limit.
	memoryHeadroomMB = 128
	maxFrame         = 48 << 20 // the wrapper refuses bodies over 32 MiB
	// sandboxTimeout bounds the setup of a process's sandbox (a few milliseconds on an idle machine).
	sandboxTimeout = 20 * time.Second
)

type procSpec struct {
	botID, version string
	integration    string // an integration's process: its alias in the bot
	slot           string // the key of Host.current
	node           string
	args           []string // host.js and its arguments
	bundle         string   // removed when the process ends
	dir            string
	env            []string
	memoryMB       int
	check          bool
	lines          func(Line)
	start          func(*exec.Cmd) error
	exited         func(*proc)
	sandbox        *sandbox.Options  // nil: run as the server's own user
	api            *sandbox.Listener // receives the sandbox's API listener
	outbound       *sandbox.Outbound // serves the sandbox's egress and DNS sockets
	log            *slog.Logger
}

// proc is one node process and the calls in flight in it.
type proc struct {
	procSpec
	cmd   *exec.Cmd
	calls chan []byte   // frames for the writer
	quit  chan struct{} // closed by stop: the writer closes fd 3 and the wrapper exits
	ready chan struct{} // closed on the ready frame
	// definition is what the ready frame of a check reported.
	definition *Definition
	done       chan struct{} // closed after the process ended; err is set before
	err        error
	// listeners and link are the sandbox's, closed when the process ends: an open socket keeps its network
	// namespace.
	listeners []net.Listener
	link      *sandbox.Link

	stopOnce, readyOnce sync.Once

	mu        sync.Mutex
	nextID    uint64
	pending   map[uint64]chan frameIn // nil channel: the caller gave up at its deadline
	overdue   int                     // calls given up and not answered yet
	lastFrame time.Time
	reaped    bool
	stopped   bool
	killed    string // why the host killed it
	fatal     string // why the wrapper ended it
	oom       bool   // the wrapper saw an allocation fail
	stderr    stderrTail

	// Guarded by Host.mu.
	inflight int
	lastUse  time.Time
	retired  bool
	idle     *time.Timer
}

func startProc(s procSpec) (*proc, error) {
	var files []*os.File // every pipe end; the child's are closed after start
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil
		}
		files = append(files, r, w)
		return r, w
	}
	callsR, callsW := pipe()
	framesR, framesW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(files) != 8 {
		closeAll()
		return nil, errors.New("nodehost: cannot create pipes")
	}
	args := append([]string{"node", "--max-old-space-size=" + strconv.Itoa(s.memoryMB)}, s.args...)
	cmd := &exec.Cmd{
		Path: s.node, Args: args, Env: s.env, Dir: s.dir,
		Stdout: outW, Stderr: errW, ExtraFiles: []*os.File{callsR, framesW},
		SysProcAttr: sysProcAttr(),
	}
	var box *sandbox.Setup
	var listeners []net.Listener
	var link *sandbox.Link
	if s.sandbox != nil {
		var err error
		if box, err = sandbox.Wrap(cmd, *s.sandbox); err != nil {
			closeAll()
			return nil, fmt.Errorf("nodehost: %w", err)
		}
		defer box.Close()
	}
	err := s.start(cmd)
	if box != nil {
		box.Started()
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("nodehost: starting node: %w", err)
	}
	fail := func(what string, err error) (*proc, error) {
		killGroup(cmd.Process.Pid)
		cmd.Wait()
		closeAll()
		return nil, fmt.Errorf("nodehost: %s: %w", what, err)
	}
	if box != nil {
		// The sandbox sets the memory limit itself, before node starts.
		socks, err := box.Wait(sandboxTimeout)
		if err != nil {
			return fail("starting node in its sandbox", err)
		}
		for _, ln := range socks.Listen {
			if s.api != nil {
				s.api.Add(ln)
				listeners = append(listeners, ln)
			} else {
				ln.Close()
			}
		}
		if s.outbound != nil {
			link = s.outbound.Serve(socks, s.log)
		}
	} else if err := limitMemory(cmd.Process.Pid, uint64(s.memoryMB+memoryHeadroomMB)<<20); err != nil {
		// The limit is set just after start (exec.Cmd has no rlimit field); node has done little by then.
		return fail("limiting the memory of node", err)
	}
	for _, f := range []*os.File{callsR, framesW, outW, errW} {
		f.Close()
	}
	p := &proc{
		procSpec: s, cmd: cmd,
		calls: make(chan []byte, 64), quit: make(chan struct{}), ready: make(chan struct{}), done: make(chan struct{}),
		pending: map[uint64]chan frameIn{}, lastFrame: time.Now(), listeners: listeners, link: link,
	}
	var readers sync.WaitGroup
	readers.Add(3)
	go func() { defer readers.Done(); readLines(framesR, maxFrame, p.frame) }()
	go func() { defer readers.Done(); readLines(outR, maxRawLine, p.rawLine("info")) }()
	go func() { defer readers.Done(); readLines(errR, maxRawLine, p.rawLine("error")) }()
	go p.write(callsW)
	go p.watch()
	go p.wait(&readers, []*os.File{callsW, framesR, outR, errR})
	return p, nil
}

// call sends req to the wrapper and waits for its answer, the end of ctx or the end of the process.
func (p *proc) call(ctx context.Context, req Request) (Response, error) {
	ch := make(chan frameIn, 1)
	p.mu.Lock()
	if p.reaped {
		p.mu.Unlock()
		<-p.done
		return Response{}, p.err
	}
	p.nextID++
	id := p.nextID
	p.pending[id] = ch
	p.mu.Unlock()
	data, err := json.Marshal(callFrame{T: "call", ID: id, Req: wire(req)})
	if err != nil {
		p.giveUp(id, false)
		return Response{}, fmt.Errorf("nodehost: %w", err)
	}
	select {
	case p.calls <- append(data, '\n'):
	case <-ctx.Done():
		p.giveUp(id, false)
		return Response{}, deadlineError(ctx)
	case <-p.done:
		return Response{}, p.err
	}
	select {
	case a := <-ch:
		return a.response()
	case <-ctx.Done():
		p.giveUp(id, true)
		return Response{}, deadlineError(ctx)
	case <-p.done:
		select {
		case a := <-ch: // answered just before the end
			return a.response()
		default:
			return Response{}, p.err
		}
	}
}

// giveUp forgets a call whose caller stopped waiting. A call already sent is overdue until the wrapper
// answers it; while one is, a silent wrapper is killed (see watch).
func (p *proc) giveUp(id uint64, sent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pending[id]; !ok {
		return
	}
	if !sent {
		delete(p.pending, id)
		return
	}
	p.pending[id] = nil
	p.overdue++
}

func deadlineError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the bot did not answer within its deadline: %w", ctx.Err())
	}
	return fmt.Errorf("the call was canceled before the bot answered: %w", ctx.Err())
}

// write owns fd 3. Closing it is how a process is asked to stop.
func (p *proc) write(w *os.File) {
	defer w.Close()
	for {
		select {
		case b := <-p.calls:
			if _, err := w.Write(b); err != nil {
				return
			}
		case <-p.quit:
			return
		case <-p.done:
			return
		}
	}
}

// watch kills a process whose event loop is blocked while a call is past its deadline, so that a
// synchronous infinite loop cannot keep the bot dead. An async hang keeps heartbeats flowing and is left
// alone. Loading the bundle sends no heartbeat, so it gets as long as Check allows.
func (p *proc) watch() {
	t := time.NewTicker(stuckAfter / 4)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			limit, reason := stuckAfter, fmt.Sprintf("because its event loop was blocked for more than %s after a call passed its deadline (a synchronous infinite loop?)", stuckAfter)
			if !p.isReady() {
				limit, reason = checkTimeout, fmt.Sprintf("because its code did not finish loading within %s (an infinite loop at load?)", checkTimeout)
			}
			p.mu.Lock()
			stuck := p.overdue > 0 && time.Since(p.lastFrame) > limit
			p.mu.Unlock()
			if stuck {
				p.kill(reason)
			}
		}
	}
}

// kill ends the process group at once; reason, when set, becomes the error of the calls in flight.
func (p *proc) kill(reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return // the pid may belong to someone else now
	}
	if p.killed == "" {
		p.killed = reason
	}
	killGroup(p.cmd.Process.Pid)
}

func (p *proc) stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		close(p.quit)
		time.AfterFunc(stopGrace, func() { p.kill("") })
	})
}

func (p *proc) wait(readers *sync.WaitGroup, pipes []*os.File) {
	p.cmd.Wait()
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	for _, ln := range p.listeners {
		ln.Close()
	}
	if p.link != nil {
		p.link.Close()
	}
	killGroup(p.cmd.Process.Pid) // children the bundle started
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained: // the last frames and stderr lines tell why it ended
	case <-time.After(time.Second): // a child that left the group still holds a pipe
	}
	for _, f := range pipes {
		f.Close()
	}
	<-drained
	p.mu.Lock()
	p.err = p.exitError()
	p.mu.Unlock()
	os.Remove(p.bundle)
	p.exited(p)
	close(p.done)
}

func (p *proc) isReady() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

func (p *proc) wasStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped && p.killed == "" && p.fatal == ""
}

// exitError says why the process ended. p.mu must be held.
func (p *proc) exitError() error {
	how := describeExit(p.cmd.ProcessState)
	var msg string
	switch {
	case p.killed != "":
		return errors.New("the bot's process was killed " + p.killed)
	case p.oom || p.stderr.oom:
		msg = fmt.Sprintf("the bot's process ran out of memory (limit %d MiB) and %s", p.memoryMB, how)
	case p.fatal != "" && !p.isReady():
		return errors.New("the bot's code failed to load: " + p.fatal)
	case p.fatal != "":
		msg = fmt.Sprintf("the bot's process %s after an %s", how, p.fatal)
	case p.stopped:
		return errors.New("the bot's process was stopped")
	case !p.isReady():
		msg = "the bot's code failed to load: its process " + how
	default:
		msg = "the bot's process " + how
	}
	if tail := p.stderr.String(); tail != "" {
		msg += "; last stderr lines:\n" + tail
	}
	return errors.New(msg)
}
