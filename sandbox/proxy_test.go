package sandbox

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDomainRules(t *testing.T) {
	d := domainRules{allowed: []string{"example.com", "*.npmjs.org", "Upper.Example"}, denied: []string{"evil.npmjs.org"}}
	for host, want := range map[string]bool{
		"example.com": true, "EXAMPLE.com.": true, "sub.example.com": false,
		"registry.npmjs.org": true, "a.b.npmjs.org": true, "npmjs.org": false, "evil.npmjs.org": false,
		"xnpmjs.org": false, "upper.example": true, "": false, "127.0.0.1": false,
	} {
		require.Equal(t, want, d.permits(host), host)
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
	got := runConfined(t, Policy{AllowedDomains: []string{"localhost"}}, script)
	require.Equal(t, map[string]any{
		"node_env": "1", "plain_allowed": "hello", "plain_other": "403",
		"connect_allowed": "hello", "connect_other": "403", "direct": "denied",
	}, got)
}

// TestProxyRefusesInternalAddresses: an allowed name whose DNS answers the
// host's loopback or a private address (rebinding) is refused with 403;
// "localhost" and an IP literal the list names are reached as asked.
func TestProxyRefusesInternalAddresses(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	p := newProxy(domainRules{allowed: []string{"rebound.example", "private.example", "localhost", "127.0.0.1"}})
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
	for host, want := range map[string]int{
		"rebound.example": http.StatusForbidden, "private.example": http.StatusForbidden,
		"localhost": http.StatusOK, "127.0.0.1": http.StatusOK,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/", nil)
		p.ServeHTTP(rec, req)
		require.Equal(t, want, rec.Code, "%s: %s", host, rec.Body.String())
	}
}
