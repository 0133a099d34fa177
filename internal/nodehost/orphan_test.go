//go:build linux

package nodehost

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server that dies without Close must not leave a spinning bot behind: Pdeathsig kills it.
func TestServerDeathKillsChildren(t *testing.T) {
	if dir := os.Getenv("NODEHOST_TEST_HELPER"); dir != "" {
		serverThatDies(dir)
		return
	}
	needNode(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDeathKillsChildren$")
	cmd.Env = append(os.Environ(), "NODEHOST_TEST_HELPER="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "node pid "); ok {
			pid, _ = strconv.Atoi(rest)
		}
	}
	if err := cmd.Wait(); err != nil || pid == 0 {
		t.Fatalf("helper: %v, node pid %d", err, pid)
	}
	eventually(t, "the orphaned node process to die", func() bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(stat), ") Z ") // dead, not reaped yet
	})
}

func serverThatDies(dir string) {
	spinning := make(chan struct{}, 1)
	h, err := New(Config{Dir: dir, Lines: func(l Line) {
		if l.Message == "spinning" {
			spinning <- struct{}{}
		}
	}}, nil)
	if err != nil {
		panic(err)
	}
	if _, err := h.Call(context.Background(), bot("b1"), Request{Path: "/echo"}); err != nil {
		panic(err)
	}
	h.mu.Lock()
	fmt.Printf("node pid %d\n", h.current["b1"].cmd.Process.Pid) // the host's view: inside its sandbox node is 1
	h.mu.Unlock()
	go h.Call(context.Background(), bot("b1"), Request{Path: "/spin"})
	<-spinning
	os.Exit(0)
}

// Closing a Host must end no OS thread: a child forked by a thread that
// ends gets its Pdeathsig, so the bot runtime's bot processes (forked by
// any thread of the server) would be killed with it.
func TestCloseKillsNoOtherChild(t *testing.T) {
	needNode(t)
	// A child forked by a thread that then goes back to the pool, where the
	// Hosts below may take it.
	done := make(chan *exec.Cmd)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd := exec.Command("sleep", "120")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		done <- cmd
	}()
	child := <-done
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	for range 20 {
		h, err := New(Config{Dir: t.TempDir()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustCall(t, h, bot("b1"), "/pid")
		h.Close()
		select {
		case <-exited:
			t.Fatal("a child the test forked was killed when a Host closed")
		default:
		}
	}
	time.Sleep(100 * time.Millisecond) // a signal sent is delivered by then
	select {
	case <-exited:
		t.Fatal("a child the test forked was killed when a Host closed")
	default:
	}
}
