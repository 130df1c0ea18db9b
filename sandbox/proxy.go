package sandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// proxy is one server's egress proxy.
type proxy struct {
	dir   string // holds the socket; not writable by the server
	ln    net.Listener
	rules domainRules
	srv   *http.Server
	out   *http.Transport

	// lookup resolves a name; net.DefaultResolver's, replaced in tests.
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)

	mu       sync.Mutex
	tunnels  map[net.Conn]struct{}
	refusals []string // what was refused, for Refusals
	// warn reports a refusal while the server runs (Launch.Warnings);
	// warned counts those reported, up to maxWarnings.
	warn   func(string)
	warned map[string]bool
}

// maxWarnings bounds the refusal warnings of one server's start: a server
// retrying in a loop must not flood the host's events.
const maxWarnings = 32

// setWarn is the Launch.Warnings of a server behind this proxy.
func (p *proxy) setWarn(warn func(string)) {
	p.mu.Lock()
	p.warn = warn
	p.mu.Unlock()
}

// errInternalAddress is a dial refused because an allowed name resolved to
// an address the rule that allowed it may not reach.
var errInternalAddress = errors.New("resolves to a loopback, private or link-local address")

// dialable reports whether a request allowed by r may be dialled to ip.
// Link-local addresses (cloud metadata, 169.254.169.254) never are. The
// machine's loopback is reached only by an entry naming it (localhost,
// 127.0.0.1, ::1). A private network's address is reached by an exact name
// the user wrote or an address: a wildcard's names are their DNS owner's to
// point anywhere, and a name resolving to a private or loopback address
// there is DNS rebinding.
//
// An IPv6 address that carries an IPv4 one (NAT64, 6to4, mapped) is judged
// by the IPv4 address it reaches, and the special-purpose IPv4 ranges that
// are no one's public address count as private (carrier-grade NAT,
// benchmarking, IETF assignments) or as never (multicast, reserved,
// broadcast).
func dialable(ip net.IP, r reach) bool {
	switch addressClass(ip) {
	case classNever:
		return false
	case classLoopback:
		return r.loopback
	case classPrivate:
		return r.private
	}
	return true
}

// The classes of address dialable tells apart.
const (
	classPublic = iota
	classPrivate
	classLoopback
	classNever
)

var (
	// privateV4 are special-purpose IPv4 ranges (RFC 6890) that reach a
	// network of someone's own, as 10/8 does, rather than the Internet.
	privateV4 = []netip.Prefix{
		netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT (RFC 6598)
		netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"), // benchmarking (RFC 2544)
	}
	// neverV4 are IPv4 ranges no proxied connection has a use for.
	neverV4 = []netip.Prefix{
		netip.MustParsePrefix("224.0.0.0/4"), // multicast
		netip.MustParsePrefix("240.0.0.0/4"), // reserved, and the broadcast address
	}
	// IPv6 prefixes whose addresses carry an IPv4 one the packets reach.
	nat64     = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052, the last 32 bits
	nat64Nets = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215, the same
	sixToFour = netip.MustParsePrefix("2002::/16")      // RFC 3056, bits 16-47
)

// reached is the address packets to ip reach: the IPv4 address an IPv6
// one carries (mapped, NAT64, 6to4), else ip itself.
func reached(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return a, false
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a) || nat64Nets.Contains(a):
			a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(a):
			a = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
	}
	return a, true
}

// addressClass is ip's class, an IPv4 address carried in IPv6 judged as
// itself.
func addressClass(ip net.IP) int {
	a, ok := reached(ip)
	if !ok {
		return classNever
	}
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return classNever
	case a.IsLoopback() || a.IsUnspecified() || a.Is4() && a.As4()[0] == 0:
		// 0.0.0.0/8 is "this network": Linux connects 0.0.0.0 to the machine.
		return classLoopback
	case a.IsPrivate():
		return classPrivate
	case a.Is4() && containsAny(privateV4, a):
		return classPrivate
	case a.Is4() && containsAny(neverV4, a) || a.IsMulticast():
		return classNever
	}
	return classPublic
}

func containsAny(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// dial resolves addr's host itself and dials an address of it the rule
// allows (dialable). Dialing the checked address, not the name, leaves no
// second resolution to differ. A redirect is a new request through the
// proxy, checked afresh.
func (p *proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	r := p.rules.match(host, port)
	ips, err := p.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	var last error = errInternalAddress
	for _, ip := range ips {
		if !dialable(ip.IP, r) {
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
	host, port := r.URL.Hostname(), r.URL.Port()
	if r.Method == http.MethodConnect {
		var err error
		if host, port, err = net.SplitHostPort(r.Host); err != nil {
			http.Error(w, "lemonmcp sandbox: CONNECT needs a host and a port", http.StatusBadRequest)
			return
		}
	} else if port == "" {
		port = map[string]string{"https": "443"}[r.URL.Scheme]
		if port == "" {
			port = "80"
		}
	}
	if m := p.rules.match(host, port); !m.permitted {
		p.refused(net.JoinHostPort(host, port), m.rule)
		http.Error(w, "lemonmcp sandbox: "+net.JoinHostPort(host, port)+" is not an allowed domain", http.StatusForbidden)
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
		p.refuse(w, net.JoinHostPort(host, port), err)
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
func (p *proxy) refuse(w http.ResponseWriter, target string, err error) {
	if errors.Is(err, errInternalAddress) {
		p.refused(target, errInternalAddress.Error())
		http.Error(w, "lemonmcp sandbox: "+target+" "+errInternalAddress.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "lemonmcp sandbox: cannot reach "+target, http.StatusBadGateway)
}

// maxRefusals bounds what the proxy remembers of what it refused.
const maxRefusals = 4

// refused remembers a refusal (the first few distinct ones) for Refusals
// and reports it at once as a warning: a server that keeps running after
// a refused request may only say "fetch failed".
func (p *proxy) refused(target, why string) {
	if !printableHost(target) {
		target = "a malformed host"
	}
	what := target + " (" + why + ")"
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.refusals) < maxRefusals && !slices.Contains(p.refusals, what) {
		p.refusals = append(p.refusals, what)
	}
	if p.warn == nil || p.warned[what] || len(p.warned) > maxWarnings {
		return
	}
	if p.warned == nil {
		p.warned = map[string]bool{}
	}
	p.warned[what] = true
	if len(p.warned) > maxWarnings {
		p.warn("the sandbox refused more network requests; only the first " + strconv.Itoa(maxWarnings) + " are reported")
		return
	}
	p.warn("the sandbox refused network access to " + target + ": " + why)
}

// Refusals says what the proxy refused the server, for the message of a
// server that exited: "the sandbox refused 127.0.0.1:4873 (not in
// allowedDomains)". Empty when it refused nothing.
func (p *proxy) Refusals() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.refusals) == 0 {
		return ""
	}
	return "the sandbox refused network access to " + strings.Join(p.refusals, ", ")
}

// printableHost reports whether a host:port the server asked for is fit to
// quote in a message: the characters of names, addresses and ports only,
// and not too long (the server chose it).
func printableHost(s string) bool {
	if len(s) == 0 || len(s) > 262 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-_:[]*", c)) {
			return false
		}
	}
	return true
}

// tunnel answers a CONNECT: it dials the target, says 200 and copies both
// ways until either side closes.
func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		p.refuse(w, r.Host, err)
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
