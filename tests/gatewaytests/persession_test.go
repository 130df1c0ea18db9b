package gatewaytests

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestPerSessionServers: a server marked "per_session": true gets one
// process per front session (sampling from it goes to that session even
// with both calling at once, over a legacy server whose requests name no
// call), another server stays one process shared by all, and a session
// that ends takes its process with it.
func TestPerSessionServers(t *testing.T) {
	h := hostFromConfig(t, `{"tool_prefix": "always",
	  "defaults": {"handlers": {"sampling": {}}, "protocol": {"mode": "legacy"}},
	  "mcpServers": {"shared": {"command": "`+fixtureBin+`"}, "own": {"command": "`+fixtureBin+`", "per_session": true}}}`)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type front struct {
		name string
		cs   *mcp.ClientSession
	}
	var fronts []front
	for _, who := range []string{"alice", "bob"} {
		client := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				time.Sleep(50 * time.Millisecond) // both in flight at once
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer of " + who}}, nil
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		fronts = append(fronts, front{who, cs})
	}
	defer fronts[1].cs.Close()
	pid := func(cs *mcp.ClientSession, tool string) int {
		n, err := strconv.Atoi(strings.TrimSpace(callText(t, cs, tool, map[string]any{})))
		require.NoError(t, err)
		return n
	}
	ownA, ownB := pid(fronts[0].cs, "own__pid"), pid(fronts[1].cs, "own__pid")
	require.NotEqual(t, ownA, ownB, "each session has its own process")
	require.Equal(t, ownA, pid(fronts[0].cs, "own__pid"), "... kept for the session")
	require.Equal(t, pid(fronts[0].cs, "shared__pid"), pid(fronts[1].cs, "shared__pid"), "a shared server is one process")

	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, f := range fronts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "own__sample", Arguments: map[string]any{"prompt": f.name, "max_tokens": 5}})
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			results[i] = res.Content[0].(*mcp.TextContent).Text
		}()
	}
	wg.Wait()
	require.Contains(t, results[0], "answer of alice")
	require.Contains(t, results[1], "answer of bob")

	require.NoError(t, fronts[0].cs.Close()) // DELETE: the session ends
	require.Eventually(t, func() bool { return !alive(ownA) }, 15*time.Second, 20*time.Millisecond, "the ended session's server process stays")
	require.True(t, alive(ownB), "the other session's server is untouched")
}

func alive(pid int) bool {
	return !zombie(strconv.Itoa(pid))
}
