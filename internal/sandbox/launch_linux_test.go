//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// start starts the test binary's helper (attack args) in a sandbox and waits until it runs; stdout is
// the helper's, read by the caller.
func start(t testing.TB, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := helperCmd(t, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startWrapped(t, cmd, Options{}); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("sandbox: %v; stderr: %s", err, stderr.String())
	}
	return cmd, bufio.NewReader(out)
}

// startReady is start for a helper that says "ready" once it runs.
func startReady(t testing.TB, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd, out := start(t, args...)
	if l, err := out.ReadString('\n'); err != nil || l != "ready\n" {
		t.Fatalf("helper: %q, %v", l, err)
	}
	return cmd, out
}

// readWithin reads r to its end, failing the test if that takes longer than a generous hang guard.
func readWithin(t *testing.T, r io.Reader) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Minute):
		t.Fatal("the program's output did not end: it outlived its sandbox")
		return ""
	}
}

func TestSandboxExitStatusReachesTheServer(t *testing.T) {
	needSandbox(t)
	cmd, out := start(t, "exit", "7")
	readWithin(t, out)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("wait: %v, want exit status 7", err)
	}

	// Killed from outside (as the kernel kills at a hard limit), the program's end is the server's to see.
	cmd, out = startReady(t, "sleep")
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	var program int
	if _, err2 := fmt.Sscan(string(children), &program); err != nil || err2 != nil {
		t.Fatalf("the launcher's children: %q, %v, %v", children, err, err2)
	}
	if err := syscall.Kill(program, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	readWithin(t, out)
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("a program killed by SIGKILL: the server sees %v", cmd.ProcessState)
	}
}

func TestSandboxGetsTheServersSignals(t *testing.T) {
	needSandbox(t)
	cmd, out := startReady(t, "await-usr1")
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if got := readWithin(t, out); got != "ok: user defined signal 1" {
		t.Fatalf("the program got %q, want SIGUSR1", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestKillingASandboxEndsItsProgram(t *testing.T) {
	needSandbox(t)
	cmd, out := startReady(t, "sleep")
	cmd.Process.Kill()
	// The program holds its stdout until it ends.
	readWithin(t, out)
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("killed: the server sees %v", cmd.ProcessState)
	}
}

// TestSandboxStartCopiesNoServerMemory: creating the sandbox's namespaces takes a process of its own
// memory, which the server must not be. Had the server's memory been copied for it, each page the
// server writes afterwards would fault once (copy-on-write).
func TestSandboxStartCopiesNoServerMemory(t *testing.T) {
	needSandbox(t)
	const size = 64 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // a fault per page, whatever the machine's huge page setting
	page := os.Getpagesize()
	touch := func() int64 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var before, after unix.Rusage
		unix.Getrusage(unix.RUSAGE_THREAD, &before)
		for i := 0; i < size; i += page {
			mem[i]++
		}
		unix.Getrusage(unix.RUSAGE_THREAD, &after)
		return after.Minflt - before.Minflt
	}
	touch() // mapped
	cmd, out := start(t, "exit", "0")
	readWithin(t, out)
	cmd.Wait()
	if faults, pages := touch(), int64(size/page); faults > pages/4 {
		t.Fatalf("writing %d pages after a sandbox started faulted %d times: the server's memory was copied to start it", pages, faults)
	}
}

// BenchmarkSandboxStart starts and ends a sandboxed program from a process holding 512 MiB.
func BenchmarkSandboxStart(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	const size = 512 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 1
	}
	for b.Loop() {
		cmd, out := start(b, "exit", "0")
		io.Copy(io.Discard, out)
		cmd.Wait()
	}
}
