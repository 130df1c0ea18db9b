package bench

import (
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// BenchmarkHostCallTool is one tools/call routed by a host (server__tool
// name, supervised client) against the same call on a bare client: the
// difference is what the host's routing and supervision cost per call.
func BenchmarkHostCallTool(b *testing.B) {
	for _, name := range servers {
		server := fixture(b, name)
		b.Run(name, func(b *testing.B) {
			h, err := host.Parse([]byte(`{"mcpServers":{"s":{"command":"`+server+`"}}}`), "bench")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				h.Close(5 * time.Second)
				h.Free()
			})
			if err := h.Connect(); err != nil {
				b.Fatal(err)
			}
			if err := h.WaitReady(10 * time.Second); err != nil {
				b.Fatal(err)
			}
			args := []byte(`{"text":"hello"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := h.CallToolSync("s__echo", args, core.CallOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
