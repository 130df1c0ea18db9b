package gatewaytests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnansweredInputRequiredExpires: a 2026-07-28 front given an
// input_required result that never retries leaves nothing waiting: once
// the idle timeout passes, the server's call is cancelled and its
// request refused naming why, and a late retry gets an error saying the
// requestState names nothing. The call is cancelled before the refusal,
// which may let the server end it (and an ended call is not cancelled);
// the library sends the notice on a goroutine of its own, so the two may
// reach the server in either order. The server's request outlives the
// cancel (the tool's "detached"): one withdrawn on the cancel needs no
// refusal.
func TestUnansweredInputRequiredExpires(t *testing.T) {
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}},
	  "tool_prefix": "never", "defaults": {"handlers": {"sampling": {}}}}`)
	g := newGateway(t, h, `{"session_idle_timeout_ms": 100}`)
	exchange, in := rawStdioFront(t, g)
	defer func() { require.NoError(t, in.Close()) }()
	meta := `"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}`
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sample","arguments":{"prompt":"p","max_tokens":5,"detached":true}%s,` + meta + `}}`
	m := response(exchange(fmt.Sprintf(call, 1, "")))
	res, ok := m["result"].(map[string]any)
	require.True(t, ok, "%v", m)
	require.Equal(t, "input_required", res["resultType"], "%v", m)
	token, _ := res["requestState"].(string)
	require.NotEmpty(t, token)

	waitFile(t, logFile, "the server's call and request ended", func(log string) bool {
		return strings.Contains(log, "the front request that caused it ended") && strings.Contains(log, "notifications/cancelled")
	})

	m = response(exchange(fmt.Sprintf(call, 2, fmt.Sprintf(`,"requestState":%q,"inputResponses":{}`, token))))
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "%v", m)
	require.Contains(t, e["message"], "requestState names no call waiting for input")
}
