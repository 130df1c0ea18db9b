package gatewaytests

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestModernFrontListens: a 2026-07-28 front hears list changes through
// subscriptions/listen (the go-sdk client opens one when it has a
// list_changed handler), over stdio and HTTP, from servers of both eras.
func TestModernFrontListens(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		for _, se := range []era{legacy, modern} {
			t.Run(front+"/server-"+string(se), func(t *testing.T) {
				h := newHost(t, se)
				g := newGateway(t, h, "")
				tr := frontTransport(t, g, front)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				ev := newFrontEvents()
				cs, err := ev.client("modern").Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
				require.NoError(t, err)
				defer cs.Close()
				callText(t, cs, "notify", map[string]any{})
				for found := false; !found; {
					waitFor(t, ev.toolsChanged, "tools list_changed through the listen")
					for _, name := range keys(toolNames(t, cs)) {
						found = found || len(name) > 8 && name[:8] == "dynamic_"
					}
				}
			})
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
