//go:build !(linux && (amd64 || arm64))

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
	"time"
)

var errUnsupported = errors.New("bot sandboxes need Linux on amd64 or arm64, and this is " + runtime.GOOS + "/" + runtime.GOARCH)

func probe() error { return errUnsupported }

// Setup is the sandbox of a started command.
type Setup struct{}

// Wrap is unsupported here.
func Wrap(cmd *exec.Cmd, o Options) (*Setup, error) { return nil, errUnsupported }

// Started is unsupported here.
func (s *Setup) Started() {}

// Wait is unsupported here.
func (s *Setup) Wait(timeout time.Duration) (*Sockets, error) { return nil, errUnsupported }

// Close is unsupported here.
func (s *Setup) Close() {}
