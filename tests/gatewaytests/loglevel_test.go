package gatewaytests

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModernRequestLogLevel: a 2026-07-28 request's _meta log level is
// honoured: the server's log lines at or above it reach that request's
// stream; a request without it gets none, one with a higher level none
// below it; a level that is not one of RFC 5424's is refused. Behind
// servers of both eras: a 2026-07-28 server logs only within a request
// that carries the level, so the gateway's call to it carries it.
func TestModernRequestLogLevel(t *testing.T) {
	for _, se := range []era{legacy, modern} {
		t.Run("server-"+string(se), func(t *testing.T) { modernRequestLogLevel(t, se) })
	}
}

func modernRequestLogLevel(t *testing.T, se era) {
	h := newHost(t, se)
	g := newGateway(t, h, "")
	exchange, in := rawStdioFront(t, g)
	defer func() { require.NoError(t, in.Close()) }()
	call := func(id int, level string) (map[string]any, []string) {
		meta := `"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}`
		if level != "" {
			meta += `, "io.modelcontextprotocol/logLevel": ` + level
		}
		m, notes := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"notify","arguments":{},"_meta":{%s}}}`, id, meta))
		var logs []string
		for _, n := range notes {
			if n["method"] == "notifications/message" {
				p := n["params"].(map[string]any)
				logs = append(logs, fmt.Sprint(p["level"], " ", p["data"]))
			}
		}
		return m, logs
	}
	cases := []struct {
		name, level string
		want        []string
	}{
		{"info asked", `"info"`, []string{"info notify called"}},
		{"none asked", ``, nil},
		{"error asked", `"error"`, nil},
		{"debug asked", `"debug"`, []string{"info notify called"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, logs := call(i+1, tc.level)
			require.Contains(t, m, "result", "%v", m)
			require.Equal(t, tc.want, logs)
		})
	}
	t.Run("not a level", func(t *testing.T) {
		m, logs := call(99, `"loud"`)
		require.Empty(t, logs)
		e, ok := m["error"].(map[string]any)
		require.True(t, ok, "%v", m)
		require.Equal(t, float64(-32602), e["code"])
		require.Contains(t, e["message"], "io.modelcontextprotocol/logLevel")
	})
}
