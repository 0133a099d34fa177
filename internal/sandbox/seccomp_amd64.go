//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)

var (
	archDenied = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS}
	archForks  = []uintptr{unix.SYS_FORK, unix.SYS_VFORK}
)
