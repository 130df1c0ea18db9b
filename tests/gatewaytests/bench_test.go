package gatewaytests

import (
	"context"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The per-call overhead of the gateway: the same go-sdk client calls the
// fixture's echo directly (stdio) and through the gateway (stdio front,
// HTTP front). Run with go test -bench . -benchmem ./gatewaytests/.

func benchCalls(b *testing.B, tr mcp.Transport) {
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallDirect(b *testing.B) {
	benchCalls(b, &mcp.CommandTransport{Command: exec.Command(fixtureBin, "-protocol", "2025-11-25")})
}

func BenchmarkCallGatewayStdio(b *testing.B) {
	h := newHost(b, legacy)
	g := newGateway(b, h, "")
	benchCalls(b, stdioFront(b, g))
}

func BenchmarkCallGatewayHTTP(b *testing.B) {
	h := newHost(b, legacy)
	g := newGateway(b, h, "")
	benchCalls(b, &mcp.StreamableClientTransport{Endpoint: httpFront(b, g), MaxRetries: -1})
}
