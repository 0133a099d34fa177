//go:build !linux

package botruntime

import (
	"errors"
	"syscall"
)

// Elsewhere than on Linux a bot process is not killed with a server that
// dies (it exits when its pipes close), its pipes block, and only the
// watchdog of limitMemory bounds its memory (no address-space limit): bots
// run, with weaker isolation. Production runs on Linux.

func childAttr() *syscall.SysProcAttr { return nil }

func setNonblock(fd uintptr) error { return errors.New("not on this system") }

func limitAddressSpace(bytes uint64) {}
