package httptests

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startNodeServer runs tests/fixtures/nodeserver and returns its URL.
func startNodeServer(t *testing.T, args ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is part of the test environment")
	script, err := filepath.Abs("../fixtures/nodeserver/server.mjs")
	require.NoError(t, err)
	cmd := exec.Command(node, append([]string{script}, args...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	require.True(t, ok, line)
	return fmt.Sprintf("http://127.0.0.1:%s/mcp", port)
}

// A real Node server writing JSON.stringify(msg, null, 2): pretty JSON
// bodies, and pretty SSE data over several data: lines. The handshake, a
// tool call, a notification and a server request pass.
func TestNodeJSONStringifyServer(t *testing.T) {
	for _, args := range [][]string{nil, {"--sse"}} {
		t.Run("json"+strings.Join(args, ""), func(t *testing.T) {
			url := startNodeServer(t, args...)
			c := connect(t, "streamable_http", url, `,"protocol":{"mode":"legacy"}`)
			require.Equal(t, "grüße ✓ 𝄞", c.toolText(t, "echo", map[string]any{"text": "grüße ✓ 𝄞"}))
			require.Equal(t, "ok", c.toolText(t, "notify", map[string]any{}))
			c.waitEvent(t, "notification", "notified ünïcode")
			require.Contains(t, c.toolText(t, "roots", map[string]any{}), "file:///work")
		})
	}
}
