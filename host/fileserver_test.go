package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestFileServer: one server of a file, read by the host's reader (VS
// Code's comments and "servers", "serverUrl", ${input:id}), and checked as
// a client configuration with messages in the file's spelling.
func TestFileServer(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	vscode := write("vscode.json", `{
  // a comment
  "servers": {
    "a": {"type": "stdio", "command": "srv", "args": ["${input:arg}"]},
    "w": {"serverUrl": "https://h/mcp"},
  },
}`)
	one := write("one.json", `{"mcpServers": {"only": {"command": "srv", "timeouts": {"call_ms": 5}}}}`)
	badURL := write("bad.json", `{"mcpServers": {"w": {"serverUrl": "ftp://h"}}}`)
	inputs := LoadOptions{Inputs: map[string]string{"arg": "x"}}
	tests := []struct {
		name, path, server string
		opts               LoadOptions
		want               string // the client configuration, or
		status             core.Status
		msg                string // the error
	}{
		{name: "vs code stdio", path: vscode, server: "a", opts: inputs, want: `{"transport":{"type":"stdio","command":"srv","args":["x"]}}`},
		{name: "vs code serverUrl", path: vscode, server: "w", opts: inputs, want: `{"transport":{"type":"http","url":"https://h/mcp"}}`},
		{name: "the only server", path: one, want: `{"timeouts":{"call_ms":5},"transport":{"type":"stdio","command":"srv"}}`},
		{name: "several, no name", path: vscode, opts: inputs, status: core.StatusInvalidArgument, msg: "several servers, name one: a, w"},
		{name: "unknown name", path: vscode, server: "z", opts: inputs, status: core.StatusNotFound, msg: `no server "z" (the file has: a, w)`},
		{name: "input missing", path: vscode, server: "a", status: core.StatusInvalidArgument, msg: "${input:arg}"},
		{name: "checked, in the file's spelling", path: badURL, server: "w", status: core.StatusInvalidArgument, msg: "config.mcpServers.w.serverUrl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, err := FileServer(tc.path, tc.opts, tc.server, "test")
			if tc.msg != "" {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status, err.Message)
				require.Contains(t, err.Message, tc.path+": ")
				require.Contains(t, err.Message, tc.msg)
				return
			}
			require.Nil(t, err)
			require.JSONEq(t, tc.want, string(sc.Client))
		})
	}
}
