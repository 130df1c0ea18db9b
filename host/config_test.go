package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	t.Setenv("LMCP_HOST_TEST_TOKEN", "s3cret")
	t.Setenv("LMCP_HOST_TEST_EMPTY", "")
	tests := []struct {
		name   string
		config string
		err    string
		check  func(t *testing.T, c *Config)
	}{
		{name: "stdio and url servers", config: `{"mcpServers":{
			"files":{"command":"srv","args":["--root","${HOME:-/}"],"env":{"TOKEN":"${LMCP_HOST_TEST_TOKEN}"},"cwd":"/tmp"},
			"web":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer ${LMCP_HOST_TEST_TOKEN}"},"type":"streamable-http"},
			"old":{"url":"http://127.0.0.1:1/sse","type":"sse","enabled":false}}}`,
			check: func(t *testing.T, c *Config) {
				require.Len(t, c.Servers, 3)
				require.Equal(t, "always", c.ToolPrefix)
				var files, web map[string]map[string]any
				require.NoError(t, json.Unmarshal(c.Servers[0].Client, &files))
				require.Equal(t, "stdio", files["transport"]["type"])
				require.Equal(t, map[string]any{"TOKEN": "s3cret"}, files["transport"]["env"])
				require.Equal(t, "old", c.Servers[1].Name)
				require.False(t, c.Servers[1].Enabled)
				require.NoError(t, json.Unmarshal(c.Servers[2].Client, &web))
				require.Equal(t, "streamable_http", web["transport"]["type"])
				require.Equal(t, map[string]any{"Authorization": "Bearer s3cret"}, web["transport"]["headers"])
			}},
		{name: "defaults and per-server fields", config: `{"tool_prefix":"on_collision","defaults":{"timeouts":{"call_ms":5}},
			"servers":{"a":{"command":"x","restart":false,"tools":{"allow":["read_*"],"deny":["read_secret"]}}}}`,
			check: func(t *testing.T, c *Config) {
				require.Equal(t, "on_collision", c.ToolPrefix)
				s := c.Servers[0]
				require.JSONEq(t, `{"restart":false,"timeouts":{"call_ms":5},"transport":{"type":"stdio","command":"x"}}`, string(s.Client))
				require.True(t, s.Permits("read_file"))
				require.False(t, s.Permits("read_secret"))
				require.False(t, s.Permits("write_file"))
			}},
		{name: "a server's object field lies over the default's", config: `{"defaults":{"timeouts":{"ready_ms":5,"call_ms":6},"restart":{"max_restarts":1}},
			"mcpServers":{"a":{"command":"x","timeouts":{"call_ms":7},"restart":false}}}`,
			check: func(t *testing.T, c *Config) {
				require.JSONEq(t, `{"timeouts":{"ready_ms":5,"call_ms":7},"restart":false,"transport":{"type":"stdio","command":"x"}}`, string(c.Servers[0].Client))
			}},
		{name: "default fallback for an empty variable", config: `{"mcpServers":{"a":{"command":"${LMCP_HOST_TEST_EMPTY:-fallback}"}}}`,
			check: func(t *testing.T, c *Config) {
				require.Contains(t, string(c.Servers[0].Client), `"command":"fallback"`)
			}},
		{name: "unset variable", config: `{"mcpServers":{"a":{"command":"x","env":{"K":"${LMCP_HOST_TEST_UNSET_VAR}"}}}}`,
			err: "config.mcpServers.a.env.K: uses ${LMCP_HOST_TEST_UNSET_VAR}, which is not set"},
		{name: "empty", config: ``, err: "config: is empty"},
		{name: "no servers", config: `{}`, err: "config.mcpServers: is required"},
		{name: "both spellings", config: `{"mcpServers":{},"servers":{}}`, err: "both"},
		{name: "unknown top field under strict", config: `{"mcpServers":{},"prefix":"x","strict":true}`, err: `config.prefix: is not a member LemonMCP knows; refused under "strict"`},
		{name: "bad prefix mode", config: `{"mcpServers":{},"tool_prefix":"sometimes"}`, err: "config.tool_prefix: must be one of"},
		{name: "bad server name", config: `{"mcpServers":{"my server":{"command":"x"}}}`, err: `the server name "my server" must use only`},
		{name: "double underscore", config: `{"mcpServers":{"a__b":{"command":"x"}}}`, err: `must not contain "__"`},
		{name: "command and url", config: `{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`, err: "has both \"command\" and \"url\""},
		{name: "neither", config: `{"mcpServers":{"a":{"args":[]}}}`, err: "needs \"command\""},
		{name: "unknown server field under strict", config: `{"strict":true,"mcpServers":{"a":{"command":"x","comand":"y"}}}`, err: `config.mcpServers.a.comand: is not a member LemonMCP knows; refused under "strict" (did you mean "command"?)`},
		{name: "headers on stdio", config: `{"mcpServers":{"a":{"command":"x","headers":{}}}}`, err: "config.mcpServers.a.headers: applies to URL servers only"},
		{name: "bad url type", config: `{"mcpServers":{"a":{"url":"http://h","type":"websocket"}}}`, err: "config.mcpServers.a.type: must be one of"},
		{name: "bad glob", config: `{"mcpServers":{"a":{"command":"x","tools":{"deny":["[a"]}}}}`, err: "config.mcpServers.a.tools.deny[0]: is not a valid glob"},
		{name: "bad defaults key", config: `{"mcpServers":{},"defaults":{"command":"x"}}`, err: "config.defaults.command: is not a field servers can share"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.config))
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				require.NotContains(t, err.Message, "s3cret", "values are never echoed")
				return
			}
			require.Nil(t, err)
			tc.check(t, c)
		})
	}
}

func TestNewReportsAServerConfigErrorUnderItsName(t *testing.T) {
	_, err := Parse([]byte(`{"mcpServers":{"a":{"command":"x","timeouts":{"call_ms":"soon"}}}}`), "test")
	require.NotNil(t, err)
	require.Contains(t, err.Message, "config.mcpServers.a.timeouts.call_ms: must be a whole number")
}

func TestExposedName(t *testing.T) {
	tests := map[string]string{"echo": "echo", "read file": "read_file", "a.b-c_d": "a.b-c_d", "ünï": "_n_", "": "_"}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) { require.Equal(t, want, exposedName(in)) })
	}
}

func TestBoundedName(t *testing.T) {
	long := strings.Repeat("a", 150)
	tests := []struct {
		in   string
		want int
	}{{"short", 5}, {strings.Repeat("b", 128), 128}, {long, 128}}
	for _, tc := range tests {
		t.Run(tc.in[:5], func(t *testing.T) {
			out := boundedName(tc.in)
			require.Len(t, out, tc.want)
			require.Equal(t, exposedName(out), out, "still MCP tool-name characters")
		})
	}
	require.NotEqual(t, boundedName(long+"x"), boundedName(long+"y"), "long names stay distinct")
}
