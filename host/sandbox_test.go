package host

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSandboxConfig: VS Code's sandboxEnabled and sandbox, per server and
// in defaults, reach the stdio transport only when enabled.
func TestSandboxConfig(t *testing.T) {
	t.Setenv("LMCP_HOST_TEST_DIR", "/srv/data")
	tests := []struct {
		name, config, transport, err, warning string
	}{
		{name: "enabled without an object", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":true}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{}}`},
		{name: "object with variables", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":true,
			"sandbox":{"filesystem":{"allowWrite":["${LMCP_HOST_TEST_DIR}/out"]}}}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{"filesystem":{"allowWrite":["/srv/data/out"]}}}`},
		{name: "an object without sandboxEnabled is ignored, with a warning", config: `{"mcpServers":{"a":{"command":"x","sandbox":{"required":true}}}}`,
			transport: `{"type":"stdio","command":"x"}`,
			warning:   `config.mcpServers.a.sandbox: ignored: "sandboxEnabled" is not true, so the server runs unconfined (add "sandboxEnabled": true)`},
		{name: "a misspelt sandboxEnabled", config: `{"mcpServers":{"a":{"command":"x","sandbox_enabled":true}}}`,
			transport: `{"type":"stdio","command":"x"}`,
			warning:   `config.mcpServers.a.sandbox_enabled: ignored: a misspelling of "sandboxEnabled": the server runs unconfined`},
		{name: "another misspelling", config: `{"mcpServers":{"a":{"command":"x","sandboxEnable":true}}}`,
			transport: `{"type":"stdio","command":"x"}`,
			warning:   `config.mcpServers.a.sandboxEnable: ignored: a misspelling of "sandboxEnabled"`},
		{name: "a bare localhost", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":true,"sandbox":{"network":{"allowedDomains":["example.com","localhost"]}}}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{"network":{"allowedDomains":["example.com","localhost"]}}}`,
			warning:   `config.mcpServers.a.sandbox.network.allowedDomains[1]: localhost lets the server reach every port of this machine's loopback; "localhost:PORT" (such as "localhost:8080") names one service`},
		{name: "under strict, an object without sandboxEnabled", config: `{"strict":true,"mcpServers":{"a":{"command":"x","sandbox":{}}}}`,
			err: `config.mcpServers.a.sandbox: refused under "strict": "sandboxEnabled" is not true`},
		{name: "under strict, a misspelt sandboxEnabled", config: `{"strict":true,"mcpServers":{"a":{"command":"x","sandboxenabled":true}}}`,
			err: `config.mcpServers.a.sandboxenabled: refused under "strict": a misspelling of "sandboxEnabled"`},
		{name: "from the defaults, the server's members over them", config: `{"defaults":{"sandboxEnabled":true,
			"sandbox":{"required":true,"limits":{"processes":64}}},
			"mcpServers":{"a":{"command":"x","sandbox":{"limits":{"openFiles":256}}}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{"required":true,"limits":{"openFiles":256}}}`},
		{name: "a server turns the defaults' off", config: `{"defaults":{"sandboxEnabled":true},
			"mcpServers":{"a":{"command":"x","sandboxEnabled":false}}}`,
			transport: `{"type":"stdio","command":"x"}`},
		{name: "not a boolean", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":"yes"}}}`,
			err: "config.mcpServers.a.sandboxEnabled: must be true or false"},
		{name: "URL servers are not sandboxed", config: `{"mcpServers":{"a":{"url":"http://127.0.0.1:1/mcp","sandboxEnabled":true}}}`,
			err: "config.mcpServers.a.sandbox: applies to command servers only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.config))
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			var client struct{ Transport json.RawMessage }
			require.NoError(t, json.Unmarshal(c.Servers[0].Client, &client))
			require.JSONEq(t, tc.transport, string(client.Transport))
			if tc.warning != "" {
				require.Len(t, c.Warnings, 1)
				require.Contains(t, c.Warnings[0], tc.warning)
			} else {
				require.Empty(t, c.Warnings)
			}
		})
	}
}

// TestServersReportTheSandbox: a server whose sandbox cannot be set up
// (here the helper is not installed) does not start, and its report names
// the layer and why; with "required": false it runs, and its report says
// what it got and what is missing.
func TestServersReportTheSandbox(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"boxed":{"command":"/bin/cat","sandboxEnabled":true},
		"loose":{"command":"/bin/cat","sandboxEnabled":true,"sandbox":{"required":false}},"plain":{"command":"/bin/cat"}}}`), "test")
	require.Nil(t, err)
	defer h.Free()
	require.Nil(t, h.Connect())
	var servers map[string]map[string]any
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(h.Servers(), &servers))
		return servers["boxed"]["state"] == StateFailed && servers["loose"]["sandbox"] != nil
	}, 30*time.Second, 10*time.Millisecond, "%v", servers)
	require.NotContains(t, servers["plain"], "sandbox")
	require.NotContains(t, servers["boxed"], "sandbox")
	require.Contains(t, servers["boxed"]["last_error"], "sandbox: cannot be set up in full")
	require.Contains(t, servers["boxed"]["last_error"], "the helper: lemonmcp-sandbox was not found")
	sb := servers["loose"]["sandbox"].(map[string]any)
	require.Equal(t, false, sb["namespaces"])
	require.Equal(t, "none", sb["reaper"])
	require.Contains(t, sb["missing"], "the helper: lemonmcp-sandbox was not found beside the library (nor in $LEMONMCP_SANDBOX_HELPER)")
}
