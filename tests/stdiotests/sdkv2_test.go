package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// missingPeer skips a test whose peer server is not installed, except under
// `make test`, which installs the peers first (make peers-setup) and sets
// LEMONMCP_REQUIRE_PEERS: there a missing peer is a failure, never a test
// quietly not run.
func missingPeer(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("LEMONMCP_REQUIRE_PEERS") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// tsv2Server prepares the TypeScript SDK v2 fixture (tests/fixtures/tsv2)
// in a temporary directory that sees the packages installed into
// .cache/modern-ts, and returns node and the script.
func tsv2Server(t *testing.T) (string, string) {
	t.Helper()
	modules, err := filepath.Abs("../../.cache/modern-ts/node_modules")
	require.NoError(t, err)
	if _, serr := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "server", "package.json")); serr != nil {
		missingPeer(t, "the TypeScript SDK v2 is not installed (make peers-setup)")
	}
	node, lerr := exec.LookPath("node")
	if lerr != nil {
		missingPeer(t, "node is not on PATH")
	}
	dir := t.TempDir()
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	src, rerr := os.ReadFile("../fixtures/tsv2/server.mjs")
	require.NoError(t, rerr)
	script := filepath.Join(dir, "server.mjs")
	require.NoError(t, os.WriteFile(script, src, 0o644))
	return node, script
}

// Against the TypeScript SDK v2 server (2026-07-28 over stdio): see
// checkSDKv2.
func TestAgainstTypeScriptSDKv2(t *testing.T) {
	node, script := tsv2Server(t)
	checkSDKv2(t, node, script)
}

// pyv2Server returns the Python SDK 2.x fixture (tests/fixtures/pyv2) and
// the interpreter of the virtual environment it is installed in.
func pyv2Server(t *testing.T) (string, string) {
	t.Helper()
	python, err := filepath.Abs("../../.cache/modern-py/bin/python")
	require.NoError(t, err)
	if out, cerr := exec.Command(python, "-c", "import mcp.server.mcpserver").CombinedOutput(); cerr != nil {
		missingPeer(t, "the Python SDK 2.x is not installed (make peers-setup): "+strings.TrimSpace(string(out)))
	}
	script, aerr := filepath.Abs("../fixtures/pyv2/server.py")
	require.NoError(t, aerr)
	return python, script
}

// Against the Python SDK 2.x server (2026-07-28 over stdio): see
// checkSDKv2.
func TestAgainstPythonSDKv2(t *testing.T) {
	python, script := pyv2Server(t)
	checkSDKv2(t, python, script)
}

// checkSDKv2 runs a server with tools touch and grow in modern and auto
// mode: listen carries list changes and resource updates as notification
// events, resources/subscribe works, and tools/list is served from the
// cache (the server's cache hint) until the list changes.
func checkSDKv2(t *testing.T, command, script string) {
	for _, mode := range []string{"modern", "auto"} {
		t.Run(mode, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":[%q]},"protocol":{"mode":%q},"timeouts":{"ready_ms":20000,"call_ms":10000,"close_grace_ms":500}}`, command, script, mode)
			p, perr := config.Parse([]byte(cfg), "test")
			require.Nil(t, errOrNil(perr))
			c := &host{Client: core.New(p.Options, p.Transport)}
			n := recordNotes(c)
			require.Nil(t, errOrNil(c.Connect()))
			t.Cleanup(func() {
				c.Close(5 * time.Second)
				c.Free()
			})
			require.Nil(t, errOrNil(c.WaitReady(30*time.Second)))
			gotEra, version := era(t, c)
			if mode == "auto" && gotEra == "legacy" {
				// The server took longer than the probe grace to answer
				// server/discover (node starting on a loaded machine), the
				// client sent initialize alongside it, and a dual-era
				// server then serves the connection in the legacy era: the
				// client follows the server (core/modern_discover.go,
				// probeState.held). The connection works in that era; the
				// listen, subscribe and cache checks below are the modern
				// era's (this fixture serves no resources/subscribe in the
				// legacy era).
				require.True(t, strings.HasPrefix(version, "2025-"), version)
				require.Equal(t, "ok", toolText(t, c, "touch", `{}`))
				return
			}
			require.Equal(t, "modern", gotEra)
			require.Equal(t, "2026-07-28", version)

			// A subscribe right after ready: the client replaces its first
			// listen only once the server acknowledged it (the TypeScript
			// SDK 2.4.0 answered a listen "Method not found" when its
			// predecessor was cancelled while being set up).
			_, serr := c.CallSync("resources/subscribe", []byte(`{"uri":"test://doc"}`), core.CallOptions{})
			require.Nil(t, errOrNil(serr))
			require.Equal(t, "ok", toolText(t, c, "touch", `{}`))
			require.Eventually(t, func() bool { return n.has("notifications/resources/updated") }, 10*time.Second, 10*time.Millisecond)

			h0, _ := core.CacheStats()
			first, lerr := c.CallSync("tools/list", nil, core.CallOptions{})
			require.Nil(t, errOrNil(lerr))
			second, lerr := c.CallSync("tools/list", nil, core.CallOptions{})
			require.Nil(t, errOrNil(lerr))
			require.Equal(t, string(first), string(second))
			h1, _ := core.CacheStats()
			require.Greater(t, h1, h0, "the second tools/list came from the cache")

			require.Equal(t, "ok", toolText(t, c, "grow", `{}`))
			require.Eventually(t, func() bool { return n.has("notifications/tools/list_changed") }, 10*time.Second, 10*time.Millisecond)
			after, lerr := c.CallSync("tools/list", nil, core.CallOptions{})
			require.Nil(t, errOrNil(lerr))
			var r struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			require.NoError(t, json.Unmarshal(after, &r))
			names := make([]string, 0, len(r.Tools))
			for _, tl := range r.Tools {
				names = append(names, tl.Name)
			}
			require.Contains(t, strings.Join(names, ","), "grown_1", "the list change made the cached list stale")
		})
	}
}
