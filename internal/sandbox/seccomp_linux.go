//go:build linux && (amd64 || arm64)

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// denied are system calls a bot has no use for and that widen what a kernel bug or a mistake could give
// it: debugging other processes, kernel keyrings, BPF, namespaces and mounts, modules, io_uring (whose
// operations a filter cannot see).
var denied = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT,
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_SYSLOG,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX, unix.SYS_PERSONALITY,
}, archDenied...)

// notImplemented answer ENOSYS, so that programs fall back: glibc creates threads with clone when clone3
// is missing, and libuv does without io_uring.
var notImplemented = []uintptr{unix.SYS_CLONE3, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits on a little-endian machine: clone's flags
)

// filter is the seccomp program: a foreign architecture is killed, a denied call answers EPERM, and
// without children only clone calls that make a thread pass.
func filter(children bool) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jst = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	var p []unix.SockFilter
	add := func(code uint16, jt, jf uint8, k uint32) {
		p = append(p, unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k})
	}
	add(ld, 0, 0, offArch)
	add(jeq, 1, 0, auditArch)
	add(ret, 0, 0, unix.SECCOMP_RET_KILL_PROCESS)
	add(ld, 0, 0, offNr)
	if x32Bit != 0 { // x32 system calls are the same calls under other numbers
		add(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 0, 1, x32Bit)
		add(ret, 0, 0, errno(unix.EPERM))
	}
	for _, nr := range denied {
		add(jeq, 0, 1, uint32(nr))
		add(ret, 0, 0, errno(unix.EPERM))
	}
	for _, nr := range notImplemented {
		add(jeq, 0, 1, uint32(nr))
		add(ret, 0, 0, errno(unix.ENOSYS))
	}
	if !children {
		for _, nr := range archForks {
			add(jeq, 0, 1, uint32(nr))
			add(ret, 0, 0, errno(unix.EPERM))
		}
		add(jeq, 0, 4, unix.SYS_CLONE)
		add(ld, 0, 0, offArg0)
		add(jst, 1, 0, unix.CLONE_THREAD)
		add(ret, 0, 0, errno(unix.EPERM))
		add(ret, 0, 0, unix.SECCOMP_RET_ALLOW)
	}
	add(ret, 0, 0, unix.SECCOMP_RET_ALLOW)
	return p
}

// installFilter applies the filter to the calling thread; it carries over the exec that follows.
func installFilter(children bool) error {
	p := filter(children)
	prog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
}
