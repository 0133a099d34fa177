//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the program the sandboxes run: with helperEnv set, TestMain runs one attack
// (os.Args[1]) from inside and prints what happened.
const helperEnv = "SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		fmt.Print(attack(os.Args[1], os.Args[2:]))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// attack tries one thing from inside and answers "ok: …" when it worked, "refused: …" when not.
func attack(name string, args []string) string {
	res := func(err error, what string) string {
		if err != nil {
			return "refused: " + err.Error()
		}
		return "ok: " + what
	}
	switch name {
	case "read":
		b, err := os.ReadFile(args[0])
		return res(err, string(b))
	case "list":
		es, err := os.ReadDir(args[0])
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return res(err, strings.Join(names, ","))
	case "write":
		return res(os.WriteFile(args[0], []byte("x"), 0o600), "written")
	case "dial":
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err == nil {
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if line == "" && err != nil {
				return "refused: " + err.Error()
			}
			return "ok: " + strings.TrimSpace(line)
		}
		return res(err, "")
	case "dial-both": // two connections at once; what the second read
		first, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			return res(err, "")
		}
		defer first.Close()
		if _, err := bufio.NewReader(first).ReadString('\n'); err != nil {
			return res(err, "")
		}
		return attack("dial", args)
	case "half-close": // send, end the sending side, then read the answer to its end
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			return res(err, "")
		}
		defer c.Close()
		fmt.Fprint(c, "ping")
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			return res(err, "")
		}
		b, err := io.ReadAll(c)
		return res(err, string(b))
	case "resolve":
		addrs, err := net.LookupHost(args[0])
		return res(err, strings.Join(addrs, ","))
	case "resolve-tcp": // the nameserver of /etc/resolv.conf, over TCP
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, address string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", address)
		}}
		addrs, err := r.LookupHost(context.Background(), args[0])
		return res(err, strings.Join(addrs, ","))
	case "fork":
		pid, err := syscall.ForkExec("/usr/bin/true", []string{"true"}, &syscall.ProcAttr{})
		return res(err, fmt.Sprint(pid))
	case "exec":
		err := exec.Command("/bin/sh", "-c", "id").Run()
		return res(err, "ran")
	case "pids":
		es, err := os.ReadDir("/proc")
		var pids []string
		for _, e := range es {
			if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				pids = append(pids, e.Name())
			}
		}
		return res(err, strings.Join(pids, ","))
	case "caps":
		b, err := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "CapEff:") || strings.HasPrefix(l, "CapPrm:") || strings.HasPrefix(l, "NoNewPrivs:") || strings.HasPrefix(l, "Seccomp:") {
				args = append(args, strings.Join(strings.Fields(l), " "))
			}
		}
		return res(err, strings.Join(args, "; "))
	case "files":
		var fs []*os.File
		for {
			f, err := os.Open("/dev/null")
			if err != nil {
				return fmt.Sprintf("refused: after %d: %v", len(fs), err)
			}
			fs = append(fs, f)
			if len(fs) > 100000 {
				return "ok: unbounded"
			}
		}
	case "fill":
		f, err := os.Create("/tmp/fill")
		if err != nil {
			return res(err, "")
		}
		buf := make([]byte, 1<<20)
		for n := 0; n < 1024; n++ {
			if _, err := f.Write(buf); err != nil {
				return fmt.Sprintf("refused: after %d MiB: %v", n, err)
			}
		}
		return "ok: 1 GiB written"
	case "exit": // ends with the status args[0]
		code, _ := strconv.Atoi(args[0])
		os.Exit(code)
	case "await-usr1": // says it is ready, then what arrived
		got := make(chan os.Signal, 1)
		signal.Notify(got, syscall.SIGUSR1)
		fmt.Println("ready")
		select {
		case s := <-got:
			return "ok: " + s.String()
		case <-time.After(time.Minute):
			return "refused: no signal"
		}
	case "sleep":
		fmt.Println("ready")
		time.Sleep(10 * time.Minute)
	}
	return "unknown attack " + name
}

func run(t *testing.T, o Options, args ...string) string {
	t.Helper()
	return runWith(t, o, nil, args...)
}

// runWith runs the helper with ob serving its egress and DNS sockets.
func runWith(t *testing.T, o Options, ob *Outbound, args ...string) string {
	t.Helper()
	cmd := helperCmd(t, args...)
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	socks, werr := startWrapped(t, cmd, o)
	if werr == nil && ob != nil {
		link := ob.Serve(socks, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
		defer link.Close()
	}
	var lns []net.Listener
	if socks != nil {
		lns = socks.Listen
	}
	for _, ln := range lns {
		go serveLine(ln, "the server's API", false)
	}
	if err := cmd.Wait(); err != nil || werr != nil {
		t.Fatalf("sandbox: %v / %v; stderr: %s", werr, err, stderr.String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out.String()
}

// helperCmd is the test binary running the attack args.
func helperCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Args[0] = "helper"
	cmd.Env = []string{helperEnv + "=1"}
	return cmd
}

// startWrapped starts cmd in a sandbox of o and waits until its program runs.
func startWrapped(t testing.TB, cmd *exec.Cmd, o Options) (*Sockets, error) {
	t.Helper()
	s, err := Wrap(cmd, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = cmd.Start()
	s.Started()
	if err != nil {
		t.Fatal(err)
	}
	return s.Wait(30 * time.Second)
}

func needSandbox(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Fatalf("sandboxes are not available on this machine: %v", err)
	}
}

func TestSandboxHoldsAttacks(t *testing.T) {
	needSandbox(t)
	// Something of the server's on the host: a secret file, and a service on loopback.
	dir := t.TempDir()
	secret := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(secret, []byte(`{"token":"bp_pat_secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	host := listen(t, "127.0.0.1:0")
	go serveLine(host, "a host service", false)
	given := filepath.Join(dir, "given.txt")
	os.WriteFile(given, []byte("given content"), 0o600)
	o := Options{Files: []File{{Name: "given.txt", Path: given}}, Listen: []string{"127.0.0.1:8080"}, Limits: Limits{Files: 64, Tmp: 4 << 20}}

	for _, tc := range []struct {
		name string
		args []string
		want string // prefix of the answer
	}{
		{"reads a file it was given", []string{"read", "/app/given.txt"}, "ok: given content"},
		{"cannot read the data directory", []string{"read", secret}, "refused:"},
		{"cannot list the data directory", []string{"list", dir}, "refused:"},
		{"sees only the system directories at the root", []string{"list", "/"}, "ok: "},
		{"cannot write its own files", []string{"write", "/app/given.txt"}, "refused:"},
		{"cannot write the root", []string{"write", "/evil"}, "refused:"},
		{"cannot write system directories", []string{"write", "/usr/evil"}, "refused:"},
		{"writes its temporary directory", []string{"write", "/tmp/x"}, "ok: written"},
		{"temporary directory is bounded", []string{"fill"}, "refused: after"},
		{"reaches the server on the address it was given", []string{"dial", "127.0.0.1:8080"}, "ok: the server's API"},
		{"cannot reach the host's loopback", []string{"dial", host.Addr().String()}, "refused:"},
		{"cannot reach private networks", []string{"dial", "10.0.0.1:80"}, "refused:"},
		{"cannot reach link-local metadata", []string{"dial", "169.254.169.254:80"}, "refused:"},
		{"cannot fork", []string{"fork"}, "refused:"},
		{"cannot run commands", []string{"exec"}, "refused:"},
		{"sees only its own process", []string{"pids"}, "ok: 1"},
		{"open files are bounded", []string{"files"}, "refused: after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, o, tc.args...)
			t.Log(got)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("%v: got %q, want %q…", tc.args, got, tc.want)
			}
			if tc.args[0] == "list" && tc.args[1] == "/" {
				for _, name := range []string{"root", "home", "work", "var", "oldroot"} {
					if strings.Contains(","+got[len("ok: "):]+",", ","+name+",") {
						t.Fatalf("the root shows %s: %s", name, got)
					}
				}
			}
			if tc.args[0] == "pids" && got != "ok: 1" {
				t.Fatalf("other processes are visible: %s", got)
			}
		})
	}
}

func TestSandboxDropsPrivileges(t *testing.T) {
	needSandbox(t)
	got := run(t, Options{}, "caps")
	for _, want := range []string{"CapPrm: 0000000000000000", "CapEff: 0000000000000000", "NoNewPrivs: 1", "Seccomp: 2"} {
		if !strings.Contains(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestSandboxChildrenWhenAllowed(t *testing.T) {
	needSandbox(t)
	if got := run(t, Options{Children: true}, "exec"); got != "ok: ran" {
		t.Fatalf("with children allowed: %q", got)
	}
}

func TestWrapRefusesBadFileNames(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", ".."} {
		_, err := Wrap(exec.Command("/bin/true"), Options{Files: []File{{Name: name, Path: "/etc/hosts"}}})
		if err == nil {
			t.Fatalf("%q accepted", name)
		}
	}
}

func TestListenerFunnelsConnections(t *testing.T) {
	l := NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})
	a, _ := net.Listen("tcp", "127.0.0.1:0")
	b, _ := net.Listen("tcp", "127.0.0.1:0")
	l.Add(a)
	l.Add(b)
	for _, ln := range []net.Listener{a, b} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		got.Close()
	}
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := net.Dial("tcp", a.Addr().String()); err == nil {
		t.Fatal("an added listener still accepts after Close")
	}
}

// TestSmallMemoryLimit: the limits are set just before the program runs, so
// a limit below what the init itself holds (a race-enabled build holds far
// more) still starts the program, which then lives under it.
func TestSmallMemoryLimit(t *testing.T) {
	needSandbox(t)
	for range 3 {
		cmd := exec.Command("/bin/sh", "-c", "ulimit -d")
		var out, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &stderr
		s, err := Wrap(cmd, Options{Limits: Limits{Memory: 2 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Start()
		s.Started()
		if err != nil {
			t.Fatal(err)
		}
		_, werr := s.Wait(30 * time.Second)
		if err := cmd.Wait(); err != nil || werr != nil {
			t.Fatalf("sandbox: %v / %v; stderr: %s", werr, err, stderr.String())
		}
		s.Close()
		if got := strings.TrimSpace(out.String()); got != "2048" {
			t.Fatalf("the program's data limit: %q KiB, want 2048", got)
		}
	}
}

// testWriter writes a Link's log into the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// listen listens on addr until the test ends.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// serveLine answers every connection to ln with line, then closes it, or holds it open until ln is closed.
func serveLine(ln net.Listener, line string, hold bool) {
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		fmt.Fprintln(c, line)
		if hold {
			held = append(held, c)
		} else {
			c.Close()
		}
	}
}

// A program connects to any IPv4 address on an egress port as if directly; the server decides where it
// goes. The API keeps its address although its port is an egress port too.
func TestSandboxEgress(t *testing.T) {
	needSandbox(t)
	// Linux accepts any 127/8 address: 127.0.0.2 stands for a host outside.
	outside := listen(t, "127.0.0.2:0")
	go serveLine(outside, "outside", false)
	closed := listen(t, "127.0.0.2:0") // a port not among the egress ports
	go serveLine(closed, "not an egress port", false)
	// A service that answers once the request has ended: the end travels through, and the answer back.
	echo := listen(t, "127.0.0.2:0")
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			fmt.Fprintf(c, "got %s", b)
			c.Close()
		}
	}()
	port := outside.Addr().(*net.TCPAddr).Port
	refused := make(chan string, 10)
	out := &Outbound{
		Ports: []int{port, echo.Addr().(*net.TCPAddr).Port},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			if address != outside.Addr().String() && address != echo.Addr().String() {
				refused <- address
				return nil, fmt.Errorf("address %s is refused", address)
			}
			return (&net.Dialer{}).DialContext(ctx, network, address)
		},
		Lookup: func(_ context.Context, network, host string) ([]netip.Addr, error) {
			if host != "api.example.test." {
				return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
			}
			if network == "ip6" {
				return []netip.Addr{netip.MustParseAddr("2001:db8::1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		},
	}
	o := Options{Listen: []string{fmt.Sprintf("127.0.0.1:%d", port)}, Egress: out.Ports, DNS: true}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"reaches an address the server dials", []string{"dial", outside.Addr().String()}, "ok: outside"},
		{"reaches the API on its address, on an egress port", []string{"dial", fmt.Sprintf("127.0.0.1:%d", port)}, "ok: the server's API"},
		{"ends its sending side and reads the answer", []string{"half-close", echo.Addr().String()}, "ok: got ping"},
		{"is reset where the server refuses", []string{"dial", fmt.Sprintf("10.9.8.7:%d", port)}, "refused: "},
		{"is refused on other ports", []string{"dial", closed.Addr().String()}, "refused: "},
		{"resolves names with the server", []string{"resolve", "api.example.test"}, "ok: 127.0.0.2"},
		{"resolves names over TCP too", []string{"resolve-tcp", "api.example.test"}, "ok: 127.0.0.2"},
		{"learns that unknown names do not exist", []string{"resolve", "nowhere.example.test"}, "refused: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runWith(t, o, out, tc.args...)
			t.Log(got)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("%v: got %q, want %q…", tc.args, got, tc.want)
			}
			if n := out.Len(); n != 0 {
				t.Fatalf("%d sandboxes still served after their end", n)
			}
		})
	}
	select {
	case a := <-refused:
		if a != fmt.Sprintf("10.9.8.7:%d", port) {
			t.Fatalf("dialed %s", a)
		}
	default:
		t.Fatal("the refused address was never dialed")
	}
}

// Without egress ports, nothing outside is reachable, as before.
func TestSandboxWithoutEgress(t *testing.T) {
	needSandbox(t)
	if got := run(t, Options{}, "dial", "10.9.8.7:443"); !strings.Contains(got, "network is unreachable") {
		t.Fatalf("got %q", got)
	}
}

// One sandbox's connections are bounded: past the bound, they are reset.
func TestSandboxEgressBounded(t *testing.T) {
	needSandbox(t)
	outside := listen(t, "127.0.0.2:0")
	go serveLine(outside, "outside", true)
	port := outside.Addr().(*net.TCPAddr).Port
	out := &Outbound{Ports: []int{port}, Dial: (&net.Dialer{}).DialContext, MaxConns: 1}
	got := runWith(t, Options{Egress: out.Ports}, out, "dial-both", outside.Addr().String())
	if !strings.HasPrefix(got, "refused: ") || !strings.Contains(got, "reset") {
		t.Fatalf("the second connection: %q", got)
	}
	out.MaxConns = 2
	if got := runWith(t, Options{Egress: out.Ports}, out, "dial-both", outside.Addr().String()); got != "ok: outside" {
		t.Fatalf("the second connection under the bound: %q", got)
	}
}
