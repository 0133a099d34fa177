// Package harness runs `botplatform serve` as a child process and drives it
// over HTTP, for the reliability tools (cmd/crashtest, cmd/loadtest): it
// starts, kills and samples the process, and speaks the Admin, Files and Chat
// APIs as a client would.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is one `botplatform serve` process.
type Server struct {
	URL      string // http://127.0.0.1:PORT, from its "listening on" line
	DebugURL string // its --debug-addr listener, when started with one
	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	mu       sync.Mutex
	stdout   bytes.Buffer
	stderr   bytes.Buffer
}

var (
	listeningRe = regexp.MustCompile(`(?m)^botplatform \S+ listening on (http://\S+)$`)
	debugRe     = regexp.MustCompile(`(?m)^debug endpoints on (http://\S+)$`)
)

// Start runs `bin serve args...` with env added to this process's
// environment, and waits (up to timeout) until it prints its address and
// answers /healthz.
func Start(ctx context.Context, bin string, args []string, env []string, timeout time.Duration) (*Server, error) {
	s := &Server{done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout = &lockedWriter{&s.mu, &s.stdout}
	s.cmd.Stderr = &lockedWriter{&s.mu, &s.stderr}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(timeout)
	for s.URL == "" {
		out := s.Stdout()
		if m := listeningRe.FindStringSubmatch(out); m != nil {
			s.URL = m[1]
			if d := debugRe.FindStringSubmatch(out); d != nil {
				s.DebugURL = d[1]
			}
			break
		}
		if err := s.wait(ctx, deadline, 5*time.Millisecond); err != nil {
			return s, fmt.Errorf("no \"listening on\" line: %w", err)
		}
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := hc.Get(s.URL + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if err := s.wait(ctx, deadline, 20*time.Millisecond); err != nil {
			return s, fmt.Errorf("/healthz never answered 200: %w", err)
		}
	}
}

// wait sleeps d, or fails when the process exited, ctx ended or the
// deadline passed.
func (s *Server) wait(ctx context.Context, deadline time.Time, d time.Duration) error {
	select {
	case <-s.done:
		return fmt.Errorf("the process exited (%v); stderr: %s", s.waitErr, Tail(s.Stderr(), 2000))
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
	}
	if time.Now().After(deadline) {
		return errors.New("timed out")
	}
	return nil
}

// PID is the process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited tells whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL and waits until the process is gone.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Stop sends SIGTERM and waits up to timeout for a clean exit; past it,
// the process is killed and Stop fails.
func (s *Server) Stop(timeout time.Duration) error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.waitErr
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("the server did not exit within %s of SIGTERM", timeout)
	}
}

// Stdout is everything the process printed on stdout so far.
func (s *Server) Stdout() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdout.String()
}

// Stderr is everything the process logged so far.
func (s *Server) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// ErrorLines are the lines of the log at level ERROR (text or JSON format)
// and any Go panic or fatal error.
func (s *Server) ErrorLines() []string { return s.LogLines("ERROR") }

// LogLines are the lines of the log at that level (text or JSON format);
// for ERROR, Go panics and fatal errors too.
func (s *Server) LogLines(level string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s.Stderr()))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "level="+level) || strings.Contains(l, `"level":"`+level+`"`) ||
			level == "ERROR" && (strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:")) {
			out = append(out, l)
		}
	}
	return out
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// ProcStats are what /proc tells of a process.
type ProcStats struct {
	RSSBytes  int64
	OpenFiles int
}

// Proc reads the resident memory and the open file descriptors of pid
// from /proc (Linux).
func Proc(pid int) (ProcStats, error) {
	var st ProcStats
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			st.RSSBytes = kb << 10
		}
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return st, err
	}
	st.OpenFiles = len(fds)
	return st, nil
}

// DirSize is the total size of the regular files under dir.
func DirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}

// Binary returns bin when set; otherwise it builds the module's server into
// a temporary directory, which cleanup removes.
func Binary(bin string) (path string, cleanup func(), err error) {
	if bin != "" {
		return bin, func() {}, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "botplatform-bin-")
	if err != nil {
		return "", nil, err
	}
	if path, err = Build(root, dir); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// Build compiles ./cmd/botplatform of the module at root into dir and
// returns the binary's path.
func Build(root, dir string) (string, error) {
	bin := filepath.Join(dir, "botplatform")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/botplatform")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// ModuleRoot is the directory of the go.mod above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// CPUTime is the processor time pid used so far (user and system), from
// /proc (Linux, 100 clock ticks per second).
func CPUTime(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is the first, utime the 12th, stime the 13th.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
