package sandbox

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

func TestDomainRules(t *testing.T) {
	d := domainRules{
		allowed: []string{"example.com", "*.npmjs.org", "Upper.Example", "127.0.0.1:4873", "[::1]:4873", "localhost:8080",
			"ports.example:8443", "10.0.0.1", "0:0:0:0:0:0:0:2"},
		denied: []string{"evil.npmjs.org", "*.npmjs.org:8080"},
	}
	tests := []struct {
		host, port       string
		permitted, local bool
	}{
		{host: "example.com", port: "443", permitted: true},
		{host: "EXAMPLE.com.", port: "80", permitted: true},
		{host: "sub.example.com", port: "443"},
		{host: "registry.npmjs.org", port: "443", permitted: true},
		{host: "a.b.npmjs.org", port: "443", permitted: true},
		{host: "a.npmjs.org", port: "8080"}, // denied on that port only
		{host: "npmjs.org", port: "443"},
		{host: "evil.npmjs.org", port: "443"},
		{host: "xnpmjs.org", port: "443"},
		{host: "upper.example", port: "443", permitted: true},
		{host: "", port: "443"},
		// An address or localhost with its port: that service only, and
		// reachable though it is this machine's.
		{host: "127.0.0.1", port: "4873", permitted: true, local: true},
		{host: "127.0.0.1", port: "4874"},
		{host: "::1", port: "4873", permitted: true, local: true},
		{host: "0:0:0:0:0:0:0:1", port: "4873", permitted: true, local: true},
		{host: "localhost", port: "8080", permitted: true, local: true},
		{host: "LOCALHOST.", port: "8080", permitted: true, local: true},
		{host: "localhost", port: "4873"},
		{host: "ports.example", port: "8443", permitted: true},
		{host: "ports.example", port: "443"},
		// An address without a port is allowed by name, but not as this
		// machine's: the dial refuses an internal one.
		{host: "10.0.0.1", port: "443", permitted: true},
		{host: "::2", port: "443", permitted: true},
	}
	for _, tc := range tests {
		permitted, local := d.match(tc.host, tc.port)
		require.Equal(t, tc.permitted, permitted, "%s:%s", tc.host, tc.port)
		require.Equal(t, tc.local, local, "%s:%s local", tc.host, tc.port)
	}
}

func TestCheckDomain(t *testing.T) {
	for entry, want := range map[string]string{
		"example.com": "", "*.example.com": "", "127.0.0.1:4873": "", "[::1]:4873": "", "::1": "", "localhost:1": "",
		"127.0.0.1:0": "the port must be a number from 1 to 65535", "example.com:65536": "the port must be a number from 1 to 65535",
		"example.com:http": "the port must be a number from 1 to 65535", ":80": "names no host", "": "names no host",
		"[::1": "missing ']' in address",
	} {
		err := CheckDomain(entry)
		if want == "" {
			require.NoError(t, err, entry)
		} else {
			require.ErrorContains(t, err, want, entry)
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
out["plain_other"] = get("http://127.0.0.1:%d/" % port)
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
		{name: "a name on a private network", allowed: "private.example", host: "private.example", port: port, want: http.StatusForbidden},
		{name: "localhost without a port", allowed: "localhost", host: "localhost", port: port, want: http.StatusForbidden},
		{name: "an address without a port", allowed: "127.0.0.1", host: "127.0.0.1", port: port, want: http.StatusForbidden},
		{name: "localhost with its port", allowed: "localhost:" + port, host: "localhost", port: port, want: http.StatusOK},
		{name: "an address with its port", allowed: "127.0.0.1:" + port, host: "127.0.0.1", port: port, want: http.StatusOK},
		{name: "an address with another port", allowed: "127.0.0.1:" + port, host: "127.0.0.1", port: otherPort, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(domainRules{allowed: []string{tc.allowed}})
			p.lookup = func(ctx context.Context, host string) ([]net.IPAddr, error) {
				switch host {
				case "rebound.example":
					return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
				case "private.example":
					return []net.IPAddr{{IP: net.IPv4(10, 1, 2, 3)}, {IP: net.ParseIP("fe80::1")}}, nil
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

// TestProxyEnvOverridesProxySettings: whatever proxy setting the server's
// environment brings, in any case or spelling, is dropped, and the
// sandbox's proxy is set for every convention, npm's included.
func TestProxyEnvOverridesProxySettings(t *testing.T) {
	in := []string{"PATH=/bin", "NO_PROXY=127.0.0.1", "no_proxy=*", "HTTPS_PROXY=http://corp:3128", "proxy=http://corp:3128",
		"npm_config_proxy=http://corp:3128", "NPM_CONFIG_HTTPS_PROXY=http://corp:3128", "npm_config_https-proxy=http://corp:3128",
		"Npm_Config_NoProxy=registry.example", "npm_config_registry=https://registry.example/", "NODE_USE_ENV_PROXY=0",
		"GOPROXY=https://goproxy.example", "UV_INDEX_URL=https://pypi.example/simple"}
	got := map[string]string{}
	for _, kv := range proxyEnv(in, "http://127.0.0.1:9") {
		k, v, _ := cutEnv(kv)
		_, dup := got[k]
		require.False(t, dup, "%s twice", k)
		got[k] = v
	}
	const url = "http://127.0.0.1:9"
	require.Equal(t, map[string]string{
		"PATH": "/bin", "npm_config_registry": "https://registry.example/", "GOPROXY": "https://goproxy.example",
		"UV_INDEX_URL": "https://pypi.example/simple",
		"HTTP_PROXY":   url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url, "ALL_PROXY": url, "all_proxy": url,
		"NODE_USE_ENV_PROXY": "1", "npm_config_proxy": url, "npm_config_https_proxy": url,
	}, got)
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
