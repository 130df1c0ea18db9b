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

// TestModernFrontHearsResourceUpdates: a 2026-07-28 front subscribes to a
// resource on a subscriptions/listen stream (the go-sdk client's
// Subscribe in that era); the server's update reaches it under the URI
// it named, and another front that did not subscribe hears nothing (over
// HTTP, where there can be another); over
// stdio and HTTP, from servers of both eras.
func TestModernFrontHearsResourceUpdates(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		for _, se := range []era{legacy, modern} {
			t.Run(front+"/server-"+string(se), func(t *testing.T) {
				h := newHost(t, se)
				g := newGateway(t, h, "")
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				asker, other := newFrontEvents(), newFrontEvents()
				tr := frontTransport(t, g, front)
				cs, err := asker.client("asker").Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
				require.NoError(t, err)
				defer cs.Close()
				if ht, ok := tr.(*mcp.StreamableClientTransport); ok { // a stdio gateway has one front
					cs2, err := other.client("other").Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ht.Endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
					require.NoError(t, err)
					defer cs2.Close()
				}
				item := fixtureItem(ctx, t, cs)
				require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: item}))
				// The listen is acknowledged once the upstream subscription
				// holds; Subscribe returns before: touch until it is heard.
				var got string
				for got == "" {
					callText(t, cs, "touch", map[string]any{"uri": item})
					select {
					case got = <-asker.updated:
					case <-time.After(50 * time.Millisecond):
					case <-ctx.Done():
						t.Fatal("the front never got resources/updated")
					}
				}
				require.Equal(t, item, got)
				quiet(t, other.updated, "a resource update")
			})
		}
	}
}
