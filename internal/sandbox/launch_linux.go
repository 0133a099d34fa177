//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A process that creates a user namespace cannot share its memory with its parent, so the kernel copies
// the page tables of whoever starts the init: started by the server itself, each sandbox would cost a
// time that grows with the server's memory (tens of milliseconds for a few hundred MiB), during which the
// server's threads wait on its memory map. The server therefore starts, as cheaply as any command (vfork),
// a launcher: this binary under LauncherName, a fresh and small process that starts the init in the new
// namespaces and then stands for it. It holds none of the init's descriptors, passes on the signals the
// server sends, and ends as the init ends: with its exit status, or killed by the same signal. Killed
// itself, it takes the sandbox with it (the init's parent-death signal).

// LauncherName is the argv[0] under which the binary starts a sandbox's init and stands for it.
const LauncherName = "botplatform-sandbox-launcher"

func init() {
	if len(os.Args) > 0 && os.Args[0] == LauncherName {
		os.Exit(runLauncher())
	}
}

func runLauncher() int {
	// The init's parent-death signal fires when the thread that started it ends: this one, locked.
	runtime.LockOSThread()
	fail := func(ctlFD int, err error) int {
		if ctlFD > 0 {
			unix.Sendmsg(ctlFD, []byte("error: "+err.Error()), nil, nil, 0)
		}
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 127
	}
	var sp spec
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &sp); err != nil {
		return fail(0, fmt.Errorf("bad spec: %w", err))
	}
	// Outside, the sandbox is the server's own user (the launcher's), or nobody when that is root.
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = nobody, nobody
	}
	// The server's end ends the launcher, and through it the sandbox.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fail(sp.CtlFD, fmt.Errorf("parent-death signal: %w", err))
	}
	// The descriptors from 3 on, in wrap's order: the program's own, the executable, the control socket,
	// the files.
	files := make([]*os.File, sp.Extra+2+len(sp.Files))
	for i := range files {
		files[i] = os.NewFile(uintptr(3+i), "")
	}
	attr := &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
			unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP,
		// Root inside, so that the init may build the sandbox; outside, uid and gid. The program runs
		// with no capability at all.
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	if os.Getuid() == 0 {
		// The child is still the host's root until it takes the one mapped user.
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{InitName}, Env: os.Environ(), Dir: "/",
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: files, SysProcAttr: attr}
	sigs := make(chan os.Signal, 8)
	forwarded := []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2}
	signal.Notify(sigs, forwarded...)
	if err := cmd.Start(); err != nil {
		return fail(sp.CtlFD, fmt.Errorf("the kernel refused to start one (user namespaces may be disabled: kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor/seccomp policy): %w", err))
	}
	// The init's descriptors are its own now: the server learns that the program started when the
	// last copy of the control socket closes.
	for _, f := range files {
		f.Close()
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		signal.Reset(forwarded...)
		dieFrom(ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// dieFrom ends the process by sig, with the signal's default action (the Go runtime's own handler
// would not let every signal end it); it returns if that action does not end a process.
func dieFrom(sig syscall.Signal) {
	// struct sigaction, zeroed: SIG_DFL, no flags, no mask (the same for amd64's layout and arm64's).
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set unix.Sigset_t
	set.Val[0] = 1 << (uint(sig) - 1)
	unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}
