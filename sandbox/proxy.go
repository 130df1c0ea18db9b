package sandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The egress proxy. A confined server has no network of its own; with
// allowedDomains its one way out is this HTTP proxy, run by the library
// outside the sandbox on a Unix socket the helper bridges to a loopback
// port inside the server's network namespace. It allows CONNECT (for
// HTTPS) and plain absolute-URI requests to the allowed names only and
// answers everything else 403. Names are matched, never resolved first:
// the proxy resolves an allowed name itself, outside.

// proxySocketName is the socket's file name in the proxy's directory.
const proxySocketName = "proxy.sock"

// domainRules holds allowedDomains and deniedDomains; "*.example.com"
// matches every subdomain of example.com (not example.com itself).
type domainRules struct {
	allowed, denied []string
}

func (d domainRules) permits(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	return matchAny(host, d.allowed) && !matchAny(host, d.denied)
}

func matchAny(host string, patterns []string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSuffix(p, "."))
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}

// proxy is one server's egress proxy.
type proxy struct {
	dir   string // holds the socket; not writable by the server
	ln    net.Listener
	rules domainRules
	srv   *http.Server
	out   *http.Transport

	// lookup resolves a name; net.DefaultResolver's, replaced in tests.
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
}

// errInternalAddress is a dial refused because an allowed name resolved to
// an address of this machine or its private networks.
var errInternalAddress = errors.New("resolves to a loopback, private or link-local address")

// internal reports whether ip is the host's own or a private network's.
func internal(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsUnspecified()
}

// dial resolves addr's host itself and dials a permitted address of it. An
// allowed name that resolves to the host's loopback, a private network or a
// link-local address is refused unless the name is itself local
// ("localhost", or an IP literal the list names): otherwise a domain whose
// DNS its owner controls (rebinding) would lead the sandboxed server to the
// application's own machine. Dialing the checked address, not the name,
// leaves no second resolution to differ.
func (p *proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := p.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	local := strings.EqualFold(host, "localhost") || net.ParseIP(host) != nil
	d := net.Dialer{Timeout: 30 * time.Second}
	var last error = errInternalAddress
	for _, ip := range ips {
		if internal(ip.IP) && !local {
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// startProxy listens on a Unix socket in a directory of its own.
func startProxy(rules domainRules) (*proxy, error) {
	dir, err := os.MkdirTemp("", "lemonmcp-proxy-")
	if err != nil {
		return nil, err
	}
	// The server (as its own uid) must reach the socket; it cannot write
	// here, as only its allowWrite and private directories are writable.
	_ = os.Chmod(dir, 0o755)
	ln, err := net.Listen("unix", filepath.Join(dir, proxySocketName))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := newProxy(rules)
	p.dir, p.ln = dir, ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func newProxy(rules domainRules) *proxy {
	p := &proxy{rules: rules, lookup: net.DefaultResolver.LookupIPAddr, tunnels: map[net.Conn]struct{}{}}
	// Proxy nil: the library's own proxy settings do not apply to what the
	// sandboxed server asks for.
	p.out = &http.Transport{Proxy: nil, DialContext: p.dial}
	return p
}

func (p *proxy) socket() string { return filepath.Join(p.dir, proxySocketName) }

// close stops the proxy and every tunnel through it.
func (p *proxy) close() {
	_ = p.srv.Close()
	p.mu.Lock()
	for c := range p.tunnels {
		c.Close()
	}
	p.tunnels = nil
	p.mu.Unlock()
	p.out.CloseIdleConnections()
	os.RemoveAll(p.dir)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.URL.Hostname()
	if r.Method == http.MethodConnect {
		host, _, _ = net.SplitHostPort(r.Host)
	}
	if !p.rules.permits(host) {
		http.Error(w, "lemonmcp sandbox: "+host+" is not an allowed domain", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "lemonmcp sandbox: a proxy request needs an absolute URL", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.out.RoundTrip(out)
	if err != nil {
		refuse(w, host, err)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// refuse answers a failed dial: 403 for an address the proxy will not
// reach, 502 when the upstream cannot be reached.
func refuse(w http.ResponseWriter, host string, err error) {
	if errors.Is(err, errInternalAddress) {
		http.Error(w, "lemonmcp sandbox: "+host+" "+errInternalAddress.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "lemonmcp sandbox: cannot reach "+host, http.StatusBadGateway)
}

// tunnel answers a CONNECT: it dials the target, says 200 and copies both
// ways until either side closes.
func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		refuse(w, r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "lemonmcp sandbox: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go pipe(up, rw.Reader, p, up, down)
	pipe(down, up, p, up, down)
}

// track records a tunnel's connections so close can end them; false when
// the proxy is already closed (they are closed then).
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tunnels == nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

// pipe copies src to dst, then closes both ends of the tunnel.
func pipe(dst io.Writer, src io.Reader, p *proxy, conns ...net.Conn) {
	_, _ = io.Copy(dst, src)
	p.mu.Lock()
	for _, c := range conns {
		c.Close()
		if p.tunnels != nil {
			delete(p.tunnels, c)
		}
	}
	p.mu.Unlock()
}
