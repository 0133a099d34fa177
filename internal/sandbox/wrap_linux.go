//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// specEnv carries the spec from Wrap to the init, which removes it before executing the program.
const specEnv = "BOTPLATFORM_SANDBOX_SPEC"

// spec is what the init needs. Descriptors are numbers in the init process.
type spec struct {
	Args     []string   `json:"args"`
	Env      []string   `json:"env"`
	Dir      string     `json:"dir"`
	Extra    int        `json:"extra"` // descriptors 3..3+Extra-1 are the program's own
	ExeFD    int        `json:"exeFd"`
	CtlFD    int        `json:"ctlFd"`
	Files    []specFile `json:"files"`
	Listen   []string   `json:"listen"`
	Egress   []int      `json:"egress"`
	DNS      bool       `json:"dns"`
	Limits   Limits     `json:"limits"`
	Children bool       `json:"children"`
	Binds    []string   `json:"binds"`
	Probe    bool       `json:"probe"` // set up, answer "ok" and exit 0
}

type specFile struct {
	Name string `json:"name"`
	FD   int    `json:"fd"`
}

// Setup is the sandbox of one command, between Wrap and the program's start.
type Setup struct {
	ctl   *os.File   // the server's end of the control socket
	child []*os.File // the init's descriptors, closed here once it started
}

// Wrap rewrites cmd (Path, Args, Env, Dir, ExtraFiles and SysProcAttr as the caller set them) so that Start
// runs cmd.Path in a sandbox. The caller then calls Started after cmd.Start (whatever it returned) and Wait
// to learn whether the sandbox was set up and to receive its listeners.
func Wrap(cmd *exec.Cmd, o Options) (*Setup, error) {
	return wrap(cmd, o, false)
}

func wrap(cmd *exec.Cmd, o Options, probe bool) (*Setup, error) {
	s := &Setup{}
	ok := false
	defer func() {
		if !ok {
			s.Started()
			s.Close()
		}
	}()
	exe, err := os.Open(cmd.Path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.child = append(s.child, exe)
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	s.ctl = os.NewFile(uintptr(pair[0]), "sandbox-control")
	s.child = append(s.child, os.NewFile(uintptr(pair[1]), "sandbox-control-child"))

	extra := len(cmd.ExtraFiles)
	sp := spec{
		Args: cmd.Args, Env: cmd.Env, Dir: o.Dir, Extra: extra, ExeFD: 3 + extra, CtlFD: 4 + extra,
		Listen: o.Listen, Egress: o.Egress, DNS: o.DNS, Limits: o.Limits, Children: o.Children, Probe: probe,
		Binds: append(append([]string{}, SystemBinds...), o.Binds...),
	}
	if sp.Dir == "" {
		sp.Dir = "/app"
	}
	for _, f := range o.Files {
		if f.Name == "" || strings.ContainsAny(f.Name, "/\x00") || f.Name == "." || f.Name == ".." {
			return nil, fmt.Errorf("sandbox: %q is not a plain file name", f.Name)
		}
		fh, err := os.Open(f.Path)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		s.child = append(s.child, fh)
		sp.Files = append(sp.Files, specFile{Name: f.Name, FD: 3 + extra + len(s.child) - 1})
	}
	data, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// The server's own binary, through the link that needs no search permission on its directories: a
	// root server's sandbox is already the unprivileged user when it executes. It starts as the launcher,
	// which starts the init in the sandbox's namespaces (launch_linux.go).
	cmd.ExtraFiles = append(cmd.ExtraFiles, s.child...)
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{LauncherName}
	// GOTRACEBACK=none: should the init's runtime fail, its first words, not a dump of its goroutines,
	// end the stderr the server keeps the last lines of.
	cmd.Env = []string{specEnv + "=" + string(data), "GOTRACEBACK=none"}
	cmd.Dir = "/"
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	ok = true
	return s, nil
}

// nobody is the host user a root server's sandboxes run as.
const nobody = 65534

// Started closes the server's copies of the init's descriptors; call it once cmd.Start returned.
func (s *Setup) Started() {
	for _, f := range s.child {
		f.Close()
	}
	s.child = nil
}

// Wait waits until the init has executed the program (or, for a probe, finished), at most timeout, and
// returns the sockets it opened for the server.
func (s *Setup) Wait(timeout time.Duration) (*Sockets, error) {
	c, err := net.FileConn(s.ctl)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	uc.SetReadDeadline(time.Now().Add(timeout))
	socks := &Sockets{}
	fail := func(err error) (*Sockets, error) {
		socks.Close()
		return nil, err
	}
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
		if errors.Is(err, io.EOF) {
			return socks, nil // the program was executed: the init's end of the socket closed on exec
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fail(fmt.Errorf("sandbox: not set up within %s", timeout))
			}
			return fail(fmt.Errorf("sandbox: %w", err))
		}
		if n == 0 && oobn == 0 {
			return socks, nil
		}
		msg := string(buf[:n])
		if msg == "ok" {
			return socks, nil
		}
		if strings.HasPrefix(msg, "error: ") {
			return fail(errors.New("sandbox: " + msg[len("error: "):]))
		}
		f, err := receiveFile(oob[:oobn])
		if err != nil {
			return fail(err)
		}
		err = socks.add(msg, f)
		f.Close()
		if err != nil {
			return fail(err)
		}
	}
}

// Kinds of socket the init sends, as the text of their message.
const (
	sendListen = "listener"
	sendEgress = "egress"
	sendDNS    = "dns"
	sendDNSTCP = "dns-tcp"
)

func (s *Sockets) add(kind string, f *os.File) error {
	if kind == sendDNS {
		pc, err := net.FilePacketConn(f)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		s.DNS = pc
		return nil
	}
	ln, err := net.FileListener(f)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	switch kind {
	case sendListen:
		s.Listen = append(s.Listen, ln)
	case sendEgress:
		s.Egress = append(s.Egress, ln)
	case sendDNSTCP:
		s.DNSTCP = ln
	default:
		ln.Close()
		return fmt.Errorf("sandbox: unexpected message %q", kind)
	}
	return nil
}

func receiveFile(oob []byte) (*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("sandbox: a socket without its descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("sandbox: a socket without its descriptor")
	}
	return os.NewFile(uintptr(fds[0]), "sandbox-socket"), nil
}

// Close releases the control socket.
func (s *Setup) Close() {
	if s.ctl != nil {
		s.ctl.Close()
	}
}

// probe starts a sandbox that sets itself up completely and exits.
func probe() error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	self, _ = filepath.EvalSymlinks(self)
	var stderr bytes.Buffer
	cmd := exec.Command(self)
	cmd.Stderr = &stderr
	// Everything a sandbox may be asked for, an egress port that is also the API's included.
	s, err := wrap(cmd, Options{Listen: []string{"127.0.0.1:80"}, Egress: []int{80}, DNS: true}, true)
	if err != nil {
		return err
	}
	defer s.Close()
	err = cmd.Start()
	s.Started()
	if err != nil {
		return fmt.Errorf("sandbox: starting its launcher: %w", err)
	}
	socks, werr := s.Wait(30 * time.Second)
	if werr == nil {
		socks.Close()
		if len(socks.Listen) != 1 || len(socks.Egress) != 1 || socks.DNS == nil || socks.DNSTCP == nil {
			werr = errors.New("sandbox: the probe's sockets did not arrive")
		}
	}
	if werr != nil {
		cmd.Process.Kill()
	}
	if err := cmd.Wait(); err != nil && werr == nil {
		werr = fmt.Errorf("sandbox: the probe %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return werr
}
