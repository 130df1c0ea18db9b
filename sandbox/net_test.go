package sandbox

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// listeners listen for TCP and UDP on one of the host's addresses, as a
// server escaping its network namespace would reach them: the loopback,
// or the host's own address on its network (the way "outside").
type listeners struct {
	host             string
	tcpPort, udpPort string
	udp              *net.UDPConn
}

func netListen(t *testing.T) (*listeners, error) {
	return netListenOn(t, net.IPv4(127, 0, 0, 1))
}

func netListenOn(t *testing.T, ip net.IP) (*listeners, error) {
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { tl.Close() })
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ul, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { ul.Close() })
	return &listeners{
		host:    ip.String(),
		tcpPort: strconv.Itoa(tl.Addr().(*net.TCPAddr).Port),
		udpPort: strconv.Itoa(ul.LocalAddr().(*net.UDPAddr).Port),
		udp:     ul,
	}, nil
}

// hostAddress is the host's first non-loopback IPv4 address (nil when it
// has none): what an unconfined process reaches through the host's
// network stack, and a confined one must not.
func hostAddress() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.To4()
		}
	}
	return nil
}

// udpReceived reports whether a datagram arrived. The sender has exited
// by now, so anything it sent over the host's stack is already queued.
func (l *listeners) udpReceived() bool {
	_ = l.udp.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	var b [16]byte
	_, _, err := l.udp.ReadFrom(b[:])
	return err == nil
}

// unixListener listens on a socket file in dir, as the Docker daemon, a
// D-Bus bus or an SSH agent would.
func unixListener(t *testing.T, dir string) string {
	path := dir + "/daemon.sock"
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listening on %s: %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return path
}
