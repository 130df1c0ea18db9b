package gatewaytests

import (
	"context"
	"strings"
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

// TestServerKilledMidCallFailsOnlyThatCall: a server killed (SIGKILL) in
// a call fails that call with an error saying so; a call to another
// server in flight at the same time finishes, and the session goes on;
// over both fronts.
func TestServerKilledMidCallFailsOnlyThatCall(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			cfg := `{"mcpServers": {"a": {"command": "` + fixtureBin + `", "restart": {"max_restarts": 0}}, "b": {"command": "` + fixtureBin + `"}}, "tool_prefix": "always"}`
			h := hostFromConfig(t, cfg)
			g := newGateway(t, h, "")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			progress := make(chan *mcp.ProgressNotificationParams, 16)
			cs, err := relayClient(progress).Connect(ctx, frontTransport(t, g, front), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			defer cs.Close()
			other := make(chan string, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__slow", Arguments: map[string]any{"ms": 600, "steps": 3}, Meta: mcp.Meta{"progressToken": "b"}})
				switch {
				case err != nil:
					other <- err.Error()
				case len(res.Content) == 0:
					other <- "no content"
				default:
					other <- res.Content[0].(*mcp.TextContent).Text
				}
			}()
			waitFor(t, progress, "the other server's call under way")
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__crash", Arguments: map[string]any{"kill": true}})
			text := ""
			if err != nil {
				text = err.Error()
			} else {
				require.True(t, res.IsError, "the killed server's call must fail")
				text = res.Content[0].(*mcp.TextContent).Text
			}
			require.Contains(t, text, "killed by SIGKILL", "the error says the server was killed")
			require.Equal(t, "done", <-other, "the call to another server in flight meanwhile")
			require.Contains(t, callText(t, cs, "b__echo", map[string]any{"text": "still here"}), "still here")
		})
	}
}

// TestUnattributableRequestIsRefusedNotGuessed: an initialize-era
// server's sampling request names no call; while two sessions have calls
// in flight to that one shared server it is refused, naming why, and
// neither front is asked (a guess could show one user's prompt to the
// other).
func TestUnattributableRequestIsRefusedNotGuessed(t *testing.T) {
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}},
	  "tool_prefix": "never", "defaults": {"handlers": {"sampling": {}}}}`)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	asked := make(chan string, 4)
	progress := make(chan float64, 16)
	connect := func(who string, progress chan<- float64) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked <- who
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer of " + who}}, nil
			},
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				select {
				case progress <- req.Params.Progress:
				default:
				}
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		return cs
	}
	alice, bob := connect("alice", progress), connect("bob", nil)
	defer alice.Close()
	defer bob.Close()
	// Alice's call stays in flight until bob has his answer.
	slowCtx, stopSlow := context.WithCancel(ctx)
	slowDone := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(slowCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000, "steps": 200}, Meta: mcp.Meta{"progressToken": "a"}})
		slowDone <- err
	}()
	waitFor(t, progress, "alice's call under way")
	res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": "bob's secret", "max_tokens": 5}})
	text := ""
	if err != nil {
		text = err.Error()
	} else {
		require.NotEmpty(t, res.Content)
		text = res.Content[0].(*mcp.TextContent).Text
		require.True(t, res.IsError, "the request was relayed: %s", text)
	}
	require.Contains(t, text, "several sessions")
	stopSlow()
	require.Error(t, <-slowDone)
	// The go-sdk client returns before its notifications/cancelled is
	// sent: the server seeing it means the gateway has it.
	require.Eventually(t, func() bool { return strings.Contains(readFile(logFile), "cancelled ") }, 15*time.Second, 10*time.Millisecond)
	select {
	case who := <-asked:
		t.Fatalf("%s was asked a request the gateway cannot attribute", who)
	default:
	}
	// Alone again, bob's call is his: relayed.
	require.Contains(t, callText(t, bob, "sample", map[string]any{"prompt": "now", "max_tokens": 5}), "answer of bob")
}
