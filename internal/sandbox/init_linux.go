//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == InitName {
		runInit()
	}
}

// runInit builds the sandbox and executes the program; it never returns. Every step that sets a
// per-thread attribute (no_new_privs, capabilities, the seccomp filter) runs on the thread that executes.
func runInit() {
	runtime.LockOSThread()
	var sp spec
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &sp); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox: bad spec:", err)
		os.Exit(127)
	}
	err := build(&sp)
	var argv, envv []*byte
	if err == nil {
		argv, envv, err = execArgs(sp.Args, sp.Env)
	}
	// The limits come last, just before the exec: a Go runtime that needs
	// memory or a thread past RLIMIT_DATA dies (a busy race-enabled build
	// already holds more than a bot's limit).
	if err == nil {
		err = limit(sp.Limits)
	}
	if err == nil && sp.Probe {
		err = unix.Sendmsg(sp.CtlFD, []byte("ok"), nil, nil, 0)
		if err == nil {
			os.Exit(0)
		}
	}
	if err == nil {
		err = execFD(sp.ExeFD, argv, envv)
		err = fmt.Errorf("executing the program: %w", err)
	}
	unix.Sendmsg(sp.CtlFD, []byte("error: "+err.Error()), nil, nil, 0)
	fmt.Fprintln(os.Stderr, "sandbox:", err)
	os.Exit(127)
}

func build(sp *spec) error {
	for _, fd := range append([]int{sp.ExeFD, sp.CtlFD}, fileFDs(sp.Files)...) {
		unix.CloseOnExec(fd)
	}
	if err := mountRoot(sp); err != nil {
		return err
	}
	if err := network(sp); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte("bot")); err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	if err := unix.Chdir(sp.Dir); err != nil {
		return fmt.Errorf("working directory %s: %w", sp.Dir, err)
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	if err := installFilter(sp.Children); err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	return nil
}

func fileFDs(fs []specFile) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = f.FD
	}
	return out
}

// mountRoot makes a new root of a small tmpfs holding the read-only binds, /app (the files given), a
// private /tmp, /dev's harmless devices and a /proc of the sandbox's own PID namespace; the host's root is
// then detached.
func mountRoot(sp *spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	// /tmp is only a place to build the root in; the host's /tmp stays reachable under /oldroot/tmp.
	const base = "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("new root: %w", err)
	}
	if err := os.Mkdir(base+"/oldroot", 0o700); err != nil {
		return fmt.Errorf("new root: %w", err)
	}
	if err := unix.PivotRoot(base, base+"/oldroot"); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	for _, p := range sp.Binds {
		if err := bindReadOnly("/oldroot"+p, p); err != nil {
			return fmt.Errorf("binding %s: %w", p, err)
		}
	}
	// /dev: a tmpfs with the devices a program may open.
	if err := os.Mkdir("/dev", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		if err := bindDevice("/oldroot/dev/"+d, "/dev/"+d); err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/proc", 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/proc: %w", err)
	}
	if err := os.Mkdir("/tmp", 0o1777); err != nil {
		return err
	}
	tmp := sp.Limits.Tmp
	if tmp == 0 {
		tmp = DefaultTmp
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=1777,size=%d,nr_inodes=16384", tmp)); err != nil {
		return fmt.Errorf("/tmp: %w", err)
	}
	if err := os.Mkdir("/app", 0o755); err != nil {
		return err
	}
	for _, f := range sp.Files {
		if err := copyIn(f); err != nil {
			return err
		}
	}
	if sp.DNS {
		if err := os.MkdirAll("/etc", 0o755); err != nil {
			return err
		}
		if err := os.WriteFile("/etc/resolv.conf", []byte("nameserver "+DNSAddr+"\noptions timeout:5 attempts:2\n"), 0o444); err != nil {
			return fmt.Errorf("/etc/resolv.conf: %w", err)
		}
	}
	if err := unix.Unmount("/oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	if err := os.Remove("/oldroot"); err != nil {
		return err
	}
	// The root itself, /app included, becomes read-only.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	return nil
}

// bindReadOnly makes src visible read-only at dst; a missing src is skipped and a symbolic link copied.
func bindReadOnly(src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if fi.IsDir() {
		err = os.Mkdir(dst, 0o755)
	} else {
		err = os.WriteFile(dst, nil, 0o444)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	// A remount inside a user namespace must keep the flags the host locked on the mount.
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	for kept, ms := range map[int64]uintptr{unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME,
		unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME} {
		if int64(st.Flags)&kept != 0 {
			flags |= ms
		}
	}
	return unix.Mount("", dst, "", flags, "")
}

func bindDevice(src, dst string) error {
	if err := os.WriteFile(dst, nil, 0o666); err != nil {
		return err
	}
	return unix.Mount(src, dst, "", unix.MS_BIND, "")
}

// copyIn writes a given file into /app, read-only.
func copyIn(f specFile) error {
	src := os.NewFile(uintptr(f.FD), f.Name)
	defer src.Close()
	dst, err := os.OpenFile("/app/"+f.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("/app/%s: %w", f.Name, err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("/app/%s: %w", f.Name, err)
	}
	return nil
}

func limit(l Limits) error {
	or := func(v, d uint64) uint64 {
		if v == 0 {
			return d
		}
		return v
	}
	tmp := or(l.Tmp, DefaultTmp)
	cpu := or(l.CPUSeconds, DefaultCPUSeconds)
	set := []struct {
		res        int
		soft, hard uint64
	}{
		{unix.RLIMIT_NOFILE, or(l.Files, DefaultFiles), or(l.Files, DefaultFiles)},
		{unix.RLIMIT_NPROC, or(l.Procs, DefaultProcs), or(l.Procs, DefaultProcs)},
		{unix.RLIMIT_CPU, cpu, cpu + 5}, // SIGXCPU, then SIGKILL
		{unix.RLIMIT_FSIZE, tmp, tmp},
		{unix.RLIMIT_CORE, 0, 0},
		{unix.RLIMIT_MEMLOCK, 0, 0},
		{unix.RLIMIT_MSGQUEUE, 0, 0},
	}
	if l.Memory > 0 {
		set = append(set, struct {
			res        int
			soft, hard uint64
		}{unix.RLIMIT_DATA, l.Memory, l.Memory})
	}
	for _, s := range set {
		if err := unix.Setrlimit(s.res, &unix.Rlimit{Cur: s.soft, Max: s.hard}); err != nil {
			return fmt.Errorf("resource limit %d: %w", s.res, err)
		}
	}
	return nil
}

// Secure bits that keep root in the sandbox from regaining capabilities on exec.
const (
	secbitNoroot             = 1 << 0
	secbitNorootLocked       = 1 << 1
	secbitNoSetuidFixup      = 1 << 2
	secbitNoSetuidFixupLock  = 1 << 3
	secbitKeepCapsLocked     = 1 << 5
	secbitNoCapAmbientRaise  = 1 << 6
	secbitNoCapAmbientLocked = 1 << 7
)

// dropPrivileges leaves the thread, and the program it executes, no capability in any set and no way to
// gain one.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	bits := secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLock |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientLocked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("secure bits: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("capability bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// execArgs is the program's arguments and environment as execveat takes them.
func execArgs(args, env []string) (argv, envv []*byte, err error) {
	if argv, err = syscall.SlicePtrFromStrings(args); err != nil {
		return nil, nil, err
	}
	if envv, err = syscall.SlicePtrFromStrings(env); err != nil {
		return nil, nil, err
	}
	return argv, envv, nil
}

// emptyPath is execveat's path with AT_EMPTY_PATH.
var emptyPath = [1]byte{}

// execFD executes the file open at fd, whatever the mount namespace shows. It allocates nothing.
func execFD(fd int, argv, envv []*byte) error {
	_, _, errno := syscall.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
	return errno
}
