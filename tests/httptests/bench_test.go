package httptests

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/hostclient"
)

// BenchmarkHTTPCallTool is one tools/call round trip to an in-process go-sdk
// server over loopback, through our core and through the go-sdk client, for
// each way of serving it. Compare ratios within one run only.
func BenchmarkHTTPCallTool(b *testing.B) {
	params := []byte(`{"name":"echo","arguments":{"text":"hello"}}`)
	for _, m := range []mode{modes[0], modes[1], modes[2], modes[4]} {
		srv := httptest.NewServer(m.handler())
		url := srv.URL + m.path
		b.Run(m.name+"/lemonmcp", func(b *testing.B) {
			c := hostclient.Ready(b, `{"transport":{"type":"`+m.transport+`","url":"`+url+`"}}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.CallSync("tools/call", params, core.CallOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(m.name+"/go-sdk", func(b *testing.B) {
			ctx := context.Background()
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url}
			if m.transport == "sse" {
				tr = &mcp.SSEClientTransport{Endpoint: url}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := map[string]any{"text": "hello"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
		srv.CloseClientConnections()
		srv.Close()
	}
}
