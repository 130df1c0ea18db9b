package gatewaytests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLongNamesAreBoundedAndRouted: behind a server whose name makes
// every host name longer than 64 characters (sparfenyuk/mcp-proxy#45),
// each exposed name is at most 64 characters, distinct, the same on
// every listing and from another gateway over the same host, and a call
// by the exposed name reaches the tool it stands for.
func TestLongNamesAreBoundedAndRouted(t *testing.T) {
	server := strings.Repeat("s", 60)
	h := hostFromConfig(t, `{"tool_prefix": "always", "mcpServers": {"`+server+`": {"command": "`+fixtureBin+`"}}}`)
	raw, herr := h.ListTools()
	require.Nil(t, herr)
	var hostList struct {
		Tools []struct{ Name, Description string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &hostList))
	hostName := map[string]string{} // description → the host's (long) name
	for _, tool := range hostList.Tools {
		require.Greater(t, len(tool.Name), 64, "the test needs names past 64: %s", tool.Name)
		hostName[tool.Description] = tool.Name
	}

	exposed := func() map[string]string { // description → exposed name
		g := newGateway(t, h, "")
		ctx, cs := stdioSession(t, g)
		out := map[string]string{}
		for range 2 { // a second listing names every tool the same way
			res, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			require.Len(t, res.Tools, len(hostList.Tools))
			names := map[string]bool{}
			for _, tool := range res.Tools {
				require.LessOrEqual(t, len(tool.Name), 64, tool.Name)
				require.False(t, names[tool.Name], "two tools exposed as %s", tool.Name)
				names[tool.Name] = true
				if prev, ok := out[tool.Description]; ok {
					require.Equal(t, prev, tool.Name, "a listing renamed %s", hostName[tool.Description])
				}
				out[tool.Description] = tool.Name
			}
		}
		echo := out["Returns text, also as structuredContent"]
		require.NotEmpty(t, echo)
		require.Contains(t, callText(t, cs, echo, map[string]any{"text": "long way round"}), "long way round")
		return out
	}
	require.Equal(t, exposed(), exposed(), "another gateway exposes the same names")
}
