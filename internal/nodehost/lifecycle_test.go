package nodehost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewVersionDrainsOldProcess(t *testing.T) {
	h, rec := newHost(t, Config{Unsandboxed: true}) // the gate is a file of the host's
	gate := filepath.Join(t.TempDir(), "gate")
	v1 := bot("b1")
	v1.Env = []string{"GATE=" + gate}
	slow := make(chan Response, 1)
	go func() { res, _ := call(h, v1, "/gate"); slow <- res }()
	rec.waitFor(t, "from v1 at the gate", func(l Line) bool { return l.Message == "waiting at gate" && l.Version == "v1" })

	v2 := v1
	v2.Version = "v2"
	pid := string(mustCall(t, h, v2, "/pid").Body)
	if n := h.Running("b1"); n != 2 {
		t.Fatalf("%d processes while v1 drains, want 2", n)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := <-slow; string(res.Body) != "through" {
		t.Fatalf("the draining call got %q", res.Body)
	}
	eventually(t, "v1 to exit", func() bool { return h.Running("b1") == 1 })
	if got := string(mustCall(t, h, v2, "/pid").Body); got != pid {
		t.Fatalf("v2 moved from process %s to %s", pid, got)
	}
}

func TestIdleStop(t *testing.T) {
	h, _ := newHost(t, Config{IdleAfter: 100 * time.Millisecond})
	mustCall(t, h, bot("b1"), "/echo")
	eventually(t, "the idle process to stop", func() bool { return h.Running("b1") == 0 })
	mustCall(t, h, bot("b1"), "/echo")
	if n := h.startCount(); n != 2 {
		t.Fatalf("%d processes started, want 2", n)
	}
	entries, err := filepath.Glob(filepath.Join(h.cfg.Dir, "bundle-*.cjs"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("bundle files %v (%v): the stopped process's file should be gone", entries, err)
	}
}

func TestStopAndClose(t *testing.T) {
	h, rec := newHost(t, Config{})
	hung := make(chan error, 1)
	go func() { _, err := call(h, bot("b1"), "/hang"); hung <- err }()
	rec.waitFor(t, "from the hanging call", func(l Line) bool { return l.Message == "hanging" })
	mustCall(t, h, bot("b2"), "/echo")
	if info, err := os.Stat(h.cfg.Dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want mode 0700", h.cfg.Dir, info.Mode(), err)
	}
	files, _ := filepath.Glob(filepath.Join(h.cfg.Dir, "*"))
	for _, f := range files { // host.js, package.json and the two bundles
		if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, info.Mode(), err)
		}
	}

	h.Stop("b1")
	if err := <-hung; err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("in-flight call: %v", err)
	}
	if n := h.Running("b1"); n != 0 {
		t.Fatalf("%d processes after Stop", n)
	}
	if n := h.Running("b2"); n != 1 {
		t.Fatalf("Stop of b1 stopped b2 too")
	}
	mustCall(t, h, bot("b1"), "/echo")

	h.Close()
	if n := h.Running("b1") + h.Running("b2"); n != 0 {
		t.Fatalf("%d processes after Close", n)
	}
	if _, err := call(h, bot("b1"), "/echo"); !errors.Is(err, errClosed) {
		t.Fatalf("Call after Close: %v", err)
	}
	if _, err := h.Check(context.Background(), toolbox); !errors.Is(err, errClosed) {
		t.Fatalf("Check after Close: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(h.cfg.Dir, "bundle-*.cjs")); len(files) != 0 {
		t.Fatalf("bundle files left: %v", files)
	}
}
