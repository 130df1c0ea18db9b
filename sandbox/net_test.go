package sandbox

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// loopback listens on the host's loopback for TCP and UDP, as a server
// escaping its network namespace would reach it.
type loopback struct {
	tcpPort, udpPort string
	udp              *net.UDPConn
}

func netListen(t *testing.T) (*loopback, error) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
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
	ul, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { ul.Close() })
	return &loopback{
		tcpPort: strconv.Itoa(tl.Addr().(*net.TCPAddr).Port),
		udpPort: strconv.Itoa(ul.LocalAddr().(*net.UDPAddr).Port),
		udp:     ul,
	}, nil
}

// udpReceived reports whether a datagram arrived. The sender has exited
// by now, so anything it sent over loopback is already queued.
func (l *loopback) udpReceived() bool {
	_ = l.udp.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	var b [16]byte
	_, _, err := l.udp.ReadFrom(b[:])
	return err == nil
}
