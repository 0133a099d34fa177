package nodehost

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the child in its own process group, so that a kill takes the processes it started too,
// and kills it if the server dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// limitMemory caps the child's data segment. RLIMIT_AS cannot be used: V8 reserves address space up front
// (node 20 starts at 711 MiB of VmSize and reaches 986 MiB after loading an SDK bundle), but RLIMIT_DATA only
// counts writable private memory, which is what the heap and Buffers use. Core dumps of a crashed bot
// would be as large as its heap, so they are turned off.
func limitMemory(pid int, bytes uint64) error {
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: bytes, Max: bytes}, nil); err != nil {
		return err
	}
	return unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
}

func describeExit(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "was killed by signal " + unix.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", st.ExitCode())
}

// startChild starts a child. Its Pdeathsig fires when the thread that forked it ends, and Go ends a thread
// only when a goroutine locked to it (runtime.LockOSThread) returns. Nothing in the server does that: a
// thread ended that way would also kill every other child it ever forked, the bot runtime's bot processes
// among them. So Pdeathsig fires when the server dies.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }
