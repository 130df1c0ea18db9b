package host

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSandboxConfig: VS Code's sandboxEnabled and sandbox, per server and
// in defaults, reach the stdio transport only when enabled.
func TestSandboxConfig(t *testing.T) {
	t.Setenv("LMCP_HOST_TEST_DIR", "/srv/data")
	tests := []struct {
		name, config, transport, err string
	}{
		{name: "enabled without an object", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":true}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{}}`},
		{name: "object with variables", config: `{"mcpServers":{"a":{"command":"x","sandboxEnabled":true,
			"sandbox":{"filesystem":{"allowWrite":["${LMCP_HOST_TEST_DIR}/out"]}}}}}`,
			transport: `{"type":"stdio","command":"x","sandbox":{"filesystem":{"allowWrite":["/srv/data/out"]}}}`},
		{name: "an object without sandboxEnabled is ignored", config: `{"mcpServers":{"a":{"command":"x","sandbox":{"required":true}}}}`,
			transport: `{"type":"stdio","command":"x"}`},
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
		})
	}
}

// TestServersReportTheSandbox: lmcp_host_servers says what confines a
// server; here the helper is not installed, which the report names.
func TestServersReportTheSandbox(t *testing.T) {
	h, err := Parse([]byte(`{"start":"lazy","mcpServers":{"boxed":{"command":"x","sandboxEnabled":true},"plain":{"command":"x"}}}`), "test")
	require.Nil(t, err)
	defer h.Free()
	var servers map[string]map[string]any
	require.NoError(t, json.Unmarshal(h.Servers(), &servers))
	require.NotContains(t, servers["plain"], "sandbox")
	sb, ok := servers["boxed"]["sandbox"].(map[string]any)
	require.True(t, ok, "%v", servers["boxed"])
	require.Contains(t, sb, "namespaces")
	require.Contains(t, sb, "landlock")
	require.Contains(t, sb["missing"], "the sandbox helper (lemonmcp-sandbox)")
}
