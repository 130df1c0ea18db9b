package bench

import (
	"sync/atomic"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/hostclient"
)

// BenchmarkStdioTelemetry is a call's cost without a telemetry handler and
// with one (that only counts records), one at a time and from 4 goroutines
// on one client, against the minimal server.
func BenchmarkStdioTelemetry(b *testing.B) {
	server := fixture(b, "rawecho")
	for _, handler := range []bool{false, true} {
		name := "off"
		if handler {
			name = "handler"
		}
		b.Run(name, func(b *testing.B) {
			b.Run("serial", func(b *testing.B) {
				c := readyWithTelemetry(b, server, handler)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := c.CallSync("tools/call", echoParams, core.CallOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("parallel", func(b *testing.B) {
				c := readyWithTelemetry(b, server, handler)
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
			})
		})
	}
}

func readyWithTelemetry(b *testing.B, server string, handler bool) *core.Client {
	c := hostclient.Ready(b, stdioConfig(server))
	if handler {
		var records atomic.Int64
		if err := c.SetTelemetryHandler(func(*core.TelemetryRecord) { records.Add(1) }, nil); err != nil {
			b.Fatal(err)
		}
	}
	return c
}
