// Package sandbox runs a program (a bot's Node bundle, the embedded VM's bot process) where it cannot reach
// the server's data, other bots, the machine's loopback services or other processes: its own user, mount,
// PID, network, IPC and UTS namespaces, a root that holds only the system's read-only directories and the
// files it is given, no capabilities, no new privileges, a seccomp filter that refuses child processes, and
// resource limits. Linux only; elsewhere Available says why not.
//
// The setup runs in the server's own binary: Wrap turns an exec.Cmd into one that starts this binary under
// the name InitName, and the package's init function, seeing that name, builds the sandbox and executes the
// program by descriptor. A binary that imports this package is therefore able to start sandboxes, tests
// included.
package sandbox

import (
	"net"
	"sync"
)

// InitName is the argv[0] under which the binary builds a sandbox instead of running its main.
const InitName = "botplatform-sandbox"

// Limits bound what the sandboxed process may use. Zero means the default.
type Limits struct {
	Memory     uint64 // bytes of data segment (RLIMIT_DATA); 0 = unlimited
	CPUSeconds uint64 // CPU time of the process over its life (RLIMIT_CPU); 0 = DefaultCPUSeconds
	Procs      uint64 // threads (RLIMIT_NPROC, counted in the sandbox's own user namespace); 0 = DefaultProcs
	Files      uint64 // open descriptors (RLIMIT_NOFILE); 0 = DefaultFiles
	Tmp        uint64 // bytes of the private /tmp; 0 = DefaultTmp
}

// The defaults of Limits.
const (
	DefaultCPUSeconds = 3600
	DefaultProcs      = 256
	DefaultFiles      = 1024
	DefaultTmp        = 64 << 20
)

// File is a host file copied, read-only, into the sandbox's /app directory under Name.
type File struct {
	Name string // a plain file name
	Path string // on the host
}

// Options say what the sandbox holds besides the system's read-only directories.
type Options struct {
	Files []File
	// Listen: TCP addresses the sandbox listens on inside its own network namespace (where only loopback
	// exists). Setup.Wait returns their listeners, which the server serves: how the sandbox reaches the
	// server.
	Listen []string
	// Egress: TCP ports the program may connect to on any IPv4 address. Every IPv4 address is made local
	// inside (a local route 0.0.0.0/0 on loopback) and a listener opened on 0.0.0.0:<port> for each, which
	// Setup.Wait returns: a connection's local address is where the program meant to go, and the server
	// decides whether to carry it there (Outbound). The addresses of Listen keep their own listeners; other
	// ports refuse connections, and IPv6 stays unreachable.
	Egress []int
	// DNS gives the sandbox an /etc/resolv.conf naming DNSAddr, where it opens a UDP and a TCP socket on
	// port 53 that Setup.Wait returns for the server to answer (Outbound).
	DNS    bool
	Limits Limits
	// Children lets the program start child processes (refused by default).
	Children bool
	// Dir is the working directory inside; default "/app".
	Dir string
	// Binds are extra host paths made visible read-only at the same path (the program's own directory when
	// it lives outside the system's).
	Binds []string
}

// SystemBinds are the host paths every sandbox sees, read-only: what a dynamically linked program and Node.js
// need (libraries, certificates, time zones). Paths that do not exist are skipped.
var SystemBinds = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/localtime", "/etc/nsswitch.conf", "/etc/hosts",
}

// DNSAddr is the nameserver of a sandbox with Options.DNS, inside its own network namespace.
const DNSAddr = "127.0.0.53"

// Sockets are what a sandbox opened inside its network namespace for the server to serve.
type Sockets struct {
	Listen []net.Listener // of Options.Listen, in order
	Egress []net.Listener // of Options.Egress, in order
	DNS    net.PacketConn // UDP DNSAddr:53, with Options.DNS
	DNSTCP net.Listener   // TCP DNSAddr:53, with Options.DNS
}

// Close closes every socket.
func (s *Sockets) Close() {
	for _, ln := range append(append([]net.Listener{}, s.Listen...), s.Egress...) {
		ln.Close()
	}
	if s.DNS != nil {
		s.DNS.Close()
	}
	if s.DNSTCP != nil {
		s.DNSTCP.Close()
	}
}

var (
	availOnce sync.Once
	availErr  error
)

// Available reports whether sandboxes can be started on this machine, trying one once per process: nil, or
// why not (the kernel refuses user namespaces, the platform is not Linux...).
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

// Listener is a net.Listener fed by the listeners of many sandboxes: the server serves it once, and every
// sandbox's connections arrive on it.
type Listener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	lns   map[net.Listener]bool
}

// NewListener returns a Listener whose Addr is addr (the address the sandboxes listen on inside).
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{}), lns: map[net.Listener]bool{}}
}

// Add accepts ln's connections into l until ln or l is closed.
func (l *Listener) Add(ln net.Listener) {
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		ln.Close()
		return
	default:
	}
	l.lns[ln] = true
	l.mu.Unlock()
	go func() {
		defer func() {
			l.mu.Lock()
			delete(l.lns, ln)
			l.mu.Unlock()
			ln.Close()
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the sandbox ended, or l was closed
			}
			select {
			case l.conns <- c:
			case <-l.done:
				c.Close()
				return
			}
		}
	}()
}

// Len says how many sandboxes' listeners feed l.
func (l *Listener) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lns)
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops every listener added.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		for ln := range l.lns {
			ln.Close()
		}
		l.mu.Unlock()
	})
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.addr }
