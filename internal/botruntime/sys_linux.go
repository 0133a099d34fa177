package botruntime

import "syscall"

// childAttr kills a bot process when the server dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// setNonblock puts a pipe's descriptor in non-blocking mode.
func setNonblock(fd uintptr) error { return syscall.SetNonblock(int(fd), true) }

// limitAddressSpace bounds the process's address space to bytes.
func limitAddressSpace(bytes uint64) {
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
