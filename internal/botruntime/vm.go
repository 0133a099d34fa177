package botruntime

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

//go:embed prelude.js
var preludeSrc string

var prelude = goja.MustCompile("prelude.js", preludeSrc, true)

// maxCallStack bounds recursion in bot code, so that runaway recursion is a
// RangeError for the bot rather than a crash of the server.
const maxCallStack = 2000

// vm is one JavaScript VM with a bot's code loaded. It runs one invocation
// at a time; cur is the invocation it serves.
type vm struct {
	rt     *goja.Runtime
	handle goja.Callable
	action goja.Callable
	cur    *call
	// broken is set when an uncatchable error (a stack overflow) left the
	// VM in a state where promises no longer settle: it is not reused.
	broken bool
}

// errDeadline is what an interrupted VM reports.
var errDeadline = errors.New("deadline exceeded")

// DeadlineError reports an invocation stopped at its deadline.
type DeadlineError struct{ After time.Duration }

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("stopped after %s: the bot's maxExecutionTime was reached", e.After)
}

// newVM creates a VM, installs the programming model and runs the bot's
// top-level code (within the deadline: it too may loop).
func newVM(prog *goja.Program, timeout time.Duration, c *call) (*vm, error) {
	v := &vm{rt: goja.New(), cur: c}
	v.rt.SetMaxCallStackSize(maxCallStack)
	nat := v.rt.NewObject()
	for name, f := range v.natives() {
		if err := nat.Set(name, f); err != nil {
			return nil, err
		}
	}
	fn, err := v.rt.RunProgram(prelude)
	if err != nil {
		return nil, err
	}
	init, _ := goja.AssertFunction(fn)
	entry, err := init(goja.Undefined(), nat)
	if err != nil {
		return nil, err
	}
	obj := entry.ToObject(v.rt)
	v.handle, _ = goja.AssertFunction(obj.Get("handle"))
	v.action, _ = goja.AssertFunction(obj.Get("action"))
	if _, err := v.run(timeout, func() (goja.Value, error) { return v.rt.RunProgram(prog) }); err != nil {
		return nil, fmt.Errorf("the bot's code failed while loading: %w", err)
	}
	return v, nil
}

// run calls f under a deadline, interrupting the VM when it passes, and
// settles a returned promise. Promises settle within the call: every server
// function bot code awaits answers synchronously.
func (v *vm) run(timeout time.Duration, f func() (goja.Value, error)) (goja.Value, error) {
	var mu sync.Mutex
	finished := false
	timer := time.AfterFunc(timeout, func() {
		mu.Lock()
		if !finished {
			v.rt.Interrupt(errDeadline)
		}
		mu.Unlock()
	})
	res, err := f()
	mu.Lock()
	finished = true
	mu.Unlock()
	timer.Stop()
	v.rt.ClearInterrupt()
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			return nil, &DeadlineError{After: timeout}
		}
		var so *goja.StackOverflowError
		if errors.As(err, &so) {
			v.broken = true
			return nil, &ScriptError{Message: "RangeError: Maximum call stack size exceeded\n" + strings.TrimSpace(trimStack(so.Error()))}
		}
		return nil, scriptError(err)
	}
	if p, ok := res.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return p.Result(), nil
		case goja.PromiseStateRejected:
			return nil, &ScriptError{Message: describe(p.Result())}
		default:
			return nil, &ScriptError{Message: "the handler's promise never settled (bot code has no timers; use client.scheduleEvent to act later)"}
		}
	}
	return res, nil
}

// ScriptError is an error thrown by bot code (or a promise it rejected).
type ScriptError struct{ Message string }

func (e *ScriptError) Error() string { return e.Message }

func scriptError(err error) error {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &ScriptError{Message: describe(ex.Value())}
	}
	return &ScriptError{Message: err.Error()}
}

// describe renders a thrown value: an Error's stack, or the value itself.
func describe(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return fmt.Sprint(v)
	}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) && st.String() != "" {
			return trimStack(st.String())
		}
	}
	return v.String()
}

// natives are the server functions the prelude hands to the programming
// model; each serves the VM's current invocation.
func (v *vm) natives() map[string]any {
	wrap := func(f func(c *call, in []byte) (any, error)) func(string) string {
		return func(in string) string { return v.cur.do(f, in) }
	}
	return map[string]any{
		"log":              func(level, line string) { v.cur.log(level, line) },
		"outgoingEvent":    wrap((*call).outgoingEvent),
		"createMessage":    wrap((*call).createMessage),
		"createEvent":      wrap((*call).createEvent),
		"scheduleEvent":    wrap((*call).scheduleEvent),
		"getConversation":  wrap((*call).getConversation),
		"getUser":          wrap((*call).getUser),
		"getMessage":       wrap((*call).getMessage),
		"listMessages":     wrap((*call).listMessages),
		"listParticipants": wrap((*call).listParticipants),
		"searchFiles":      wrap((*call).searchFiles),
	}
}

// pool keeps warm VMs of one version of a bot's code.
type pool struct {
	botID    string
	version  string
	prog     *goja.Program
	idle     chan *vm
	lastUsed time.Time // guarded by Runtime.poolsMu
}

// vmFor takes a warm VM of the bot's current code, or makes one (its
// top-level code then runs as part of invocation c).
func (r *Runtime) vmFor(b *botInfo, c *call) (*vm, *pool, error) {
	p, err := r.poolFor(b)
	if err != nil {
		return nil, nil, err
	}
	select {
	case v := <-p.idle:
		v.cur = c
		return v, p, nil
	default:
	}
	v, err := newVM(p.prog, b.timeout, c)
	return v, p, err
}

func (r *Runtime) poolFor(b *botInfo) (*pool, error) {
	r.poolsMu.Lock()
	defer r.poolsMu.Unlock()
	if p, ok := r.pools[b.bot.ID]; ok && p.version == b.version {
		p.lastUsed = time.Now()
		return p, nil
	}
	prog, err := compile(b.bot.Code)
	if err != nil {
		return nil, err
	}
	p := &pool{botID: b.bot.ID, version: b.version, prog: prog, idle: make(chan *vm, r.cfg.Workers), lastUsed: time.Now()}
	r.pools[b.bot.ID] = p // VMs of older code are dropped as they come back
	return p, nil
}

// release returns a VM to its pool, unless its code is outdated or the pool
// is full.
func (r *Runtime) release(p *pool, v *vm) {
	v.cur = nil
	r.poolsMu.Lock()
	current := r.pools[p.botID] == p
	r.poolsMu.Unlock()
	if !current {
		return
	}
	select {
	case p.idle <- v:
	default:
	}
}

// trimStack drops the frames of the server's own prelude from a stack.
func trimStack(stack string) string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, "prelude.js:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// idleBots is how long a bot's warm VMs and cached settings are kept
// without events.
const idleBots = 10 * time.Minute

// forgetIdle drops the VMs of bots without events for idleBots (deleted
// bots among them) and the cached settings of every bot.
func (r *Runtime) forgetIdle(now time.Time) {
	r.poolsMu.Lock()
	for id, p := range r.pools {
		if now.Sub(p.lastUsed) > idleBots {
			delete(r.pools, id)
		}
	}
	r.poolsMu.Unlock()
	r.botsMu.Lock()
	clear(r.bots) // a cache: reloaded at the next event
	r.botsMu.Unlock()
}
