package gatewaytests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestTwoHTTPSessionsGetOnlyTheirOwnRequests: two front sessions sample
// at once through one shared server; each front's answer reaches its own
// call only.
func TestTwoHTTPSessionsGetOnlyTheirOwnRequests(t *testing.T) {
	h := newHost(t, modern)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]string, 2)
	asked := make([]int, 2)
	var mu sync.Mutex
	for i, who := range []string{"alice", "bob"} {
		client := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				asked[i]++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond) // both in flight at once
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer of " + who}}, nil
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		defer cs.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": who, "max_tokens": 5}})
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					results[i] = tc.Text
				}
			}
		}()
	}
	wg.Wait()
	require.Contains(t, results[0], "answer of alice")
	require.NotContains(t, results[0], "bob")
	require.Contains(t, results[1], "answer of bob")
	require.NotContains(t, results[1], "alice")
	require.Equal(t, []int{1, 1}, asked)
}

// TestServerKilledMidCallFailsOnlyThatCall: a server that dies in a call
// fails that call; another server's call through the same session works.
func TestServerKilledMidCallFailsOnlyThatCall(t *testing.T) {
	cfg := `{"mcpServers": {"a": {"command": "` + fixtureBin + `", "restart": {"max_restarts": 0}}, "b": {"command": "` + fixtureBin + `"}}, "tool_prefix": "always"}`
	h := hostFromConfig(t, cfg)
	g := newGateway(t, h, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(ctx, stdioFront(t, g), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__crash", Arguments: map[string]any{}})
	failed := err != nil || (res != nil && res.IsError)
	require.True(t, failed, "the crashed server's call must fail")
	require.Contains(t, callText(t, cs, "b__echo", map[string]any{"text": "still here"}), "still here")
}
