package sandbox

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

func TestDomainRules(t *testing.T) {
	d := domainRules{
		allowed: []string{"example.com", "*.npmjs.org", "Upper.Example", "127.0.0.1:4873", "[::1]:4873", "localhost:8080",
			"ports.example:8443", "10.0.0.1", "0:0:0:0:0:0:0:2", "machine.local:9000"},
		denied: []string{"evil.npmjs.org", "*.npmjs.org:8080"},
	}
	tests := []struct {
		host, port                   string
		permitted, loopback, private bool
	}{
		{host: "example.com", port: "443", permitted: true, private: true},
		{host: "EXAMPLE.com.", port: "80", permitted: true, private: true},
		{host: "sub.example.com", port: "443"},
		// A wildcard's names never reach internal addresses (rebinding).
		{host: "registry.npmjs.org", port: "443", permitted: true},
		{host: "a.b.npmjs.org", port: "443", permitted: true},
		{host: "a.npmjs.org", port: "8080"}, // denied on that port only
		{host: "npmjs.org", port: "443"},
		{host: "evil.npmjs.org", port: "443"},
		{host: "xnpmjs.org", port: "443"},
		{host: "upper.example", port: "443", permitted: true, private: true},
		{host: "", port: "443"},
		// The machine itself, named by the user.
		{host: "127.0.0.1", port: "4873", permitted: true, loopback: true},
		{host: "127.0.0.1", port: "4874"},
		{host: "::1", port: "4873", permitted: true, loopback: true},
		{host: "0:0:0:0:0:0:0:1", port: "4873", permitted: true, loopback: true},
		{host: "localhost", port: "8080", permitted: true, loopback: true},
		{host: "LOCALHOST.", port: "8080", permitted: true, loopback: true},
		{host: "localhost", port: "4873"},
		{host: "ports.example", port: "8443", permitted: true, private: true},
		{host: "ports.example", port: "443"},
		{host: "10.0.0.1", port: "443", permitted: true, private: true},
		{host: "::2", port: "443", permitted: true, private: true},
	}
	for _, tc := range tests {
		r := d.match(tc.host, tc.port)
		require.Equal(t, tc.permitted, r.permitted, "%s:%s", tc.host, tc.port)
		require.Equal(t, tc.loopback, r.loopback, "%s:%s loopback", tc.host, tc.port)
		require.Equal(t, tc.private, r.private, "%s:%s private", tc.host, tc.port)
	}
	// A bare localhost (or loopback address) is the machine's loopback on
	// any port, as VS Code reads it.
	bare := domainRules{allowed: []string{"localhost"}}
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "127.0.0.2"} {
		r := bare.match(host, "5432")
		require.True(t, r.permitted && r.loopback && !r.private, host)
	}
	require.False(t, bare.match("10.0.0.1", "80").permitted)
}

// TestDialable: which addresses a request may reach, by the rule that
// allowed it. Link-local (cloud metadata) never; loopback only by an entry
// naming the machine; private networks by an exact name or an address,
// never through a wildcard; an IPv4 address carried in IPv6 as itself.
func TestDialable(t *testing.T) {
	exact, wildcard, machine := reach{permitted: true, private: true}, reach{permitted: true}, reach{permitted: true, loopback: true}
	for _, tc := range []struct {
		ip                       string
		exact, wildcard, machine bool
	}{
		{ip: "93.184.216.34", exact: true, wildcard: true, machine: true},
		{ip: "2606:2800:220:1::1", exact: true, wildcard: true, machine: true},
		{ip: "10.1.2.3", exact: true},
		{ip: "192.168.1.1", exact: true},
		{ip: "fd00::1", exact: true},
		{ip: "127.0.0.1", machine: true},
		{ip: "::1", machine: true},
		{ip: "0.0.0.0", machine: true},
		{ip: "169.254.169.254"},
		{ip: "fe80::1"},
		// No one's public address: carrier-grade NAT, benchmarking and
		// IETF ranges are networks of someone's own.
		{ip: "100.64.0.1", exact: true},
		{ip: "100.127.255.254", exact: true},
		{ip: "198.18.0.1", exact: true},
		{ip: "192.0.0.8", exact: true},
		{ip: "100.128.0.1", exact: true, wildcard: true, machine: true}, // past 100.64/10: public
		// "This network" reaches the machine.
		{ip: "0.1.2.3", machine: true},
		// Nothing a proxied connection has a use for.
		{ip: "224.0.0.1"},
		{ip: "255.255.255.255"},
		{ip: "240.0.0.1"},
		{ip: "ff02::1"},
		// An IPv4 address carried in IPv6 is judged as itself: metadata
		// through NAT64 or 6to4, loopback and private ones mapped.
		{ip: "64:ff9b::a9fe:a9fe"},
		{ip: "64:ff9b:1::a9fe:a9fe"},
		{ip: "2002:a9fe:a9fe::1"},
		{ip: "64:ff9b::7f00:1", machine: true},
		{ip: "::ffff:127.0.0.1", machine: true},
		{ip: "::ffff:10.0.0.1", exact: true},
		{ip: "2002:a00:1::1", exact: true},
		{ip: "64:ff9b::5db8:d822", exact: true, wildcard: true, machine: true}, // 93.184.216.34
	} {
		ip := net.ParseIP(tc.ip)
		require.Equal(t, tc.exact, dialable(ip, exact), "%s by an exact name", tc.ip)
		require.Equal(t, tc.wildcard, dialable(ip, wildcard), "%s by a wildcard", tc.ip)
		require.Equal(t, tc.machine, dialable(ip, machine), "%s by localhost", tc.ip)
	}
}

func TestCheckDomain(t *testing.T) {
	for entry, want := range map[string]string{
		"example.com": "", "*.example.com": "", "127.0.0.1:4873": "", "[::1]:4873": "", "::1": "", "localhost:1": "",
		"*.example.co.uk": "", "registry.npmjs.org": "", "[2001:db8::1]": "", "xn--bcher-kva.example": "",
		"127.0.0.1:0": "the port must be a number from 1 to 65535", "example.com:65536": "the port must be a number from 1 to 65535",
		"example.com:http": "the port must be a number from 1 to 65535", "example.com:": "the port must be a number",
		":80": "names no host", "": "names no host",
		"[::1": "is not an address in brackets with a port", "[example.com]:80": "holds no IPv6 address",
		"http://registry.npmjs.org":   "write the host name, not a URL",
		"https://registry.npmjs.org/": "write the host name, not a URL",
		"registry.npmjs.org/":         "without a path or a trailing slash",
		"registry.npmjs.org/pkg":      "without a path or a trailing slash",
		"*":                           "\"*\" alone would allow every domain",
		"*.com":                       "covers a whole top-level domain or public suffix (com)",
		"*.co.uk":                     "covers a whole top-level domain or public suffix (co.uk)",
		"*.github.io":                 "", // the ICANN section only: a private-section suffix is a name
		"*.ck":                        "public suffix (ck)",
		"*.anything.ck":               "public suffix (anything.ck)", // under the rule *.ck
		"*.www.ck":                    "",                            // the exception !www.ck
		"*.local":                     "public suffix (local)",       // any single label
		"2001:db8::1:443":             "",                            // an address, as written
		"2001:db8:::443":              "an IPv6 address with a port takes brackets",
		"foo.*.example.com":           "a wildcard is written \"*.example.com\"",
		"exa mple.com":                "is not a host name",
		"169.254.169.254":             "link-local",
		"[fe80::1]:80":                "link-local",
		"fe80::1%eth0":                "link-local", // a zone, not a port
		"[fe80::1%eth0]:80":           "link-local",
		"2001:db8::1%eth0":            "carries an interface zone (%eth0)",
		"64:ff9b::a9fe:a9fe":          "link-local", // metadata through NAT64
		"::ffff:169.254.169.254":      "link-local",
		"239.1.2.3":                   "multicast, broadcast or reserved",
		"255.255.255.255:80":          "multicast, broadcast or reserved",
		"100.64.0.1":                  "", // carrier-grade NAT: an address the user wrote
	} {
		_, err := CheckDomain(entry)
		if want == "" {
			require.NoError(t, err, entry)
		} else {
			require.ErrorContains(t, err, want, entry)
		}
	}
	for entry, warn := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "[::1]": true,
		"localhost:8080": false, "127.0.0.1:4873": false, "example.com": false} {
		w, err := CheckDomain(entry)
		require.NoError(t, err)
		if warn {
			require.Contains(t, w, entry+" lets the server reach every port of this machine's loopback")
			require.Contains(t, w, "(such as \"localhost:8080\") names one service")
		} else {
			require.Empty(t, w, entry)
		}
	}
}

// TestConfinedProxy: with allowedDomains the server reaches allowed names
// through the proxy (plain requests and CONNECT) and nothing else: other
// names get 403, and a direct connection finds no network.
func TestConfinedProxy(t *testing.T) {
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	script := py + ` -c '
import http.client, json, os, socket, urllib.parse, urllib.request, urllib.error
port = ` + port + `
out = {"node_env": os.environ.get("NODE_USE_ENV_PROXY", "")}
def get(url):
    try:
        return urllib.request.urlopen(url, timeout=20).read().decode()
    except urllib.error.HTTPError as e:
        return str(e.code)
    except OSError:
        return "error"
out["plain_allowed"] = get("http://localhost:%d/" % port)
out["plain_other"] = get("http://other.example:%d/" % port)
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
def connect(host):
    c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=20)
    c.set_tunnel(host, port)
    try:
        c.request("GET", "/")
        return c.getresponse().read().decode()
    except OSError as e:
        return "403" if "403" in str(e) else "error"
out["connect_allowed"] = connect("localhost")
out["connect_other"] = connect("denied.example")
try:
    socket.create_connection(("127.0.0.1", port), timeout=5); out["direct"] = "ok"
except OSError:
    out["direct"] = "denied"
print(json.dumps(out))
'`
	got := runConfined(t, Policy{AllowedDomains: []string{"localhost:" + port}}, script)
	require.Equal(t, map[string]any{
		"node_env": "1", "plain_allowed": "hello", "plain_other": "403",
		"connect_allowed": "hello", "connect_other": "403", "direct": "denied",
	}, got)
}

// TestProxyRefusesInternalAddresses: an allowed name whose DNS answers the
// host's loopback or a private address (rebinding) is refused with 403,
// and so are localhost and an address allowed without a port; an address
// or localhost allowed with its port is reached as asked, and on that
// port only. The proxy remembers what it refused, for the closed message.
func TestProxyRefusesInternalAddresses(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("other")) }))
	defer other.Close()
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	tests := []struct {
		name, allowed, host, port string
		want                      int
	}{
		{name: "a name rebound to loopback", allowed: "rebound.example", host: "rebound.example", port: port, want: http.StatusForbidden},
		{name: "a name rebound to loopback, with its port", allowed: "rebound.example:" + port, host: "rebound.example", port: port, want: http.StatusForbidden},
		{name: "a name on a link-local network", allowed: "private.example", host: "private.example", port: port, want: http.StatusForbidden},
		{name: "a wildcard's name rebound to loopback", allowed: "*.rebind.example", host: "a.rebind.example", port: port, want: http.StatusForbidden},
		{name: "localhost without a port", allowed: "localhost", host: "localhost", port: port, want: http.StatusOK},
		{name: "an address without a port", allowed: "127.0.0.1", host: "127.0.0.1", port: port, want: http.StatusOK},
		{name: "localhost without a port, another loopback address", allowed: "localhost", host: "127.0.0.1", port: port, want: http.StatusOK},
		{name: "localhost with its port", allowed: "localhost:" + port, host: "localhost", port: port, want: http.StatusOK},
		{name: "an address with its port", allowed: "127.0.0.1:" + port, host: "127.0.0.1", port: port, want: http.StatusOK},
		{name: "an address with another port", allowed: "127.0.0.1:" + port, host: "127.0.0.1", port: otherPort, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(domainRules{allowed: []string{tc.allowed}})
			p.lookup = func(ctx context.Context, host string) ([]net.IPAddr, error) {
				switch host {
				case "rebound.example", "a.rebind.example":
					return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
				case "private.example":
					return []net.IPAddr{{IP: net.IPv4(169, 254, 169, 254)}, {IP: net.ParseIP("fe80::1")}}, nil
				}
				return net.DefaultResolver.LookupIPAddr(ctx, host)
			}
			defer p.out.CloseIdleConnections()
			for _, method := range []string{http.MethodGet, http.MethodConnect} {
				rec := httptest.NewRecorder()
				target := net.JoinHostPort(tc.host, tc.port)
				req := httptest.NewRequest(method, "http://"+target+"/", nil)
				if method == http.MethodConnect {
					req = httptest.NewRequest(method, "http://"+target, nil)
					req.URL.Path, req.RequestURI = "", target
				}
				if method == http.MethodConnect && tc.want == http.StatusOK {
					continue // a tunnel needs a real connection: TestConfinedProxy
				}
				p.ServeHTTP(rec, req)
				require.Equal(t, tc.want, rec.Code, "%s: %s", method, rec.Body.String())
			}
			if tc.want == http.StatusForbidden {
				require.Contains(t, p.Refusals(), "the sandbox refused network access to "+net.JoinHostPort(tc.host, tc.port)+" (")
			} else {
				require.Empty(t, p.Refusals())
			}
		})
	}
}

// TestClosedMessageNamesRefusals: a confined server that exits after the
// proxy refused it is reported with what was refused, in the library's
// words; a server that was refused nothing is reported as before.
func TestClosedMessageNamesRefusals(t *testing.T) {
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	for name, tc := range map[string]struct{ url, want string }{
		"refused": {url: "http://127.0.0.1:4999/pkg",
			want: "server exited with status 3; the sandbox refused network access to 127.0.0.1:4999 (not in allowedDomains)"},
		"nothing asked": {want: "server exited with status 3"},
	} {
		t.Run(name, func(t *testing.T) {
			script := `exit 3`
			if tc.url != "" {
				script = py + ` -c 'import urllib.request
try:
    urllib.request.urlopen("` + tc.url + `", timeout=20)
except OSError:
    pass
'; exit 3`
			}
			tr, err := stdio.New(stdio.Config{
				Command: "/bin/sh", Args: []string{"-c", script}, CloseGrace: 200 * time.Millisecond,
				Launcher: Confine(Policy{AllowedDomains: []string{"registry.example"}}, 200*time.Millisecond),
			})
			require.NoError(t, err)
			rec := newRecorder()
			require.NoError(t, tr.Start(context.Background(), rec))
			ce := <-rec.closed
			require.NoError(t, tr.Close(context.Background()))
			require.Equal(t, tc.want, ce.Message)
		})
	}
}

// TestProxyLeavesRedirectsToTheServer: a redirect from an allowed name is
// handed back to the server, never followed by the proxy, so the
// follow-up is a request of its own, checked afresh: here to a loopback
// port no entry names, refused.
func TestProxyLeavesRedirectsToTheServer(t *testing.T) {
	var hits atomic.Int32
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("internal"))
	}))
	defer inside.Close()
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/metadata", http.StatusFound)
	}))
	defer outside.Close()
	_, port, _ := net.SplitHostPort(outside.Listener.Addr().String())
	p := newProxy(domainRules{allowed: []string{"127.0.0.1:" + port}})
	defer p.out.CloseIdleConnections()

	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, outside.URL+"/", nil))
	require.Equal(t, http.StatusFound, rec.Code, rec.Body.String())
	require.Equal(t, inside.URL+"/metadata", rec.Header().Get("Location"))
	require.Zero(t, hits.Load(), "the proxy followed the redirect")

	rec = httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, inside.URL+"/metadata", nil))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Zero(t, hits.Load())
	require.Contains(t, p.Refusals(), strings.TrimPrefix(inside.URL, "http://")+" (not in allowedDomains)")
}
