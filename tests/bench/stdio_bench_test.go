package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/hostclient"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pinnedVersion keeps every client on the same protocol revision (the
// legacy-era initialize handshake) so the comparison is like for like.
const pinnedVersion = "2025-11-25"

// servers are the fixtures every client is measured against: the official
// go-sdk server (what users meet) and a minimal hand-written one (which
// leaves the client's own cost visible).
var servers = []string{"mcpfixture", "rawecho"}

// fixture returns the path of a fixture server, built by `make fixtures`.
func fixture(b *testing.B, name string) string {
	p, err := filepath.Abs("../../build/fixtures/" + name)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		b.Fatalf("fixture server not built (run make fixtures): %v", err)
	}
	return p
}

func stdioConfig(server string) string {
	return `{"transport":{"type":"stdio","command":"` + server + `"}}`
}

var echoParams = []byte(`{"name":"echo","arguments":{"text":"hello"}}`)

func BenchmarkStdioCallTool(b *testing.B) {
	for _, name := range servers {
		server := fixture(b, name)
		b.Run(name, func(b *testing.B) { benchCallTool(b, server) })
	}
}

func benchCallTool(b *testing.B, server string) {
	b.Run("lemonmcp", func(b *testing.B) {
		c := hostclient.Ready(b, stdioConfig(server))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.CallSync("tools/call", echoParams, core.CallOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sdk", func(b *testing.B) {
		ctx := context.Background()
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(server)}, &mcp.ClientSessionOptions{ProtocolVersion: pinnedVersion})
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
	b.Run("mcp-go", func(b *testing.B) {
		ctx := context.Background()
		c, err := mcpgoclient.NewStdioMCPClient(server, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		req := mcpgo.InitializeRequest{}
		req.Params.ProtocolVersion = pinnedVersion
		req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
		if _, err := c.Initialize(ctx, req); err != nil {
			b.Fatal(err)
		}
		call := mcpgo.CallToolRequest{}
		call.Params.Name = "echo"
		call.Params.Arguments = map[string]any{"text": "hello"}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.CallTool(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStdioParallel measures concurrent calls on one client.
func BenchmarkStdioParallel(b *testing.B) {
	c := hostclient.Ready(b, stdioConfig(fixture(b, "rawecho")))
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.CallSync("tools/call", echoParams, core.CallOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
