//go:build linux

package nodehost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/sandbox"
	"golang.org/x/sys/unix"
)

func TestOutOfMemory(t *testing.T) {
	var before unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_DATA, &before); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		memoryMB int
		path     string
	}{
		{"buffers", 64, "/buffers"},
		{"buffers under the default limit", 0, "/buffers"}, // fails as a RangeError inside the handler
		{"heap", 64, "/heap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHost(t, Config{MemoryMB: tt.memoryMB})
			limit := h.cfg.MemoryMB
			mustCall(t, h, bot("b1"), "/echo")
			if got, want := dataLimit(t, hostPID(t, h, "b1")), uint64(limit+memoryHeadroomMB)<<20; got != want {
				t.Fatalf("RLIMIT_DATA of the child is %d, want %d", got, want)
			}
			_, err := call(h, bot("b1"), tt.path)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ran out of memory (limit %d MiB)", limit)) {
				t.Fatalf("got %v", err)
			}
			if res := mustCall(t, h, bot("b1"), "/echo"); res.Status != 200 {
				t.Fatalf("status %d after the crash", res.Status)
			}
		})
	}
	// The limit went to the children only.
	var after unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_DATA, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the test process's RLIMIT_DATA changed from %+v to %+v", before, after)
	}
}

// hostPID is the process id of botID's current process as the host sees it (inside its sandbox, node is 1).
func hostPID(t *testing.T, h *Host, botID string) string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.current[botID]
	if p == nil {
		t.Fatalf("%s has no process", botID)
	}
	pid := fmt.Sprint(p.cmd.Process.Pid)
	// A sandboxed process is started by the sandbox's launcher, which stands for it.
	if argv, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.HasPrefix(string(argv), sandbox.LauncherName+"\x00") {
		children, err := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
		if err != nil || len(strings.Fields(string(children))) != 1 {
			t.Fatalf("the sandbox launcher's children: %q, %v", children, err)
		}
		pid = strings.Fields(string(children))[0]
	}
	return pid
}

// dataLimit reads the soft "Max data size" of a process from /proc.
func dataLimit(t *testing.T, pid string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max data size"); ok {
			n, err := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no data limit in %s", b)
	return 0
}
