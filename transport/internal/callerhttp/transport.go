package callerhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the kept connections, as net/http's defaults for one host.
const (
	maxIdlePerKey = 64
	idleTimeout   = 90 * time.Second
)

// trustedIdle is how long a kept connection is taken again without first
// peeking whether the server closed it (sockConn.alive, a recvfrom(2) per
// request: about a twentieth of a call's CPU when calls go back to back).
// A server ends a connection it keeps after an idle timeout (seconds); one
// that ends it within this has the request fail over to a new connection,
// as a close racing the peek does (errClosedIdle).
const trustedIdle = time.Millisecond

// maxOnCaller bounds the exchanges under way on callers' threads in the
// process, over all transports: each holds an OS thread while it waits,
// and a Go program with thousands of goroutines in blocking calls (a
// gateway relaying to many servers) must not make thousands of threads
// (the runtime stops the process at 10,000). Past it, a thread's requests
// go to the fallback, whose waits hold no thread.
const maxOnCaller = 64

// onCallerNow counts the exchanges under way on callers' threads, bodies
// included.
var onCallerNow atomic.Int32

// exchangeMode is what a request's context asks of this transport.
type exchangeMode uint8

const (
	viaFallback exchangeMode = iota // net/http's transport
	onCaller                        // a waiting goroutine's: blocking when alone, else pooled
	onThread                        // a waiting thread's, in blocking system calls
	pooled                          // the caller's goroutine, in the netpoller
)

type modeKey struct{}

// OnCaller marks ctx: a request made with it is for a goroutine that waits
// for its exchange, which therefore runs on that goroutine: in blocking
// system calls when no other blocking exchange is under way in the process
// (the kernel wakes the very thread when the server answers), and
// otherwise in the netpoller, as Pooled. A blocking read keeps its
// thread's P in the syscall state, where sysmon retakes it once no P is
// idle, and the goroutines parked in the netpoller wait for a P meanwhile:
// on 2 Ps, with a goroutine blocking for each P, 16 goroutines made 35k
// calls/s and 4 made 28k; with one at most, 48k and 43k; a lone call's
// p50 is a sixth lower blocking than parked (docs/abi-cost.md,
// "Goroutines waiting at once").
func OnCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, modeKey{}, onCaller)
}

// OnThread marks ctx: a request made with it is for a caller that is an
// OS thread outside Go (a C host's, locked to its goroutine while in Go)
// and waits for its exchange, which runs on it in blocking system calls
// however many do, up to maxOnCaller: parked in the netpoller instead,
// such a thread would be woken through a hand-off between threads.
func OnThread(ctx context.Context) context.Context {
	return context.WithValue(ctx, modeKey{}, onThread)
}

// Pooled marks ctx: a request made with it is exchanged on the goroutine
// that makes it, over a kept connection in the netpoller, without
// net/http's two goroutines per connection. For plain http only: over
// https the fallback negotiates HTTP/2, whose one connection carries every
// request at once.
func Pooled(ctx context.Context) context.Context {
	return context.WithValue(ctx, modeKey{}, pooled)
}

// ForWaiter marks ctx for a caller that waits for its exchange: OnThread
// when it is a thread outside Go (transport.Outbound.Thread), else
// OnCaller.
func ForWaiter(ctx context.Context, thread bool) context.Context {
	if thread {
		return OnThread(ctx)
	}
	return OnCaller(ctx)
}

func modeOf(ctx context.Context) exchangeMode {
	m, _ := ctx.Value(modeKey{}).(exchangeMode)
	return m
}

// poolKey names the kept connections a request may use: its server, and
// whether they block (onCaller, onThread) or sit in the netpoller
// (pooled).
type poolKey struct {
	scheme, host string
	blocking     bool
}

// Transport is an http.RoundTripper: the requests OnCaller, OnThread or
// Pooled marks, to a server reached without a proxy, are exchanged on the
// caller's goroutine; all others go to the fallback.
type Transport struct {
	fallback *http.Transport
	dialer   net.Dialer

	maxOnCaller int32         // maxOnCaller; a test lowers it
	trustedIdle time.Duration // trustedIdle; a test sets it

	mu   sync.Mutex
	idle map[poolKey][]*conn // the most recent last
}

// New returns a Transport over fallback, whose proxy and TLS settings it
// follows; fallback dials as net/http's DefaultTransport does (a clone of
// it), as this transport does.
func New(fallback *http.Transport) *Transport {
	return &Transport{
		fallback:    fallback,
		maxOnCaller: maxOnCaller,
		trustedIdle: trustedIdle,
		dialer:      net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		idle:        map[poolKey][]*conn{},
	}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	mode := t.serves(req)
	if mode == viaFallback {
		return t.fallback.RoundTrip(req)
	}
	key := poolKey{scheme: req.URL.Scheme, host: req.URL.Host, blocking: mode != pooled}
	if !key.blocking {
		return t.roundTrip(req, key) // a goroutine parked in the netpoller holds no thread: no bound
	}
	bound := t.maxOnCaller
	if mode == onCaller {
		bound = min(bound, 1) // alone
	}
	if onCallerNow.Add(1) > bound {
		onCallerNow.Add(-1)
		if mode == onCaller && key.scheme == "http" {
			key.blocking = false // the goroutine parks in the netpoller instead
			return t.roundTrip(req, key)
		}
		return t.fallback.RoundTrip(req)
	}
	resp, err := t.roundTrip(req, key)
	if err != nil || resp.Body == http.NoBody {
		onCallerNow.Add(-1) // else when the body is done (body.Close)
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request, key poolKey) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		c, err := t.get(ctx, key, req, attempt == 0)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		// A kept connection the server closed as the request went out
		// (its keep-alive ran out): the request goes again, once, on a
		// new connection, as net/http retries it (errServerClosedIdle).
		if errors.Is(err, errClosedIdle) && attempt == 0 && ctx.Err() == nil {
			if again, rerr := rewind(req); rerr == nil {
				req = again
				continue
			}
		}
		closeBody(req)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
}

// serves tells how the request is exchanged: by this transport (onCaller,
// onThread, pooled) or by the fallback.
func (t *Transport) serves(req *http.Request) exchangeMode {
	mode := modeOf(req.Context())
	if mode == viaFallback || req.URL == nil || req.URL.Host == "" {
		return viaFallback
	}
	switch req.URL.Scheme {
	case "http":
	case "https":
		if mode == pooled {
			return viaFallback
		}
	default:
		return viaFallback
	}
	if t.fallback.Proxy != nil {
		if u, err := t.fallback.Proxy(req); err != nil || u != nil {
			return viaFallback
		}
	}
	return mode
}

// target is the address to dial for a request and, over https, the TLS
// configuration of its server.
func (t *Transport) target(req *http.Request) (addr string, tlsConfig *tls.Config) {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	addr = net.JoinHostPort(host, port)
	if req.URL.Scheme == "https" {
		if t.fallback.TLSClientConfig != nil {
			tlsConfig = t.fallback.TLSClientConfig.Clone()
		} else {
			tlsConfig = &tls.Config{}
		}
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName = host
		}
		tlsConfig.NextProtos = []string{"http/1.1"}
	}
	return addr, tlsConfig
}

// get returns a kept connection to req's server (key) that is still
// alive, when kept ones may serve, or a new one.
func (t *Transport) get(ctx context.Context, key poolKey, req *http.Request, kept bool) (*conn, error) {
	now := time.Now()
	for kept {
		t.mu.Lock()
		list := t.idle[key]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		t.mu.Unlock()
		if idle := now.Sub(c.idleAt); idle < idleTimeout && (idle < t.trustedIdle || c.sock.alive()) {
			c.reused = true
			return c, nil
		}
		c.sock.Close()
	}
	addr, tlsConfig := t.target(req)
	return dialConn(ctx, &t.dialer, key, addr, tlsConfig)
}

// put keeps c for the next request, or closes it when enough are kept.
func (t *Transport) put(c *conn) {
	if c.br.Buffered() > 0 {
		c.sock.Close() // the server sent more than the response
		return
	}
	c.idleAt = time.Now()
	t.mu.Lock()
	if list := t.idle[c.key]; len(list) < maxIdlePerKey {
		t.idle[c.key] = append(list, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.sock.Close()
}

// Kept counts the connections kept for the next requests: blocking ones
// (OnThread, OnCaller) and ones in the netpoller (Pooled).
func (t *Transport) Kept() (blocking, pooled int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key, list := range t.idle {
		if key.blocking {
			blocking += len(list)
		} else {
			pooled += len(list)
		}
	}
	return blocking, pooled
}

// CloseIdleConnections closes the kept connections, this transport's and
// the fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[poolKey][]*conn{}
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.sock.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// errClosedIdle: a kept connection ended before any byte of the response.
var errClosedIdle = errors.New("the server closed an idle connection")

// exchange writes req on c and reads the response's head; the body, read
// later, releases c (body). Any error closes c.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, c.sock.shutdown)
	err := req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		// Nothing of the request reached a server that had closed the
		// kept connection.
		if c.reused && !errors.Is(err, context.Canceled) {
			err = errors.Join(errClosedIdle, err)
		}
		return nil, failed(c, stop, err)
	}
	if _, err := c.br.Peek(1); err != nil {
		if c.reused && errors.Is(err, io.EOF) {
			err = errors.Join(errClosedIdle, err)
		}
		return nil, failed(c, stop, err)
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, failed(c, stop, err)
		}
		// An interim response (100 Continue, 103 Early Hints) precedes the
		// real one, as net/http skips it.
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		keep := !resp.Close && !req.Close
		if resp.Body == http.NoBody || resp.Body == nil {
			resp.Body = http.NoBody
			t.release(c, stop, keep)
			return resp, nil
		}
		resp.Body = &body{rc: resp.Body, t: t, c: c, stop: stop, keep: keep, left: resp.ContentLength}
		return resp, nil
	}
}

// failed ends an exchange that failed: c is reset.
func failed(c *conn, stop func() bool, err error) error {
	stop()
	c.sock.abort()
	return err
}

// release ends an exchange: c is kept when the exchange ended cleanly and
// both sides allow it, closed otherwise.
func (t *Transport) release(c *conn, stop func() bool, keep bool) {
	if stop() && keep {
		t.put(c)
		return
	}
	c.sock.Close()
}

// rewind returns req ready to be sent again, or an error when its body
// cannot be read again.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("the request's body cannot be sent again")
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again := *req
	again.Body = b
	return &again, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
