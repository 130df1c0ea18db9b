package httptests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// BenchmarkConnectEraHTTP measures what protocol.mode costs at connect time
// over HTTP against the Go SDK's servers: stateless (it speaks 2026-07-28),
// stateful (its server/discover offers only legacy revisions) and the
// legacy HTTP+SSE transport (detected). docs/measurements.md records the figures.
func BenchmarkConnectEraHTTP(b *testing.B) {
	servers := []struct {
		name, kind, path string
		handler          http.Handler
	}{
		{"stateless-go-sdk", "streamable_http", "/mcp", streamable(true, false)()},
		{"stateful-go-sdk", "streamable_http", "/mcp", streamable(false, false)()},
		{"legacy-sse-detected", "http", "/sse", legacySSE()},
	}
	for _, srv := range servers {
		ts := httptest.NewServer(srv.handler)
		for _, mode := range []string{"legacy", "auto", "modern"} {
			b.Run(srv.name+"/"+mode, func(b *testing.B) {
				cfg := fmt.Sprintf(`{"transport":{"type":%q,"url":%q},"protocol":{"mode":%q},"timeouts":{"ready_ms":10000,"close_grace_ms":500}}`, srv.kind, ts.URL+srv.path, mode)
				failed := 0
				var ready time.Duration
				for i := 0; i < b.N; i++ {
					p, perr := config.Parse([]byte(cfg), "bench")
					if perr != nil {
						b.Fatal(perr)
					}
					c := core.New(p.Options, p.Transport)
					start := time.Now()
					if err := c.Connect(); err != nil {
						b.Fatal(err)
					}
					if err := c.WaitReady(15 * time.Second); err != nil {
						failed++
					}
					ready += time.Since(start)
					c.Close(5 * time.Second)
					c.Free()
				}
				b.ReportMetric(float64(ready.Microseconds())/float64(b.N), "ready-us/op")
				b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
			})
		}
		ts.Close()
	}
}
