package gatewaytests

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestRequestsAFrontCannotAnswerAreRefused: a front that declared no
// sampling, elicitation or roots capability is never asked; the server
// gets at once an error naming the capability (its tool reports it),
// in every era pair over both fronts.
func TestRequestsAFrontCannotAnswerAreRefused(t *testing.T) {
	for _, tc := range eraPairs() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, tc.se)
			g := newGateway(t, h, "")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Capabilities set and empty: the go-sdk client declares
			// nothing (not even its default roots).
			client := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			cs, err := client.Connect(ctx, frontTransport(t, g, tc.front), &mcp.ClientSessionOptions{ProtocolVersion: tc.fe.frontVersion()})
			require.NoError(t, err)
			defer cs.Close()
			cases := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"sample", map[string]any{"prompt": "p", "max_tokens": 5}, "did not declare the sampling capability"},
				{"elicit", map[string]any{"message": "who?"}, "did not declare the elicitation (form mode) capability"},
				{"roots", map[string]any{}, "did not declare the roots capability"},
			}
			for _, c := range cases {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				text := ""
				if err != nil {
					text = err.Error()
				} else {
					require.True(t, res.IsError, "%s: the server got an answer from a front that cannot give one", c.tool)
					require.NotEmpty(t, res.Content)
					text = res.Content[0].(*mcp.TextContent).Text
				}
				require.Contains(t, text, c.want, c.tool)
			}
			require.Contains(t, callText(t, cs, "echo", map[string]any{"text": "still serving"}), "still serving")
		})
	}
}
