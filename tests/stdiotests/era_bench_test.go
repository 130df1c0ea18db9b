package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// BenchmarkConnectEra measures what protocol.mode costs at connect time
// (spawn, handshake, ready, close) against a dual-era server (the Go SDK
// fixture), a legacy-only one (the fixture with -protocol, and the
// TypeScript reference server when .cache/everything holds it) and a
// modern-only one (the fixture with -modern-only). docs/measurements.md records
// the figures behind the default.
func BenchmarkConnectEra(b *testing.B) {
	servers := []struct {
		name    string
		command string
		args    []string
	}{
		{"dual-go-sdk", fixtureBin, nil},
		{"legacy-go-sdk", fixtureBin, []string{"-protocol", "2025-11-25"}},
		{"modern-only", fixtureBin, []string{"-modern-only"}},
	}
	if everything, err := filepath.Abs("../../.cache/everything/node_modules/.bin/mcp-server-everything"); err == nil {
		if _, serr := os.Stat(everything); serr == nil {
			servers = append(servers, struct {
				name    string
				command string
				args    []string
			}{"legacy-ts-everything", everything, []string{"stdio"}})
		}
	}
	for _, srv := range servers {
		for _, mode := range []string{"legacy", "auto", "modern"} {
			b.Run(srv.name+"/"+mode, func(b *testing.B) {
				argv, _ := json.Marshal(srv.args)
				cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"protocol":{"mode":%q},"timeouts":{"ready_ms":15000,"close_grace_ms":500}}`, srv.command, argv, mode)
				p, perr := config.Parse([]byte(cfg), "bench")
				if perr != nil {
					b.Fatal(perr)
				}
				failed := 0
				var ready time.Duration
				for i := 0; i < b.N; i++ {
					p, _ = config.Parse([]byte(cfg), "bench")
					c := core.New(p.Options, p.Transport)
					start := time.Now()
					if err := c.Connect(); err != nil {
						b.Fatal(err)
					}
					if err := c.WaitReady(20 * time.Second); err != nil {
						failed++
					}
					ready += time.Since(start)
					c.Close(5 * time.Second)
					c.Free()
				}
				// ready-ms is connect to ready (or to the handshake's
				// failure), without the process start's share of close.
				b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ready-ms/op")
				b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
			})
		}
	}
}
