package botruntime

import (
	_ "embed"
	"encoding/json"
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

// vm is one JavaScript VM with a bot's code loaded, in a bot process. It
// runs one invocation at a time; cur is the invocation it serves.
type vm struct {
	rt     *goja.Runtime
	handle goja.Callable
	action goja.Callable
	cur    vmHost
	// broken is set when an uncatchable error (a stack overflow) left the
	// VM in a state where promises no longer settle: it is not reused.
	broken bool
}

// vmHost is what a VM's natives reach: the server, on behalf of the
// invocation the VM serves.
type vmHost interface {
	native(name, in string) string
	log(level, line string)
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
func newVM(prog *goja.Program, timeout time.Duration, h vmHost) (*vm, error) {
	v := &vm{rt: goja.New(), cur: h}
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
		return nil, &loadError{err}
	}
	return v, nil
}

// loadError is bot code that failed while loading (its top level).
type loadError struct{ err error }

func (e *loadError) Error() string { return "the bot's code failed while loading: " + e.err.Error() }
func (e *loadError) Unwrap() error { return e.err }

// run calls f under a deadline, interrupting the VM when it passes, settles
// a returned promise and returns its value as JSON. Promises settle within
// the call: every server function bot code awaits answers synchronously.
// Reading a thrown value (its stack may be a getter) and exporting the
// result happen before the deadline too.
func (v *vm) run(timeout time.Duration, f func() (goja.Value, error)) (out string, err error) {
	var mu sync.Mutex
	finished := false
	timer := time.AfterFunc(timeout, func() {
		mu.Lock()
		if !finished {
			v.rt.Interrupt(errDeadline)
		}
		mu.Unlock()
	})
	defer func() {
		mu.Lock()
		finished = true
		mu.Unlock()
		timer.Stop()
		v.rt.ClearInterrupt()
		if p := recover(); p != nil {
			// goja reports an interrupt inside a getter called from Go
			// as a panic; the VM may be in any state.
			v.broken = true
			out, err = "", &DeadlineError{After: timeout}
			if _, ok := p.(*goja.InterruptedError); !ok {
				err = &ScriptError{Message: fmt.Sprint(p)}
			}
		}
	}()
	res, err := f()
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			return "", &DeadlineError{After: timeout}
		}
		var so *goja.StackOverflowError
		if errors.As(err, &so) {
			v.broken = true
			return "", &ScriptError{Message: "RangeError: Maximum call stack size exceeded\n" + strings.TrimSpace(trimStack(so.Error()))}
		}
		var ex *goja.Exception
		if errors.As(err, &ex) {
			return "", &ScriptError{Message: describe(ex.Value())}
		}
		return "", &ScriptError{Message: err.Error()}
	}
	if p, ok := res.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			res = p.Result()
		case goja.PromiseStateRejected:
			return "", &ScriptError{Message: describe(p.Result())}
		default:
			return "", &ScriptError{Message: "the handler's promise never settled (bot code has no timers; use client.scheduleEvent to act later)"}
		}
	}
	if res == nil {
		return "null", nil
	}
	b, err := json.Marshal(res.Export())
	if err != nil {
		return "", &ScriptError{Message: err.Error()}
	}
	return string(b), nil
}

// ScriptError is an error thrown by bot code (or a promise it rejected).
type ScriptError struct{ Message string }

func (e *ScriptError) Error() string { return e.Message }

// describe renders a thrown value: an Error's stack, the value as JSON, or
// its string form.
func describe(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return fmt.Sprint(v)
	}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) && st.String() != "" {
			return trimStack(st.String())
		}
		if _, isFunc := goja.AssertFunction(o); !isFunc {
			if b, err := o.MarshalJSON(); err == nil && len(b) > 0 && string(b) != "{}" {
				return string(b)
			}
		}
	}
	return v.String()
}

// natives are the server functions the prelude hands to the programming
// model; each serves the VM's current invocation.
func (v *vm) natives() map[string]any {
	out := map[string]any{"log": func(level, line string) { v.cur.log(level, line) }}
	for name := range serverFuncs {
		out[name] = func(in string) string { return v.cur.native(name, in) }
	}
	return out
}

// serverFuncs are the server functions bot code calls (through the
// prelude's client), by name.
var serverFuncs = map[string]func(c *call, in []byte) (any, error){
	"outgoingEvent":    (*call).outgoingEvent,
	"createMessage":    (*call).createMessage,
	"createEvent":      (*call).createEvent,
	"scheduleEvent":    (*call).scheduleEvent,
	"getConversation":  (*call).getConversation,
	"getUser":          (*call).getUser,
	"getMessage":       (*call).getMessage,
	"listMessages":     (*call).listMessages,
	"listParticipants": (*call).listParticipants,
	"searchFiles":      (*call).searchFiles,
	"api":              (*call).api,
	"fetch":            (*call).fetch,
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
