package callerhttp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// newTransport is a Transport over a clone of net/http's default
// transport without a proxy, its connections closed with the test.
func newTransport(t *testing.T) *Transport {
	tr, _ := countingTransport(t, nil)
	return tr
}

// countingTransport is newTransport whose fallback counts the connections
// it dials (net/http's own, each with two goroutines), over tlsConfig.
func countingTransport(t *testing.T, tlsConfig *tls.Config) (*Transport, *atomic.Int32) {
	var dials atomic.Int32
	fb := http.DefaultTransport.(*http.Transport).Clone()
	fb.Proxy = nil
	fb.TLSClientConfig = tlsConfig
	var d net.Dialer
	fb.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	tr := New(fb)
	t.Cleanup(tr.CloseIdleConnections)
	return tr, &dials
}

// A mode is one of the ways this transport exchanges a request itself:
// mark marks a request's context for it.
type mode struct {
	name     string
	mark     func(context.Context) context.Context
	blocking bool // the connections are blocking sockets
	// past is where a request goes past the bound on blocking exchanges
	// under way: "net/http", "pooled", or "" for no bound.
	past string
}

var modes = []mode{
	{"on a thread", OnThread, true, "net/http"},
	{"on the caller", OnCaller, true, "pooled"},
	{"pooled", Pooled, false, ""},
}

// forModes runs test once for each mode, as a subtest.
func forModes(t *testing.T, test func(t *testing.T, m mode)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { test(t, m) })
	}
}

// post makes one POST with tr, its context marked by mark unless nil, and
// returns the status and the body read to its end.
func post(t *testing.T, tr http.RoundTripper, ctx context.Context, u, body string, mark func(context.Context) context.Context) (int, string) {
	t.Helper()
	if mark != nil {
		ctx = mark(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

// echoServer answers every POST with its body, and counts the
// connections it accepted.
func echoServer(t *testing.T, conns *atomic.Int32) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew && conns != nil {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestRequestsOnTheCallerKeepOneConnection: marked requests are exchanged
// here, one after another on one kept connection (a blocking socket on
// the caller, a socket in the netpoller pooled), with no net/http
// connection goroutine; unmarked ones go to net/http, and so do a
// thread's requests past the bound on blocking exchanges under way, where
// a goroutine's park in the netpoller instead.
func TestRequestsOnTheCallerKeepOneConnection(t *testing.T) {
	forModes(t, func(t *testing.T, m mode) {
		var conns atomic.Int32
		srv := echoServer(t, &conns)
		tr, netHTTPConns := countingTransport(t, nil)
		for i := range 5 {
			code, body := post(t, tr, context.Background(), srv.URL, fmt.Sprintf(`{"n":%d}`, i), m.mark)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, fmt.Sprintf(`{"n":%d}`, i), body)
		}
		require.EqualValues(t, 1, conns.Load(), "one connection, kept between requests")
		require.Zero(t, netHTTPConns.Load(), "no request went through net/http's connections")
		require.EqualValues(t, 0, onCallerNow.Load(), "every exchange counted out")
		require.Equal(t, m.blocking, !nonblocking(t, keptConn(t, tr)))

		code, _ := post(t, tr, context.Background(), srv.URL, "{}", nil)
		require.Equal(t, http.StatusOK, code)
		require.EqualValues(t, 1, netHTTPConns.Load(), "an unmarked request goes to net/http")

		tr.maxOnCaller = 0 // as when as many exchanges are under way as allowed
		code, _ = post(t, tr, context.Background(), srv.URL, "{}", m.mark)
		require.Equal(t, http.StatusOK, code)
		blocking, pooled := tr.Kept()
		switch m.past {
		case "net/http":
			require.EqualValues(t, 2, conns.Load(), "past the bound, net/http's kept connection serves it")
			require.Equal(t, 1, blocking)
		case "pooled":
			require.EqualValues(t, 3, conns.Load(), "past the bound, a connection in the netpoller")
			require.EqualValues(t, 1, netHTTPConns.Load())
			require.Equal(t, [2]int{1, 1}, [2]int{blocking, pooled})
		default:
			require.EqualValues(t, 2, conns.Load(), "pooled exchanges hold no thread: no bound")
			require.EqualValues(t, 1, netHTTPConns.Load())
			require.Equal(t, 1, pooled)
		}
		require.EqualValues(t, 0, onCallerNow.Load())
	})
}

// TestAGoroutineNotAloneParksInTheNetpoller: while another blocking
// exchange is under way, a goroutine's request (OnCaller) is exchanged in
// the netpoller, where a thread's (OnThread) still blocks: each blocked
// reader keeps its P until sysmon retakes it, which a goroutine need not
// pay and a thread outside Go must.
func TestAGoroutineNotAloneParksInTheNetpoller(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		if string(data) == "hold" {
			held <- struct{}{}
			<-release
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before srv.Close, which waits for the handler
	tr, netHTTPConns := countingTransport(t, nil)

	done := make(chan error, 1)
	go func() {
		code, err := postAsync(tr, srv.URL, "hold", OnThread)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		done <- err
	}()
	<-held // one blocking exchange under way
	for _, m := range []struct {
		mark     func(context.Context) context.Context
		blocking int
		pooled   int
	}{
		{OnCaller, 0, 1}, // not alone: in the netpoller
		{OnThread, 1, 1}, // a thread blocks however many do
	} {
		code, body := post(t, tr, context.Background(), srv.URL, "go", m.mark)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, "go", body)
		blocking, pooled := tr.Kept()
		require.Equal(t, [2]int{m.blocking, m.pooled}, [2]int{blocking, pooled})
	}
	letGo()
	require.NoError(t, <-done)
	code, _ := post(t, tr, context.Background(), srv.URL, "alone", OnCaller)
	require.Equal(t, http.StatusOK, code)
	blocking, pooled := tr.Kept()
	require.Equal(t, [2]int{2, 1}, [2]int{blocking, pooled}, "alone, a goroutine's exchange blocks again")
	require.Zero(t, netHTTPConns.Load())
	require.EqualValues(t, 0, onCallerNow.Load())
}

// postAsync is post for a goroutine other than the test's: it reports
// failures in its outcome rather than through the test.
func postAsync(tr http.RoundTripper, u, body string, mark func(context.Context) context.Context) (int, error) {
	req, err := http.NewRequestWithContext(mark(context.Background()), http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return resp.StatusCode, err
}

// keptConn is the one connection tr keeps.
func keptConn(t *testing.T, tr *Transport) *conn {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var kept []*conn
	for _, list := range tr.idle {
		kept = append(kept, list...)
	}
	require.Len(t, kept, 1)
	return kept[0]
}

// nonblocking reports whether c's socket is in non-blocking mode (the
// netpoller's).
func nonblocking(t *testing.T, c *conn) bool {
	raw, err := c.sock.f.SyscallConn()
	require.NoError(t, err)
	var flags int
	require.NoError(t, raw.Control(func(fd uintptr) {
		flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0)
	}))
	require.NoError(t, err)
	return flags&unix.O_NONBLOCK != 0
}

// TestOnlyDirectHTTPIsServed: a request through a proxy, or to a scheme
// other than http and https, goes to the fallback, which reaches the
// proxy.
func TestOnlyDirectHTTPIsServed(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		w.Write([]byte("via proxy"))
	}))
	t.Cleanup(proxy.Close)
	pu, err := url.Parse(proxy.URL)
	require.NoError(t, err)
	fb := http.DefaultTransport.(*http.Transport).Clone()
	fb.Proxy = http.ProxyURL(pu)
	tr := New(fb)
	t.Cleanup(tr.CloseIdleConnections)

	for i, m := range modes {
		code, body := post(t, tr, context.Background(), "http://mcp.invalid/mcp", "{}", m.mark)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, "via proxy", body)
		require.EqualValues(t, i+1, proxied.Load())
	}

	direct := newTransport(t)
	for _, tc := range []struct {
		mark func(context.Context) context.Context
		url  string
		want exchangeMode
	}{
		{OnCaller, "ftp://example.invalid/x", viaFallback},
		{Pooled, "ftp://example.invalid/x", viaFallback},
		{OnCaller, "https://example.invalid/x", onCaller},
		// Over https net/http negotiates HTTP/2, one connection for all.
		{Pooled, "https://example.invalid/x", viaFallback},
		{Pooled, "http://example.invalid/x", pooled},
		{func(ctx context.Context) context.Context { return ctx }, "http://example.invalid/x", viaFallback},
	} {
		req, err := http.NewRequestWithContext(tc.mark(context.Background()), http.MethodGet, tc.url, nil)
		require.NoError(t, err)
		require.Equal(t, tc.want, direct.serves(req), tc.url)
	}
}

// rawServer accepts connections on loopback and hands each, numbered
// from 0, to serve; it stops with the test.
func rawServer(t *testing.T, serve func(n int, c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(n, c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp"
}

// readRequest reads one request and its body; false at the connection's
// end.
func readRequest(br *bufio.Reader) (string, bool) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", false
	}
	data, _ := io.ReadAll(req.Body)
	return string(data), true
}

func answer(c net.Conn, body string) {
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// TestAKeptConnectionTheServerClosed: a connection the server closed while
// it was kept is not used, and a request it ended before answering (it
// closed just as the request went out) goes again, once, on a new one, as
// net/http retries it.
func TestAKeptConnectionTheServerClosed(t *testing.T) {
	forModes(t, testAKeptConnectionTheServerClosed)
}

func testAKeptConnectionTheServerClosed(t *testing.T, m mode) {
	cases := []struct {
		name string
		// readsNext: the server reads the next request on the first
		// connection before it closes it, unanswered; otherwise it closes
		// the connection as soon as it has answered.
		readsNext bool
		received  int32 // requests the server read, in all
	}{
		{"closed while kept", false, 2},
		{"closed when the next request came", true, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var received atomic.Int32
			var bodies sync.Map
			u := rawServer(t, func(n int, c net.Conn) {
				br := bufio.NewReader(c)
				for {
					body, ok := readRequest(br)
					if !ok {
						return
					}
					received.Add(1)
					bodies.Store(fmt.Sprint(n, body), true)
					if n == 0 && tc.readsNext && received.Load() == 2 {
						return // closes, unanswered
					}
					answer(c, body)
					if n == 0 && !tc.readsNext {
						return // closes
					}
				}
			})
			tr := newTransport(t)
			tr.trustedIdle = 0 // every kept connection is peeked at
			_, body := post(t, tr, context.Background(), u, `"one"`, m.mark)
			require.Equal(t, `"one"`, body)
			if !tc.readsNext {
				// The server's close reaches the kept connection before it
				// is taken again.
				waitClosedByPeer(t, tr)
			}
			_, body = post(t, tr, context.Background(), u, `"two"`, m.mark)
			require.Equal(t, `"two"`, body)
			_, ok := bodies.Load(`1"two"`)
			require.True(t, ok, "the request reached the new connection whole")
			require.Equal(t, tc.received, received.Load())
		})
	}
}

// waitClosedByPeer waits until the one kept connection reads as closed.
func waitClosedByPeer(t *testing.T, tr *Transport) {
	tr.mu.Lock()
	var c *conn
	for _, list := range tr.idle {
		c = list[0]
	}
	tr.mu.Unlock()
	require.NotNil(t, c)
	raw, err := c.sock.f.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, raw.Control(func(fd uintptr) {
		// A blocking poll for the end of the stream, not a timed one.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}))
}

// TestAConnectionKeptMomentsAgoIsNotPeekedAt: a kept connection is peeked
// at before it is taken again (the server may have closed it) only once it
// has been kept longer than trustedIdle; within it the request goes out
// without the peek, and when the server had closed the connection it
// fails over to a new one. The server here ends its side of the first
// connection (FIN) after answering, and still reads from it.
func TestAConnectionKeptMomentsAgoIsNotPeekedAt(t *testing.T) {
	forModes(t, testAConnectionKeptMomentsAgoIsNotPeekedAt)
}

func testAConnectionKeptMomentsAgoIsNotPeekedAt(t *testing.T, m mode) {
	cases := []struct {
		name        string
		trustedIdle time.Duration
		afterFIN    int32 // requests the server read on the first connection after its FIN
	}{
		{"kept longer: peeked at, not used", 0, 0},
		{"kept moments ago: used, then failed over", time.Hour, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var afterFIN atomic.Int32
			firstDone := make(chan struct{})
			u := rawServer(t, func(n int, c net.Conn) {
				if n == 0 {
					defer close(firstDone)
				}
				br := bufio.NewReader(c)
				for answered := 0; ; answered++ {
					body, ok := readRequest(br)
					if !ok {
						return
					}
					if n == 0 && answered == 1 {
						afterFIN.Add(1)
						return // closes, unanswered
					}
					answer(c, body)
					if n == 0 {
						c.(*net.TCPConn).CloseWrite()
					}
				}
			})
			tr := newTransport(t)
			tr.trustedIdle = tc.trustedIdle
			_, body := post(t, tr, context.Background(), u, `"one"`, m.mark)
			require.Equal(t, `"one"`, body)
			waitClosedByPeer(t, tr)
			_, body = post(t, tr, context.Background(), u, `"two"`, m.mark)
			require.Equal(t, `"two"`, body)
			select { // the first connection ends either way: the client closes it
			case <-firstDone:
			case <-time.After(30 * time.Second):
				t.Fatal("the first connection was never closed")
			}
			require.Equal(t, tc.afterFIN, afterFIN.Load())
		})
	}
}

// TestCancellingWakesTheWaitingThread: a request whose context ends while
// its thread sleeps in read(2), for the response's head or for its body,
// returns the context's error, and its connection is not kept.
func TestCancellingWakesTheWaitingThread(t *testing.T) {
	forModes(t, testCancellingWakesTheWaitingThread)
}

func testCancellingWakesTheWaitingThread(t *testing.T, m mode) {
	for _, during := range []string{"head", "body"} {
		t.Run(during, func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			var ended atomic.Int32
			u := rawServer(t, func(n int, c net.Conn) {
				br := bufio.NewReader(c)
				if _, ok := readRequest(br); !ok {
					return
				}
				if during == "body" {
					fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
				}
				arrived <- struct{}{}
				io.Copy(io.Discard, br) // until the client lets go
				ended.Add(1)
			})
			tr := newTransport(t)
			ctx, cancel := context.WithCancel(context.Background())
			req, err := http.NewRequestWithContext(m.mark(ctx), http.MethodPost, u, strings.NewReader("{}"))
			require.NoError(t, err)
			go func() { <-arrived; cancel() }()
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if during == "head" {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
				_, err = io.ReadAll(resp.Body)
				require.Error(t, err)
				resp.Body.Close()
			}
			tr.mu.Lock()
			require.Empty(t, tr.idle, "a cancelled exchange's connection is not kept")
			tr.mu.Unlock()
			require.EqualValues(t, 0, onCallerNow.Load())
		})
	}
}

// TestAStreamClosedEarly: closing a body that has not ended (an SSE stream
// the server keeps open) resets its connection at once, wakes a reader
// blocked on it, and keeps nothing.
func TestAStreamClosedEarly(t *testing.T) { forModes(t, testAStreamClosedEarly) }

func testAStreamClosedEarly(t *testing.T, m mode) {
	released := make(chan error, 1)
	var client atomic.Value // the connection as the server sees it
	u := rawServer(t, func(n int, c net.Conn) {
		client.Store(c.RemoteAddr().String() + " " + c.LocalAddr().String())
		br := bufio.NewReader(c)
		if _, ok := readRequest(br); !ok {
			return
		}
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprint(c, "f\r\ndata: {\"a\":1}\n\n\r\n")
		_, err := io.Copy(io.Discard, br)
		released <- err
		<-t.Context().Done() // the server's end stays open: only the client ends it
	})
	tr := newTransport(t)
	req, err := http.NewRequestWithContext(m.mark(context.Background()), http.MethodPost, u, strings.NewReader("{}"))
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "data: {\"a\":1}\n", line)

	readErr := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(make([]byte, 64))
		readErr <- err
	}()
	require.NoError(t, resp.Body.Close()) // while the reader may be blocked
	require.Error(t, <-readErr)
	<-released // the server saw the connection end
	// Reset, not ended gracefully: the client's socket is gone, not left
	// in FIN_WAIT2, where a server blocked writing may wait a minute for a
	// window that never opens.
	require.Empty(t, tcpStates(t, client.Load().(string)), "the connection was not reset")
	tr.mu.Lock()
	require.Empty(t, tr.idle)
	tr.mu.Unlock()
	require.EqualValues(t, 0, onCallerNow.Load())
}

// tcpStates lists the kernel's states (/proc/net/tcp) of the loopback
// sockets from the first address of pair ("local remote") to the second.
func tcpStates(t *testing.T, pair string) []string {
	var from, to netip.AddrPort
	var err error
	local, remote, _ := strings.Cut(pair, " ")
	from, err = netip.ParseAddrPort(local)
	require.NoError(t, err)
	to, err = netip.ParseAddrPort(remote)
	require.NoError(t, err)
	data, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	want := fmt.Sprintf("0100007F:%04X 0100007F:%04X", from.Port(), to.Port())
	var states []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[1]+" "+f[2] == want {
			states = append(states, f[3])
		}
	}
	return states
}

// TestResponsesOfEveryShape: interim responses are skipped, chunked and
// empty bodies are read, and a connection the server marks for closing is
// not kept.
func TestResponsesOfEveryShape(t *testing.T) { forModes(t, testResponsesOfEveryShape) }

func testResponsesOfEveryShape(t *testing.T, m mode) {
	cases := []struct {
		name  string
		reply string
		body  string
		kept  bool
	}{
		{"100 Continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "{}", true},
		{"no body", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", "", true},
		{"Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", "{}", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := rawServer(t, func(n int, c net.Conn) {
				br := bufio.NewReader(c)
				for {
					if _, ok := readRequest(br); !ok {
						return
					}
					fmt.Fprint(c, tc.reply)
				}
			})
			tr := newTransport(t)
			_, body := post(t, tr, context.Background(), u, "{}", m.mark)
			require.Equal(t, tc.body, body)
			tr.mu.Lock()
			kept := 0
			for _, list := range tr.idle {
				kept += len(list)
			}
			tr.mu.Unlock()
			require.Equal(t, tc.kept, kept == 1)
			require.EqualValues(t, 0, onCallerNow.Load())
		})
	}
}

// TestHTTPSOverHTTP1: over https the TLS handshake runs on the blocking
// socket with the fallback's TLS settings, ALPN keeps the exchange on
// HTTP/1.1 even with a server that prefers HTTP/2, and the connection is
// kept (the TLS 1.3 session tickets the server sends after the handshake
// are read with the first response, not taken for unasked data).
func TestHTTPSOverHTTP1(t *testing.T) {
	var protos sync.Map
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		io.Copy(w, r.Body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr, netHTTPConns := countingTransport(t, srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone())
	for range 3 {
		_, body := post(t, tr, context.Background(), srv.URL, "{}", OnCaller)
		require.Equal(t, "{}", body)
	}
	_, ok := protos.Load("HTTP/1.1")
	require.True(t, ok)
	_, ok = protos.Load("HTTP/2.0")
	require.False(t, ok)
	require.Zero(t, netHTTPConns.Load())
	require.EqualValues(t, 1, conns.Load(), "one TLS connection, kept")

	// A certificate nobody vouches for is refused, as net/http refuses it.
	bare := New(&http.Transport{TLSClientConfig: &tls.Config{}})
	t.Cleanup(bare.CloseIdleConnections)
	req, err := http.NewRequestWithContext(OnCaller(context.Background()), http.MethodPost, srv.URL, strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = bare.RoundTrip(req)
	var cert *tls.CertificateVerificationError
	require.ErrorAs(t, err, &cert)
}

// TestFailuresLeakNothing: refused connections, cancelled and completed
// exchanges leave no descriptor open once the kept connections are
// closed, and errors keep the errno callers describe.
func TestFailuresLeakNothing(t *testing.T) { forModes(t, testFailuresLeakNothing) }

func testFailuresLeakNothing(t *testing.T, m mode) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	srv := echoServer(t, nil)
	tr := newTransport(t)
	before := openFDs(t)
	for range 20 {
		req, err := http.NewRequestWithContext(m.mark(context.Background()), http.MethodPost, refused, strings.NewReader("{}"))
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
		post(t, tr, context.Background(), srv.URL, "{}", m.mark)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req, err = http.NewRequestWithContext(m.mark(ctx), http.MethodPost, srv.URL, strings.NewReader("{}"))
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, context.Canceled)
	}
	tr.CloseIdleConnections()
	srv.CloseClientConnections()
	require.Equal(t, before, openFDs(t))
	require.EqualValues(t, 0, onCallerNow.Load())
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// TestEveryKeptConnectionClosed: when the kept connection a request tries
// turns out closed, its one retry dials a new connection rather than try
// another kept one, which the server may have closed too.
func TestEveryKeptConnectionClosed(t *testing.T) { forModes(t, testEveryKeptConnectionClosed) }

func testEveryKeptConnectionClosed(t *testing.T, m mode) {
	var both sync.WaitGroup
	both.Add(2)
	u := rawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		body, ok := readRequest(br)
		if !ok {
			return
		}
		if n < 2 {
			both.Done()
			both.Wait() // two connections kept at once
			answer(c, body)
			readRequest(br) // the next request on it: closed unanswered
			return
		}
		for ok {
			answer(c, body)
			body, ok = readRequest(br)
		}
	})
	tr := newTransport(t)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(m.mark(context.Background()), http.MethodPost, u, strings.NewReader("{}"))
			if err != nil {
				return
			}
			if resp, err := tr.RoundTrip(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	tr.mu.Lock()
	kept := 0
	for _, list := range tr.idle {
		kept += len(list)
	}
	tr.mu.Unlock()
	require.Equal(t, 2, kept)
	_, body := post(t, tr, context.Background(), u, `"again"`, m.mark)
	require.Equal(t, `"again"`, body)
}

// TestCancellingATLSHandshake: a request whose context ends while its
// thread waits for the server's side of the TLS handshake returns the
// context's error: crypto/tls closes the connection to interrupt the
// handshake, and the close wakes the thread blocked in read(2).
func TestCancellingATLSHandshake(t *testing.T) {
	hello := make(chan struct{}, 1)
	u := rawServer(t, func(n int, c net.Conn) {
		c.Read(make([]byte, 1)) // the ClientHello's first byte: the client now waits for the answer
		hello <- struct{}{}
		<-t.Context().Done() // which never comes
	})
	tr := newTransport(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(OnCaller(ctx), http.MethodPost, strings.Replace(u, "http:", "https:", 1), strings.NewReader("{}"))
	require.NoError(t, err)
	go func() { <-hello; cancel() }()
	_, err = tr.RoundTrip(req)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 0, onCallerNow.Load())
}
