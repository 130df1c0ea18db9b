package sandboxtests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/tests/internal/fakenpm"
)

// npxServer is `npx -y fakenpm.Package` confined, with the registry at
// registry and allowedDomains as given. npx is npm's, found on PATH, run
// by Node 22.
func npxServer(t *testing.T, registry, ca string, allowed []string, work string) server {
	npx, err := exec.LookPath("npx")
	require.NoError(t, err, "npx (npm) is not on PATH")
	return server{
		Command: npx, Args: []string{"-y", fakenpm.Package}, Cwd: work,
		Env: map[string]string{
			"PATH":                       node22Bin(t) + ":" + os.Getenv("PATH"),
			"npm_config_registry":        registry + "/",
			"npm_config_cafile":          ca,
			"npm_config_update_notifier": "false",
			"npm_config_audit":           "false",
		},
		Sandbox: map[string]any{"network": map[string]any{"allowedDomains": allowed}},
	}
}

// TestNpxConfined: npx fetches the package through the sandbox's proxy
// from a registry allowedDomains names by address and port, and the server
// it runs answers, though the environment carries proxy settings (npm's
// own, NO_PROXY) that would send npm around the proxy; npm's writes land
// in the server's cache directories only; a bare address of the machine
// ("127.0.0.1", as VS Code reads it: the loopback on any port) reaches it
// too. Without the registry allowed the proxy refuses it (403), the
// registry is never asked, and the start fails saying what the sandbox
// refused. (A name that resolves to loopback through a wildcard, DNS
// rebinding, is TestProxyRefusesInternalAddresses in package sandbox.)
func TestNpxConfined(t *testing.T) {
	reg, err := fakenpm.Start(true)
	require.NoError(t, err)
	defer reg.Stop()
	byAddress := "127.0.0.1:" + reg.Port

	for _, allowed := range []string{byAddress, "127.0.0.1"} {
		t.Run("fetched through the proxy, allowed as "+allowed, func(t *testing.T) {
			home, cache := isolate(t)
			work := t.TempDir()
			s := npxServer(t, reg.URL, reg.CAFile, []string{allowed}, work)
			// What a user's environment may carry: each would send npm
			// elsewhere than the sandbox's proxy, where no network is.
			for k, v := range map[string]string{
				"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "*", "npm_config_noproxy": "127.0.0.1",
				"npm_config_proxy": "http://127.0.0.1:9", "NPM_CONFIG_HTTPS_PROXY": "http://127.0.0.1:9",
				"https_proxy": "http://127.0.0.1:9",
			} {
				s.Env[k] = v
			}
			c, e := start(t, s)
			require.Nil(t, errOrNil(e))
			require.Equal(t, "through the proxy", echo(t, c, "through the proxy"))
			info, e := c.ServerInfo()
			require.Nil(t, errOrNil(e))
			require.Contains(t, string(info), "+node22.", "the package runs on Node 22")

			require.Contains(t, reg.Requests(), "GET /"+fakenpm.Package)
			require.Contains(t, reg.Requests(), "GET /"+fakenpm.Package+"/-/"+fakenpm.Package+"-"+fakenpm.Version+".tgz")
			caches := serverCache(t, cache)
			written := writtenUnder(t, caches)
			require.True(t, anyHasPrefix(written, "npm/_cacache/"), "npm's cache: %v", written)
			require.True(t, anyHas(written, filepath.Join("node_modules", fakenpm.Package, "server.js")), "npx's install: %v", written)
			require.Empty(t, writtenUnder(t, home), "written in the application's home")
			require.Empty(t, writtenUnder(t, work), "written in the server's working directory")
		})
	}

	for _, tc := range []struct{ name, registry, allowed, refused string }{
		{name: "registry not allowed", registry: reg.URL, allowed: "registry.example",
			refused: byAddress + " (not in allowedDomains)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			before := len(reg.Requests())
			_, e := start(t, npxServer(t, tc.registry, reg.CAFile, []string{tc.allowed}, t.TempDir()))
			require.NotNil(t, e, "the server started without its package")
			require.Contains(t, e.Message, "the sandbox refused network access to "+tc.refused)
			require.Len(t, reg.Requests(), before, "the registry was asked")
		})
	}
}
