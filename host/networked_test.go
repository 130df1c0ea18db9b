package host

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNetworked: a server, or the server a tool name routes to without
// asking a server, is networked when its transport is HTTP (what the C
// ABI's blocking calls read to hand a call to a library goroutine);
// unknown, disabled and stdio servers are not. Nothing is started.
func TestNetworked(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{
		"web":{"type":"http","url":"http://127.0.0.1:9/mcp"},
		"stream":{"type":"streamable_http","url":"http://127.0.0.1:9/mcp"},
		"legacy":{"type":"sse","url":"http://127.0.0.1:9/sse"},
		"local":{"command":"/nonexistent/lmcp-test"},
		"off":{"type":"http","url":"http://127.0.0.1:9/mcp","enabled":false}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	cases := []struct {
		name   string
		server string
		tool   string
		want   bool
	}{
		{"HTTP, detected", "web", "web__echo", true},
		{"streamable HTTP", "stream", "stream__echo", true},
		{"legacy HTTP+SSE", "legacy", "legacy__echo", true},
		{"stdio", "local", "local__echo", false},
		{"disabled", "off", "off__echo", false},
		{"unknown", "nope", "nope__echo", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, h.Networked(tc.server))
			require.Equal(t, tc.want, h.ToolNetworked(tc.tool))
		})
	}
	require.False(t, h.ToolNetworked("echo"), "an unprefixed name only the lists would route")
}
