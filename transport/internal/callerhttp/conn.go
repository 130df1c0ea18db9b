package callerhttp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// bufferBytes sizes a connection's read and write buffers, as net/http's.
const bufferBytes = 4 << 10

// A conn is one kept connection: its socket (sock) and, over https, the
// TLS session on it (nc is then the *tls.Conn).
type conn struct {
	key    poolKey
	sock   *sockConn
	nc     net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	reused bool
	idleAt time.Time
}

// socketFile is what a sockConn reads and writes: an *os.File over a
// blocking socket, or the dialled *net.TCPConn itself, in the netpoller.
// Both do the reference counting that keeps a descriptor from being
// closed under a reader (and then reused by another file).
type socketFile interface {
	io.ReadWriteCloser
	syscall.Conn
}

// sockConn is a net.Conn over a socket. shutdown(2) is what wakes a
// reader blocked in read(2), which closing the descriptor would not; a
// reader parked in the netpoller wakes on it too.
type sockConn struct {
	f            socketFile
	laddr, raddr net.Addr
	shutOnce     sync.Once
}

// dialConn dials addr with d; for a blocking conn (key.blocking) it moves
// the socket out of the netpoller into blocking mode. Over https it runs
// the TLS handshake on it.
func dialConn(ctx context.Context, d *net.Dialer, key poolKey, addr string, tlsConfig *tls.Config) (*conn, error) {
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	var sock *sockConn
	if key.blocking {
		if sock, err = blockingSocket(nc); err != nil {
			return nil, err
		}
		wakePoller()
	} else if sock, err = polledSocket(nc); err != nil {
		return nil, err
	}
	c := &conn{key: key, sock: sock, nc: sock}
	if tlsConfig != nil {
		tc := tls.Client(sock, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			sock.Close()
			return nil, err
		}
		c.nc = tc
	}
	c.br = bufio.NewReaderSize(c.nc, bufferBytes)
	c.bw = bufio.NewWriterSize(c.nc, bufferBytes)
	return c, nil
}

// wakePoller follows a dial made for a blocking connection, on the
// caller's thread. The dial parked the caller's goroutine in the
// netpoller; when that goroutine is locked to its thread (a C caller's, in
// a cgo callback), the M that polled and woke it hands its P to that
// thread and stops, and no M polls the network until sysmon does, 10 ms
// later: a reply due on another connection meanwhile (legacy HTTP+SSE's
// stream, which the caller then waits for) waited that long on about half
// the first calls. A goroutine started here has the scheduler wake an M
// for the idle P (wakep), which takes up polling once it finds no work.
func wakePoller() { go func() {}() }

// blockingSocket takes nc's socket out of the netpoller: a duplicate of
// its descriptor, put in blocking mode once nc (and its epoll
// registration) is closed. nc is closed in every case.
func blockingSocket(nc net.Conn) (*sockConn, error) {
	defer nc.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("the dialled connection has no socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, os.NewSyscallError("fcntl", dupErr)
	}
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	nc.Close() // before the flag changes: the netpoller must let go first
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	return &sockConn{f: os.NewFile(uintptr(fd), "tcp"), laddr: laddr, raddr: raddr}, nil
}

// polledSocket keeps nc's socket in the netpoller: a reader parks its
// goroutine, not its thread.
func polledSocket(nc net.Conn) (*sockConn, error) {
	f, ok := nc.(socketFile)
	if !ok {
		nc.Close()
		return nil, errors.New("the dialled connection has no socket")
	}
	return &sockConn{f: f, laddr: nc.LocalAddr(), raddr: nc.RemoteAddr()}, nil
}

func (s *sockConn) Read(b []byte) (int, error) {
	n, err := s.f.Read(b)
	return n, s.wrap("read", err)
}

func (s *sockConn) Write(b []byte) (int, error) {
	n, err := s.f.Write(b)
	return n, s.wrap("write", err)
}

// wrap gives a socket error net's shape (*net.OpError over the errno), so
// callers describe it as they would net/http's.
func (s *sockConn) wrap(op string, err error) error {
	if err == nil || err == io.EOF {
		return err // the usual case, without errors.As's allocation
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &net.OpError{Op: op, Net: "tcp", Source: s.laddr, Addr: s.raddr, Err: os.NewSyscallError(op, pe.Err)}
	}
	return err // nil or io.EOF
}

// shutdown abandons the exchange on the connection: it ends both ways,
// waking any reader or writer blocked on it, and the close that follows
// resets it (SO_LINGER 0) rather than end it gracefully. After shutdown(2)
// the kernel may keep advertising a zero window to a server still writing
// a response nobody reads, which would then wait until the FIN_WAIT2
// timeout (a minute) instead of failing at once. The descriptor stays
// open until Close or abort.
func (s *sockConn) shutdown() { s.shut(true) }

// shut ends the connection both ways, once, first setting it to reset on
// close when reset.
func (s *sockConn) shut(reset bool) {
	s.shutOnce.Do(func() {
		if raw, err := s.f.SyscallConn(); err == nil {
			_ = raw.Control(func(fd uintptr) {
				if reset {
					_ = unix.SetsockoptLinger(int(fd), unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
				}
				_ = unix.Shutdown(int(fd), unix.SHUT_RDWR)
			})
		}
	})
}

// abort abandons the connection (shutdown) and releases the descriptor
// once no reader or writer is left on it.
func (s *sockConn) abort() {
	s.shutdown()
	_ = s.f.Close()
}

// Close ends the connection gracefully, waking any reader blocked on it
// (crypto/tls closes the connection to interrupt a handshake whose context
// ended), and releases the descriptor once no reader or writer is left.
func (s *sockConn) Close() error {
	s.shut(false)
	return s.f.Close()
}

// alive reports whether an idle connection may still carry a request: the
// server has neither closed it nor sent anything unasked.
func (s *sockConn) alive() bool {
	raw, err := s.f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		ok = err == unix.EAGAIN
	})
	return ok
}

func (s *sockConn) LocalAddr() net.Addr  { return s.laddr }
func (s *sockConn) RemoteAddr() net.Addr { return s.raddr }

// Deadlines are not kept: a request's context bounds it (shutdown wakes
// the thread), and crypto/tls only sets them around its closing alert.
func (s *sockConn) SetDeadline(time.Time) error      { return nil }
func (s *sockConn) SetReadDeadline(time.Time) error  { return nil }
func (s *sockConn) SetWriteDeadline(time.Time) error { return nil }
