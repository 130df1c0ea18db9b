package host

import (
	"testing"

	"github.com/lemonmcp/lemonmcp/core"

	"github.com/stretchr/testify/require"
)

// TestSyncRoute: a blocking C call to a server, or to the server a tool
// name routes to without asking a server, is made on the caller's thread
// over Streamable HTTP (and over "http", which starts as Streamable HTTP),
// POSTed on the caller's thread and waited for outside Go over legacy
// HTTP+SSE, and waited for outside Go otherwise (stdio; unknown and disabled servers, whose calls
// fail at once). Nothing is started.
func TestSyncRoute(t *testing.T) {
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
		want   core.SyncRoute
	}{
		{"HTTP, detected", "web", "web__echo", core.SyncOnThread},
		{"streamable HTTP", "stream", "stream__echo", core.SyncOnThread},
		{"legacy HTTP+SSE", "legacy", "legacy__echo", core.SyncPostThenWait},
		{"stdio", "local", "local__echo", core.SyncWaitOutside},
		{"disabled", "off", "off__echo", core.SyncWaitOutside},
		{"unknown", "nope", "nope__echo", core.SyncWaitOutside},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, h.SyncRoute(tc.server))
			require.Equal(t, tc.want, h.ToolSyncRoute(tc.tool))
		})
	}
	require.Equal(t, core.SyncWaitOutside, h.ToolSyncRoute("echo"), "an unprefixed name only the lists would route")
}
