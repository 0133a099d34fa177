//go:build !linux

package nodehost

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Node bots need Linux: process groups, Pdeathsig and RLIMIT_DATA keep a bot from affecting the server.
var errUnsupported = errors.New("nodehost: Node bots can only run on Linux")

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func limitMemory(pid int, bytes uint64) error { return errUnsupported }

func describeExit(st *os.ProcessState) string { return st.String() }

func startChild(cmd *exec.Cmd) error { return errUnsupported }
