package gatewaytests

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestRelayMatrix runs each relayed feature through the gateway for every
// era pair (front × server) over both fronts, with the official go-sdk
// client in front of the fixture.
func TestRelayMatrix(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		for _, fe := range []era{legacy, modern} {
			for _, se := range []era{legacy, modern} {
				t.Run(front+"/front-"+string(fe)+"/server-"+string(se), func(t *testing.T) {
					h := newHost(t, se)
					g := newGateway(t, h, "")
					tr := frontTransport(t, g, front)
					progress := make(chan *mcp.ProgressNotificationParams, 16)
					client := relayClient(progress)
					client.AddRoots(&mcp.Root{URI: "file:///front/root", Name: "front-root"})
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
					require.NoError(t, err)
					defer cs.Close()

					tools, err := cs.ListTools(ctx, nil)
					require.NoError(t, err)
					names := map[string]bool{}
					for _, tool := range tools.Tools {
						require.LessOrEqual(t, len(tool.Name), 64)
						names[tool.Name] = true
					}
					require.True(t, names["echo"] && names["sample"], "tools: %v", names)

					require.Contains(t, callText(t, cs, "echo", map[string]any{"text": "hi"}), "hi")
					require.Contains(t, callText(t, cs, "sample", map[string]any{"prompt": "p", "max_tokens": 5}), "sampled by the front")
					require.Contains(t, callText(t, cs, "elicit", map[string]any{"message": "who?"}), "front-user")
					require.Contains(t, callText(t, cs, "roots", map[string]any{}), "file:///front/root")

					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60, "steps": 3}, Meta: mcp.Meta{"progressToken": "tok-1"}})
					require.NoError(t, err)
					require.False(t, res.IsError)
					select {
					case p := <-progress:
						require.Equal(t, "tok-1", p.ProgressToken, "progress reaches the front's own token")
					case <-ctx.Done():
						t.Fatal("no progress reached the front")
					}
				})
			}
		}
	}
}

// TestNoDeadlineOfTheGatewaysOwn: a call outlasting every timeout the
// host has (its call_ms and max_total_ms, without progress to reset
// them) still answers through the gateway: the front's own timeout and
// cancellation govern (stacklok/toolhive#4061's fixed proxy deadline).
func TestNoDeadlineOfTheGatewaysOwn(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		for _, fe := range []era{legacy, modern} {
			t.Run(front+"/front-"+string(fe), func(t *testing.T) {
				// The host's own requests (its tools/list among them) keep
				// these bounds: wide enough for a loaded machine, and far
				// below the slow call.
				h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`"}}, "tool_prefix": "never",
				  "defaults": {"timeouts": {"call_ms": 300, "max_total_ms": 400}}}`)
				_, herr := h.CallToolSync("slow", []byte(`{"ms": 1200, "steps": 2}`), core.CallOptions{})
				require.NotNil(t, herr, "the host's own call times out: the gateway's must outlive that")
				g := newGateway(t, h, "")
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(ctx, frontTransport(t, g, front), &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
				require.NoError(t, err)
				defer cs.Close()
				require.Equal(t, "done", callText(t, cs, "slow", map[string]any{"ms": 1200, "steps": 2}))
			})
		}
	}
}
