package gatewaytests

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModernResultsCarryCacheHints: in the 2026-07-28 era the complete
// results of server/discover, the four lists and resources/read carry
// ttlMs and cacheScope (the official clients refuse them without). Every
// scope is "private" (the host's pins, approvals and credentials shape
// them), even where a server said "public"; the lists are stale at once;
// a read keeps its server's ttlMs. The initialize era gets neither.
func TestModernResultsCarryCacheHints(t *testing.T) {
	h := hostFromConfig(t, fmt.Sprintf(`{"tool_prefix": "always", "mcpServers": {
	  "old": {"command": %q, "protocol": {"mode": "legacy"}},
	  "new": {"command": %q, "args": ["-ttl-ms", "60000", "-cache-scope", "public"], "protocol": {"mode": "modern"}}}}`, fixtureBin, fixtureBin))
	g := newGateway(t, h, "")
	exchange, in := rawStdioFront(t, g)
	send := func(msg string) map[string]any { return response(exchange(msg)) }
	defer func() { require.NoError(t, in.Close()) }()
	t.Run("initialize era first", func(t *testing.T) {
		require.NotNil(t, send(initBody)["result"])
		for i, method := range []string{"tools/list", "resources/templates/list"} {
			res, ok := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, 100+i, method))["result"].(map[string]any)
			require.True(t, ok)
			require.NotContains(t, res, "ttlMs")
			require.NotContains(t, res, "cacheScope")
		}
	})
	meta := `"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}`
	cases := []struct {
		name, method, params string
		ttl                  float64
	}{
		{"discover", "server/discover", `{}`, 0},
		{"tools", "tools/list", `{` + meta + `}`, 0},
		{"prompts", "prompts/list", `{` + meta + `}`, 0},
		{"resources", "resources/list", `{` + meta + `}`, 0},
		{"templates", "resources/templates/list", `{` + meta + `}`, 0},
		{"read of a legacy server", "resources/read", `{"uri": "old+fixture://item/03", ` + meta + `}`, 0},
		{"read of a server saying public, 60 s", "resources/read", `{"uri": "new+fixture://item/03", ` + meta + `}`, 60000},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, tc.method, tc.params))
			res, ok := m["result"].(map[string]any)
			require.True(t, ok, "not a result: %v", m)
			require.Equal(t, "complete", res["resultType"])
			require.Equal(t, tc.ttl, res["ttlMs"], "ttlMs of %s", tc.method)
			require.Equal(t, "private", res["cacheScope"], "cacheScope of %s", tc.method)
		})
	}
}
